// How a decoder helper dies: a crash handler that tells an exhausted memory
// limit apart from other crashes. Signal handlers must be async-signal-safe C.
#ifndef SHIM_CRASH_H
#define SHIM_CRASH_H

/// Installs a handler (on its own alternate stack) for SIGSEGV, SIGBUS, SIGILL,
/// SIGFPE, SIGABRT and SIGTRAP. When the crash looks like an allocation that the
/// address-space limit refused (errno is ENOMEM, GLib reported a failed
/// allocation, or not even 16 MiB of address space is left), the process exits
/// with `memory_exit_status`; otherwise the signal is raised again with its
/// default action, so the parent's waitpid sees the real signal. Also hooks
/// GLib's fatal "failed to allocate" log message (g_malloc's abort).
int shim_install_crash_handler(int memory_exit_status);

/// Test hook: a write through a null pointer (a real SIGSEGV, as a buggy decoder
/// would cause), which Swift cannot express without undefined behaviour.
void shim_test_crash_segv(void);

#endif
