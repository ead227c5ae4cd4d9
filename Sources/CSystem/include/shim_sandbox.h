// The decoder helper's sandbox: no privileges, no-new-privs, a seccomp-bpf
// allowlist, Landlock and resource limits. Written in C because the BPF program is built from
// kernel macros and structures (BPF_STMT, BPF_JUMP, seccomp_data offsets), and
// Landlock has no glibc wrappers (raw syscall()s with kernel structures newer
// than the headers here).
#ifndef SHIM_SANDBOX_H
#define SHIM_SANDBOX_H

#include <stdint.h>
#include <sys/types.h>

/// prctl(PR_SET_NO_NEW_PRIVS, 1): execve can never grant privileges again
/// (setuid bits, file capabilities); required before an unprivileged process
/// may install a seccomp filter or a Landlock domain. 0 or -1 (errno).
int shim_sandbox_no_new_privs(void);

/// Installs the helper's seccomp-bpf policy (seccomp(SECCOMP_SET_MODE_FILTER,
/// SECCOMP_FILTER_FLAG_TSYNC): every thread of the process, at once). An
/// allowlist: the calls the decoders were recorded making, some with their
/// arguments checked (signals, limits and scheduling of this process only;
/// threads but no processes; no executable memory; files opened for reading
/// only; fcntl and prctl commands from a short list); everything else fails.
///
/// Refused calls fail with EPERM (EACCES for opening a file for writing, ENOSYS
/// for clone3 and openat2 so that glibc falls back to clone and openat, ENOTTY
/// for ioctl) rather than killing the helper: a library probing an optional
/// call carries on, and a taken-over decoder gains nothing either way. A call of
/// another architecture's convention (x32) is refused; a different audit
/// architecture kills the process.
///
/// `recording` (only for scripts/record-helper-syscalls.sh, under strace):
/// the same program, but every refusal allows instead, so that one recording
/// run sees every call the decoders would make. 0 or -1 (errno).
int shim_sandbox_seccomp(int recording);

/// 1 when the kernel can install seccomp filters that answer with an errno
/// (seccomp(SECCOMP_GET_ACTION_AVAIL, SECCOMP_RET_ERRNO)); 0 when not (no
/// seccomp, or valgrind, which does not know the call).
int shim_seccomp_filter_available(void);

/// Gives up every privilege, in the single-threaded helper before it reads any
/// input. Started as root (effective uid 0): no supplementary groups, `gid` as
/// real, effective and saved group, an empty capability bounding set, `uid` as
/// real, effective and saved user, empty effective, permitted, inheritable and
/// ambient sets; then checks that setuid(0) fails. `uid` or `gid` 0 is refused
/// (EINVAL): a helper never decodes as root. Started unprivileged: the user
/// stays, the capability sets are emptied (the bounding set too when the
/// process holds CAP_SETPCAP). Either way, when `parent` > 0 the parent-death
/// signal (SIGKILL), which a change of user clears, is set again and the
/// parent must still be `parent`. 0 or -1 (errno).
int shim_drop_privileges(uid_t uid, gid_t gid, pid_t parent);

/// The Landlock ABI version the kernel offers (0 when Landlock is absent or disabled).
int shim_landlock_abi(void);

/// Restricts the calling process with Landlock: every file-system right the
/// kernel's ABI knows is handled, and only reading is allowed, beneath each of
/// the `count` paths (files: read; folders: read and list). Missing paths are
/// skipped. With ABI 4 or later TCP bind and connect are handled (none allowed);
/// with ABI 6 or later abstract Unix sockets and signals are scoped to the
/// domain. Requires no-new-privs. Returns the ABI used (> 0), 0 when the kernel
/// has no Landlock, or -1 (errno).
int shim_landlock_restrict_to_reading(const char *const *paths, int count);

/// Opens (and keeps open) an iconv converter from each of `charsets` to
/// UTF-8, so that glibc loads their gconv modules (shared objects it maps on a
/// converter's first use) before the seccomp policy forbids mapping code:
/// libavformat converts MPEG-TS service names this way. Returns how many loaded.
int shim_preload_charset_conversions(const char *const *charsets, int count);

/// setrlimit RLIMIT_AS (address space, both soft and hard, when > 0),
/// RLIMIT_NOFILE (open files; skipped where refused, as under valgrind),
/// RLIMIT_FSIZE 0 (no file may grow), RLIMIT_CORE 0 and prctl(PR_SET_DUMPABLE,
/// 0) (a crash leaves no core dump of untrusted bytes, and no other process of
/// its user may ptrace it). Call after shim_drop_privileges: a change of user
/// resets the dumpable flag. 0 or -1 (errno).
int shim_sandbox_limits(uint64_t address_space_bytes, uint64_t open_files);

/// Sets the soft RLIMIT_CPU to the CPU seconds this process has used so far plus
/// `seconds` (rounded up): the kernel sends SIGXCPU once one request has burnt
/// that much CPU. Raising it again for the next request needs no privilege
/// (the hard limit stays unlimited; the parent's wall-clock deadline is the authority).
int shim_set_cpu_budget(double seconds);

/// close_range(lowest, ~0U, 0): closes every descriptor from `lowest` up, so a
/// helper keeps nothing its parent had open (journal, container files).
int shim_close_descriptors_from(int lowest);

#endif
