// Starting a decoder helper (see shim_spawn.h).
#ifdef __linux__  // Linux calls only: on other systems this file is empty
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "shim_spawn.h"

int shim_spawn_helper(const char *path, char *const argv[], char *const envp[], int socket, int keep_stderr,
                      pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int status = posix_spawn_file_actions_init(&actions);
    if (status) return status;
    status = posix_spawnattr_init(&attributes);
    if (status) {
        posix_spawn_file_actions_destroy(&actions);
        return status;
    }
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (!status) status = posix_spawn_file_actions_adddup2(&actions, socket, 3);
    if (!status) status = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (!status) status = posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    if (!status && !keep_stderr) status = posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    if (!status) status = posix_spawn_file_actions_addclosefrom_np(&actions, 4);
    if (!status) status = posix_spawnattr_setsigmask(&attributes, &none);
    if (!status) status = posix_spawnattr_setsigdefault(&attributes, &all);
    if (!status) status = posix_spawnattr_setpgroup(&attributes, 0);
    if (!status)
        status = posix_spawnattr_setflags(&attributes,
                                          POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    if (!status) status = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    return status;
}

pid_t shim_fork_helper(int socket) {
    pid_t template = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != template) _exit(1);
        prctl(PR_SET_NAME, "share-decoder", 0, 0, 0);
        if (socket != 3) {
            if (dup2(socket, 3) != 3) _exit(1);
            close(socket);
        }
        return 0;
    }
    int saved = errno;
    close(socket);
    errno = saved;
    return pid;
}

pid_t shim_fork_template(int socket, int other) {
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) {
        int saved = errno;
        close(socket);
        errno = saved;
        return pid;
    }
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != parent) _exit(1);
    prctl(PR_SET_NAME, "share-template", 0, 0, 0);
    close(other);
    if (socket != 3) {
        if (dup2(socket, 3) != 3) _exit(1);
        close(socket);
    }
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || dup2(null, 0) != 0 || dup2(null, 1) != 1) _exit(1);
    if (null > 2) close(null);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int number = 1; number < NSIG; number++) {
        if (number != SIGKILL && number != SIGSTOP) signal(number, SIG_DFL);
    }
    setpgid(0, 0);
    return 0;
}
#endif
