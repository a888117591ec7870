#!/usr/bin/env bash
# Usage: FuzzTesting/fuzz.sh TARGET [SECONDS]
# Builds TARGET with libFuzzer and AddressSanitizer, runs it on its committed seed corpus (plus a scratch corpus
# of what it discovers) for SECONDS (default 60), and saves any crashing input in FuzzTesting/FailCases/TARGET/.
# Exits non-zero when the fuzzer finds a crash.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
target="${1:?usage: fuzz.sh TARGET [SECONDS]}"
seconds="${2:-60}"
[ -d "$here/Targets/$target" ] || { echo "unknown target $target (see $here/Targets)" >&2; exit 2; }

swift build --package-path "$here" -c debug --product "$target" \
    --sanitize fuzzer --sanitize address -Xswiftc -sanitize=fuzzer -Xswiftc -use-ld=lld >&2

binary="$(swift build --package-path "$here" -c debug --show-bin-path)/$target"
seeds="$here/Corpus/$target"
work="$here/.build/corpus/$target"
failures="$here/FailCases/$target"
mkdir -p "$seeds" "$work" "$failures"

# -rss_limit_mb covers ASan's quarantine; -timeout turns a hang into a finding. Swift's own backtracer is off so
# that it does not fight AddressSanitizer over a crash.
SWIFT_BACKTRACE=enable=no "$binary" "$work" "$seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$failures/" -print_final_stats=1
