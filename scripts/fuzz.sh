#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/Targets and runs each for a bounded time
# (default 60 s) on its seed corpus in Fuzz/corpus/<target>/. Not part of the
# default test run.
#
#   scripts/fuzz.sh [seconds] [target...]     targets: redirect manifest pipeline sniffer
#
# The targets are compiled straight from the product's pure-Swift sources (listed
# below) with `swiftc -sanitize=fuzzer,address`, so no C library is linked.
# New inputs found are written to .build/fuzz/corpus/<target>/ (the committed seed
# corpus is never modified); a crash leaves crash-* in .build/fuzz/ and exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(redirect manifest pipeline sniffer)

out=.build/fuzz
mkdir -p "$out"
flags=(-parse-as-library -sanitize=fuzzer,address -O -g -swift-version 6)

model=(Sources/ShareIngest/Model/RedirectURL.swift Sources/ShareIngest/Model/ManifestSchema.swift
       Sources/ShareIngest/Model/SharedMediaFile.swift)
sniffer=(Sources/MediaKit/Formats/ContentSniffer.swift Sources/MediaKit/Formats/MediaFormat.swift)
pipeline=(Sources/ShareIngest/Pipeline/PipelineDefinition.swift Sources/ShareIngest/Pipeline/StageName.swift
          Sources/ShareIngest/Pipeline/BuiltinPipelines.swift)

build() {
    local name=$1; shift
    echo "fuzz: building $name"
    swiftc "${flags[@]}" "$@" -o "$out/$name-fuzz"
}

for target in "${targets[@]}"; do
    case $target in
    redirect) build redirect "${model[@]}" Fuzz/Targets/RedirectURLFuzz.swift ;;
    manifest) build manifest "${model[@]}" Fuzz/Targets/ManifestDecoderFuzz.swift ;;
    sniffer) build sniffer "${sniffer[@]}" Fuzz/Targets/ContentSnifferFuzz.swift ;;
    pipeline)
        # PipelineDefinition imports MediaKit: a MediaKit module of its pure files only.
        swiftc -wmo -parse-as-library -sanitize=fuzzer,address -O -g -swift-version 6 -module-name MediaKit \
            -emit-module -emit-module-path "$out/MediaKit.swiftmodule" -c \
            Sources/MediaKit/Images/ThumbnailSpec.swift "${sniffer[@]}" -o "$out/MediaKit.o"
        build pipeline -I "$out" "$out/MediaKit.o" "${model[@]}" "${pipeline[@]}" Fuzz/Targets/PipelineLoaderFuzz.swift ;;
    *) echo "fuzz: unknown target $target (redirect, manifest, pipeline, sniffer)" >&2; exit 2 ;;
    esac
done

status=0
for target in "${targets[@]}"; do
    corpus=$out/corpus/$target
    mkdir -p "$corpus"
    echo "fuzz: running $target for ${seconds}s"
    if ! (cd "$out" && "./$target-fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
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
