// The decoder helper's crash handler (see shim_crash.h).
#define _GNU_SOURCE
#include <errno.h>
#include <glib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "shim_crash.h"

static volatile sig_atomic_t memory_status = 0;
static volatile sig_atomic_t allocation_failed = 0;

// True when not even 16 MiB more of address space can be reserved: the
// address-space limit is (nearly) used up. mmap and munmap are async-signal-safe.
static int address_space_exhausted(void) {
    void *probe = mmap(NULL, 16u << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (probe == MAP_FAILED) return 1;
    munmap(probe, 16u << 20);
    return 0;
}

static void on_crash(int signal_number, siginfo_t *info, void *context) {
    (void)info;
    (void)context;
    int saved = errno;
    if (saved == ENOMEM || allocation_failed || address_space_exhausted()) _exit(memory_status);
    // SA_RESETHAND restored the default action; the signal is blocked while this
    // handler runs, so it is delivered (and kills) when the handler returns.
    raise(signal_number);
}

// g_malloc's failure is a fatal g_error in the "GLib" domain ("failed to
// allocate N bytes"); note it before GLib aborts.
static void on_glib_error(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer user) {
    (void)user;
    if (message && strstr(message, "failed to allocate")) allocation_failed = 1;
    g_log_default_handler(domain, level, message, NULL);
}

int shim_install_crash_handler(int memory_exit_status) {
    memory_status = memory_exit_status;
    static char *alternate_stack = NULL;
    const size_t stack_size = 64 * 1024;
    if (!alternate_stack) {
        alternate_stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (alternate_stack == MAP_FAILED) {
            alternate_stack = NULL;
            return -1;
        }
        stack_t stack = {.ss_sp = alternate_stack, .ss_size = stack_size};
        if (sigaltstack(&stack, NULL) != 0) return -1;
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_crash;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    const int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        if (sigaction(signals[i], &action, NULL) != 0) return -1;
    }
    g_log_set_handler("GLib", G_LOG_LEVEL_ERROR | G_LOG_FLAG_FATAL, on_glib_error, NULL);
    return 0;
}

void shim_test_crash_segv(void) {
    volatile int *nothing = NULL;
    *nothing = 1;
}
