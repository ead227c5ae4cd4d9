// Test-only: what a decoder taken over by a hostile file would try, run inside
// a real, sandboxed helper (TestFault `attack`; see shim_attacker.h). Raw calls,
// several by number, on purpose: an exploit's payload makes them this way, and
// glibc has no wrapper for some. Each attempt reports one line on stderr; a
// success is undone where it can be (a descriptor closed, a child ended).
#ifdef __linux__  // Linux calls only: on other systems this file is empty
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "shim_attacker.h"

#define SHIM_SYS_fchmodat2 452  // Linux 6.6; newer than the headers here

static void report(const char *check, long result, int error) {
    const char *name = strerrorname_np(error);
    dprintf(2, "share-attack {\"check\":\"%s\",\"result\":%ld,\"errno\":%d,\"error\":\"%s\"}\n", check, result,
            result < 0 ? error : 0, result < 0 && name ? name : "none");
}

// Runs `call` (an expression giving a long), reports it; `undo` runs on success.
#define ATTEMPT(check, call, undo)                  \
    do {                                            \
        errno = 0;                                  \
        long result_ = (long)(call);                \
        int error_ = errno;                         \
        report(check, result_, error_);             \
        if (result_ >= 0) {                         \
            long result = result_;                  \
            (void)result;                           \
            undo;                                   \
        }                                           \
    } while (0)

// Opens `path` for reading and reads a byte: the file's content reached the helper.
static long read_file(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char byte;
    long got = read(fd, &byte, 1);
    int saved = errno;
    close(fd);
    errno = saved;
    return got < 0 ? -1 : 0;
}

// Lists a folder: its names reached the helper.
static long list_folder(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buffer[1024];
    long got = syscall(SYS_getdents64, fd, buffer, sizeof buffer);
    int saved = errno;
    close(fd);
    errno = saved;
    return got < 0 ? -1 : 0;
}

// A new process by clone without CLONE_THREAD (what fork is underneath).
static long clone_process(void) {
    long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) _exit(0);
    if (pid > 0) waitpid((pid_t)pid, NULL, 0);
    return pid;
}

static long fork_process(void) {
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    if (pid > 0) waitpid(pid, NULL, 0);
    return pid;
}

static long clone3_process(void) {
    struct {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
    } args = {.exit_signal = SIGCHLD};
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) _exit(0);
    if (pid > 0) waitpid((pid_t)pid, NULL, 0);
    return pid;
}

// A connection to a listening Unix socket at `path`: with a new socket, or,
// when sockets are refused, through the helper's own (descriptor 3).
static long connect_to(const char *path) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, path, sizeof address.sun_path - 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int target = fd >= 0 ? fd : 3;
    long result = connect(target, (struct sockaddr *)&address, sizeof address);
    int saved = errno;
    if (fd >= 0) close(fd);
    errno = saved;
    return result;
}

// memfd_create, then execveat of it: a program of the attacker's own.
static long exec_memfd(void) {
    int fd = (int)syscall(SYS_memfd_create, "payload", 0);
    if (fd < 0) {
        // Refused: try the same with a program that exists.
        fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
    }
    char *argv[] = {"true", NULL};
    char *envp[] = {NULL};
    long result = syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
    int saved = errno;
    if (fd >= 0) close(fd);
    errno = saved;
    return result;
}

static long io_uring(void) {
    struct io_uring_params params;
    memset(&params, 0, sizeof params);
    return syscall(SYS_io_uring_setup, 1, &params);
}

static long bpf_map(void) {
    union bpf_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.map_type = BPF_MAP_TYPE_ARRAY;
    attr.key_size = 4;
    attr.value_size = 4;
    attr.max_entries = 1;
    return syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
}

static long perf_event(void) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static long map_executable(void) {
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    munmap(p, 4096);
    return 0;
}

static long protect_executable(void) {
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    long result = mprotect(p, 4096, PROT_READ | PROT_EXEC);
    int saved = errno;
    munmap(p, 4096);
    errno = saved;
    return result;
}

static long map_input_executable(int input) {
    void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, input, 0);
    if (p == MAP_FAILED) return -1;
    munmap(p, 4096);
    return 0;
}

static long read_parent_memory(pid_t owner) {
    char byte;
    struct iovec local = {.iov_base = &byte, .iov_len = 1};
    struct iovec remote = {.iov_base = (void *)0x400000, .iov_len = 1};
    return syscall(SYS_process_vm_readv, owner, &local, 1, &remote, 1, 0);
}

void shim_attack_run(const struct shim_attack_targets *t) {
    char path[4096];
    // Changing a file it can read (its input): modes, owner, extended attributes.
    ATTEMPT("chmod", chmod(t->input_path, 0777), );
    ATTEMPT("fchmod", fchmod(t->input, 0777), );
    ATTEMPT("fchmodat2", syscall(SHIM_SYS_fchmodat2, AT_FDCWD, t->input_path, 0777, 0), );
    ATTEMPT("fchmodat2-descriptor", syscall(SHIM_SYS_fchmodat2, t->input, "", 0777, AT_EMPTY_PATH), );
    ATTEMPT("fchown", fchown(t->input, 1, 1), );
    ATTEMPT("chown", chown(t->input_path, 1, 1), );
    ATTEMPT("setxattr", setxattr(t->input_path, "user.share-attack", "x", 1, 0), );
    ATTEMPT("fsetxattr", fsetxattr(t->input, "user.share-attack", "x", 1, 0), );
    ATTEMPT("truncate-input", ftruncate(t->input, 0), );
    // The parent (the `share` process) and the template.
    struct rlimit tiny = {.rlim_cur = 1 << 20, .rlim_max = 1 << 20};
    ATTEMPT("prlimit64-parent", syscall(SYS_prlimit64, t->owner, RLIMIT_FSIZE, &tiny, NULL), );
    ATTEMPT("setpriority-parent", setpriority(PRIO_PROCESS, (id_t)t->owner, 19), );
    ATTEMPT("sched_setaffinity-parent", syscall(SYS_sched_setaffinity, t->owner, 0, NULL), );
    ATTEMPT("kill-parent", kill(t->owner, SIGKILL), );
    ATTEMPT("kill-template", kill(t->template_pid, SIGKILL), );
    ATTEMPT("kill-process-group", kill(0, SIGKILL), );
    ATTEMPT("ptrace-attach-parent", ptrace(PTRACE_ATTACH, t->owner, NULL, NULL), ptrace(PTRACE_DETACH, t->owner, NULL, NULL));
    ATTEMPT("process_vm_readv-parent", read_parent_memory(t->owner), );
    ATTEMPT("pidfd_open-parent", syscall(SYS_pidfd_open, t->owner, 0), close((int)result));
    ATTEMPT("fcntl-setown-parent", fcntl(3, F_SETOWN, t->owner), );
    snprintf(path, sizeof path, "/proc/%d/environ", (int)t->owner);
    ATTEMPT("read-parent-environ", read_file(path), );
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)t->owner);
    ATTEMPT("read-parent-cmdline", read_file(path), );
    // The network and other processes' sockets.
    ATTEMPT("socket-unix", socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), close((int)result));
    ATTEMPT("socket-inet", socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), close((int)result));
    int pair[2];
    ATTEMPT("socketpair", socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), (close(pair[0]), close(pair[1])));
    ATTEMPT("connect-unix-path", connect_to(t->socket_path), );
    // Files: writing anywhere, reading the user's data.
    snprintf(path, sizeof path, "%s/written-by-a-helper", t->container);
    ATTEMPT("open-for-writing", open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600), close((int)result));
    ATTEMPT("open-input-for-writing", open(t->input_path, O_RDWR | O_CLOEXEC), close((int)result));
    ATTEMPT("read-container", list_folder(t->container), );
    ATTEMPT("read-journal", read_file(t->journal), );
    ATTEMPT("read-root-file", read_file(t->root_file), );
    // Running code of its own, or another program.
    ATTEMPT("memfd_create", syscall(SYS_memfd_create, "payload", 0), close((int)result));
    ATTEMPT("execveat", exec_memfd(), );
    ATTEMPT("mmap-exec", map_executable(), );
    ATTEMPT("mprotect-exec", protect_executable(), );
    ATTEMPT("mmap-input-exec", map_input_executable(t->input), );
    ATTEMPT("personality", personality(READ_IMPLIES_EXEC), personality(PER_LINUX));
    // The kernel's larger attack surfaces, and escaping the sandbox.
    ATTEMPT("io_uring_setup", io_uring(), close((int)result));
    ATTEMPT("unshare", unshare(CLONE_NEWUSER | CLONE_NEWNS), );
    ATTEMPT("mount", mount("none", "/tmp", "tmpfs", 0, NULL), umount("/tmp"));
    ATTEMPT("keyctl", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0), );
    ATTEMPT("bpf", bpf_map(), close((int)result));
    ATTEMPT("perf_event_open", perf_event(), close((int)result));
    ATTEMPT("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC), close((int)result));
    ATTEMPT("setuid-root", setuid(0), );
    ATTEMPT("setsid", setsid(), );
    ATTEMPT("ioctl-tiocsti", ioctl(2, TIOCSTI, "x"), );
    ATTEMPT("shmget", shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600), shmctl((int)result, IPC_RMID, NULL));
    // New processes.
    ATTEMPT("clone-without-thread", clone_process(), );
    ATTEMPT("clone3", clone3_process(), );
    ATTEMPT("fork", fork_process(), );
    dprintf(2, "share-attack {\"check\":\"done\",\"result\":0,\"errno\":0,\"error\":\"none\"}\n");
}
#endif
