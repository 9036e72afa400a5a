#!/usr/bin/env bash
# The race tool on an OpenMP program (LLVM's libomp, followed through OMPT), side by side:
#   plain        clang -fopenmp, the reference
#   vigil-base   vigil-cc -fopenmp, no tool (adaptive sampling)
#   vigil-race   vigil-cc -fopenmp, VIGIL_OPTIONS=tools=race
#   vigil-noompt the same with race.ompt=0: OpenMP's synchronization not followed
#   tsan         clang -fopenmp -fsanitize=thread (no OMPT: TSan does not see libomp's barriers)
# Workload: bench/workloads/omp_stencil.c (Jacobi sweeps, one parallel for each, a histogram with
# atomics, critical sections, a tree of tasks with dependences), 2 threads, race-free.
# Runs alternate between the variants (RUNS rounds, default 5); each line is the median wall
# time, CPU time (user + system) and peak RSS, their ratios to plain, and the races the last
# run reported (race.json pairs; TSan's "WARNING: ThreadSanitizer: data race"). Every variant's
# output must equal plain's (a mismatch is printed).
# usage: bench/race-omp.sh [--save]    --save: also write bench/results/race-omp-<date>.txt
# Environment: RUNS, ARGS (default "1024 300"), VIGILCC.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
RUNS=${RUNS:-5}
ARGS=${ARGS:-1024 300}
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
SRC=$HERE/workloads/omp_stencil.c
W=$(mktemp -d /tmp/vigil-race-omp.XXXXXX)
trap 'rm -rf "$W"' EXIT
command -v /usr/bin/time >/dev/null || { echo "race-omp: needs /usr/bin/time" >&2; exit 1; }

clang -O2 -g -fopenmp "$SRC" -o "$W/plain" || exit 1
"$VIGILCC" -O2 -g -fopenmp "$SRC" -o "$W/vigil" || exit 1
clang -O2 -g -fopenmp -fsanitize=thread "$SRC" -o "$W/tsan" || exit 1
variants=(plain vigil-base vigil-race vigil-noompt tsan)
# shellcheck disable=SC2086
"$W/plain" $ARGS >"$W/expected"

run_one() {   # run_one VARIANT ROUND -> appends "wall cpu rss" to $W/VARIANT.times
    local v=$1 out="$W/out-$1" bin opts=""
    case "$v" in
    plain) bin=$W/plain ;;
    tsan) bin=$W/tsan ;;
    vigil-base) bin=$W/vigil; opts="out=$out" ;;
    vigil-race) bin=$W/vigil; opts="tools=race:out=$out" ;;
    vigil-noompt) bin=$W/vigil; opts="tools=race:race.ompt=0:out=$out" ;;
    esac
    rm -rf "$out"
    # shellcheck disable=SC2086
    VIGIL_OPTIONS=$opts TSAN_OPTIONS=halt_on_error=0 /usr/bin/time -f "%e %U %S %M" -o "$W/$v.t" \
        "$bin" $ARGS >"$W/$v.stdout" 2>"$W/$v.stderr"
    cmp -s "$W/$v.stdout" "$W/expected" || echo "MISMATCH $v: $(head -c 100 "$W/$v.stdout")"
    tail -n1 "$W/$v.t" | awk '{printf "%s %.3f %s\n", $1, $2 + $3, $4}' >>"$W/$v.times"   # (a first line when the status is not 0)
}

for ((r = 1; r <= RUNS; r++)); do
    for v in "${variants[@]}"; do run_one "$v" "$r"; done
done

races() {
    case "$1" in
    tsan) grep -c "WARNING: ThreadSanitizer: data race" "$W/tsan.stderr" ;;
    vigil-race | vigil-noompt)
        python3 -c 'import json,glob,sys; print(len(json.load(open(glob.glob(sys.argv[1] + "/*/race.json")[0]))["races"]))' "$W/out-$1" ;;
    *) echo - ;;
    esac
}

{
    echo "bench/race-omp.sh: omp_stencil $ARGS, 2 threads, medians of $RUNS alternating runs ($(date -u +%Y-%m-%d), $(nproc) CPUs)"
    printf '%-13s %8s %8s %8s %8s %9s %8s %6s\n' variant wall cpu rss_kb wall_x cpu_x rss_x races
    read -r pw pc pr < <(python3 -c 'import statistics,sys
rows=[l.split() for l in open(sys.argv[1])]
print(*[statistics.median(float(r[i]) for r in rows) for i in range(3)])' "$W/plain.times")
    for v in "${variants[@]}"; do
        read -r w c m < <(python3 -c 'import statistics,sys
rows=[l.split() for l in open(sys.argv[1])]
print(*[statistics.median(float(r[i]) for r in rows) for i in range(3)])' "$W/$v.times")
        printf '%-13s %8.3f %8.3f %8.0f %7.2fx %8.2fx %7.2fx %6s\n' "$v" "$w" "$c" "$m" \
            "$(python3 -c "print($w/$pw)")" "$(python3 -c "print($c/max($pc,0.001))")" "$(python3 -c "print($m/$pr)")" "$(races "$v")"
    done
} | tee "$W/summary"
if [ "${1:-}" = --save ]; then
    cp "$W/summary" "$ROOT/bench/results/race-omp-$(date -u +%Y-%m-%d).txt"
fi
