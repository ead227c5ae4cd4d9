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
#include <linux/futex.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "shim_sandbox.h"

#ifdef DEBUG
// Debug and test builds only (SwiftPM defines DEBUG for C targets in debug
// builds): SHARE_TEST_NO_LANDLOCK=1 makes this process see a kernel without
// Landlock, so the attacker test can run the fallbacks on a machine that has
// it. A release build has no such switch.
static int landlock_hidden_for_tests(void) {
    const char *value = getenv("SHARE_TEST_NO_LANDLOCK");
    return value != NULL && strcmp(value, "1") == 0;
}
#endif

int shim_make_undumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

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
// over every fixture; the table in docs/security.md gives each one's reason), or, marked
// so, one a process needs to survive a signal or a large reallocation.
// Everything else traps (SECCOMP_RET_TRAP): the helper reports the call to its
// parent and dies (see shim_sandbox_seccomp). Only a few calls the libraries
// probe and cope with get an error instead (each below says why).
static const long allowed_calls[] = {
    // Memory: glibc's allocator, thread stacks, the decoders' buffers; mremap
    // (not seen) is realloc of a large block. mmap, mprotect and madvise are
    // below: never executable, no shared writable mapping, known advice only.
    SYS_brk, SYS_munmap, SYS_mremap,
    // Threads: libvips', libavcodec's and dav1d's worker threads (clone and
    // futex are below); sched_yield (not seen) is how thread pools spin politely.
    SYS_set_robust_list, SYS_rseq, SYS_gettid, SYS_exit, SYS_sched_yield,
    // Reading the input (a descriptor the parent passed; MediaKit reads through
    // a dup of it) and the libraries' own files (Landlock, or the namespace's
    // read-only binds: /usr and their configuration): read, seek, stat, list,
    // resolve links; fontconfig and poppler ask the file system's type
    // (fstatfs) and advise the kernel of their reads (fadvise64).
    SYS_read, SYS_pread64, SYS_lseek, SYS_close, SYS_dup, SYS_newfstatat, SYS_getdents64, SYS_fstatfs, SYS_fadvise64,
#ifdef SYS_access
    SYS_access, SYS_readlink,
#else  // (architectures without them: glibc's access() and readlink() are these)
    SYS_faccessat, SYS_readlinkat,
#endif
    // Talking to the parent over descriptor 3 (requests in with their file's
    // descriptor, results out; a descriptor sent back is refused by the
    // parent); stderr (/dev/null unless kept: GLib's warnings with write,
    // glibc's fatal messages with writev).
    SYS_recvmsg, SYS_sendmsg, SYS_write, SYS_writev,
    // Signals of its own: masks (GLib, the crash handler; rt_sigaction is
    // below: never for SIGSYS), and (not seen) returning from a handler and
    // resuming an interrupted call.
    SYS_rt_sigprocmask, SYS_rt_sigreturn, SYS_restart_syscall,
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

// A forbidden call: the helper's SIGSYS handler reports it and the helper dies.
static struct sock_filter forbid(const struct filter *f) {
    return (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, f->recording ? SECCOMP_RET_ALLOW : SECCOMP_RET_TRAP);
}

// Death without a word, for what would silence the report (a handler for
// SIGSYS) and for another audit architecture.
static struct sock_filter kill_process(const struct filter *f) {
    return (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, f->recording ? SECCOMP_RET_ALLOW : SECCOMP_RET_KILL_PROCESS);
}

// A fixed answer rather than a trap, for a call libraries probe and do without
// (ENOSYS for clone3 makes glibc use clone): recording keeps it, so that the
// calls made instead are recorded.
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

// Emits: when the accumulator is one of `values`, allow; else `otherwise`.
static void allow_values(struct filter *block, const uint32_t *values, int count, struct sock_filter otherwise) {
    for (int k = 0; k < count; k++) {
        // On a match, jump to the final allow: over the remaining checks and the refusal.
        emit(block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, values[k], (uint8_t)(count - k), 0));
    }
    emit(block, otherwise);
    emit(block, allow());
}

// A call whose argument `i` must be one of `values` (e.g. 0 or this process's pid).
static void call_with_argument_in(struct filter *f, long call, int i, const uint32_t *values, int count) {
    struct filter block = {.length = 0, .recording = f->recording, .overflow = 0};
    emit(&block, load_argument(i));
    allow_values(&block, values, count, forbid(f));
    when_call(f, call, &block);
}

// A call allowed only when none of `forbidden` is set in argument `i`.
static void call_without_bits(struct filter *f, long call, int i, uint32_t forbidden) {
    struct filter block = {.length = 0, .recording = f->recording, .overflow = 0};
    emit(&block, load_argument(i));
    emit(&block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, forbidden, 0, 1));
    emit(&block, forbid(f));
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

// ---- The report of a forbidden call ------------------------------------------------

// The descriptor the report goes to (the helper's socket), set before the filter.
static volatile int report_descriptor = -1;

// SIGSYS from SECCOMP_RET_TRAP: one protocol frame to the parent naming the
// call (length 5, type SHIM_FORBIDDEN_CALL_MESSAGE, the call's number as a
// little-endian int32), then death by SIGSYS itself (SA_RESETHAND made the
// action the default again; SA_NODEFER lets it through at once). Only raw
// write and tgkill, both allowed, both async-signal-safe. The kernel delivers
// this signal even where the thread blocked it, and a helper cannot install
// another handler for it (rt_sigaction(SIGSYS) kills).
static void report_forbidden_call(int signal, siginfo_t *info, void *context) {
    (void)context;
    int32_t number = info->si_syscall;
    unsigned char frame[9] = {5, 0, 0, 0, SHIM_FORBIDDEN_CALL_MESSAGE};
    for (int i = 0; i < 4; i++) frame[5 + i] = (unsigned char)((uint32_t)number >> (8 * i));
    if (report_descriptor >= 0) (void)syscall(SYS_write, report_descriptor, frame, sizeof frame);
    (void)syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid), signal);
    // (Not reached: the default action of SIGSYS ends the process.)
    syscall(SYS_exit_group, 128 + signal);
}

int shim_sandbox_seccomp(int recording, int report_fd) {
    static struct filter f;
    memset(&f, 0, sizeof f);
    f.recording = recording;
    const uint32_t self = (uint32_t)getpid();

    report_descriptor = report_fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = report_forbidden_call;
    action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSYS, &action, NULL) != 0) return -1;

    // Only this architecture's calling convention: another one (a 32-bit call
    // into a 64-bit process) would see other numbers; it kills the process.
    emit(&f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
    emit(&f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SHIM_AUDIT_ARCH, 1, 0));
    emit(&f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    emit(&f, load_number());
#ifdef SHIM_X32_SYSCALL_BIT
    // x32 numbers (the same calls with bit 30 set) are forbidden, allowed or not.
    emit(&f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SHIM_X32_SYSCALL_BIT, 0, 1));
    emit(&f, forbid(&f));
#endif

    for (size_t i = 0; i < sizeof allowed_calls / sizeof allowed_calls[0]; i++) {
        emit(&f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)allowed_calls[i], 0, 1));
        emit(&f, allow());
    }

    // mmap: never executable memory (every library module a helper may need is
    // loaded before the filter: DecoderIsolation's HelperKind), only the flags
    // Chromium's baseline policy allows, and no shared writable mapping (of
    // the input, say: fontconfig maps its caches shared, but read-only).
    {
        struct filter block = {.length = 0, .recording = f.recording, .overflow = 0};
        const uint32_t flags = MAP_SHARED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE | MAP_FIXED | MAP_DENYWRITE |
                               MAP_FIXED_NOREPLACE;
        emit(&block, load_argument(2));
        emit(&block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 5, 0));
        emit(&block, load_argument(3));
        emit(&block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, ~flags, 3, 0));
        emit(&block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_SHARED, 0, 3));
        emit(&block, load_argument(2));
        emit(&block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_WRITE, 0, 1));
        emit(&block, forbid(&f));
        emit(&block, allow());
        when_call(&f, SYS_mmap, &block);
    }
    call_without_bits(&f, SYS_mprotect, 2, ~(uint32_t)(PROT_READ | PROT_WRITE));

    // madvise: the advice Chromium's baseline allows (what allocators and
    // thread stacks give); no merging, poisoning, hugepage or page-out advice.
    const uint32_t advice[] = {MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED, MADV_DONTNEED, MADV_FREE, MADV_DONTDUMP};
    call_with_argument_in(&f, SYS_madvise, 2, advice, (int)(sizeof advice / sizeof advice[0]));

    // futex: the plain operations (private or shared, either clock) and the
    // priority-inheritance locks of glibc's mutexes; never the requeue-PI
    // operations (the kernel's futex bugs have lived there), as in Chromium's
    // baseline policy.
    {
        struct filter block = {.length = 0, .recording = f.recording, .overflow = 0};
        const uint32_t operations[] = {FUTEX_WAIT,        FUTEX_WAKE,        FUTEX_REQUEUE, FUTEX_CMP_REQUEUE, FUTEX_WAKE_OP,
                                       FUTEX_WAIT_BITSET, FUTEX_WAKE_BITSET, FUTEX_LOCK_PI, FUTEX_UNLOCK_PI,   FUTEX_TRYLOCK_PI};
        emit(&block, load_argument(1));
        emit(&block, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~(uint32_t)(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)));
        allow_values(&block, operations, (int)(sizeof operations / sizeof operations[0]), forbid(&f));
        when_call(&f, SYS_futex, &block);
    }

    // openat: reading only (Landlock or the namespace decides where). Opening
    // for writing is answered EACCES, not trapped: liborc and fontconfig try to
    // create scratch and cache files and do without (the recording shows it).
    // (glibc's open() is openat; the old open call is forbidden like any other.)
    {
        struct filter block = {.length = 0, .recording = f.recording, .overflow = 0};
        const uint32_t writing = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
        emit(&block, load_argument(2));
        emit(&block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, writing, 0, 1));
        emit(&block, f.recording ? allow() : answer(EACCES));
        emit(&block, allow());
        when_call(&f, SYS_openat, &block);
    }
    // openat2 and clone3 pass their flags in a structure the filter cannot
    // read: ENOSYS makes glibc use openat and clone, whose flags it can (glibc
    // probes clone3 for every thread).
    call_answered(&f, SYS_openat2, ENOSYS);
    call_answered(&f, SYS_clone3, ENOSYS);

    // clone: threads of this process only. A thread shares memory, files and
    // signal handlers, and asks for no namespace; a new process (fork, or
    // clone without CLONE_THREAD) is forbidden.
    {
        const uint32_t required = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
        const uint32_t permitted = required | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID;
        struct filter block = {.length = 0, .recording = f.recording, .overflow = 0};
        emit(&block, load_argument(0));
        // Any flag outside `permitted` (namespaces, CLONE_PARENT, CLONE_PTRACE, an exit signal): forbidden.
        emit(&block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, ~permitted, 2, 0));
        emit(&block, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, required));
        emit(&block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, required, 1, 0));
        emit(&block, forbid(&f));
        emit(&block, allow());
        when_call(&f, SYS_clone, &block);
    }

    // Signal handlers: any signal but SIGSYS, whose handler reports forbidden
    // calls; replacing it (or ignoring it) would let an attacker probe in
    // silence, so that kills the helper outright.
    {
        struct filter block = {.length = 0, .recording = f.recording, .overflow = 0};
        emit(&block, load_argument(0));
        emit(&block, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SIGSYS, 0, 1));
        emit(&block, kill_process(&f));
        emit(&block, allow());
        when_call(&f, SYS_rt_sigaction, &block);
    }

    // Signals: to this process only (abort() and raise() use tgkill on it; the
    // crash handler re-raises). Never the parent, the template, a sibling, its
    // own process group (kill(0)) or anyone else; tkill and the sigqueue calls,
    // unused, are forbidden.
    const uint32_t self_only[] = {self};
    call_with_argument_in(&f, SYS_kill, 0, self_only, 1);
    call_with_argument_in(&f, SYS_tgkill, 0, self_only, 1);

    // Limits and scheduling: of this process only (0 is "the caller"). The CPU
    // budget of each request is set with prlimit64(0, RLIMIT_CPU) under a hard
    // limit it cannot raise; libav and GLib count the CPUs they may use with
    // sched_getaffinity(0).
    const uint32_t caller_or_self[] = {0, self};
    call_with_argument_in(&f, SYS_prlimit64, 0, caller_or_self, 2);
    call_with_argument_in(&f, SYS_sched_getaffinity, 0, caller_or_self, 2);

    // fcntl: descriptor flags and duplicates only; never F_SETOWN / F_SETSIG
    // (signals to other processes), leases or notifications.
    const uint32_t fcntl_commands[] = {F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD_CLOEXEC};
    call_with_argument_in(&f, SYS_fcntl, 1, fcntl_commands, 5);

    // prctl: naming its threads (GLib's, libav's) and nothing else.
    const uint32_t prctl_options[] = {PR_SET_NAME};
    call_with_argument_in(&f, SYS_prctl, 0, prctl_options, 1);

    // ioctl: none. Libraries ask whether stderr is a terminal (TCGETS) and do
    // without; ENOTTY is the answer /dev/null itself would give.
    call_answered(&f, SYS_ioctl, ENOTTY);

    // Everything else.
    emit(&f, forbid(&f));

    if (f.overflow) {
        errno = E2BIG;
        return -1;
    }
    struct sock_fprog program = {.len = (unsigned short)f.length, .filter = f.code};
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program);
}

int shim_seccomp_filter_available(void) {
    uint32_t action = SECCOMP_RET_TRAP;
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
#ifdef DEBUG
    if (landlock_hidden_for_tests()) return 0;
#endif
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

// ---- Without Landlock: a root of its own ---------------------------------------------

static int write_text(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t length = strlen(text);
    ssize_t written = write(fd, text, length);
    int saved = errno;
    close(fd);
    errno = saved;
    return written == (ssize_t)length ? 0 : -1;
}

// The mount flags a remount must repeat (a mount made in another user
// namespace keeps them locked: leaving one out is EPERM).
static unsigned long locked_flags(const char *path) {
    struct statvfs fs;
    if (statvfs(path, &fs) != 0) return 0;
    unsigned long flags = 0;
    if (fs.f_flag & ST_NOSUID) flags |= MS_NOSUID;
    if (fs.f_flag & ST_NODEV) flags |= MS_NODEV;
    if (fs.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
    if (fs.f_flag & ST_NOATIME) flags |= MS_NOATIME;
    if (fs.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
    if (fs.f_flag & ST_RELATIME) flags |= MS_RELATIME;
    return flags;
}

// mkdir -p of `path`'s folders below `root` (and of `path` itself when `folder`).
static int make_parents(const char *path, int folder) {
    char copy[4096];
    if (strlen(path) >= sizeof copy) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(copy, path);
    for (char *p = copy + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(copy, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (folder) return mkdir(copy, 0755) != 0 && errno != EEXIST ? -1 : 0;
    int fd = open(copy, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

// Where the new root is built: an existing folder, which a tmpfs covers in this
// mount namespace only.
static const char *const root_candidates[] = {"/tmp", "/mnt", "/var/tmp"};

// In the new mount namespace: a tmpfs over a folder, each readable path bound
// into it read-only, the tmpfs itself made read-only, then chroot into it.
static int build_root(const char *const *paths, int count) {
    // Nothing mounted here propagates back to the parent's namespace.
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
    const char *base = NULL;
    for (size_t i = 0; i < sizeof root_candidates / sizeof root_candidates[0] && base == NULL; i++) {
        if (mount("share-helper", root_candidates[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m,mode=0755") == 0) base = root_candidates[i];
    }
    if (base == NULL) return -1;
    char target[4096];
    for (int i = 0; i < count; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) continue;
        if (snprintf(target, sizeof target, "%s%s", base, paths[i]) >= (int)sizeof target) continue;
        if (make_parents(target, S_ISDIR(st.st_mode)) != 0) return -1;
        if (mount(paths[i], target, NULL, MS_BIND | MS_REC, NULL) != 0) return -1;
        if (mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | locked_flags(target), NULL) != 0) return -1;
    }
    if (mount(NULL, base, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m,mode=0755") != 0) return -1;
    if (chdir(base) != 0 || chroot(".") != 0 || chdir("/") != 0) return -1;
    return 0;
}

int shim_confine_in_namespace(const char *const *paths, int count) {
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (uid == 0) {
        if (unshare(CLONE_NEWNS) != 0) return -1;
    } else if (unshare(CLONE_NEWNS) == 0) {
        // Unprivileged, but holding CAP_SYS_ADMIN and CAP_SYS_CHROOT (the
        // ambient set of deploy/systemd/mount-namespace.conf, where no user
        // namespace can be made): a mount namespace of its own is enough.
    } else {
        // /proc/self/uid_map is root's while the process is not dumpable (a
        // fork of the non-dumpable parent): dumpable until shim_sandbox_limits,
        // which runs before any input arrives.
        if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) return -1;
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return -1;
        // The same user and group inside (its files' owners read the same),
        // no setgroups (an unprivileged user namespace may not).
        char map[64];
        if (write_text("/proc/self/setgroups", "deny") != 0) return -1;
        snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
        if (write_text("/proc/self/uid_map", map) != 0) return -1;
        snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
        if (write_text("/proc/self/gid_map", map) != 0) return -1;
    }
    return build_root(paths, count);
}

int shim_confine_in_empty_folder(void) {
    char path[] = "/tmp/share-helper-root-XXXXXX";
    if (mkdtemp(path) == NULL) return -1;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int saved = errno;
    // Removed at once: nothing can be created in a removed folder, and nothing is left behind.
    rmdir(path);
    if (fd < 0) {
        errno = saved;
        return -1;
    }
    int status = fchdir(fd) == 0 && chroot(".") == 0 && chdir("/") == 0 ? 0 : -1;
    saved = errno;
    close(fd);
    errno = saved;
    return status;
}

int shim_confinement_available(void) {
    if (shim_landlock_abi() > 0) return SHIM_CONFINEMENT_LANDLOCK;
    // Tried in a child that does nothing else (async-signal-safe calls only:
    // this process may have threads), so this process's namespaces stay as they are.
    uid_t uid = geteuid();
    gid_t gid = getegid();
    char uid_map[64], gid_map[64];
    snprintf(uid_map, sizeof uid_map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    snprintf(gid_map, sizeof gid_map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    pid_t child = fork();
    if (child == 0) {
        if (uid == 0) {
            if (unshare(CLONE_NEWNS) != 0) _exit(1);
        } else if (unshare(CLONE_NEWNS) == 0) {
            // (Unprivileged with CAP_SYS_ADMIN: as shim_confine_in_namespace.)
        } else {
            // (Its /proc/self is root's while it is not dumpable, as this process is.)
            if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0 || unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) _exit(1);
            if (write_text("/proc/self/setgroups", "deny") != 0 || write_text("/proc/self/uid_map", uid_map) != 0 ||
                write_text("/proc/self/gid_map", gid_map) != 0)
                _exit(1);
        }
        // (A propagation change ignores the type: "none" rather than NULL keeps
        // valgrind, which reads it as a string, quiet in the memory check.)
        if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0) _exit(1);
        for (size_t i = 0; i < sizeof root_candidates / sizeof root_candidates[0]; i++) {
            if (mount("share-probe", root_candidates[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k") == 0) _exit(0);
        }
        _exit(1);
    }
    if (child > 0) {
        int status = 0;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return SHIM_CONFINEMENT_NAMESPACE;
    }
    return uid == 0 ? SHIM_CONFINEMENT_EMPTY_ROOT : SHIM_CONFINEMENT_NONE;
}

int shim_unprivileged_namespaces_available(uid_t uid, gid_t gid) {
    // As shim_confinement_available's probe, in a child (async-signal-safe calls
    // only), which first becomes `uid` and `gid` when this process is root.
    char uid_map[64], gid_map[64];
    snprintf(uid_map, sizeof uid_map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    snprintf(gid_map, sizeof gid_map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    pid_t child = fork();
    if (child == 0) {
        if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0)) _exit(1);
        if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0 || unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) _exit(1);
        if (write_text("/proc/self/setgroups", "deny") != 0 || write_text("/proc/self/uid_map", uid_map) != 0 ||
            write_text("/proc/self/gid_map", gid_map) != 0)
            _exit(1);
        // (A propagation change ignores the type: "none" rather than NULL keeps
        // valgrind, which reads it as a string, quiet in the memory check.)
        if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0) _exit(1);
        for (size_t i = 0; i < sizeof root_candidates / sizeof root_candidates[0]; i++) {
            if (mount("share-probe", root_candidates[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k") == 0) _exit(0);
        }
        _exit(1);
    }
    if (child < 0) return 0;
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 1 : 0;
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

int shim_sandbox_limits(uint64_t address_space_bytes, uint64_t open_files, uint64_t cpu_seconds) {
    struct rlimit limit;
    if (cpu_seconds > 0) {
        // Hard as well as soft: without CAP_SYS_RESOURCE it can only be lowered.
        limit.rlim_cur = limit.rlim_max = cpu_seconds;
        if (setrlimit(RLIMIT_CPU, &limit) != 0) return -1;
    }
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
