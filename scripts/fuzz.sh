#!/usr/bin/env bash
# Builds the fuzz targets (Fuzz/Fuzz*) with libFuzzer and runs each for a bounded time
# (default 60 s) on its seed corpus in Fuzz/corpus/<target>/. Not part of the
# default test run.
#
#   scripts/fuzz.sh [seconds] [target...]     targets: redirect manifest sniffer heif raw moments
#                                             takeout xmp exif isobmff png burst
#   (pipeline and sidecar: replayed by FuzzCorpusTests only; see below)
#
# The targets are the package's ordinary executable targets (Fuzz/Fuzz*): built
# here by SwiftPM with libFuzzer and AddressSanitizer, and -DFUZZING, which drops
# their replay `main` so libFuzzer's drives LLVMFuzzerTestOneInput. (An ordinary
# build replays the seed corpus; the test suite runs that.) Their own scratch
# folder keeps the instrumented objects apart from .build/debug.
# New inputs found are written to .build/fuzz/corpus/<target>/ (the committed seed
# corpus is never modified); a crash leaves crash-* in .build/fuzz/ and exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
# pipeline and sidecar link ShareIngest, whose build plugin's tool (EmbedPipelinesTool,
# top-level code) SwiftPM cannot build with --sanitize fuzzer (every executable is
# then parsed as a library and linked with libFuzzer's main): they are replayed by
# FuzzCorpusTests, not fuzzed here.
[ ${#targets[@]} -gt 0 ] || targets=(redirect manifest sniffer heif raw moments takeout xmp exif isobmff png burst)
for target in "${targets[@]}"; do
    case $target in
    pipeline | sidecar)
        echo "fuzz: $target links ShareIngest, which cannot be built with --sanitize fuzzer (its build plugin's tool); FuzzCorpusTests replays its corpus" >&2
        exit 2
        ;;
    esac
done

out=.build/fuzz
mkdir -p "$out"
scratch=.build/fuzz-build
flags=(-c release --scratch-path "$scratch" --sanitize fuzzer --sanitize address -Xswiftc -DFUZZING -Xswiftc -g)

product() {
    case $1 in
    redirect) echo FuzzRedirectURL ;;
    manifest) echo FuzzManifest ;;
    sniffer) echo FuzzSniffer ;;
    heif) echo FuzzHEIF ;;
    raw) echo FuzzRAW ;;
    moments) echo FuzzMoments ;;
    pipeline) echo FuzzPipeline ;;
    takeout) echo FuzzTakeout ;;
    xmp) echo FuzzXMP ;;
    exif) echo FuzzEXIF ;;
    isobmff) echo FuzzISOBMFF ;;
    png) echo FuzzPNG ;;
    burst) echo FuzzBurst ;;
    sidecar) echo FuzzSidecar ;;
    *) echo "fuzz: unknown target $1 (redirect, manifest, pipeline, sniffer, heif, raw, moments, takeout, xmp, exif, isobmff, png, burst, sidecar)" >&2; exit 2 ;;
    esac
}

bin=$(swift build "${flags[@]}" --show-bin-path)
for target in "${targets[@]}"; do
    name=$(product "$target")
    echo "fuzz: building $name"
    swift build "${flags[@]}" --product "$name" 2>&1 | grep -vE "warning: (prohibited flag|'main': Source files)" | tail -n 1
    cp "$bin/$name" "$out/$target-fuzz"
done

status=0
for target in "${targets[@]}"; do
    corpus=$out/corpus/$target
    mkdir -p "$corpus"
    echo "fuzz: running $target for ${seconds}s"
    # (SWIFT_BACKTRACE off: libFuzzer reports a crash itself, and Swift's
    # backtracer, which would run first, can wait for ever.)
    if ! (cd "$out" && SWIFT_BACKTRACE=enable=no "./$target-fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$target-" "corpus/$target" "../../Fuzz/corpus/$target" \
            2>&1 | tee "$target.log" | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)" ); then
        :
    fi
    if grep -qE "==[0-9]+==ERROR|deadly signal|Test unit written" "$out/$target.log"; then
        echo "fuzz: $target FAILED; see $out/$target.log and $out/$target-crash-*" >&2
        status=1
    fi
done
exit $status
