// Test-only: what a decoder taken over by a hostile file would try, run inside
// a real, sandboxed helper (TestFault `attack`; see shim_attacker.h). Raw calls,
// several by number, on purpose: an exploit's payload makes them this way, and
// glibc has no wrapper for some. Each attempt reports one line on stderr; a
// success is undone where it can be (a descriptor closed, a child ended). A
// forbidden call kills the helper, so the test tries one action per file.
// Debug and test builds only (SwiftPM defines DEBUG): a release build has no attacker.
#ifdef __linux__  // Linux calls only: on other systems this file is empty
#ifdef DEBUG
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <linux/vm_sockets.h>
#include <netinet/in.h>
#include <linux/io_uring.h>
#include <linux/futex.h>
#include <stdint.h>
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
#include <sys/prctl.h>
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
#include <time.h>
#include <unistd.h>
#include "shim_attacker.h"

#define SHIM_SYS_fchmodat2 452  // Linux 6.6; newer than the headers here

static void report(const char *check, long result, int error) {
    const char *name = strerrorname_np(error);
    dprintf(2, "share-attack {\"check\":\"%s\",\"result\":%ld,\"errno\":%d,\"error\":\"%s\"}\n", check, result,
            result < 0 ? error : 0, result < 0 && name ? name : "none");
}

// The one action to try (NULL: all), set by shim_attack_run.
static const char *only_action = NULL;

// Runs `call` (an expression giving a long), reports it; `undo` runs on success.
#define ATTEMPT(check, call, undo)                  \
    do {                                            \
        if (only_action && strcmp(only_action, check) != 0) break; \
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

// Reads a byte of another process's memory through /proc/PID/mem (at its
// first mapping, so the address is a real one; the maps file is read first).
static long read_proc_memory(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char byte;
    long got = pread(fd, &byte, 1, 0x400000);
    int saved = errno;
    close(fd);
    errno = saved;
    return got < 0 ? -1 : 0;
}

// Sends the parent a result message with a descriptor (the input) attached.
static long pass_descriptor(int input) {
    unsigned char frame[5] = {1, 0, 0, 0, 3};
    struct iovec part = {.iov_base = frame, .iov_len = sizeof frame};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {.msg_iov = &part, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space};
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &input, sizeof input);
    return sendmsg(3, &message, MSG_NOSIGNAL);
}

// A TCP connection to 127.0.0.1:port (the test's PostgreSQL): with a new
// socket, or, when sockets are refused, through the helper's own.
static long connect_tcp(int port) {
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    long result = connect(fd >= 0 ? fd : 3, (struct sockaddr *)&address, sizeof address);
    int saved = errno;
    if (fd >= 0) close(fd);
    errno = saved;
    return result;
}

static long write_memory(pid_t owner) {
    char byte = 0;
    struct iovec local = {.iov_base = &byte, .iov_len = 1};
    struct iovec remote = {.iov_base = (void *)0x400000, .iov_len = 1};
    return syscall(SYS_process_vm_writev, owner, &local, 1, &remote, 1, 0);
}

static long map_input_shared(int input) {
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, input, 0);
    if (p == MAP_FAILED) return -1;
    munmap(p, 4096);
    return 0;
}

static long exec_program(void) {
    char *argv[] = {"true", NULL};
    char *envp[] = {NULL};
    return execve("/bin/true", argv, envp);
}

static long open_by_handle(void) {
    struct {
        struct file_handle handle;
        unsigned char bytes[128];
    } h;
    memset(&h, 0, sizeof h);
    h.handle.handle_bytes = 8;
    h.handle.handle_type = 1;
    return syscall(SYS_open_by_handle_at, AT_FDCWD, &h.handle, O_RDONLY);
}

static long load_module(void) {
    static const unsigned char image[16] = {0x7f, 'E', 'L', 'F'};
    return syscall(SYS_init_module, image, sizeof image, "");
}

static long raise_cpu_limit(void) {
    struct rlimit unlimited = {.rlim_cur = RLIM_INFINITY, .rlim_max = RLIM_INFINITY};
    return syscall(SYS_prlimit64, 0, RLIMIT_CPU, &unlimited, NULL);
}

static long read_parent_memory(pid_t owner) {
    char byte;
    struct iovec local = {.iov_base = &byte, .iov_len = 1};
    struct iovec remote = {.iov_base = (void *)0x400000, .iov_len = 1};
    return syscall(SYS_process_vm_readv, owner, &local, 1, &remote, 1, 0);
}


// madvise with `advice` on a private anonymous mapping of its own.
static long advise(int advice) {
    void *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    long result = madvise(p, 2 * 4096, advice);
    int saved = errno;
    munmap(p, 2 * 4096);
    errno = saved;
    return result;
}

// A futex operation on two private futexes of its own, with values that make
// an allowed operation return at once (EAGAIN: the value is not the one
// expected) instead of waiting.
static long futex_operation(int operation) {
    static uint32_t first = 0, second = 0;
    struct timespec now = {0, 0};
    switch (operation) {
    case FUTEX_WAIT_REQUEUE_PI:
        return syscall(SYS_futex, &first, operation | FUTEX_PRIVATE_FLAG, 1, &now, &second, 0);
    case FUTEX_CMP_REQUEUE_PI:
        return syscall(SYS_futex, &first, operation | FUTEX_PRIVATE_FLAG, 1, 1, &second, 1);
    default:
        return syscall(SYS_futex, &first, operation | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
    }
}

// The madvise advice the policy refuses (every advice the kernel knows but
// NORMAL, RANDOM, SEQUENTIAL, WILLNEED, DONTNEED, FREE and DONTDUMP), by
// number: the headers here lack the newer ones.
static const struct {
    const char *check;
    int advice;
} refused_advice[] = {
    {"madvise-remove", 9},          {"madvise-dontfork", 10},       {"madvise-dofork", 11},          {"madvise-mergeable", 12},
    {"madvise-unmergeable", 13},    {"madvise-hugepage", 14},       {"madvise-nohugepage", 15},      {"madvise-dodump", 17},
    {"madvise-wipeonfork", 18},     {"madvise-keeponfork", 19},     {"madvise-cold", 20},            {"madvise-pageout", 21},
    {"madvise-populate-read", 22},  {"madvise-populate-write", 23}, {"madvise-dontneed-locked", 24}, {"madvise-collapse", 25},
    {"madvise-hwpoison", 100},      {"madvise-soft-offline", 101},  {"madvise-guard-install", 102},  {"madvise-guard-remove", 103},
};

#define SHIM_FUTEX_LOCK_PI2 13  // Linux 5.14

void shim_attack_run(const struct shim_attack_targets *t, const char *only) {
    char path[4096];
    only_action = only;
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
    ATTEMPT("read-parent-mem", read_proc_memory(t->owner), );
    snprintf(path, sizeof path, "/proc/%d/fd", (int)t->owner);
    ATTEMPT("read-parent-fd", list_folder(path), );
    ATTEMPT("process_vm_writev-parent", write_memory(t->owner), );
    ATTEMPT("pidfd_getfd", syscall(SYS_pidfd_getfd, 3, 0, 0), close((int)result));
    ATTEMPT("pidfd_send_signal", syscall(SYS_pidfd_send_signal, 3, SIGKILL, NULL, 0), );
    ATTEMPT("pass-descriptor-to-parent", pass_descriptor(t->input), );
    // Sibling helpers (another helper of the same template or parent: another
    // item's decoder).
    ATTEMPT("kill-sibling", kill(t->sibling > 0 ? t->sibling : 1, SIGKILL), );
    snprintf(path, sizeof path, "/proc/%d/environ", (int)(t->sibling > 0 ? t->sibling : 1));
    ATTEMPT("read-sibling-environ", read_file(path), );
    ATTEMPT("read-sibling-mem", read_proc_memory(t->sibling > 0 ? t->sibling : 1), );
    // The network and other processes' sockets.
    ATTEMPT("socket-unix", socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), close((int)result));
    ATTEMPT("socket-inet", socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), close((int)result));
    int pair[2];
    ATTEMPT("socketpair", socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), (close(pair[0]), close(pair[1])));
    ATTEMPT("connect-unix-path", connect_to(t->socket_path), );
    ATTEMPT("socket-inet6", socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), close((int)result));
    ATTEMPT("socket-netlink", socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), close((int)result));
    ATTEMPT("socket-packet", socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL)), close((int)result));
    ATTEMPT("socket-vsock", socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0), close((int)result));
    ATTEMPT("connect-postgres", connect_tcp(t->port > 0 ? t->port : 5432), );
    // Files: writing anywhere, reading the user's data.
    snprintf(path, sizeof path, "%s/written-by-a-helper", t->container);
    ATTEMPT("open-for-writing", open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600), close((int)result));
    ATTEMPT("open-input-for-writing", open(t->input_path, O_RDWR | O_CLOEXEC), close((int)result));
    ATTEMPT("read-container", list_folder(t->container), );
    ATTEMPT("read-journal", read_file(t->journal), );
    ATTEMPT("read-root-file", read_file(t->root_file), );
    ATTEMPT("read-other-batch-copy", read_file(t->other_copy), );
    ATTEMPT("fallocate", fallocate(t->input, 0, 0, 1 << 20), );
    ATTEMPT("mmap-input-shared-writable", map_input_shared(t->input), );
    // Running code of its own, or another program.
    ATTEMPT("memfd_create", syscall(SYS_memfd_create, "payload", 0), close((int)result));
    ATTEMPT("execveat", exec_memfd(), );
    ATTEMPT("execve", exec_program(), );
    ATTEMPT("mmap-exec", map_executable(), );
    ATTEMPT("mprotect-exec", protect_executable(), );
    ATTEMPT("mmap-input-exec", map_input_executable(t->input), );
    ATTEMPT("personality", personality(READ_IMPLIES_EXEC), personality(PER_LINUX));
    // The kernel's larger attack surfaces, and escaping the sandbox.
    ATTEMPT("io_uring_setup", io_uring(), close((int)result));
    ATTEMPT("unshare", unshare(CLONE_NEWUSER | CLONE_NEWNS), );
    ATTEMPT("mount", mount("none", "/tmp", "tmpfs", 0, NULL), umount("/tmp"));
    ATTEMPT("keyctl", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0), );
    ATTEMPT("add_key", syscall(SYS_add_key, "user", "share-attack", "x", 1, KEY_SPEC_PROCESS_KEYRING), );
    ATTEMPT("request_key", syscall(SYS_request_key, "user", "share-attack", NULL, 0), );
    ATTEMPT("setns", syscall(SYS_setns, 3, 0), );
    ATTEMPT("open_by_handle_at", open_by_handle(), close((int)result));
    ATTEMPT("chroot", chroot("/usr"), );
    ATTEMPT("pivot_root", syscall(SYS_pivot_root, "/usr", "/usr"), );
    ATTEMPT("init_module", load_module(), );
    ATTEMPT("finit_module", syscall(SYS_finit_module, t->input, "", 0), );
    ATTEMPT("prctl-set-dumpable", prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), );
    ATTEMPT("prctl-get-seccomp", prctl(PR_GET_SECCOMP, 0, 0, 0, 0), );
    ATTEMPT("prctl-set-pdeathsig", prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0), );
    ATTEMPT("prlimit64-cpu-unlimited", raise_cpu_limit(), );
    ATTEMPT("sigaction-sigsys", signal(SIGSYS, SIG_IGN) == SIG_ERR ? -1 : 0, );
    ATTEMPT("bpf", bpf_map(), close((int)result));
    ATTEMPT("perf_event_open", perf_event(), close((int)result));
    ATTEMPT("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC), close((int)result));
    ATTEMPT("setuid-root", setuid(0), );
    ATTEMPT("setsid", setsid(), );
    ATTEMPT("ioctl-tiocsti", ioctl(2, TIOCSTI, "x"), );
    ATTEMPT("shmget", shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600), shmctl((int)result, IPC_RMID, NULL));
    // The host's network and mount tables, through its own /proc entry.
    ATTEMPT("read-proc-self-net-tcp", read_file("/proc/self/net/tcp"), );
    ATTEMPT("read-proc-self-net-unix", read_file("/proc/self/net/unix"), );
    ATTEMPT("read-proc-self-mountinfo", read_file("/proc/self/mountinfo"), );
    // The arguments the policy filters: the futex requeue-PI operations (and
    // LOCK_PI2, newer than the policy), and every refused madvise advice. The
    // allowed ones beside them show the filter reads the argument.
    ATTEMPT("futex-wait-requeue-pi", futex_operation(FUTEX_WAIT_REQUEUE_PI), );
    ATTEMPT("futex-cmp-requeue-pi", futex_operation(FUTEX_CMP_REQUEUE_PI), );
    ATTEMPT("futex-lock-pi2", futex_operation(SHIM_FUTEX_LOCK_PI2), );
    ATTEMPT("futex-wake", futex_operation(FUTEX_WAKE), );
    for (size_t i = 0; i < sizeof refused_advice / sizeof refused_advice[0]; i++) {
        ATTEMPT(refused_advice[i].check, advise(refused_advice[i].advice), );
    }
    ATTEMPT("madvise-dontneed", advise(MADV_DONTNEED), );
    // New processes.
    ATTEMPT("clone-without-thread", clone_process(), );
    ATTEMPT("clone3", clone3_process(), );
    ATTEMPT("fork", fork_process(), );
    dprintf(2, "share-attack {\"check\":\"done\",\"result\":0,\"errno\":0,\"error\":\"none\"}\n");
}
#endif  // DEBUG
#endif
