// Test-only: the attacker test's forbidden actions, run inside a sandboxed
// decoder helper (DecoderIsolation's TestFault `attack`).
#ifndef SHIM_ATTACKER_H
#define SHIM_ATTACKER_H

#include <sys/types.h>

/// What the attacker aims at.
struct shim_attack_targets {
    /// The request's input: an open read-only descriptor, and the path of its file.
    int input;
    const char *input_path;
    /// The `share` process (the helper's parent or its template's) and the template.
    pid_t owner;
    pid_t template_pid;
    /// Another helper of the same template or parent (0: none was running).
    pid_t sibling;
    /// A listening Unix socket the test made, the container, the journal, and a file in /root.
    const char *socket_path;
    const char *container;
    const char *journal;
    const char *root_file;
    /// A copy of another batch in the container.
    const char *other_copy;
    /// The TCP port of the test's PostgreSQL on 127.0.0.1 (0: 5432).
    int port;
};

/// Tries each forbidden action in turn (changing the input's mode, owner and
/// extended attributes; limits, priority, signals, ptrace and memory of the
/// parent; sockets; writing and reading files outside the sandbox; executable
/// memory, memfd and exec; io_uring, namespaces, mount, keyrings, BPF, perf,
/// userfaultfd, personality; new processes) and writes one line per attempt to
/// standard error: `share-attack {"check":NAME,"result":N,"errno":E,"error":"EPERM"}`,
/// then a last line whose check is `done`. Every result must be negative (or
/// the helper is killed for a forbidden call first). `only`: the one action to
/// try (its check name), or NULL for all. Debug builds only.
void shim_attack_run(const struct shim_attack_targets *targets, const char *only);

#endif
