#!/usr/bin/env python3
"""Starts a systemd unit's command line as systemd would, on a machine where
systemd is not the service manager (a container, CI), with the parts of the
unit that confine the process applied by this script instead of systemd:

  emulated (as systemd 252 does it, for x86-64):
    SystemCallFilter=          an allow list (its @groups expanded by
                               `systemd-analyze syscall-filter`, so as this
                               machine's systemd has them); any other call kills
                               the process (SIGSYS), or fails with
                               SystemCallErrorNumber=
    SystemCallArchitectures=native  (libseccomp's default: the native ABI only)
    MemoryDenyWriteExecute=    mmap of writable and executable memory, and
                               mprotect/pkey_mprotect adding PROT_EXEC, fail (EPERM)
    RestrictAddressFamilies=   socket() of another family fails (EAFNOSUPPORT)
    RestrictNamespaces=        unshare, clone and setns of another namespace
                               type fail (EPERM); clone3 answers ENOSYS
    CapabilityBoundingSet=, AmbientCapabilities= (kept across User=, as
                               systemd does), NoNewPrivileges=
    User=, Group= (with the user's supplementary groups), UMask=
    Environment=, EnvironmentFile= (`-` optional), INVOCATION_ID (as systemd
    sets it for every unit), LoadCredential= (copied into
    a credentials folder of the user's, %d; a missing file fails the start as
    systemd fails it), StateDirectory= (made, owned by the user),
    ReadWritePaths= (a missing path without `-` fails the start)
    specifiers %i %I %n %N %H %d %%; $VAR and ${VAR} in ExecStart=
  not emulated (they need systemd or a mount namespace of its making):
    ProtectSystem=, ProtectHome=, PrivateTmp=, PrivateDevices=, PrivateMounts=,
    ProtectProc=, ProcSubset=, ProtectKernel*=, ProtectControlGroups=,
    ProtectClock=, ProtectHostname=, IPAddressDeny=/IPAddressAllow= (cgroup BPF),
    RemoveIPC=, RestrictRealtime=, RestrictSUIDSGID=, LockPersonality=

usage: scripts/unit-sandbox.py UNIT-FILE [--drop-in FILE]... [--instance NAME]
           [--map FROM=TO]... [--user NAME] [--pass VAR]... [--dry-run] [--exec COMMAND...]
  --map FROM=TO   a path prefix of the unit (/srv/share-inbox, /etc/share-ingest,
                  /usr/local/bin/share ...) stands for TO: where a test keeps them
  --user NAME     run as NAME instead of the unit's User= (a test's stand-in
                  account when the unit's does not exist here)
  --pass VAR      hand VAR from this environment to the service (NOTIFY_SOCKET,
                  WATCHDOG_USEC, SHARE_TEST_*: what a test needs)
  --dry-run       print the command line and environment, start nothing
  --exec ...      run this command line instead of ExecStart=, in the same
                  confinement (`share doctor` as the unit would run it); its
                  words go through the same --map
Exit status: the command's, or systemd's for a start that fails before it:
203 (EXEC), 217 (USER), 226 (NAMESPACE: a path), 243 (CREDENTIALS), 1 (other).
"""
import ctypes
import ctypes.util
import errno
import grp
import os
import pwd
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

# ---- The unit -------------------------------------------------------------------


def read_unit(paths):
    """[Service] and [Unit] assignments of the unit and its drop-ins, in order."""
    settings = []
    for path in paths:
        section = None
        logical = ""
        for raw in open(path, encoding="utf-8"):
            line = raw.rstrip("\n")
            if logical:
                line = logical + line.lstrip()
                logical = ""
            if line.endswith("\\"):
                logical = line[:-1] + " "
                continue
            stripped = line.strip()
            if not stripped or stripped[0] in "#;":
                continue
            if stripped.startswith("[") and stripped.endswith("]"):
                section = stripped[1:-1]
                continue
            key, _, value = stripped.partition("=")
            settings.append((section, key.strip(), value.strip()))
    return settings


def values(settings, key, section="Service"):
    """Every assignment of `key`, an empty one resetting the list (as systemd reads lists)."""
    found = []
    for sec, k, v in settings:
        if sec == section and k == key:
            if v == "":
                found = []
            else:
                found.append(v)
    return found


def last(settings, key, default=None, section="Service"):
    found = [v for sec, k, v in settings if sec == section and k == key]
    return found[-1] if found else default


def specifiers(text, context):
    def replace(match):
        letter = match.group(1)
        if letter == "%":
            return "%"
        if letter not in context:
            fail(1, f"specifier %{letter} is not supported here")
        return context[letter]
    return re.sub(r"%(.)", replace, text)


def mapped(path, maps):
    for source, target in maps:
        if path == source or path.startswith(source.rstrip("/") + "/"):
            return target + path[len(source):]
    return path


def fail(status, message):
    print(f"unit-sandbox: {message}", file=sys.stderr)
    sys.exit(status)


# ---- seccomp through libseccomp (the runtime library systemd uses) --------------

SCMP_ACT_KILL_PROCESS = 0x80000000
SCMP_ACT_ALLOW = 0x7FFF0000


def SCMP_ACT_ERRNO(code):
    return 0x00050000 | (code & 0xFFFF)


SCMP_CMP_LT, SCMP_CMP_EQ, SCMP_CMP_GT, SCMP_CMP_MASKED_EQ = 2, 4, 6, 7


class ArgCompare(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


class Seccomp:
    def __init__(self):
        name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
        self.lib = ctypes.CDLL(name, use_errno=True)
        self.lib.seccomp_init.restype = ctypes.c_void_p
        self.lib.seccomp_init.argtypes = [ctypes.c_uint32]
        self.lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
        self.lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(ArgCompare)]
        self.lib.seccomp_load.argtypes = [ctypes.c_void_p]
        self.lib.seccomp_release.argtypes = [ctypes.c_void_p]

    def number(self, name):
        return self.lib.seccomp_syscall_resolve_name(name.encode())

    def filter(self, default, rules):
        """Loads one filter: `rules` are (action, call name, [(arg, op, a, b)])."""
        context = self.lib.seccomp_init(default)
        if not context:
            fail(1, "seccomp_init failed")
        for action, name, comparisons in rules:
            number = self.number(name)
            if number < 0:
                continue  # not a call of this architecture (systemd skips them too)
            array = (ArgCompare * max(1, len(comparisons)))(*[ArgCompare(*c) for c in comparisons])
            result = self.lib.seccomp_rule_add_array(context, action, number, len(comparisons), array if comparisons else None)
            if result != 0 and result != -errno.EEXIST:
                fail(1, f"seccomp rule for {name}: {os.strerror(-result)}")
        result = self.lib.seccomp_load(context)
        self.lib.seccomp_release(context)
        if result != 0:
            fail(1, f"seccomp_load: {os.strerror(-result)}")


def syscall_groups():
    """Each @group's members, as this machine's systemd defines them."""
    output = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager"], capture_output=True, text=True, check=True).stdout
    groups, current = {}, None
    for line in output.splitlines():
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if line.startswith("@"):
            current = text
            groups[current] = []
        elif current:
            groups[current].append(text)
    return groups


def expand(names, groups, seen=None):
    seen = set() if seen is None else seen
    calls = set()
    for name in names:
        if name.startswith("@"):
            if name in seen:
                continue
            seen.add(name)
            if name not in groups:
                fail(1, f"unknown system call group {name}")
            calls |= expand(groups[name], groups, seen)
        else:
            calls.add(name)
    return calls


# Always allowed by systemd whatever the list (src/shared/seccomp-util.c).
ALWAYS_ALLOWED = {"execve", "exit", "exit_group", "getrlimit", "rt_sigreturn", "sigreturn"}

NAMESPACE_FLAGS = {"cgroup": 0x02000000, "ipc": 0x08000000, "net": 0x40000000, "mnt": 0x00020000, "pid": 0x20000000, "user": 0x10000000,
                   "uts": 0x04000000, "time": 0x00000080}

ADDRESS_FAMILIES = {"AF_UNIX": socket.AF_UNIX, "AF_LOCAL": socket.AF_UNIX, "AF_INET": socket.AF_INET, "AF_INET6": socket.AF_INET6,
                    "AF_NETLINK": socket.AF_NETLINK, "AF_PACKET": socket.AF_PACKET}

CAPABILITIES = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID",
                "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
                "CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT",
                "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD",
                "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG",
                "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE"]

PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 24, 47, 4
PR_SET_KEEPCAPS, PR_CAP_AMBIENT_RAISE, LINUX_CAPABILITY_VERSION_3 = 8, 2, 0x20080522
PROT_WRITE, PROT_EXEC, SHM_EXEC = 0x2, 0x4, 0o100000


def seccomp_filters(settings, seccomp):
    """The filters the unit's settings make, loaded last to first so that the
    allow list (which may not allow loading more) comes last."""
    filters = []
    names = values(settings, "RestrictNamespaces")
    if names:
        setting = names[-1]
        allowed = set() if setting in ("yes", "true", "on", "1") else set(NAMESPACE_FLAGS) if setting in ("no", "false", "off", "0") else set(setting.split())
        refused = [flag for name, flag in NAMESPACE_FLAGS.items() if name not in allowed]
        rules = []
        for flag in refused:
            rules.append((SCMP_ACT_ERRNO(errno.EPERM), "unshare", [(0, SCMP_CMP_MASKED_EQ, flag, flag)]))
            rules.append((SCMP_ACT_ERRNO(errno.EPERM), "clone", [(0, SCMP_CMP_MASKED_EQ, flag, flag)]))
            rules.append((SCMP_ACT_ERRNO(errno.EPERM), "setns", [(1, SCMP_CMP_EQ, flag, 0)]))
        if refused:
            rules.append((SCMP_ACT_ERRNO(errno.EPERM), "setns", [(1, SCMP_CMP_EQ, 0, 0)]))
            rules.append((SCMP_ACT_ERRNO(errno.ENOSYS), "clone3", []))
        filters.append((SCMP_ACT_ALLOW, rules))
    families = values(settings, "RestrictAddressFamilies")
    if families:
        words = " ".join(families).split()
        if words and words[0].startswith("~"):
            fail(1, "RestrictAddressFamilies=~ (a deny list) is not emulated")
        allowed = sorted({ADDRESS_FAMILIES[w] for w in words if w in ADDRESS_FAMILIES})
        rules = [(SCMP_ACT_ERRNO(errno.EAFNOSUPPORT), "socket", [(0, SCMP_CMP_LT, allowed[0], 0)]),
                 (SCMP_ACT_ERRNO(errno.EAFNOSUPPORT), "socket", [(0, SCMP_CMP_GT, allowed[-1], 0)])]
        for family in range(allowed[0] + 1, allowed[-1]):
            if family not in allowed:
                rules.append((SCMP_ACT_ERRNO(errno.EAFNOSUPPORT), "socket", [(0, SCMP_CMP_EQ, family, 0)]))
        filters.append((SCMP_ACT_ALLOW, rules))
    if last(settings, "MemoryDenyWriteExecute", "no") in ("yes", "true", "on", "1"):
        both = PROT_WRITE | PROT_EXEC
        filters.append((SCMP_ACT_ALLOW, [
            (SCMP_ACT_ERRNO(errno.EPERM), "mmap", [(2, SCMP_CMP_MASKED_EQ, both, both)]),
            (SCMP_ACT_ERRNO(errno.EPERM), "mprotect", [(2, SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC)]),
            (SCMP_ACT_ERRNO(errno.EPERM), "pkey_mprotect", [(2, SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC)]),
            (SCMP_ACT_ERRNO(errno.EPERM), "shmat", [(2, SCMP_CMP_MASKED_EQ, SHM_EXEC, SHM_EXEC)]),
        ]))
    lists = values(settings, "SystemCallFilter")
    if lists:
        groups = syscall_groups()
        allowed, denied = set(), set()
        for entry in lists:
            if entry.startswith("~"):
                denied |= expand(entry[1:].split(), groups)
            else:
                allowed |= expand(entry.split(), groups)
        if not allowed:
            fail(1, "SystemCallFilter=~ alone (a deny list) is not emulated")
        calls = (allowed - denied) | ALWAYS_ALLOWED
        error = last(settings, "SystemCallErrorNumber")
        default = SCMP_ACT_ERRNO(getattr(errno, error)) if error else SCMP_ACT_KILL_PROCESS
        filters.append((default, [(SCMP_ACT_ALLOW, name, []) for name in sorted(calls)]))
    return filters


# ---- Starting -------------------------------------------------------------------


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    unit, drop_ins, instance, maps, user_override, passed, dry, replacement = argv[0], [], "", [], None, [], False, None
    index = 1
    while index < len(argv):
        option = argv[index]
        if option in ("--drop-in", "--instance", "--map", "--user", "--pass") and index + 1 < len(argv):
            value = argv[index + 1]
            if option == "--drop-in":
                drop_ins.append(value)
            elif option == "--instance":
                instance = value
            elif option == "--map":
                source, _, target = value.partition("=")
                maps.append((source, target))
            elif option == "--user":
                user_override = value
            else:
                passed.append(value)
            index += 2
        elif option == "--dry-run":
            dry = True
            index += 1
        elif option == "--exec":
            replacement = argv[index + 1:]
            break
        else:
            fail(2, f"unknown argument {option}")
    maps.sort(key=lambda pair: -len(pair[0]))
    settings = read_unit([unit] + drop_ins)
    template = os.path.basename(unit)
    name = template.replace("@.", f"@{instance}.") if instance else template
    context = {"i": instance, "I": instance, "n": name, "N": name.rsplit(".", 1)[0], "H": socket.gethostname()}

    # The account.
    user_name = user_override or last(settings, "User", "root")
    try:
        account = pwd.getpwnam(user_name)
    except KeyError:
        fail(217, f"user {user_name} does not exist (systemd: status=217/USER)")
    group_name = None if user_override else last(settings, "Group")
    gid = grp.getgrnam(group_name).gr_gid if group_name else account.pw_gid

    # Credentials, as systemd loads them (as root, before the start).
    credentials = tempfile.mkdtemp(prefix="unit-credentials-")
    os.chown(credentials, account.pw_uid, gid)
    os.chmod(credentials, 0o500)
    context["d"] = credentials
    for entry in values(settings, "LoadCredential"):
        identifier, _, source = specifiers(entry, context).partition(":")
        source = mapped(source or f"/etc/credstore/{identifier}", maps)
        try:
            data = open(source, "rb").read()
        except OSError as error:
            fail(243, f"LoadCredential={entry}: {source}: {error.strerror} (systemd: status=243/CREDENTIALS)")
        target = os.path.join(credentials, identifier)
        with open(target, "wb") as file:
            file.write(data)
        os.chown(target, account.pw_uid, gid)
        os.chmod(target, 0o400)

    # Paths that must exist, and state folders made.
    for entry in values(settings, "ReadWritePaths"):
        for path in specifiers(entry, context).split():
            optional = path.startswith("-")
            path = mapped(path.lstrip("-+"), maps)
            if not optional and not os.path.exists(path):
                fail(226, f"ReadWritePaths: {path} does not exist (systemd: status=226/NAMESPACE)")
    mode = int(last(settings, "StateDirectoryMode", "0755"), 8)
    for entry in values(settings, "StateDirectory"):
        for relative in specifiers(entry, context).split():
            path = mapped("/var/lib/" + relative, maps)
            os.makedirs(path, exist_ok=True)
            os.chown(path, account.pw_uid, gid)
            os.chmod(path, mode)

    # The environment: systemd's own, then Environment= and EnvironmentFile=.
    environment = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "USER": account.pw_name,
                   "LOGNAME": account.pw_name, "HOME": account.pw_dir, "SHELL": account.pw_shell, "CREDENTIALS_DIRECTORY": credentials,
                   "INVOCATION_ID": os.urandom(16).hex()}
    for entry in values(settings, "Environment"):
        for word in shlex.split(specifiers(entry, context)):
            key, _, value = word.partition("=")
            environment[key] = value
    for entry in values(settings, "EnvironmentFile"):
        path = specifiers(entry, context)
        optional = path.startswith("-")
        path = mapped(path.lstrip("-"), maps)
        if not os.path.exists(path):
            if optional:
                continue
            fail(1, f"EnvironmentFile={path} does not exist")
        for line in open(path, encoding="utf-8"):
            line = line.strip()
            if line and not line.startswith(("#", ";")) and "=" in line:
                key, _, value = line.partition("=")
                value = value.strip()
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                    value = value[1:-1]
                environment[key.strip()] = value
    for variable in passed:
        if variable in os.environ:
            environment[variable] = os.environ[variable]

    # The command line: specifiers, then $VAR (split into words) and ${VAR} (one word).
    commands = values(settings, "ExecStart")
    if len(commands) != 1:
        fail(1, f"expected one ExecStart=, not {len(commands)}")
    command = []
    words = shlex.split(specifiers(commands[0].lstrip("-@+!:"), context)) if replacement is None else replacement
    for word in words:
        whole = re.fullmatch(r"\$(\w+)", word)
        if whole:
            command += environment.get(whole.group(1), "").split()
            continue
        command.append(re.sub(r"\$\{(\w+)\}", lambda m: environment.get(m.group(1), ""), word))
    command = [mapped(word, maps) if word.startswith("/") else word for word in command]
    if not os.access(command[0], os.X_OK):
        fail(203, f"{command[0]} is not executable (systemd: status=203/EXEC)")
    if dry:
        print(" ".join(shlex.quote(word) for word in command))
        for key in sorted(environment):
            print(f"{key}={environment[key]}")
        return 0

    # Confinement, in the order systemd applies it, then the program.
    seccomp = Seccomp()
    libc = ctypes.CDLL(None, use_errno=True)
    bounding = set(" ".join(values(settings, "CapabilityBoundingSet")).split())
    if any(section == "Service" and key == "CapabilityBoundingSet" for section, key, _ in settings):
        for number, capability in enumerate(CAPABILITIES):
            if capability not in bounding:
                result = libc.prctl(PR_CAPBSET_DROP, number, 0, 0, 0)
                if result != 0 and ctypes.get_errno() != errno.EINVAL:
                    fail(1, f"dropping {capability} from the bounding set: {os.strerror(ctypes.get_errno())}")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    ambient = [CAPABILITIES.index(name) for name in " ".join(values(settings, "AmbientCapabilities")).split()]
    os.umask(int(last(settings, "UMask", "0022"), 8))
    os.chdir("/")
    if account.pw_uid != os.geteuid() or gid != os.getegid():
        os.initgroups(account.pw_name, gid)
        os.setresgid(gid, gid, gid)
        # The ambient set survives the change of user, as under systemd.
        if ambient and libc.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0:
            fail(1, "PR_SET_KEEPCAPS failed")
        os.setresuid(account.pw_uid, account.pw_uid, account.pw_uid)
    if ambient:
        # Permitted, effective and inheritable hold them; then each is raised into the ambient set.
        masks = [0, 0]
        for number in ambient:
            masks[number // 32] |= 1 << (number % 32)
        header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
        data = (ctypes.c_uint32 * 6)(masks[0], masks[0], masks[0], masks[1], masks[1], masks[1])
        if libc.capset(header, data) != 0:
            fail(1, f"capset for AmbientCapabilities=: {os.strerror(ctypes.get_errno())}")
        for number in ambient:
            if libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, number, 0, 0) != 0:
                fail(1, f"raising {CAPABILITIES[number]} into the ambient set: {os.strerror(ctypes.get_errno())}")
    if last(settings, "NoNewPrivileges", "no") in ("yes", "true", "on", "1") or values(settings, "SystemCallFilter"):
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            fail(1, "PR_SET_NO_NEW_PRIVS failed")
    for default, rules in seccomp_filters(settings, seccomp):
        seccomp.filter(default, rules)
    # As systemd starts a service: no signal blocked, every signal's default
    # action but SIGPIPE's (IgnoreSIGPIPE=yes, systemd's default).
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for number in (signal.SIGXFSZ, signal.SIGINT):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    sys.stdout.flush()
    os.execve(command[0], command, environment)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
