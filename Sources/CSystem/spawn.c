// Starting a decoder helper (see shim_spawn.h).
#ifdef __linux__  // Linux calls only: on other systems this file is empty
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "shim_spawn.h"

extern char **environ;

int shim_spawn_helper(const char *path, char *const argv[], char *const envp[], int socket, int keep_stderr,
                      pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int status = posix_spawn_file_actions_init(&actions);
    if (status) return status;
    status = posix_spawnattr_init(&attributes);
    if (status) {
        posix_spawn_file_actions_destroy(&actions);
        return status;
    }
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (!status) status = posix_spawn_file_actions_adddup2(&actions, socket, 3);
    if (!status) status = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (!status) status = posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    if (!status && !keep_stderr) status = posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    if (!status) status = posix_spawn_file_actions_addclosefrom_np(&actions, 4);
    if (!status) status = posix_spawnattr_setsigmask(&attributes, &none);
    if (!status) status = posix_spawnattr_setsigdefault(&attributes, &all);
    if (!status) status = posix_spawnattr_setpgroup(&attributes, 0);
    if (!status)
        status = posix_spawnattr_setflags(&attributes,
                                          POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    if (!status) status = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    return status;
}

pid_t shim_fork_helper(int socket) {
    pid_t template = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != template) _exit(1);
        prctl(PR_SET_NAME, "share-decoder", 0, 0, 0);
        if (socket != 3) {
            if (dup2(socket, 3) != 3) _exit(1);
            close(socket);
        }
        return 0;
    }
    int saved = errno;
    close(socket);
    errno = saved;
    return pid;
}

// The bounds of this process's original argument and environment areas, as
// the kernel records them (/proc/self/stat fields 48 to 51: arg_start,
// arg_end, env_start, env_end): what /proc/PID/cmdline and /proc/PID/environ
// read, whatever argv and environ point to now. 0 or -1.
static int command_line_areas(unsigned long bounds[4]) {
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char text[4096];
    ssize_t length = read(fd, text, sizeof text - 1);
    close(fd);
    if (length <= 0) return -1;
    text[length] = 0;
    // Fields are counted after the command name, which may hold spaces and parentheses.
    char *field = strrchr(text, ')');
    if (!field) return -1;
    for (int number = 2; number < 51; number++) {
        field = strchr(field + 1, ' ');
        if (!field) return -1;
        if (number >= 47) bounds[number - 47] = strtoul(field + 1, NULL, 10);
    }
    return bounds[0] && bounds[1] > bounds[0] && bounds[3] > bounds[2] ? 0 : -1;
}

// Keeps only the environment variables named in `keep` (copied to the heap
// with setenv), then overwrites the original argument and environment areas
// with zeros, the title first: clearenv() alone would leave every string where
// /proc/PID/environ (and a taken-over helper forked from here) can read it.
static int forget_command_line(const char *const *keep, int count, const char *title) {
    unsigned long bounds[4];
    if (command_line_areas(bounds) != 0) return -1;
    char **kept = calloc((size_t)count + 1, sizeof *kept);
    if (!kept) return -1;
    int found = 0;
    for (char **entry = environ; entry && *entry; entry++) {
        const char *equals = strchr(*entry, '=');
        if (!equals) continue;
        for (int i = 0; i < count && found < count; i++) {
            size_t name = strlen(keep[i]);
            if ((size_t)(equals - *entry) == name && strncmp(*entry, keep[i], name) == 0) {
                kept[found++] = strdup(*entry);
                break;
            }
        }
    }
    clearenv();
    for (int i = 0; i < found; i++) {
        if (kept[i]) {
            char *equals = strchr(kept[i], '=');
            *equals = 0;
            setenv(kept[i], equals + 1, 1);
            free(kept[i]);
        }
    }
    free(kept);
    memset((void *)bounds[0], 0, bounds[1] - bounds[0]);
    memset((void *)bounds[2], 0, bounds[3] - bounds[2]);
    size_t room = bounds[1] - bounds[0];
    if (strlen(title) < room) memcpy((void *)bounds[0], title, strlen(title));
    return 0;
}

pid_t shim_fork_template(int socket, int other, const char *const *environment_names, int count) {
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) {
        int saved = errno;
        close(socket);
        errno = saved;
        return pid;
    }
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != parent) _exit(1);
    // Before anything else: nothing of the command line or the environment
    // stays but what the allowlist names (a template that cannot forget exits,
    // and the pool starts one of its own instead).
    if (forget_command_line(environment_names, count, "share-template") != 0) _exit(1);
    prctl(PR_SET_NAME, "share-template", 0, 0, 0);
    close(other);
    if (socket != 3) {
        if (dup2(socket, 3) != 3) _exit(1);
        close(socket);
    }
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || dup2(null, 0) != 0 || dup2(null, 1) != 1) _exit(1);
    if (null > 2) close(null);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int number = 1; number < NSIG; number++) {
        if (number != SIGKILL && number != SIGSTOP) signal(number, SIG_DFL);
    }
    setpgid(0, 0);
    return 0;
}
#endif
