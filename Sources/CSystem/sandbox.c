// The decoder helper's sandbox (see shim_sandbox.h).
#ifdef __linux__  // Linux calls only: on other systems this file is empty
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <math.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "shim_sandbox.h"

int shim_sandbox_no_new_privs(void) { return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); }

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

// Refused outright with EPERM.
static const long refused_calls[] = {
    // No network, no new processes, no other program.
    SYS_socket, SYS_socketpair, SYS_connect, SYS_bind, SYS_listen, SYS_accept, SYS_accept4,
    SYS_execve, SYS_execveat,
#ifdef SYS_fork
    SYS_fork, SYS_vfork,
#endif
    // No looking into or steering other processes.
    SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_kcmp, SYS_pidfd_open, SYS_pidfd_getfd,
    SYS_pidfd_send_signal, SYS_tkill, SYS_process_madvise,
    // No mounts, namespaces, root changes.
    SYS_mount, SYS_umount2, SYS_pivot_root, SYS_chroot, SYS_unshare, SYS_setns, SYS_open_tree, SYS_move_mount,
    SYS_fsopen, SYS_fsconfig, SYS_fsmount, SYS_fspick, SYS_mount_setattr,
    // No kernel-wide changes and no large attack surfaces of the kernel.
    SYS_init_module, SYS_finit_module, SYS_delete_module, SYS_kexec_load, SYS_kexec_file_load, SYS_bpf,
    SYS_perf_event_open, SYS_userfaultfd, SYS_keyctl, SYS_add_key, SYS_request_key, SYS_io_uring_setup,
    SYS_io_uring_enter, SYS_io_uring_register, SYS_reboot, SYS_swapon, SYS_swapoff, SYS_settimeofday,
    SYS_clock_settime, SYS_clock_adjtime, SYS_adjtimex, SYS_acct, SYS_quotactl, SYS_syslog, SYS_personality,
    SYS_name_to_handle_at, SYS_open_by_handle_at, SYS_fanotify_init, SYS_vhangup, SYS_sethostname,
    SYS_setdomainname,
#ifdef SYS_iopl
    SYS_iopl, SYS_ioperm,
#endif
};

// Refused with EACCES: changing the file system (Landlock already denies these;
// this is the second line, and the only one on kernels without Landlock).
static const long file_writing_calls[] = {
#ifdef SYS_creat
    SYS_creat, SYS_unlink, SYS_rmdir, SYS_rename, SYS_mkdir, SYS_link, SYS_symlink, SYS_mknod, SYS_chmod,
    SYS_chown, SYS_lchown, SYS_utimes, SYS_utime, SYS_futimesat,
#endif
    SYS_unlinkat, SYS_renameat, SYS_renameat2, SYS_mkdirat, SYS_linkat, SYS_symlinkat, SYS_mknodat,
    SYS_fchmodat, SYS_fchownat, SYS_utimensat, SYS_truncate,
};

// Filter program size: header (arch, x32) + one jump per listed call + the
// special cases below; generous.
#define SHIM_MAX_FILTER 256

int shim_sandbox_seccomp(void) {
    struct sock_filter program[SHIM_MAX_FILTER];
    int n = 0;
    const uint32_t self = (uint32_t)getpid();
#define EMIT(statement) (program[n++] = (struct sock_filter)statement)
#define LOAD_NR EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)))
#define LOAD_ARG_LOW(i) EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i])))

    // Only this architecture's calling convention.
    EMIT(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
    EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SHIM_AUDIT_ARCH, 1, 0));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    LOAD_NR;
#ifdef SHIM_X32_SYSCALL_BIT
    EMIT(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SHIM_X32_SYSCALL_BIT, 0, 1));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SHIM_ERRNO(EPERM)));
#endif
    for (size_t i = 0; i < sizeof refused_calls / sizeof refused_calls[0]; i++) {
        EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)refused_calls[i], 0, 1));
        EMIT(BPF_STMT(BPF_RET | BPF_K, SHIM_ERRNO(EPERM)));
    }
    for (size_t i = 0; i < sizeof file_writing_calls / sizeof file_writing_calls[0]; i++) {
        EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)file_writing_calls[i], 0, 1));
        EMIT(BPF_STMT(BPF_RET | BPF_K, SHIM_ERRNO(EACCES)));
    }
    // clone3's flags live in a structure the filter cannot read: ENOSYS makes
    // glibc fall back to clone.
    EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SHIM_ERRNO(ENOSYS)));
    // clone: threads only (CLONE_THREAD in the flags, the first argument).
    EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
    LOAD_ARG_LOW(0);
    EMIT(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SHIM_ERRNO(EPERM)));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    // kill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo: this process only (its
    // own pid as the first argument; abort() and raise() use tgkill on it).
    const long own_signal_calls[] = {SYS_kill, SYS_tgkill, SYS_rt_sigqueueinfo, SYS_rt_tgsigqueueinfo};
    for (size_t i = 0; i < 4; i++) {
        EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)own_signal_calls[i], 0, 4));
        LOAD_ARG_LOW(0);
        EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, self, 1, 0));
        EMIT(BPF_STMT(BPF_RET | BPF_K, SHIM_ERRNO(EPERM)));
        EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    }
    // open, openat: no write access, no creating, no truncating.
    const uint32_t writing = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;  // (O_TMPFILE needs O_WRONLY or O_RDWR)
#ifdef SYS_open
    EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 0, 4));
    LOAD_ARG_LOW(1);
    EMIT(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, writing, 0, 1));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SHIM_ERRNO(EACCES)));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
#endif
    EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 4));
    LOAD_ARG_LOW(2);
    EMIT(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, writing, 0, 1));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SHIM_ERRNO(EACCES)));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    // openat2 passes its flags in a structure: ENOSYS (glibc does not need it).
    EMIT(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SHIM_ERRNO(ENOSYS)));
    EMIT(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
#undef EMIT
#undef LOAD_NR
#undef LOAD_ARG_LOW
    if (n > SHIM_MAX_FILTER) {
        errno = E2BIG;
        return -1;
    }
    struct sock_fprog fprog = {.len = (unsigned short)n, .filter = program};
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog);
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
