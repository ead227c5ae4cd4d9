// The decoder helper's sandbox: no-new-privs, a seccomp-bpf filter, Landlock
// and resource limits. Written in C because the BPF program is built from
// kernel macros and structures (BPF_STMT, BPF_JUMP, seccomp_data offsets), and
// Landlock has no glibc wrappers (raw syscall()s with kernel structures newer
// than the headers here).
#ifndef SHIM_SANDBOX_H
#define SHIM_SANDBOX_H

#include <stdint.h>

/// prctl(PR_SET_NO_NEW_PRIVS, 1): execve can never grant privileges again
/// (setuid bits, file capabilities); required before an unprivileged process
/// may install a seccomp filter or a Landlock domain. 0 or -1 (errno).
int shim_sandbox_no_new_privs(void);

/// Installs the helper's seccomp-bpf filter (seccomp(SECCOMP_SET_MODE_FILTER,
/// SECCOMP_FILTER_FLAG_TSYNC): every thread of the process, at once). Refused
/// with an error (EPERM, EACCES for writes) rather than a kill, so a library that
/// tries something optional carries on: creating sockets, exec, fork and new
/// processes (clone without CLONE_THREAD), ptrace and process_vm_*, mounts and
/// namespaces, kernel modules, BPF, perf, io_uring, keyrings, clock and reboot
/// calls, signals to other processes, and, as a second line behind Landlock,
/// opening files for writing and every call that creates, removes or renames a
/// file. clone3 answers ENOSYS so glibc falls back to clone, whose flags can be
/// inspected. A system call of another architecture (x32) is refused; a
/// different audit architecture kills the process. 0 or -1 (errno).
int shim_sandbox_seccomp(void);

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

/// setrlimit RLIMIT_AS (address space, both soft and hard, when > 0),
/// RLIMIT_NOFILE (open files; skipped where refused, as under valgrind), RLIMIT_FSIZE 0 (no file may grow), RLIMIT_CORE 0
/// and prctl(PR_SET_DUMPABLE, 0) (a crash leaves no core dump of untrusted
/// bytes, and no other process may ptrace this one). 0 or -1 (errno).
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
