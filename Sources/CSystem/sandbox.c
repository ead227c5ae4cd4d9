// The decoder helper's sandbox (see shim_sandbox.h). These calls stay in C:
// the BPF program is built from kernel macros and structures, Landlock and
// capsets have no glibc wrappers, and the privilege drop must run in one go in
// the single-threaded helper, before the seccomp filter forbids its calls.
#ifdef __linux__  // Linux calls only: on other systems this file is empty
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <iconv.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "shim_sandbox.h"

int shim_sandbox_no_new_privs(void) { return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); }

// ---- No privileges ----------------------------------------------------------------

// Empties the effective, permitted and inheritable capability sets (capset has
// no glibc wrapper) and the ambient set.
static int clear_capability_sets(void) {
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    memset(data, 0, sizeof data);
    // (EINVAL: a kernel without ambient capabilities has none to clear.)
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return -1;
    return (int)syscall(SYS_capset, &header, data);
}

// Drops every capability from the bounding set (needs CAP_SETPCAP). Stops at
// the first number the kernel does not know (EINVAL): the set is then empty.
static int drop_bounding_set(void) {
    for (int capability = 0; capability < 64; capability++) {
        if (prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0) {
            if (errno == EINVAL) return 0;
            return -1;
        }
    }
    return 0;
}

int shim_drop_privileges(uid_t uid, gid_t gid, pid_t parent) {
    if (geteuid() == 0) {
        if (uid == 0 || gid == 0) {
            errno = EINVAL;  // never decode as root
            return -1;
        }
        if (setgroups(0, NULL) != 0) return -1;
        if (setresgid(gid, gid, gid) != 0) return -1;
        // While CAP_SETPCAP is still held: nothing can be regained, not even through exec.
        if (drop_bounding_set() != 0) return -1;
        // From root to a user: the kernel clears the permitted and effective sets.
        if (setresuid(uid, uid, uid) != 0) return -1;
        if (clear_capability_sets() != 0) return -1;
        uid_t ruid, euid, suid;
        gid_t rgid, egid, sgid;
        if (getresuid(&ruid, &euid, &suid) != 0 || getresgid(&rgid, &egid, &sgid) != 0) return -1;
        if (ruid != uid || euid != uid || suid != uid || rgid != gid || egid != gid || sgid != gid ||
            getgroups(0, NULL) != 0 || setuid(0) == 0) {
            errno = EPERM;
            return -1;
        }
    } else {
        // Started unprivileged: the user stays; whatever capabilities came along
        // go (file capabilities, an ambient set). The bounding set can only be
        // emptied with CAP_SETPCAP; without it, it is left as it is (the report
        // says so), and no-new-privs keeps exec from using it.
        if (drop_bounding_set() != 0 && errno != EPERM) return -1;
        if (clear_capability_sets() != 0) return -1;
    }
    // A change of the effective user or group clears the parent-death signal:
    // set it again, so the helper still dies with its template (or parent).
    if (parent > 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return -1;
        if (getppid() != parent) {
            errno = ESRCH;  // the parent died in between
            return -1;
        }
    }
    return 0;
}

// ---- seccomp ------------------------------------------------------------------

#if defined(__x86_64__)
#define SHIM_AUDIT_ARCH AUDIT_ARCH_X86_64
#define SHIM_X32_SYSCALL_BIT 0x40000000
#elif defined(__aarch64__)
#define SHIM_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "shim_sandbox_seccomp: add this architecture's AUDIT_ARCH"
#endif

#define SHIM_ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

// The policy: an allowlist. Each call below is one the decoders were seen to
// make once the sandbox was up (scripts/record-helper-syscalls.sh records them
// over every fixture; the README's table gives each one's reason), or, marked
// so, one a process needs to survive a signal or a large reallocation.
// Everything else is refused with EPERM: a library probing an optional call
// carries on, and a taken-over decoder gains nothing (see shim_sandbox.h for why
// not KILL).
static const long allowed_calls[] = {
    // Memory: glibc's allocator, thread stacks, the decoders' buffers; mremap
    // (not seen) is realloc of a large block. mmap and mprotect are below:
    // never executable.
    SYS_brk, SYS_munmap, SYS_madvise, SYS_mremap,
    // Threads and their locks: libvips', libavcodec's and dav1d's worker
    // threads (clone is below: threads only); sched_yield (not seen) is how
    // thread pools spin politely.
    SYS_futex, SYS_set_robust_list, SYS_rseq, SYS_gettid, SYS_exit, SYS_sched_yield,
    // Reading the input (a descriptor the parent passed; MediaKit reads through
    // a dup of it) and the libraries' own files (Landlock: /usr and their
    // configuration, read-only): read, seek, stat, list, resolve links;
    // fontconfig and poppler ask the file system's type (fstatfs) and advise
    // the kernel of their reads (fadvise64).
    SYS_read, SYS_pread64, SYS_lseek, SYS_close, SYS_dup, SYS_newfstatat, SYS_getdents64, SYS_fstatfs, SYS_fadvise64,
#ifdef SYS_access
    SYS_access, SYS_readlink,
#else  // (architectures without them: glibc's access() and readlink() are these)
    SYS_faccessat, SYS_readlinkat,
#endif
    // Talking to the parent over descriptor 3 (requests in with their file's
    // descriptor, results out); stderr (/dev/null unless kept: GLib's warnings
    // with write, glibc's fatal messages with writev).
    SYS_recvmsg, SYS_sendmsg, SYS_write, SYS_writev,
    // Signals of its own: handlers and masks (GLib, the crash handler), and
    // (not seen) returning from a handler and resuming an interrupted call.
    SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_rt_sigreturn, SYS_restart_syscall,
    // Time: the CPU budget of each request (getrusage), ImageMagick's timers
    // (times), clocks the vDSO does not serve, timed waits.
    SYS_getrusage, SYS_times, SYS_clock_gettime, SYS_clock_nanosleep, SYS_nanosleep,
    // Its own pid, randomness for hash tables, the machine's memory size
    // (sysconf(_SC_PHYS_PAGES) is sysinfo), the end.
    SYS_getpid, SYS_getrandom, SYS_sysinfo, SYS_exit_group,
};

// The program under construction.
#define SHIM_MAX_FILTER 512
struct filter {
    struct sock_filter code[SHIM_MAX_FILTER];
    int length;
    int recording;  // every refusal allows instead (see shim_sandbox_seccomp)
    int overflow;
};

static void emit(struct filter *f, struct sock_filter instruction) {
    if (f->length < SHIM_MAX_FILTER) {
        f->code[f->length++] = instruction;
    } else {
        f->overflow = 1;
    }
}

static struct sock_filter allow(void) { return (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW); }

static struct sock_filter refuse(const struct filter *f, int error) {
    return (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, f->recording ? SECCOMP_RET_ALLOW : SHIM_ERRNO(error));
}

// A fixed answer rather than a refusal (ENOSYS for clone3 makes glibc use
// clone): recording keeps it, so that the calls made instead are recorded.
static struct sock_filter answer(int error) { return (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SHIM_ERRNO(error)); }

static struct sock_filter load_number(void) {
    return (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
}

// The low 32 bits of argument `i`: every argument checked here is an int, a
// pid_t or a flag word the kernel reads as 32 bits (on a little-endian machine).
static struct sock_filter load_argument(int i) {
    return (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]));
}

// Emits `if nr == call { body }`: the body (ending in a return) follows a jump
// over it. The body is built in `block` first, so its length is known.
static void when_call(struct filter *f, long call, const struct filter *block) {
    emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)call, 0, (uint8_t)block->length));
    for (int i = 0; i < block->length; i++) emit(f, block->code[i]);
    // (Skipping the body leaves the call's number in the accumulator.)
    if (block->overflow || block->length > 255) f->overflow = 1;
}

// A call whose argument `i` must be one of `values` (e.g. 0 or this process's pid).
static void call_with_argument_in(struct filter *f, long call, int i, const uint32_t *values, int count, int error) {
    struct filter block = {.length = 0, .recording = f->recording, .overflow = 0};
    emit(&block, load_argument(i));
    for (int k = 0; k < count; k++) {
        // On a match, jump to the final allow: over the remaining checks and the refusal.
        emit(&block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, values[k], (uint8_t)(count - k), 0));
    }
    emit(&block, refuse(f, error));
    emit(&block, allow());
    when_call(f, call, &block);
}

// A call allowed only when none of `forbidden` is set in argument `i`.
static void call_without_bits(struct filter *f, long call, int i, uint32_t forbidden, int error) {
    struct filter block = {.length = 0, .recording = f->recording, .overflow = 0};
    emit(&block, load_argument(i));
    emit(&block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, forbidden, 0, 1));
    emit(&block, refuse(f, error));
    emit(&block, allow());
    when_call(f, call, &block);
}

// A call answered with its own error, in recording mode too (ENOSYS where
// glibc then falls back; ENOTTY for ioctl).
static void call_answered(struct filter *f, long call, int error) {
    struct filter block = {.length = 0, .recording = f->recording, .overflow = 0};
    emit(&block, answer(error));
    when_call(f, call, &block);
}

int shim_sandbox_seccomp(int recording) {
    static struct filter f;
    memset(&f, 0, sizeof f);
    f.recording = recording;
    const uint32_t self = (uint32_t)getpid();

    // Only this architecture's calling convention: another one (a 32-bit call
    // into a 64-bit process) would see other numbers; it kills the process.
    emit(&f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
    emit(&f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SHIM_AUDIT_ARCH, 1, 0));
    emit(&f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    emit(&f, load_number());
#ifdef SHIM_X32_SYSCALL_BIT
    // x32 numbers (the same calls with bit 30 set) are refused, allowed or not.
    emit(&f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SHIM_X32_SYSCALL_BIT, 0, 1));
    emit(&f, refuse(&f, EPERM));
#endif

    for (size_t i = 0; i < sizeof allowed_calls / sizeof allowed_calls[0]; i++) {
        emit(&f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)allowed_calls[i], 0, 1));
        emit(&f, allow());
    }

    // mmap and mprotect: never executable memory. Every library module a
    // helper may need is loaded before the filter (DecoderIsolation's
    // HelperKind), so no code is mapped later; a taken-over decoder cannot map
    // shellcode, nor map its own input file executable.
    call_without_bits(&f, SYS_mmap, 2, PROT_EXEC, EPERM);
    call_without_bits(&f, SYS_mprotect, 2, PROT_EXEC, EPERM);

    // openat: reading only (Landlock decides where); no write access, no
    // creating, no truncating, no O_TMPFILE (it needs write access). (glibc's
    // open() is openat; the old open call is refused like any other.)
    const uint32_t writing = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
    call_without_bits(&f, SYS_openat, 2, writing, EACCES);
    // openat2 and clone3 pass their flags in a structure the filter cannot
    // read: ENOSYS makes glibc use openat and clone, whose flags it can.
    call_answered(&f, SYS_openat2, ENOSYS);
    call_answered(&f, SYS_clone3, ENOSYS);

    // clone: threads of this process only. A thread shares memory, files and
    // signal handlers, and asks for no namespace; a new process (fork, or
    // clone without CLONE_THREAD) is refused.
    {
        const uint32_t required = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
        const uint32_t permitted = required | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID;
        struct filter block = {.length = 0, .recording = f.recording, .overflow = 0};
        emit(&block, load_argument(0));
        // Any flag outside `permitted` (namespaces, CLONE_PARENT, CLONE_PTRACE, an exit signal): refused.
        emit(&block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, ~permitted, 2, 0));
        emit(&block, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, required));
        emit(&block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, required, 1, 0));
        emit(&block, refuse(&f, EPERM));
        emit(&block, allow());
        when_call(&f, SYS_clone, &block);
    }

    // Signals: to this process only (abort() and raise() use tgkill on it; the
    // crash handler re-raises). Never the parent, the template, its own process
    // group (kill(0)) or anyone else; tkill and the sigqueue calls, unused, are refused.
    const uint32_t self_only[] = {self};
    call_with_argument_in(&f, SYS_kill, 0, self_only, 1, EPERM);
    call_with_argument_in(&f, SYS_tgkill, 0, self_only, 1, EPERM);

    // Limits and scheduling: of this process only (0 is "the caller"). The CPU
    // budget of each request is set with prlimit64(0, RLIMIT_CPU); libav and
    // GLib count the CPUs they may use with sched_getaffinity(0).
    const uint32_t caller_or_self[] = {0, self};
    call_with_argument_in(&f, SYS_prlimit64, 0, caller_or_self, 2, EPERM);
    call_with_argument_in(&f, SYS_sched_getaffinity, 0, caller_or_self, 2, EPERM);

    // fcntl: descriptor flags and duplicates only; never F_SETOWN / F_SETSIG
    // (signals to other processes), leases or notifications.
    const uint32_t fcntl_commands[] = {F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD_CLOEXEC};
    call_with_argument_in(&f, SYS_fcntl, 1, fcntl_commands, 5, EPERM);

    // prctl: naming its threads (GLib's, libav's) and nothing else.
    const uint32_t prctl_options[] = {PR_SET_NAME};
    call_with_argument_in(&f, SYS_prctl, 0, prctl_options, 1, EPERM);

    // ioctl: none. Libraries ask whether stderr is a terminal (TCGETS); it is
    // not, and ENOTTY is the answer /dev/null itself would give.
    call_answered(&f, SYS_ioctl, ENOTTY);

    // Everything else.
    emit(&f, refuse(&f, EPERM));

    if (f.overflow) {
        errno = E2BIG;
        return -1;
    }
    struct sock_fprog program = {.len = (unsigned short)f.length, .filter = f.code};
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program);
}

int shim_seccomp_filter_available(void) {
    uint32_t action = SECCOMP_RET_ERRNO;
    return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0 ? 1 : 0;
}

// ---- Landlock -----------------------------------------------------------------

// The ruleset attributes as of ABI 6 (the headers here know only the first field).
struct shim_landlock_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#define SHIM_LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)   // ABI 3
#define SHIM_LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)  // ABI 5
#define SHIM_LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)   // ABI 4
#define SHIM_LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define SHIM_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)  // ABI 6
#define SHIM_LANDLOCK_SCOPE_SIGNAL (1ULL << 1)

int shim_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

int shim_landlock_restrict_to_reading(const char *const *paths, int count) {
    int abi = shim_landlock_abi();
    if (abi <= 0) return 0;
    struct shim_landlock_ruleset_attr attr = {0};
    attr.handled_access_fs = (1ULL << 13) - 1;  // ABI 1: EXECUTE … MAKE_SYM
    if (abi >= 2) attr.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) attr.handled_access_fs |= SHIM_LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5) attr.handled_access_fs |= SHIM_LANDLOCK_ACCESS_FS_IOCTL_DEV;
    size_t size = sizeof attr.handled_access_fs;
    if (abi >= 4) {
        attr.handled_access_net = SHIM_LANDLOCK_ACCESS_NET_BIND_TCP | SHIM_LANDLOCK_ACCESS_NET_CONNECT_TCP;
        size = offsetof(struct shim_landlock_ruleset_attr, scoped);
    }
    if (abi >= 6) {
        attr.scoped = SHIM_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | SHIM_LANDLOCK_SCOPE_SIGNAL;
        size = sizeof attr;
    }
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0) return -1;
    for (int i = 0; i < count; i++) {
        int fd = open(paths[i], O_PATH | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat st;
        struct landlock_path_beneath_attr rule = {.parent_fd = fd};
        if (fstat(fd, &st) == 0) {
            rule.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE;
            if (S_ISDIR(st.st_mode)) rule.allowed_access |= LANDLOCK_ACCESS_FS_READ_DIR;
            if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
                int saved = errno;
                close(fd);
                close(ruleset);
                errno = saved;
                return -1;
            }
        }
        close(fd);
    }
    int status = (int)syscall(SYS_landlock_restrict_self, ruleset, 0);
    int saved = errno;
    close(ruleset);
    errno = saved;
    return status == 0 ? abi : -1;
}

// ---- Before the policy ------------------------------------------------------------

int shim_preload_charset_conversions(const char *const *charsets, int count) {
    int loaded = 0;
    for (int i = 0; i < count; i++) {
        // Kept open for the process's life: glibc may unload a module whose last
        // converter is closed, and could not map it again under the policy.
        iconv_t converter = iconv_open("UTF-8", charsets[i]);
        if (converter != (iconv_t)-1) loaded++;
    }
    return loaded;
}

// ---- Resource limits ------------------------------------------------------------

int shim_sandbox_limits(uint64_t address_space_bytes, uint64_t open_files) {
    struct rlimit limit;
    if (address_space_bytes > 0) {
        limit.rlim_cur = limit.rlim_max = address_space_bytes;
        if (setrlimit(RLIMIT_AS, &limit) != 0) return -1;
    }
    if (open_files > 0) {
        // Best effort: valgrind keeps descriptors of its own above the limit and
        // refuses to lower it (EPERM); the other limits matter more.
        limit.rlim_cur = limit.rlim_max = open_files;
        if (setrlimit(RLIMIT_NOFILE, &limit) != 0 && errno != EPERM) return -1;
    }
    limit.rlim_cur = limit.rlim_max = 0;
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return -1;
    if (setrlimit(RLIMIT_CORE, &limit) != 0) return -1;
    // (After the privilege drop: a change of user resets the dumpable flag.)
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int shim_set_cpu_budget(double seconds) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return -1;
    double used = (double)usage.ru_utime.tv_sec + (double)usage.ru_stime.tv_sec +
                  ((double)usage.ru_utime.tv_usec + (double)usage.ru_stime.tv_usec) / 1e6;
    struct rlimit limit;
    if (getrlimit(RLIMIT_CPU, &limit) != 0) return -1;
    rlim_t wanted = (rlim_t)ceil(used + (seconds > 0 ? seconds : 0)) + 1;
    if (limit.rlim_max != RLIM_INFINITY && wanted > limit.rlim_max) wanted = limit.rlim_max;
    limit.rlim_cur = wanted;
    return setrlimit(RLIMIT_CPU, &limit);
}

int shim_close_descriptors_from(int lowest) { return (int)syscall(SYS_close_range, (unsigned)lowest, ~0U, 0); }
#endif
