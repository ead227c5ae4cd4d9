// Starting a decoder helper: posix_spawn with the file actions glibc declares
// only under _GNU_SOURCE (posix_spawn_file_actions_addclosefrom_np).
#ifndef SHIM_SPAWN_H
#define SHIM_SPAWN_H

#include <sys/types.h>

/// posix_spawn(path, argv, envp) with: `socket` as descriptor 3, /dev/null as
/// 0, 1 and 2 (also 2 when `keep_stderr` is 0), every other descriptor closed
/// (addclosefrom_np(4), so no open file of the parent leaks into the helper),
/// the signal mask cleared and every signal's action reset to its default
/// (SIGXCPU must terminate, whatever the parent ignores), and a process group of
/// its own (a Ctrl-C meant for the parent does not kill the helpers). Stores
/// the pid; returns 0 or an errno value.
int shim_spawn_helper(const char *path, char *const argv[], char *const envp[], int socket, int keep_stderr,
                      pid_t *pid);

/// In a helper template (a single-threaded process that has loaded and set up
/// the decoding libraries, see HelperTemplate.swift): forks a helper that
/// starts with what the template has done. In the child, which returns 0 and
/// is named `share-decoder` (PR_SET_NAME): `socket` becomes descriptor 3
/// (replacing the template's own socket there), and the child is killed if the
/// template dies (PR_SET_PDEATHSIG), so no helper outlives the process that
/// would reap it. In the template: closes `socket` and returns the child's pid,
/// or -1 with errno set.
pid_t shim_fork_helper(int socket);

/// Forks this process, which must have one thread, into a helper template
/// (HelperTemplate.forkEarly): the child, which returns 0, is what
/// shim_spawn_helper would have started, without the exec. First it forgets
/// the command line: it keeps only the environment variables named in
/// `environment_names` (`count` of them; copied, through setenv), and
/// overwrites the original argument and environment areas (what
/// /proc/PID/cmdline and /proc/PID/environ show, and what its helpers would
/// inherit) with zeros, its argument area starting with "share-template". Then:
/// named `share-template`, killed when this process dies, `socket` as
/// descriptor 3, `other` (this process's end) closed, /dev/null as 0 and 1 (2
/// stays until the template is told whether to keep it), the signal mask
/// cleared and every action reset to its default (which also drops the Swift
/// runtime's crash reporter, as SWIFT_BACKTRACE=enable=no does for a started
/// helper), a process group of its own. Here: closes `socket` and returns the
/// child's pid, or -1 with errno set.
pid_t shim_fork_template(int socket, int other, const char *const *environment_names, int count);

#endif
