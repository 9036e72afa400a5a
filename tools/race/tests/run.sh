#!/bin/bash
# The race tool's labelled test set: each tools/race/tests/*.c (but the unit tests test_*.c) is a
# small pthread program whose racy lines end in "// RACE". Each is built with vigil-cc (-O1 -g)
# and with plain clang, run under VIGIL_OPTIONS=tools=race, and its race.json compared with the
# labels: a "// RACE" line that no reported pair names is missed; a pair naming a line without
# the label is a false report. Both fail the program's test. A line marked "// PARTNER" (an
# atomic access, which races with a plain one but is not itself the racy access) may be named
# beside a "// RACE" line, not on its own or beside another PARTNER. A line marked "// RACE-EXACT" is
# racy but required only when the runtime delivers accesses before lock events (race.json
# "exact_windows": true); otherwise its miss is counted as known. Also checked per program: stdout
# and exit status as the plain build's; "// expect-message: TEXT" lines must appear in the
# text of `vigil report`. Special programs:
#   hot_loop.c      a race in hot code: adaptive mode gets up to 10 runs (the number needed is
#                   printed), mode=full must find it in one; omp_hot_loop.c too (10 runs)
#   single.c        single-threaded: nothing reported, and the access hook never ran
#   the safe programs that synchronize without locks (atomic_publish, semaphore, barrier, once)
#                   are run again with race.hb_sync=0: they must then report races, or their
#                   test could not fail
#   omp_*.c         OpenMP kernels, built with -fopenmp (LLVM's libomp, followed through OMPT);
#                   the safe ones run again with race.ompt=0 and must then report races
# Then: the findings through `vigil report --json` and `vigil run`, a damaged race.json.
# Prints one PASS/FAIL line per check, a found/missed/false table and a final count.
# RACE_TEST_OPTIONS=K=V:... adds options to every run of the labelled set (mode=full, race.hb=0...).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
VIGIL=${VIGIL:-$ROOT/build/bin/vigil}
CC_PLAIN=${CC_PLAIN:-clang}
WORK=$(mktemp -d /tmp/vigil-racetest.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
ok()  { echo "PASS race/$*"; pass=$((pass + 1)); }
bad() { echo "FAIL race/$*"; fail=$((fail + 1)); }

[ -x "$VIGILCC" ] && [ -x "$VIGIL" ] || { echo "FAIL race: build first (make): $VIGILCC, $VIGIL"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL race: python3 is needed to read race.json"; exit 1; }
INCLUDES=(-I"$ROOT/include" -I"$ROOT/tools/race/include")

# verdict SRC RACE_JSON -> "found missed false known" then one line per problem
verdict() {
    python3 - "$1" "$2" <<'PY'
import json, os, sys
src, report = sys.argv[1], sys.argv[2]
name = os.path.basename(src)
lines = open(src).read().split("\n")
marked = {i + 1 for i, l in enumerate(lines) if "// RACE" in l}
partner = {i + 1 for i, l in enumerate(lines) if "// PARTNER" in l}
exact_only = {i + 1 for i, l in enumerate(lines) if "// RACE-EXACT" in l}
d = json.load(open(report))
required = marked if d["options"].get("exact_windows") else marked - exact_only
seen, false = set(), []
for r in d["races"]:
    lines, partners = [], []
    for a in r["accesses"]:
        where = "%s:%d (%s)" % (os.path.basename(a["file"]) or "?", a["line"], a["function"])
        if os.path.basename(a["file"]) == name and a["line"] in marked:
            lines.append(a["line"])
        elif os.path.basename(a["file"]) == name and a["line"] in partner:
            partners.append(where)
        else:
            false.append(where)
    if partners and not lines:
        false.extend(partners)   # a PARTNER line counts only beside a racy line
    seen.update(lines)
missed = sorted(required - seen)
known = sorted(marked - required - seen)
print(len(marked & seen), len(missed), len(false), len(known))
for m in missed:
    print("line %d is marked // RACE but no race names it" % m)
for f in false:
    print("a race names %s, which is not marked // RACE" % f)
PY
}

races_in() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["races"]))' "$1"; }

build() {   # build SRC NAME: vigil-cc and plain binaries in $WORK (omp_*.c: with -fopenmp, LLVM's libomp)
    local omp=()
    case "$2" in omp_*) omp=(-fopenmp) ;; esac
    "$VIGILCC" -O1 -g "${omp[@]}" "${INCLUDES[@]}" "$1" -o "$WORK/$2" -lpthread 2>"$WORK/$2.cc.log" &&
        "$CC_PLAIN" -O1 -g "${omp[@]}" "${INCLUDES[@]}" "$1" -o "$WORK/$2.plain" -lpthread 2>>"$WORK/$2.cc.log"
}

# run NAME OUTDIR OPTIONS [ARGS...]: sets status, rundir
run() {
    local name=$1 out=$2 opts=$3
    shift 3
    rm -rf "$out"
    VIGIL_OPTIONS="tools=race${opts:+:$opts}:out=$out" timeout 300 "$WORK/$name" "$@" >"$out.stdout" 2>"$out.stderr"
    status=$?
    rundir=$(ls -d "$out"/*/ 2>/dev/null | head -n1)
}

declare -A table
for src in "$HERE"/*.c; do
    name=$(basename "$src" .c)
    case "$name" in test_*) continue ;; esac   # unit tests (tests/run.sh runs them)
    if ! build "$src" "$name"; then
        bad "$name: does not build ($(head -c 300 "$WORK/$name.cc.log"))"
        continue
    fi
    args=()
    [ "$name" = hot_loop ] && args=(300000)
    "$WORK/$name.plain" "${args[@]}" >"$WORK/$name.plain.stdout" 2>/dev/null
    plain_status=$?
    runs=1
    case "$name" in *hot_loop) runs=10 ;; esac
    for ((k = 1; k <= runs; k++)); do
        run "$name" "$WORK/out-$name" "${RACE_TEST_OPTIONS:-}" "${args[@]}"
        [ -n "$rundir" ] && [ -f "$rundir/race.json" ] || break
        v=$(verdict "$src" "$rundir/race.json")
        read -r found missed falses known <<<"$(head -n1 <<<"$v")"
        [ "$missed" = 0 ] && break
    done
    if [ "$status" != "$plain_status" ]; then
        bad "$name: exit status $status, plain build $plain_status ($(head -c 200 "$WORK/out-$name.stderr"))"
        continue
    fi
    if [ -z "$rundir" ] || [ ! -f "$rundir/race.json" ]; then
        bad "$name: no race.json ($(head -c 200 "$WORK/out-$name.stderr"))"
        continue
    fi
    cmp -s "$WORK/out-$name.stdout" "$WORK/$name.plain.stdout" && ok "$name: stdout and exit status as the plain build's" \
        || bad "$name: stdout differs from the plain build's: $(head -c 100 "$WORK/out-$name.stdout") vs $(head -c 100 "$WORK/$name.plain.stdout")"
    if [ -s "$WORK/out-$name.stderr" ]; then
        bad "$name: the tool wrote on stderr: $(head -c 300 "$WORK/out-$name.stderr")"
    fi
    table[$name]="$found $missed $falses $known $k"
    case "$name" in *hot_loop) [ "$missed" = 0 ] && echo "NOTE race/$name: found in run $k of up to 10 (adaptive)" ;; esac
    [ "$known" != 0 ] && echo "NOTE race/$name: $known racy line(s) marked RACE-EXACT missed, as expected without exact windows"
    if [ "$missed" = 0 ] && [ "$falses" = 0 ]; then
        ok "$name: $found racy line(s) found, no false report"
    else
        bad "$name: $(tail -n +2 <<<"$v" | tr '\n' ';')"
    fi
    "$VIGIL" report "$rundir" >"$WORK/$name.report" 2>&1
    while IFS= read -r want; do
        grep -qF -- "$want" "$WORK/$name.report" && ok "$name: vigil report says \"$want\"" \
            || bad "$name: vigil report does not say \"$want\": $(grep -m1 'data race' "$WORK/$name.report")"
    done < <(sed -n 's,^// expect-message: ,,p' "$src")
    cp -r "$rundir" "$WORK/report-$name"
done

# hot_loop in mode=full: every access checked, found in one run
if [ -x "$WORK/hot_loop" ]; then
    run hot_loop "$WORK/out-full" "mode=full" 100000
    if [ -n "$rundir" ] && [ -f "$rundir/race.json" ]; then
        v=$(verdict "$HERE/hot_loop.c" "$rundir/race.json")
        read -r found missed falses known <<<"$(head -n1 <<<"$v")"
        [ "$missed" = 0 ] && [ "$falses" = 0 ] && ok "hot_loop: mode=full finds the race in one run" \
            || bad "hot_loop mode=full: $(tail -n +2 <<<"$v" | tr '\n' ';')"
    else
        bad "hot_loop mode=full: no race.json (status $status)"
    fi
fi

# The safe programs that synchronize without locks report races when those edges are off
# (race.hb_sync=0): their labels can fail, and it is the edges that keep them quiet.
for name in atomic_publish semaphore barrier once; do
    [ -x "$WORK/$name" ] || continue
    run "$name" "$WORK/out-nosync-$name" "race.hb_sync=0"
    if [ -n "$rundir" ] && [ -f "$rundir/race.json" ]; then
        n=$(races_in "$rundir/race.json")
        [ "$n" -gt 0 ] && ok "$name: with race.hb_sync=0 it reports $n race(s): its safety comes from the sync edges" \
            || bad "$name: with race.hb_sync=0 it reports no race: the test cannot tell the edges work"
    else
        bad "$name race.hb_sync=0: no race.json (status $status)"
    fi
done

# The safe OpenMP kernels report races when OMPT is not followed (race.ompt=0): libomp's own
# barriers, locks and task queues are invisible then, so their labels can fail too.
for src in "$HERE"/omp_*.c; do
    name=$(basename "$src" .c)
    grep -q '// RACE' "$src" && continue
    [ -x "$WORK/$name" ] || continue
    run "$name" "$WORK/out-noompt-$name" "race.ompt=0"
    if [ -n "$rundir" ] && [ -f "$rundir/race.json" ]; then
        n=$(races_in "$rundir/race.json")
        [ "$n" -gt 0 ] && ok "$name: with race.ompt=0 it reports $n race(s): its safety comes from the OMPT events" \
            || bad "$name: with race.ompt=0 it reports no race: the test cannot tell the OMPT events work"
    else
        bad "$name race.ompt=0: no race.json (status $status)"
    fi
done

# OpenMP programs built with vigil-cc print what plain clang's build prints, with the same exit
# status, in every sampling mode, without a tool and with the race tool.
for name in omp_reduction omp_tasks omp_critical; do
    [ -x "$WORK/$name" ] || continue
    "$WORK/$name.plain" >"$WORK/$name.plain.stdout" 2>/dev/null
    plain_status=$?
    for opts in mode=off mode=adaptive mode=bursty mode=full mode=off:tools=race mode=full:tools=race; do
        VIGIL_OPTIONS="$opts:out=$WORK/out-modes" timeout 300 "$WORK/$name" >"$WORK/$name.modes.stdout" 2>/dev/null
        st=$?
        if [ "$st" = "$plain_status" ] && cmp -s "$WORK/$name.modes.stdout" "$WORK/$name.plain.stdout"; then
            ok "$name ($opts): stdout and exit status as the plain -fopenmp build's"
        else
            bad "$name ($opts): exit status $st (plain $plain_status), stdout $(head -c 100 "$WORK/$name.modes.stdout")"
        fi
    done
done

# GCC's libgomp (clang -fopenmp=libgomp) has no OMPT: the tool says so once, and the program runs.
if "$VIGILCC" -O1 -g -fopenmp=libgomp "$HERE/omp_barrier.c" -o "$WORK/gomp_barrier" 2>"$WORK/gomp.cc.log"; then
    run gomp_barrier "$WORK/out-gomp" ""
    n=$(grep -c "uses GCC's OpenMP runtime (libgomp), which has no OMPT" "$WORK/out-gomp.stderr")
    [ "$status" = 0 ] && [ "$n" = 1 ] && ok "libgomp: one message that OpenMP is not followed, exit status 0" \
        || bad "libgomp: status $status, $n message(s): $(head -c 300 "$WORK/out-gomp.stderr")"
    run omp_barrier "$WORK/out-libomp" ""
    grep -q libgomp "$WORK/out-libomp.stderr" && bad "libomp: the libgomp message is printed for LLVM's libomp" \
        || ok "libomp: no libgomp message"
    OMP_TOOL=disabled run omp_barrier "$WORK/out-omptoff" ""
    grep -q "did not start the tool's OMPT part" "$WORK/out-omptoff.stderr" \
        && ok "OMP_TOOL=disabled: one message that libomp did not start OMPT" \
        || bad "OMP_TOOL=disabled: no message ($(head -c 200 "$WORK/out-omptoff.stderr"))"
else
    echo "SKIP race/libgomp: clang -fopenmp=libgomp does not build ($(head -c 200 "$WORK/gomp.cc.log"))"
fi

# single-threaded: no race, and the access hook returned at once (no access counted)
if [ -d "$WORK/report-single" ]; then
    verdict=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["stats"]
print("ok" if not d["races"] and s["accesses"] == 0 and s["checked"] == 0 and s["cells"] == 0 and s["threads"] == 1
      else "races %d, stats %s" % (len(d["races"]), s))' "$WORK/report-single/race.json")
    [ "$verdict" = ok ] && ok "single: nothing reported, no access looked at (one thread)" || bad "single: $verdict"
fi

# the findings model: kind, severity, both locations, the tool's fields
if [ -d "$WORK/report-two_locks" ]; then
    "$VIGIL" report --json "$WORK/report-two_locks" >"$WORK/findings.json" 2>&1
    verdict=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["tool"] == "race"]
keys = lambda x: {k["key"]: k["value"] for k in x["fields"]}
good = f and all(x["kind"] == "data-race" and x["severity"] == "error" and len(x["locations"]) >= 2
                 and x["message"].endswith("no common lock") and "lock_a" in keys(x)["locks_first"] + keys(x)["locks_second"]
                 and keys(x)["count"] >= 1 for x in f)
print("ok" if good else "findings: %s" % json.dumps(f)[:400])' "$WORK/findings.json" 2>&1)
    [ "$verdict" = ok ] && ok "findings: data-race, error, both accesses, the locks held by name, the count" \
        || bad "two_locks $verdict"
    "$VIGIL" report --sarif "$WORK/report-two_locks" 2>&1 | grep -q '"ruleId": "race/data-race"' \
        && ok "SARIF output has race/data-race results" || bad "SARIF output has no race/data-race result"
fi

# vigil run --tool race: the findings counted in its summary on stderr
if [ -x "$WORK/unlocked_counter" ]; then
    (cd "$WORK" && "$VIGIL" run --out "$WORK/out-vrun" --tool race -- ./unlocked_counter >"$WORK/vrun.stdout" 2>"$WORK/vrun.stderr")
    grep -qE 'findings +race: [0-9]+ finding' "$WORK/vrun.stderr" && ok "vigil run --tool race: the races in its summary" \
        || bad "vigil run --tool race: $(head -c 300 "$WORK/vrun.stderr")"
fi

# A damaged race.json: `vigil report` names the file and line
if [ -d "$WORK/report-unlocked_counter" ]; then
    cp -r "$WORK/report-unlocked_counter" "$WORK/damaged"
    python3 - "$WORK/damaged/race.json" <<'PY'
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
for i, l in enumerate(lines):
    if '"accesses": [' in l:
        lines[i] = l.replace('"accesses"', '"accessez"')
        break
open(p, "w").write("\n".join(lines))
PY
    if "$VIGIL" report "$WORK/damaged" >/dev/null 2>"$WORK/damaged.err"; then
        bad "a damaged race.json is accepted"
    else
        grep -qE 'race\.json:[0-9]+: expected races\[0\]\.accesses' "$WORK/damaged.err" \
            && ok "a damaged race.json: one message naming the file, the line and what was expected" \
            || bad "damaged race.json message: $(cat "$WORK/damaged.err")"
    fi
    printf '{"format": "vigil-race", "version": 1, "races": [' >"$WORK/damaged/race.json"
    "$VIGIL" report "$WORK/damaged" >/dev/null 2>"$WORK/damaged.err" && bad "a truncated race.json is accepted" \
        || { grep -qE 'race\.json:1:[0-9]+: expected' "$WORK/damaged.err" && ok "a truncated race.json: line and column named" \
             || bad "truncated race.json message: $(cat "$WORK/damaged.err")"; }
fi

# A bad option value keeps the default, with one message; the run goes on
if [ -x "$WORK/locked_counter" ]; then
    run locked_counter "$WORK/out-badopt" "race.history=12"
    [ "$status" = 0 ] && grep -q 'race.history=12: expected 1 to 8; using 3' "$WORK/out-badopt.stderr" \
        && ok "race.history=12: one message, the default kept" || bad "race.history=12: $(head -c 300 "$WORK/out-badopt.stderr")"
fi

echo
printf '%-18s %6s %7s %6s %11s %5s\n' program found missed false known-miss runs
for k in $(printf '%s\n' "${!table[@]}" | sort); do
    read -r f m p kn r <<<"${table[$k]}"
    printf '%-18s %6s %7s %6s %11s %5s\n' "$k" "$f" "$m" "$p" "$kn" "$r"
done
echo "race tests: $pass passed, $fail failed"
[ "$fail" = 0 ]
