// The decoder helper's sandbox: no privileges, no-new-privs, a seccomp-bpf
// allowlist, Landlock and resource limits. Written in C because the BPF program is built from
// kernel macros and structures (BPF_STMT, BPF_JUMP, seccomp_data offsets), and
// Landlock has no glibc wrappers (raw syscall()s with kernel structures newer
// than the headers here).
#ifndef SHIM_SANDBOX_H
#define SHIM_SANDBOX_H

#include <stdint.h>
#include <sys/types.h>

/// prctl(PR_SET_DUMPABLE, 0) for the parent: a helper of its own user can then
/// read neither its /proc/PID/environ, mem nor fd (nor ptrace it). 0 or -1 (errno).
int shim_make_undumpable(void);

/// prctl(PR_SET_NO_NEW_PRIVS, 1): execve can never grant privileges again
/// (setuid bits, file capabilities); required before an unprivileged process
/// may install a seccomp filter or a Landlock domain. 0 or -1 (errno).
int shim_sandbox_no_new_privs(void);

/// The type of the protocol message a helper's SIGSYS handler sends its parent
/// when the policy traps a call (DecoderIsolation's `HelperMessage.Kind.forbiddenCall`).
#define SHIM_FORBIDDEN_CALL_MESSAGE 9

/// Installs the helper's seccomp-bpf policy (seccomp(SECCOMP_SET_MODE_FILTER,
/// SECCOMP_FILTER_FLAG_TSYNC): every thread of the process, at once). An
/// allowlist: the calls the decoders were recorded making, some with their
/// arguments checked (signals, limits and scheduling of this process only;
/// threads but no processes; no executable memory and no shared writable
/// mapping; known mmap flags, madvise advice and futex operations, as
/// Chromium's baseline policy; files opened for reading only; fcntl and prctl
/// commands from a short list; no handler for SIGSYS).
///
/// Anything else traps: a SIGSYS handler installed here writes one protocol
/// frame naming the call (type SHIM_FORBIDDEN_CALL_MESSAGE, the call's number)
/// to `report_fd` (the helper's socket) and the helper dies of SIGSYS; so a
/// taken-over decoder gets one forbidden call, and its parent hears which.
/// Replacing the SIGSYS handler, or a call of another audit architecture,
/// kills at once (SECCOMP_RET_KILL_PROCESS). Errors are kept only for calls
/// the libraries probe and do without: EACCES for opening a file for writing,
/// ENOSYS for clone3 and openat2 (glibc falls back to clone and openat),
/// ENOTTY for ioctl.
///
/// `recording` (only for scripts/record-helper-syscalls.sh, under strace, in
/// debug builds): the same program, but every trap and kill allows instead, so
/// that one recording run sees every call the decoders would make. 0 or -1 (errno).
int shim_sandbox_seccomp(int recording, int report_fd);

/// The name of system call `number` on this architecture ("add_key"), or NULL.
const char *shim_syscall_name(long number);

/// What confines a helper's file-system view, strongest first (see
/// shim_confinement_available).
#define SHIM_CONFINEMENT_NONE 0
#define SHIM_CONFINEMENT_EMPTY_ROOT 1
#define SHIM_CONFINEMENT_NAMESPACE 2
#define SHIM_CONFINEMENT_LANDLOCK 3

/// The strongest confinement this machine offers a helper of this process:
/// Landlock when the kernel has it; else a mount namespace (with a user
/// namespace when this process is not root) in which a tmpfs can be mounted,
/// tried in a short-lived child; else, for root, chroot into an empty folder;
/// else none.
int shim_confinement_available(void);

/// 1 when a process of user `uid` and group `gid` (this process becomes them
/// in a forked child first, when it is root) can make a user and mount
/// namespace and mount in it: what a helper of an unprivileged `share` needs
/// where there is no Landlock (the systemd units' no-landlock.conf); 0 otherwise.
int shim_unprivileged_namespaces_available(uid_t uid, gid_t gid);

/// Without Landlock: a new mount namespace (and, when not root, a new user
/// namespace mapping this user and group to themselves) whose root is a
/// read-only tmpfs holding only the `count` paths, each bound read-only
/// (missing ones skipped), then chroot into it. Single-threaded callers only
/// (unshare(CLONE_NEWUSER)), before the privileges are dropped. 0 or -1 (errno).
int shim_confine_in_namespace(const char *const *paths, int count);

/// For root without Landlock or namespaces: chroot into a new folder that is
/// removed at once (empty, and nothing can be created in it). 0 or -1 (errno).
int shim_confine_in_empty_folder(void);

/// 1 when the kernel can install seccomp filters that trap
/// (seccomp(SECCOMP_GET_ACTION_AVAIL, SECCOMP_RET_TRAP)); 0 when not (no
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

/// The Landlock ABI version the kernel offers (0 when Landlock is absent or
/// disabled; in debug builds also when SHARE_TEST_NO_LANDLOCK=1).
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

/// setrlimit RLIMIT_CPU (soft and hard, when > 0: the helper's CPU seconds in
/// all, which it cannot raise), RLIMIT_AS (address space, both soft and hard,
/// when > 0), RLIMIT_NOFILE (open files; skipped where refused, as under
/// valgrind), RLIMIT_FSIZE 0 (no file may grow), RLIMIT_CORE 0 and
/// prctl(PR_SET_DUMPABLE, 0) (a crash leaves no core dump of untrusted bytes,
/// and no other process of its user may ptrace it). Call after
/// shim_drop_privileges: a change of user resets the dumpable flag. 0 or -1 (errno).
int shim_sandbox_limits(uint64_t address_space_bytes, uint64_t open_files, uint64_t cpu_seconds);

/// Sets the soft RLIMIT_CPU to the CPU seconds this process has used so far plus
/// `seconds` (rounded up): the kernel sends SIGXCPU once one request has burnt
/// that much CPU. Raising it again for the next request needs no privilege
/// (the hard limit stays unlimited; the parent's wall-clock deadline is the authority).
int shim_set_cpu_budget(double seconds);

/// close_range(lowest, ~0U, 0): closes every descriptor from `lowest` up, so a
/// helper keeps nothing its parent had open (journal, container files).
int shim_close_descriptors_from(int lowest);

#endif
