#!/bin/bash
# Build the libFuzzer harnesses (clang -fsanitize=fuzzer,address,undefined) and run each for
# SECONDS: the first argument, else $FUZZ_SECONDS, else 30.
# Usage: tests/fuzz/run.sh [SECONDS] [HARNESS...]     (HARNESS: runreport, sitefmt)
# Prints "PASS fuzz/<harness>" or "FAIL fuzz/<harness>: reason" per harness; exit 1 on a failure.
# Harnesses: tests/fuzz/fuzz_<harness>.c, and each tool's tools/<name>/tests/fuzz/fuzz_<harness>.c
# (its own sources named in a line "// fuzz-extra: path...", libraries in "// fuzz-libs: -lNAME..."). Seeds: seeds/<harness>/ and the
# dictionary <harness>.dict beside the harness; the growing corpus is kept in
# build/fuzz/corpus/<harness>/, crashing inputs in build/fuzz/crash-<harness>-*.
set -u
cd "$(dirname "$0")/../.." || exit 2
seconds=${1:-${FUZZ_SECONDS:-30}}
shift || true
harnesses=("$@")
harness_source() {  # NAME -> its file
    local f
    for f in tests/fuzz/fuzz_"$1".c tools/*/tests/fuzz/fuzz_"$1".c; do
        [ -f "$f" ] && { echo "$f"; return; }
    done
}
if [ ${#harnesses[@]} -eq 0 ]; then
    for src in tests/fuzz/fuzz_*.c tools/*/tests/fuzz/fuzz_*.c; do
        [ -f "$src" ] || continue
        h=${src##*/fuzz_}
        harnesses+=("${h%.c}")
    done
fi
out=build/fuzz
mkdir -p "$out"
fail=0
for h in "${harnesses[@]}"; do
    bin=$out/fuzz_$h
    src=$(harness_source "$h")
    dir=$(dirname "${src:-tests/fuzz/x}")
    extra=$(sed -n 's|^[[:space:]]*//[[:space:]]*fuzz-extra:||p' "$src" 2>/dev/null | tr '\n' ' ')
    libs=$(sed -n 's|^[[:space:]]*//[[:space:]]*fuzz-libs:||p' "$src" 2>/dev/null | tr '\n' ' ')
    # shellcheck disable=SC2086
    if [ -z "$src" ] || ! clang -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
            -D_GNU_SOURCE -I. -Icommon -Iinclude $(for d in tools/*/include; do printf -- '-I%s ' "$d"; done) "$src" common/*.c $extra -lm $libs -o "$bin" \
            >"$out/fuzz_$h.build.log" 2>&1; then
        echo "FAIL fuzz/$h: does not compile: $(grep -m1 error "$out/fuzz_$h.build.log" | cut -c1-200)"
        fail=1
        continue
    fi
    corpus=$out/corpus/$h
    mkdir -p "$corpus"
    args=(-max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$out/crash-$h-")
    [ -f "$dir/$h.dict" ] && args+=(-dict="$dir/$h.dict")
    dirs=("$corpus")
    [ -d "$dir/seeds/$h" ] && dirs+=("$dir/seeds/$h")
    if "$bin" "${args[@]}" "${dirs[@]}" >"$out/fuzz_$h.log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz_$h.log")
        echo "PASS fuzz/$h (${seconds}s, ${runs:-?} inputs)"
    else
        echo "FAIL fuzz/$h: $(grep -m1 -E 'ERROR|SUMMARY|deadly' "$out/fuzz_$h.log" | cut -c1-200) (log: $out/fuzz_$h.log)"
        fail=1
    fi
done
exit $fail
