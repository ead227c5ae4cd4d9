#!/usr/bin/env bash
# Records the system calls the decoder helpers make once their sandbox is up,
# over every fixture (testdata/media, heif, modern (HDR, RAW, JPEG XL, modern
# containers), motion (motion photos of every layout, Live Photos: moment facts
# and still-image-time posters), fidelity: one file per class of the
# fidelity table, sample-drop), the memory check's generated media (the same
# videos and images scripts/memcheck.sh makes), the formats only helpers
# decode (SVG, PSD), and location privacy and compatible copies (issue 24: the
# `privacy` set, testdata/privacy and the HEIF, AVIF, JPEG XL and RAW stills,
# under a pipeline with the `location` and `compatible` stages), and checks them against the seccomp policy in
# Sources/CSystem/sandbox.c. Run it again after adding a decoder (LibRaw,
# dav1d, an HDR path): a call the policy does not allow is listed, and the
# script fails.
#
# Two runs of `share ingest` per media set, both under `strace -f`:
#   1. recording: SHARE_SANDBOX_RECORD=1 installs the same policy with every
#      refusal turned into an allow, so each call the decoders would make is
#      made and recorded (with its arguments);
#   2. enforcing: the real policy. Every item must come out as in the recording
#      run (status, type, thumbnail or not, compatible copy or not, location
#      removed), and no helper call may fail with
#      the policy's errors where the recording run's succeeded.
# Calls are counted from the helper's seccomp() on (what the policy governs),
# in the helper and in every thread it starts.
#
# usage: scripts/record-helper-syscalls.sh
# env:   SHARE=path/to/share   the binary (default: swift build, .build/debug/share)
#        RECORD_KEEP=1         keep the work folder (traces, reports); kept on failure
#        RECORD_SETS="fixtures heif modern motion generated sandbox-only privacy"   a subset (for debugging)
# Output: a table of every call (count, where the policy allows it, how its
# arguments were checked) on stdout, the files under /proc and /sys the
# helpers opened (what Landlock must grant of /proc/self), and the work folder's path.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

for tool in strace ffmpeg vips python3; do
    command -v "$tool" >/dev/null || { echo "record: $tool is missing (scripts/setup.sh installs it)" >&2; exit 2; }
done
share="${SHARE:-}"
if [[ -z "$share" ]]; then
    swift build --product share 2>&1 | grep -vE 'warning: (prohibited flag|'"'"'main'"'"': Source files)' | tail -n 1
    share="$root/.build/debug/share"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/share-syscalls-XXXXXX")"
# A copy: a rebuild while the runs go on must not change (or lock) the binary they trace.
cp "$share" "$work/share"
share="$work/share"
status=0
cleanup() {
    if [[ -z "${RECORD_KEEP:-}" && "$status" == 0 ]]; then rm -rf "$work"; else echo "record: kept $work" >&2; fi
}
trap cleanup EXIT
mkdir -p "$work/generated" "$work/sandbox-only" "$work/traces" "$work/reports"

# --- Media ---------------------------------------------------------------------
# The memory check's generated media (scripts/memcheck.sh): small and odd-size
# videos in eight codecs, and the odd images.
ffmpeg_make() {  # OUTPUT SIZE ARGS...
    local output=$1 size=$2
    shift 2
    ffmpeg -v error -nostdin -y -f lavfi -i "testsrc=s=$size:d=1:r=10" -g 5 "$@" "$output" 2>/dev/null || rm -f "$output"
}
for entry in "h264 libx264 mp4 yuv444p" "mpeg4 mpeg4 mp4 yuv420p" "flv1 flv flv yuv420p" "h263p h263p avi yuv420p" \
    "mjpeg mjpeg avi yuvj420p" "vp8 libvpx webm yuv420p" "mpeg2 mpeg2video mpg yuv420p" "theora libtheora ogv yuv420p"; do
    read -r name encoder extension format <<<"$entry"
    for size in 2x2 17x9 268x156 359x641; do
        ffmpeg_make "$work/generated/$name-$size.$extension" "$size" -c:v "$encoder" -pix_fmt "$format"
    done
done
ffmpeg_make "$work/generated/h263-176x144.3gp" 176x144 -c:v h263
ffmpeg_make "$work/generated/av1-64x48.mp4" 64x48 -c:v libaom-av1 -cpu-used 8 || true
image() {  # OUTPUT SIZE ARGS...
    local output=$1 size=$2
    shift 2
    ffmpeg -v error -nostdin -y -f lavfi -i "testsrc=s=$size" -frames:v 1 "$@" "$output"
}
image "$work/generated/tiny-1x1.png" 1x1
image "$work/generated/tall-1x5000.jpg" 1x5000
image "$work/generated/wide-5000x1.png" 5000x1
image "$work/generated/rgb48-17x9.png" 17x9 -pix_fmt rgb48be
image "$work/generated/rgba64-359x641.tif" 359x641 -pix_fmt rgba64le
image "$work/generated/gray16-1x1.tif" 1x1 -pix_fmt gray16le
image "$work/generated/grey-alpha-17x9.png" 17x9 -vf "format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='255*X/W'" -pix_fmt ya8
image "$work/generated/scaled-2881x1999.jpg" 2881x1999
image "$work/src-268x156.png" 268x156
vips colourspace "$work/src-268x156.png" "$work/generated/cmyk-268x156.jpg" cmyk
vips copy "$work/generated/scaled-2881x1999.jpg" "$work/generated/progressive-2881x1999.jpg[interlace]"
# The formats only a helper with the sandbox-only loaders decodes.
vips thumbnail testdata/media/photo.jpg "$work/small.png" 64
vips magicksave "$work/small.png" "$work/sandbox-only/layers.psd" --format PSD
cat >"$work/sandbox-only/drawing.svg" <<'SVG'
<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200"><rect width="400" height="200" fill="#c00"/><text x="20" y="120" font-size="60" fill="white">Hello</text></svg>
SVG
cp testdata/media/photo.jpg "$work/sandbox-only/"

# shellcheck disable=SC2206
sets=(${RECORD_SETS:-fixtures heif modern motion generated sandbox-only privacy})
paths_of() {
    case "$1" in
        fixtures) echo testdata/media testdata/fidelity testdata/sample-drop ;;
        heif) echo testdata/heif ;;
        modern) echo testdata/modern ;;
        motion) echo testdata/motion ;;
        generated) echo "$work/generated" ;;
        sandbox-only) echo "$work/sandbox-only" ;;
        privacy) echo testdata/privacy testdata/heif testdata/fidelity/*.heic testdata/modern/avif testdata/modern/jxl testdata/modern/hdr testdata/modern/raw ;;
        *) echo "record: no set named $1" >&2; exit 2 ;;
    esac
}
# The pipeline of a set (none: the default one).
cat >"$work/privacy-pipeline.json" <<'JSON'
{"name": "privacy", "stages": [{"stage": "sniff"}, {"stage": "copy"}, {"stage": "location"}, {"stage": "probe"},
  {"stage": "thumbnail"}, {"stage": "compatible"}, {"stage": "manifest"}]}
JSON
pipeline_of() {
    case "$1" in
        privacy) echo --pipeline "$work/privacy-pipeline.json" ;;
        *) ;;
    esac
}

# --- Runs ------------------------------------------------------------------------
# One `share ingest` per set and mode, under strace (every process and thread,
# one file, long enough strings to see paths).
for set in "${sets[@]}"; do
    # shellcheck disable=SC2046
    for mode in recording enforcing; do
        env_args=()
        [[ "$mode" == recording ]] && env_args=(SHARE_SANDBOX_RECORD=1)
        echo "record: $set, $mode" >&2
        env "${env_args[@]}" strace -f -qq -s 256 -o "$work/traces/$set-$mode" \
            "$share" ingest --quiet --container "$work/containers/$set-$mode" --report "$work/reports/$set-$mode.json" $(pipeline_of "$set") $(paths_of "$set") \
            >/dev/null 2>"$work/reports/$set-$mode.err" || true
    done
done

# --- Analysis --------------------------------------------------------------------
python3 - "$work" "$root/Sources/CSystem/sandbox.c" "${sets[@]}" <<'PY' || status=$?
import collections, json, re, sys

work, policy_source, sets = sys.argv[1], sys.argv[2], sys.argv[3:]

# The policy, as sandbox.c states it: the plain allowlist and the calls whose
# arguments are checked (how), or that are refused with their own error.
source = open(policy_source).read()
allowed_block = re.search(r"static const long allowed_calls\[\] = \{(.*?)\};", source, re.S).group(1)
allowed = set(re.findall(r"SYS_(\w+)", re.sub(r"//.*", "", allowed_block)))
seccomp_function = source[source.index("int shim_sandbox_seccomp("):source.index("int shim_seccomp_filter_available")]
checked = {}
for kind, name in re.findall(r"(call_without_bits|call_with_argument_in|call_answered|when_call)\(&f, SYS_(\w+)", seccomp_function):
    checked[name] = kind
checked["clone"] = "threads only"
# The argument filters (as in sandbox.c: Chromium's baseline lists).
madvise_allowed = {"MADV_NORMAL", "MADV_RANDOM", "MADV_SEQUENTIAL", "MADV_WILLNEED", "MADV_DONTNEED", "MADV_FREE", "MADV_DONTDUMP"}
futex_allowed = {"FUTEX_WAIT", "FUTEX_WAKE", "FUTEX_REQUEUE", "FUTEX_CMP_REQUEUE", "FUTEX_WAKE_OP", "FUTEX_WAIT_BITSET", "FUTEX_WAKE_BITSET",
                 "FUTEX_LOCK_PI", "FUTEX_UNLOCK_PI", "FUTEX_TRYLOCK_PI"}
mmap_flags = {"MAP_SHARED", "MAP_PRIVATE", "MAP_ANONYMOUS", "MAP_STACK", "MAP_NORESERVE", "MAP_FIXED", "MAP_DENYWRITE", "MAP_FIXED_NOREPLACE"}

line_re = re.compile(r"^(\d+)\s+(.*)$")
call_re = re.compile(r"^(\w+)\((.*)\)\s+=\s+(-?\d+|\?|0x[0-9a-f]+)(?:\s+(\w+))?")

def read_trace(path):
    """Complete calls per pid: (pid, name, args, result, errno), in order."""
    pending, calls = {}, []
    for raw in open(path, errors="replace"):
        m = line_re.match(raw.rstrip("\n"))
        if not m:
            continue
        pid, text = int(m.group(1)), m.group(2)
        if text.endswith("<unfinished ...>"):
            pending[pid] = text[: -len("<unfinished ...>")].rstrip()
            continue
        r = re.match(r"^<\.\.\. (\w+) resumed>(.*)$", text)
        if r:
            text = pending.pop(pid, r.group(1) + "(") + r.group(2)
        c = call_re.match(text)
        if c:
            calls.append((pid, c.group(1), c.group(2), c.group(3), c.group(4)))
        elif text.startswith("+++") or text.startswith("---"):
            continue
    return calls

def helper_calls(calls):
    """The calls made under the policy: from each helper's seccomp() on, and
    every call of the threads it starts after that."""
    sandboxed, result = set(), []
    for pid, name, args, ret, err in calls:
        if name == "seccomp" and "SECCOMP_SET_MODE_FILTER" in args and ret == "0":
            sandboxed.add(pid)
            continue
        if pid in sandboxed:
            result.append((pid, name, args, ret, err))
            if name in ("clone", "clone3") and "CLONE_THREAD" in args and ret.isdigit():
                sandboxed.add(int(ret))
    return result

problems = []
seen = collections.Counter()
kernel_paths = collections.Counter()
notes = collections.defaultdict(collections.Counter)
helper_pids = set()
failures = collections.Counter()
for s in sets:
    for mode in ("recording", "enforcing"):
        calls = helper_calls(read_trace(f"{work}/traces/{s}-{mode}"))
        helper_pids |= {c[0] for c in calls}
        for pid, name, args, ret, err in calls:
            if mode == "enforcing":
                if err in ("EPERM", "ENOSYS", "ENOTTY", "EACCES") and name not in ("clone3", "openat2", "ioctl", "openat"):
                    failures[f"{name} {err} ({args[:80]})"] += 1
                continue
            seen[name] += 1
            if name in ("mmap", "mprotect"):
                if "PROT_EXEC" in args:
                    notes[name]["PROT_EXEC " + ("file-backed" if name == "mmap" and not re.search(r", -1, ", args) else "anonymous")] += 1
                if name == "mmap":
                    parts = [part.strip() for part in args.split(",")]
                    flags = set(parts[3].split("|")) if len(parts) > 3 else set()
                    unknown = flags - mmap_flags
                    if unknown:
                        notes[name]["flags " + "|".join(sorted(unknown)) + " (trapped)"] += 1
                    if "MAP_SHARED" in flags and "PROT_WRITE" in parts[2]:
                        notes[name]["MAP_SHARED with PROT_WRITE (trapped)"] += 1
            elif name == "clone":
                notes[name]["thread" if "CLONE_THREAD" in args else "NEW PROCESS"] += 1
            elif name in ("kill", "tgkill", "tkill", "prlimit64", "sched_getaffinity", "sched_setaffinity", "setpriority", "getpriority"):
                target = args.split(",")[0].strip()
                if name in ("setpriority", "getpriority"):
                    target = args.split(",")[1].strip()
                notes[name]["caller (0)" if target == "0" else ("self" if target == str(pid) or (target.isdigit() and int(target) in helper_pids) else f"pid {target}")] += 1
            elif name in ("openat", "open"):
                path = re.search(r'"([^"]*)"', args)
                if path and path.group(1).startswith(("/proc", "/sys")):
                    # Which files of /proc and /sys the libraries read (Sandbox.procSelfFiles grants them one by one).
                    shown = re.sub(r"^/proc/(\d+)(?=/|$)", lambda m: "/proc/self" if int(m.group(1)) == pid else "/proc/PID", path.group(1))
                    kernel_paths[shown + ("  (refused: " + err + ")" if ret == "-1" else "")] += 1
                flags = args.split(",")[2 if name == "openat" else 1].strip()
                writes = [f for f in ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND") if f in flags]
                notes[name]["writing: " + "|".join(writes) if writes else "reading"] += 1
                if ret == "-1" and err == "EACCES":
                    path = re.search(r'"([^"]*)"', args)
                    notes[name]["Landlock refused " + (path.group(1) if path else "?")] += 1
            elif name == "fcntl":
                notes[name][args.split(",")[1].strip()] += 1
            elif name == "prctl":
                notes[name][args.split(",")[0].strip()] += 1
            elif name == "madvise":
                advice = args.split(",")[2].strip()
                notes[name][advice if advice in madvise_allowed else "advice " + advice + " (trapped)"] += 1
            elif name == "futex":
                # strace writes the private form either way: FUTEX_WAKE|FUTEX_PRIVATE_FLAG or FUTEX_WAKE_PRIVATE.
                operation = args.split(",")[1].strip().replace("|FUTEX_PRIVATE_FLAG", "").replace("|FUTEX_CLOCK_REALTIME", "")
                operation = operation[: -len("_PRIVATE")] if operation.endswith("_PRIVATE") else operation
                notes[name][operation if operation in futex_allowed else "operation " + operation + " (trapped)"] += 1
            elif name == "rt_sigaction":
                if args.split(",")[0].strip() == "SIGSYS":
                    notes[name]["SIGSYS (killed)"] += 1
            elif name == "ioctl":
                notes[name][args.split(",")[1].strip()] += 1
            elif name in ("sched_getscheduler", "sched_getparam", "sched_setscheduler", "sched_setparam", "sched_getattr", "sched_setattr"):
                notes[name]["pid " + args.split(",")[0].strip()] += 1

# Every item must come out the same under the real policy as in the recording run.
for s in sets:
    def outcome(mode):
        try:
            report = json.load(open(f"{work}/reports/{s}-{mode}.json"))
        except (OSError, ValueError):
            return None
        return {i["source"].split("/")[-1]: (i["status"], i.get("type"), i.get("reason"), bool(i.get("thumbnail")),
                bool(i.get("compatible")), tuple(i.get("locationRemoved") or ())) for i in report["items"]}
    recorded, enforced = outcome("recording"), outcome("enforcing")
    if recorded is None or enforced is None:
        problems.append(f"{s}: no report from the {'recording' if recorded is None else 'enforcing'} run (see {work}/reports)")
        continue
    for name in sorted(recorded):
        if recorded[name] != enforced.get(name):
            problems.append(f"{s}/{name}: recording {recorded[name]}, enforcing {enforced.get(name)}")
    if not any(item[0] == "ingested" for item in recorded.values()):
        problems.append(f"{s}: nothing was ingested")

print(f"{'call':24} {'count':>8}  policy")
for name, count in sorted(seen.items(), key=lambda item: -item[1]):
    if name in allowed:
        where = "allowed"
    elif name in checked:
        where = "allowed, arguments checked" if checked[name] != "call_answered" else "answered with its own errno (glibc falls back)"
    else:
        where = "NOT IN THE POLICY (trapped: the helper is killed)"
        problems.append(f"{name}: made {count} times, not in the policy")
    detail = "; ".join(f"{k} ×{v}" for k, v in sorted(notes[name].items()))
    print(f"{name:24} {count:8}  {where}{'  [' + detail + ']' if detail else ''}")
for name, counter in notes.items():
    for key in counter:
        if key.startswith(("PROT_EXEC", "NEW PROCESS", "pid ")) or key.endswith(("(trapped)", "(killed)")):
            problems.append(f"{name}: {key} (the policy refuses it)")
for failure, count in failures.items():
    problems.append(f"enforcing run: {failure} ×{count}")
print("\npaths under /proc and /sys the helpers opened (Landlock grants Sandbox.procSelfFiles of /proc/self, file by file):")
for path, count in sorted(kernel_paths.items()):
    print(f"  {path} ×{count}")
print(f"\nhelpers and their threads seen: {len(helper_pids)}; calls recorded: {sum(seen.values())}; distinct: {len(seen)}")
if problems:
    print("\nPROBLEMS:")
    for p in problems:
        print("  " + p)
    sys.exit(1)
print("every call is in the policy, and every item came out the same under it")
PY
exit "$status"
