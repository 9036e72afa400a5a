#!/bin/bash
# The leak tool's labelled test set: each tools/leak/tests/*.c (but the unit tests test_*.c) says what must be found (and what must
# not) in "// expect:" lines:
#   expect: found FUNC unreachable|stale [last=FUNC2] [objects=N] [indirect=N]
#                                                     a group allocated in FUNC, of that kind
#                                                     (unreachable also accepts "both"), whose most
#                                                     recent last access is in FUNC2, of N objects,
#                                                     N of them indirect leaks
#   expect: absent FUNC                                no group allocated in FUNC
#   expect: stack F1:L1 <- F2:L2 <- ...                some group's allocation stack begins
#                                                     with these frames (function:line, inlined
#                                                     calls included), each with a file
#   expect: noframe FUNC                               no frame of any group is in FUNC
# "// options: K=V:..." adds tool options for that program, and "// cflags: ..." replaces the
# compile flags (default: -O1 -g -fno-omit-frame-pointer).
# A group allocated in the test's own source that no "found" line expects is a false positive.
# Prints one PASS/FAIL line per check, a found/missed/false-positive table, and a final count.
# Also checks SARIF and JSON output, suppressions, the snapshot triggers (API, SIGUSR2, timer)
# and, when Chromium is installed, the HTML viewer (tools/leak/tests/html_test.sh).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
VIGIL=${VIGIL:-$ROOT/build/bin/vigil}
WORK=$(mktemp -d /tmp/vigil-leaktest.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
ok()  { echo "PASS leak/$*"; pass=$((pass + 1)); }
bad() { echo "FAIL leak/$*"; fail=$((fail + 1)); }

[ -x "$VIGILCC" ] && [ -x "$VIGIL" ] || { echo "FAIL leak: build first (make): $VIGILCC, $VIGIL"; exit 1; }
OPTS="tools=leak:leak.stale_after=0.5:leak.snapshot_every=0.25"

# groups of a report, one per line: KIND ALLOC_FUNCTION ALLOC_FILE LAST_ACCESS_FUNCTION OBJECTS INDIRECT
groups_of() {
    "$VIGIL" leaks "$1" | awk '
        /^#[0-9]+ / { kind = ($2 == "unreachable" && $3 == "and") ? "both" : $2; fn = "?"; file = "?"
                      objects = $(NF - 1); indirect = 0 }
        /^    unreachable [0-9]+ \(direct/ { indirect = $6; sub(/\),?$/, "", indirect) }
        /^    allocated at/ { fn = $3; file = $4; sub(/:[0-9]+$/, "", file) }
        /^    last access \(most recent\)/ { la = ($5 == "none") ? "-" : $5; print kind, fn, file, la, objects, indirect }'
}

declare -A table
for src in "$HERE"/*.c; do
    # unit tests (tests/run.sh runs them), and programs with checks of their own (below)
    case "$(basename "$src")" in test_*.c|allocator_top.c|daemon_snapshot.c|flush_residue.c|short_growing.c|merged_line.c) continue ;; esac
    name=$(basename "$src" .c)
    exe="$WORK/$name"
    cflags=$(sed -n 's,^// cflags: ,,p' "$src" | head -n1)
    # shellcheck disable=SC2086  # the flags are words
    if ! "$VIGILCC" ${cflags:--O1 -g -fno-omit-frame-pointer} -I"$ROOT/include" -I"$ROOT/tools/leak/include" "$src" -o "$exe" 2>"$WORK/$name.cc.log"; then
        bad "$name: does not build with vigil-cc ($(head -c 300 "$WORK/$name.cc.log"))"
        continue
    fi
    out="$WORK/out-$name"
    # "// options: K=V:..." adds to OPTS for this program
    # a hang fails the test, not the suite (live_regular gets a signal: its pid must be its own)
    limit=(timeout 120); [ "$name" = live_regular ] && limit=()
    VIGIL_OPTIONS="$OPTS$(sed -n 's,^// options: ,:,p' "$src" | head -n1):out=$out" "${limit[@]}" "$exe" >"$WORK/$name.stdout" 2>"$WORK/$name.stderr" &
    pid=$!
    if [ "$name" = live_regular ]; then sleep 0.6; kill -USR2 "$pid" 2>/dev/null; fi
    wait "$pid" || { bad "$name: exit status $?"; continue; }
    rundir=$(ls -d "$out"/*/ 2>/dev/null | head -n1)
    if [ -z "$rundir" ] || [ ! -f "$rundir/leak.json" ]; then
        bad "$name: no leak.json in $out"
        continue
    fi
    groups_of "$rundir" >"$WORK/$name.groups"
    found=0 missed=0 fp=0 expected_fns=" "
    while read -r verb fn kind extra; do
        case "$verb" in
        found)
            expected_fns+="$fn "
            want_last=$(sed -n 's/.*last=\([^ ]*\).*/\1/p' <<<"$extra")
            want_objects=$(sed -n 's/.*[^a-z]objects=\([0-9]*\).*/\1/p' <<<" $extra")
            want_indirect=$(sed -n 's/.*indirect=\([0-9]*\).*/\1/p' <<<"$extra")
            if awk -v fn="$fn" -v kind="$kind" -v last="$want_last" -v objects="$want_objects" -v indirect="$want_indirect" '
                    $2 == fn && ($1 == kind || (kind == "unreachable" && $1 == "both")) &&
                    (last == "" || $4 == last) && (objects == "" || $5 == objects) &&
                    (indirect == "" || $6 == indirect) { hit = 1 }
                    END { exit !hit }' "$WORK/$name.groups"; then
                ok "$name: found $fn ($kind${extra:+, $extra})"; found=$((found + 1))
            else
                bad "$name: expected a $kind group allocated in $fn${extra:+ with $extra}; got: $(tr '\n' ';' <"$WORK/$name.groups")"
                missed=$((missed + 1))
            fi ;;
        stack)
            want="$fn $kind $extra"
            "$VIGIL" leaks --json "$rundir" >"$WORK/$name.json" 2>&1
            if got=$(python3 - "$WORK/$name.json" "$want" <<'PY'
import json, sys
want = [w for w in sys.argv[2].split() if w != "<-"]
stacks = [["%s:%s" % (f["function"], f["line"]) for f in g["stack"]] for g in json.load(open(sys.argv[1]))["groups"]]
hit = [g for g in json.load(open(sys.argv[1]))["groups"]
       if ["%s:%s" % (f["function"], f["line"]) for f in g["stack"]][:len(want)] == want
       and all(f["file"] for f in g["stack"][:len(want)])]
print(" | ".join(" <- ".join(s) for s in stacks))
sys.exit(0 if hit else 1)
PY
            ); then
                ok "$name: stack $want"
            else
                bad "$name: no group's stack begins with $want; stacks: $got"
            fi ;;
        noframe)
            "$VIGIL" leaks --json "$rundir" >"$WORK/$name.json" 2>&1
            if python3 -c 'import json, sys; sys.exit(any((f["function"] or "?") == sys.argv[2] for g in json.load(open(sys.argv[1]))["groups"] for f in g["stack"]))' \
                    "$WORK/$name.json" "$fn"; then
                ok "$name: no frame in $fn"
            else
                bad "$name: a stack has a frame in $fn: $(python3 -c 'import json, sys; print([[f["function"] for f in g["stack"]] for g in json.load(open(sys.argv[1]))["groups"]])' "$WORK/$name.json")"
            fi ;;
        absent)
            if awk -v fn="$fn" '$2 == fn { hit = 1 } END { exit hit }' "$WORK/$name.groups"; then
                ok "$name: nothing reported for $fn"
            else
                bad "$name: $fn reported but must not be: $(grep " $fn " "$WORK/$name.groups" | tr '\n' ';')"
                fp=$((fp + 1))
            fi ;;
        esac
    done < <(sed -n 's,^// expect: ,,p' "$src")
    # groups allocated in the test's own source that nobody expected
    while read -r kind fn file last objects indirect; do
        case "$file" in */"$name.c") ;; *) continue ;; esac
        case "$expected_fns" in *" $fn "*) continue ;; esac
        case "$(sed -n 's,^// expect: absent ,,p' "$src")" in *"$fn"*) continue ;; esac
        bad "$name: unexpected $kind group allocated in $fn (false positive)"
        fp=$((fp + 1))
    done <"$WORK/$name.groups"
    table[$name]="$found $missed $fp"
    cp -r "$rundir" "$WORK/report-$name"
done

# The allocator's bookkeeping (tools/leak/tests/allocator_top.c): glibc's pointers to its top
# chunk and to its bins' free chunks, in the C library's data, fall inside the blocks before
# them. At -O0 and -O2 (as users build), for sizes that are and are not multiples of 16: the lost
# block(s) found, nothing reported when they are kept or freed, nor for what the C library holds
# for the program (environment, open FILEs and buffers, exit handlers' data, tz strings).
# objects in groups allocated in last_block, and in all groups, of a report: "N M"
objects_of() {
    "$VIGIL" leaks --json "$1" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
mine = sum(g["objects"] for g in d["groups"] if g["stack"] and g["stack"][0].get("function") == "last_block")
print(mine, sum(g["objects"] for g in d["groups"]))'
}
for opt in -O0 -O2; do
    exe="$WORK/allocator_top$opt"
    if ! "$VIGILCC" $opt -g "$HERE/allocator_top.c" -o "$exe" 2>"$WORK/allocator_top.cc.log"; then
        bad "allocator_top $opt: does not build: $(head -c 300 "$WORK/allocator_top.cc.log")"
        continue
    fi
    problems=""
    for run in "leak 16:1 1" "leak 17:1 1" "leak 24:1 1" "leak 100:1 1" "leak 104:1 1" "leak 105:1 1" "leak 112:1 1" \
               "bins 24:16 16" "bins 100:16 16" "bins 104:16 16" "bins 112:16 16" \
               "keep 17:0 0" "keep 24:0 0" "keep 100:0 0" "keep 104:0 0" "free 24:0 0" "free 104:0 0" \
               "libc 16:0 0" "libc 17:0 0" "libc 24:0 0" "libc 100:0 0" "libc 104:0 0"; do
        args=${run%%:*} want=${run#*:}
        out="$WORK/out-top${opt}-${args// /-}"
        VIGIL_OPTIONS="tools=leak:out=$out" "$exe" $args >"$WORK/top.stdout" 2>"$WORK/top.stderr"
        status=$?
        got=$(objects_of "$(ls -d "$out"/*/ 2>/dev/null | head -n1)")
        [ "$status" = 0 ] && [ ! -s "$WORK/top.stderr" ] || problems+=" $args: status $status, stderr $(head -c 100 "$WORK/top.stderr");"
        [ "$got" = "$want" ] || problems+=" $args: $got objects (lost blocks, all) where $want expected;"
    done
    [ -z "$problems" ] && ok "allocator_top $opt: lost blocks of 16-112 bytes found though glibc's top and bin pointers fall inside them; kept, freed and libc-held blocks silent" \
        || bad "allocator_top $opt:$problems"
done

# A daemon asked for its leaks (tools/leak/tests/daemon_snapshot.c): SIGUSR2 while it waits in
# nanosleep writes a complete report into its directory while it still runs (no temporary
# directory left, run.txt and leak.json readable by `vigil leaks` and `vigil report`): the lost
# list (unreachable: the process has one thread) and the table never read again (stale), not the
# cache it keeps touching. It then ends as the plain build does, and the exit report replaces it.
# Twice: waiting in nanosleep (answered at once), and busy in the C library's memset without
# allocating (answered when a retry lands outside the C library).
if "$VIGILCC" -O2 -g "$HERE/daemon_snapshot.c" -o "$WORK/daemon_snapshot" 2>"$WORK/daemon.cc.log"; then
  for mode in wait busy; do
    out="$WORK/out-daemon-$mode"
    rm -f "$WORK/daemon.stop"
    # no timeout(1): the signal must reach the daemon itself (it ends on its own after 60 s)
    VIGIL_OPTIONS="tools=leak:leak.stale_after=0.5:out=$out" "$WORK/daemon_snapshot" "$WORK/daemon.stop" ${mode/wait/} \
        >"$WORK/daemon.stdout" 2>"$WORK/daemon.stderr" &
    pid=$!
    for i in $(seq 50); do grep -q ready "$WORK/daemon.stdout" 2>/dev/null && break; sleep 0.1; done
    sleep 1
    kill -USR2 "$pid"
    problems="" dir="$out/daemon_snapshot.$pid"
    for i in $(seq 100); do [ -f "$dir/leak.json" ] && break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null || problems+=" the daemon is no longer running;"
    [ -f "$dir/leak.json" ] && [ -f "$dir/run.txt" ] || problems+=" no report in $dir after 10 s;"
    ls -A "$out" 2>/dev/null | grep -q '^\.' && problems+=" a temporary report directory is visible;"
    "$VIGIL" leaks --json "$dir" >"$WORK/daemon.json" 2>"$WORK/daemon.leaks.err" || problems+=" vigil leaks failed: $(head -c 200 "$WORK/daemon.leaks.err");"
    "$VIGIL" report "$dir" >"$WORK/daemon.report" 2>&1 || problems+=" vigil report failed: $(head -c 200 "$WORK/daemon.report");"
    grep -q 'lose_list' "$WORK/daemon.report" || problems+=" vigil report does not show the lost list;"
    grep -qx running "$dir/run.txt" || problems+=" run.txt does not say it is running: $(grep -E '^(exit|signal|running)' "$dir/run.txt");"
    verdict=$(python3 - "$WORK/daemon.json" "$mode" <<'PY2' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
by = {g["stack"][0].get("function"): g for g in d["groups"] if g["stack"]}
lost, table = by.get("lose_list"), by.get("fill_table")
bad = []
if not d.get("running"): bad.append("not marked running")
if not lost or lost["unreachable_objects"] != 50: bad.append("lose_list: %s" % (lost and lost["unreachable_objects"]))
if not table or table["stale_objects"] != 1 or table["unreachable_objects"] != 0: bad.append("fill_table: %s" % table)
# busy: the loop is hot, sampled at the floor rate: its touches of the cache may go unseen
if "main" in by and sys.argv[2] == "wait": bad.append("the cache it touches is reported")
print("ok" if not bad else "; ".join(bad))
PY2
)
    [ "$verdict" = ok ] || problems+=" $(tail -n1 <<<"$verdict");"
    touch "$WORK/daemon.stop"
    wait "$pid"; status=$?
    [ "$status" = 0 ] && grep -q '^done$' "$WORK/daemon.stdout" && [ ! -s "$WORK/daemon.stderr" ] \
        || problems+=" status $status, stdout $(tr '\n' ' ' <"$WORK/daemon.stdout"), stderr $(head -c 200 "$WORK/daemon.stderr");"
    grep -q '"running": false' "$dir/leak.json" 2>/dev/null && grep -q '"reason": "signal"' "$dir/leak.json" \
        || problems+=" the exit report did not replace the snapshot (or lost its signal snapshot);"
    [ -z "$problems" ] && ok "daemon ($mode): SIGUSR2 wrote a complete report while it ran (the lost list, the stale table), read by vigil leaks and vigil report; the exit report replaced it" \
        || bad "daemon snapshot ($mode):$problems"
  done
else
    bad "daemon_snapshot does not build: $(head -c 300 "$WORK/daemon.cc.log")"
fi

# A report the program asks for while it runs (tools/leak/tests/flush_residue.c): the scan of
# the stack starts at the report writer's frame, so what a returned function left below it (its
# list's nodes) keeps nothing reachable: the lost list is whole in the snapshot.
if "$VIGILCC" -O2 -g -I"$ROOT/include" "$HERE/flush_residue.c" -o "$WORK/flush_residue" 2>"$WORK/flush.cc.log"; then
    out="$WORK/out-flush"
    VIGIL_OPTIONS="tools=leak:out=$out" "$WORK/flush_residue" "cp -r $out $WORK/flush-snapshot" \
        >"$WORK/flush.stdout" 2>"$WORK/flush.stderr"
    status=$?
    dir=$(ls -d "$WORK"/flush-snapshot/flush_residue.*/ 2>/dev/null | head -n1)
    verdict=$("$VIGIL" leaks --json "$dir" 2>&1 | python3 -c '
import json, sys
d = json.load(sys.stdin)
by = {g["stack"][0].get("function"): g for g in d["groups"] if g["stack"]}
lost = by.get("lose_list")
print("ok" if d.get("running") and lost and lost["unreachable_objects"] == 50
      else "running %s, lose_list %s" % (d.get("running"), lost and lost["unreachable_objects"]))' 2>&1)
    [ "$status" = 0 ] && [ "$verdict" = ok ] \
        && ok "flush report: the lost list whole (50 nodes) in a snapshot vigil_flush_report wrote, though its nodes' addresses lie below the report's frame" \
        || bad "flush report: status $status, $(tail -n1 <<<"$verdict"), stderr $(head -c 200 "$WORK/flush.stderr")"
else
    bad "flush_residue does not build: $(head -c 300 "$WORK/flush.cc.log")"
fi

# Short runs (tools/leak/tests/short_growing.c, default leak.stale_after of 30 s): a 2 s run with
# a list grown to 8.5 MB: no group, the report says the run was shorter than leak.stale_after and
# shows the list's site first in what is in use at exit.
if "$VIGILCC" -O2 -g "$HERE/short_growing.c" -o "$WORK/short_growing" 2>"$WORK/short.cc.log"; then
    out="$WORK/out-short"
    VIGIL_OPTIONS="tools=leak:out=$out" "$WORK/short_growing" >"$WORK/short.stdout" 2>"$WORK/short.stderr"
    status=$?
    dir=$(ls -d "$out"/*/ 2>/dev/null | head -n1)
    "$VIGIL" leaks "$dir" >"$WORK/short.txt" 2>&1
    first=$(grep -A1 '^in use at exit: ' "$WORK/short.txt" | sed -n 2p)
    if [ "$status" = 0 ] && grep -q '^0 leak groups' "$WORK/short.txt" &&
       grep -q '^note: the run lasted [0-9.]* s, less than leak.stale_after (30 s)' "$WORK/short.txt" &&
       grep -Eq '^in use at exit: 8[0-9.]+ KiB in 85[0-9]{2} objects' "$WORK/short.txt" &&
       grep -Eq '^ +8[0-9.]+ KiB in +8500 objects +grow_list ' <<<"$first"; then
        ok "short run: the report says it was shorter than leak.stale_after and shows the growing list first in use at exit"
    else bad "short run: status $status; $(head -c 900 "$WORK/short.txt")"; fi
    VIGIL_OPTIONS="tools=leak:leak.stale_after=1:out=$out-long" "$WORK/short_growing" >/dev/null 2>&1
    "$VIGIL" leaks "$(ls -d "$out-long"/*/ | head -n1)" 2>&1 | grep -q '^note: the run lasted' \
        && bad "short run: the note is printed for a run longer than leak.stale_after" \
        || ok "short run: no note when the run outlasts leak.stale_after"
else
    bad "short_growing does not build: $(head -c 300 "$WORK/short.cc.log")"
fi

# Last accesses without a line of their own (tools/leak/tests/merged_line.c at -O2: a load hoisted
# out of both arms of an if has line 0): never "file.c:0", but the nearest known line of the
# function, so marked, in the text, the JSON output and vigil report.
if "$VIGILCC" -O2 -g "$HERE/merged_line.c" -o "$WORK/merged_line" 2>"$WORK/merged.cc.log"; then
    out="$WORK/out-merged"
    VIGIL_OPTIONS="tools=leak:out=$out" "$WORK/merged_line" >/dev/null 2>&1
    dir=$(ls -d "$out"/*/ 2>/dev/null | head -n1)
    "$VIGIL" leaks "$dir" >"$WORK/merged.txt" 2>&1
    "$VIGIL" report "$dir" >"$WORK/merged.report" 2>&1
    line=$(grep 'last access (most recent)' "$WORK/merged.txt")
    raw=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(str(g["last_access_recent"]["line"]) for g in d["groups"] if g["last_access_recent"]))' "$dir/leak.json" 2>&1)
    if grep -q 'pick  [^ ]*merged_line.c:[1-9][0-9]* (nearest known line) (load)' <<<"$line" &&
       ! grep -q 'merged_line.c:0\b' "$WORK/merged.txt" "$WORK/merged.report" &&
       grep -q 'no line of its own: the nearest known line): pick  .*merged_line.c:[1-9]' "$WORK/merged.report"; then
        ok "a last access with line 0 (recorded line $raw) shows the nearest known line, marked so"
    else bad "line-0 last access: recorded line $raw; $line; $(grep -i 'sampled access' "$WORK/merged.report" | head -1)"; fi
else
    bad "merged_line does not build: $(head -c 300 "$WORK/merged.cc.log")"
fi

# Sampled-access tallies (leak.c's slot cache hands its hits to the allocation sites and the
# totals): stale_cache's stale group, written while it was filled, has sampled accesses, and no
# group's site counts more than the heap accesses of the whole run.
tallies=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["sampling"]
site = [g["site_accesses_sampled"] for g in d["groups"]]
print(s["accesses_sampled"], s["accesses_heap"], max(site) if site else -1)' "$WORK/report-stale_cache/leak.json" 2>&1)
read -r t_sampled t_heap t_site <<<"$tallies"
if [ "${t_site:--1}" -gt 0 ] 2>/dev/null && [ "$t_site" -le "$t_heap" ] && [ "$t_heap" -le "$t_sampled" ]; then
    ok "sampled-access tallies: the stale group's site $t_site, heap $t_heap, all $t_sampled"
else bad "sampled-access tallies of stale_cache (site, heap, all): $t_site $t_heap $t_sampled ($tallies)"; fi

# Snapshot triggers: the API (stale_cache), SIGUSR2 (live_regular), the timer (every 0.25 s).
grep -q '"reason": "api"' "$WORK/report-stale_cache/leak.json" 2>/dev/null \
    && ok "vigil_leak_snapshot() took a snapshot" || bad "no api snapshot in stale_cache's leak.json"
grep -q '"reason": "signal"' "$WORK/report-live_regular/leak.json" 2>/dev/null \
    && ok "SIGUSR2 took a snapshot" || bad "no signal snapshot in live_regular's leak.json"
grep -q '"reason": "timer"' "$WORK/report-never_freed/leak.json" 2>/dev/null \
    && ok "periodic snapshots" || bad "no timer snapshot in never_freed's leak.json"

# Threads (tools/leak/tests/threads.c): objects modelled while the process had one thread (no locks
# then) are freed by the threads, four threads churn at once, and each drops 50 records. Every
# free must find its object, exactly the 200 dropped records remain in thread_leak's groups, and
# no other group is reported (the dynamic loader's per-thread allocations are not leaks), and
# the records are one group whichever copy of worker ran.
if [ -d "$WORK/report-threads" ]; then
    "$VIGIL" leaks --json "$WORK/report-threads" >"$WORK/threads.json" 2>&1
    verdict=$(python3 - "$WORK/threads.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
mine = lambda g: g["stack"] and g["stack"][0].get("function") == "thread_leak"
parked = [g for g in d["groups"] if g["stack"] and g["stack"][0].get("function") == "parked_alloc"]
# The parked thread is blocked at exit: its site still counts its 10 allocations.
parked_counts = [(g["site_allocs"], g["objects"]) for g in parked]
dropped = sum(g["objects"] for g in d["groups"] if mine(g))
# The loader's allocations (each thread's DTV, kept with glibc's cached stacks) are not leaks.
others = ["%s:%s" % (g["stack"][0].get("function"), g["stack"][0].get("file")) if g["stack"] else "?"
          for g in d["groups"] if not mine(g) and g not in parked]
# One group: the records allocated in a burst (instrumented copies, reached through a transfer)
# have the same four source frames as the others.
ngroups = sum(1 for g in d["groups"] if mine(g))
print("ok" if d["unknown_frees"] == 0 and dropped == 200 and d["allocs"] - d["frees"] >= 200 and not others
      and ngroups == 1 and parked_counts == [(10, 10)]
      else "unknown_frees=%d thread_leak objects=%d in %d groups allocs-frees=%d other groups %s parked (allocs, objects) %s"
           % (d["unknown_frees"], dropped, ngroups, d["allocs"] - d["frees"], others, parked_counts))
PY
)
    [ "$verdict" = ok ] && ok "threads: every free found its object, 200 dropped records reported in one group, a blocked thread's allocations counted, nothing else" \
        || bad "threads: $verdict"
fi

# Output formats and suppressions, on never_freed's report.
rep="$WORK/report-never_freed"
if [ -d "$rep" ]; then
    # Built with frame pointers: full stacks, no note. Without them the runtime's walk stops at the
    # allocating function, and the report says how to get its callers.
    "$VIGIL" leaks "$rep" | grep -q '^note: allocation stacks are one frame deep' \
        && bad "frame pointers: a note about shallow stacks in a build with frame pointers"
    if "$VIGILCC" -O2 -g -fomit-frame-pointer -I"$ROOT/include" -I"$ROOT/tools/leak/include" "$HERE/never_freed.c" -o "$WORK/never_freed_nofp" \
            2>"$WORK/nofp.cc.log" &&
       VIGIL_OPTIONS="$OPTS:out=$WORK/out-nofp" "$WORK/never_freed_nofp" >/dev/null 2>&1 &&
       "$VIGIL" leaks "$(ls -d "$WORK"/out-nofp/*/ | head -n1)" | grep -q '^note: allocation stacks are one frame deep, not 6'; then
        ok "frame pointers: a build without them gets a note naming -fno-omit-frame-pointer"
    else bad "frame pointers: no note on a build with -fomit-frame-pointer"; fi
    # A frame in a stripped library without debug information: its dynamic symbol, its module and
    # the offset there.
    printf '#include <stdlib.h>\n#include <string.h>\nvoid *strip_make(void) { char *p = malloc(77); if (p) memset(p, 1, 77); return p; }\n' >"$WORK/libstripped.c"
    printf 'void *strip_make(void);\nint main(void) { void *p = strip_make(); p = 0; return p != 0; }\n' >"$WORK/use_stripped.c"
    if clang -O2 -fno-omit-frame-pointer -fPIC -shared "$WORK/libstripped.c" -o "$WORK/libstripped.so" && strip "$WORK/libstripped.so" &&
       "$VIGILCC" -O0 -g "$WORK/use_stripped.c" -L"$WORK" -lstripped -Wl,-rpath,"$WORK" -o "$WORK/use_stripped" &&
       VIGIL_OPTIONS="tools=leak:out=$WORK/out-stripped" "$WORK/use_stripped" &&
       "$VIGIL" leaks "$WORK/out-stripped" >"$WORK/stripped.txt" 2>&1 &&
       grep -Eq 'allocated at  strip_make  \(libstripped\.so\+0x[0-9a-f]+, no line information\)' "$WORK/stripped.txt" &&
       grep -q 'main  .*use_stripped.c:2' "$WORK/stripped.txt"; then
        ok "a frame in a stripped library: its dynamic symbol, module and offset, then the caller's line"
    else bad "stripped library frame: $(grep -m2 -A1 'allocated at' "$WORK/stripped.txt" 2>/dev/null | tr '\n' ' ' | cut -c1-300)"; fi
    # A directory of runs stands for its newest run with a leak report; none: a clear error.
    mkdir -p "$WORK/no-runs"
    if "$VIGIL" leaks "$WORK/out-nofp" >"$WORK/outdir.txt" 2>&1 &&
       "$VIGIL" leaks "$(ls -d "$WORK"/out-nofp/*/ | head -n1)" >"$WORK/rundir.txt" 2>&1 &&
       cmp -s <(tail -n +2 "$WORK/outdir.txt") <(tail -n +2 "$WORK/rundir.txt") && grep -q 'make_record' "$WORK/outdir.txt" &&
       ! "$VIGIL" leaks "$WORK/no-runs" >/dev/null 2>"$WORK/no-runs.err" &&
       grep -q "no-runs: no run with leak.json in it" "$WORK/no-runs.err"; then
        ok "vigil leaks OUTDIR: its newest run's report; a directory without runs: a clear error"
    else bad "vigil leaks OUTDIR: $(head -c 200 "$WORK/outdir.txt") / $(head -c 200 "$WORK/no-runs.err" 2>/dev/null)"; fi
    "$VIGIL" leaks --sarif "$rep" >"$WORK/sarif.json" 2>&1
    if grep -q '"version": "2.1.0"' "$WORK/sarif.json" && grep -q '"ruleId": "leak/' "$WORK/sarif.json" \
       && grep -q '"startLine"' "$WORK/sarif.json"; then ok "SARIF 2.1.0 output with located results"
    else bad "SARIF output: $(head -c 300 "$WORK/sarif.json")"; fi
    "$VIGIL" leaks --json "$rep" >"$WORK/leaks.json" 2>&1
    grep -q '"function": "make_record"' "$WORK/leaks.json" && ok "JSON output names the allocation function" \
        || bad "JSON output: $(head -c 300 "$WORK/leaks.json")"
    # Site tables stay in the file (their section is not loaded) and the runtime maps them when a
    # report names a site (runtime/sitefile.c): the report above named last accesses through
    # them. Without the section the program runs as before and says once why sites are unnamed.
    if readelf -lW "$WORK/never_freed" | sed -n '/Section to Segment/,$p' | grep -qw vigil_sites; then
        bad "site tables: the vigil_sites section is in a loaded segment"
    else ok "site tables: the vigil_sites section is not loaded"; fi
    if objcopy --remove-section=vigil_sites "$WORK/never_freed" "$WORK/never_freed_nosites" 2>"$WORK/nosites.log"; then
        VIGIL_OPTIONS="$OPTS:out=$WORK/out-nosites" "$WORK/never_freed_nosites" >"$WORK/nosites.stdout" 2>"$WORK/nosites.stderr"
        status=$?
        said=$(grep -c 'cannot read its site tables (it has no "vigil_sites" section' "$WORK/nosites.stderr")
        nosites_rep=$(ls -d "$WORK"/out-nosites/*/ 2>/dev/null | head -n1)
        if [ "$status" = 0 ] && cmp -s "$WORK/nosites.stdout" "$WORK/never_freed.stdout" && [ "$said" = 1 ] &&
           [ -n "$nosites_rep" ] && "$VIGIL" leaks "$nosites_rep" 2>/dev/null | grep -q 'allocated at *make_record'; then
            ok "site tables removed from the binary: same output and status, one message, the leak still reported"
        else bad "site tables removed: status $status, $said messages, stderr: $(head -c 300 "$WORK/nosites.stderr")"; fi
    else bad "objcopy --remove-section: $(head -c 200 "$WORK/nosites.log")"; fi
    # Tools register through the vigil_tools section, which only the runtime's __start_/__stop_
    # symbols name: lld's --gc-sections dropped it (no tool at all) until the entries were
    # marked retain (include/vigil/tool.h). GNU ld kept it. Checked when lld is installed.
    if command -v ld.lld >/dev/null 2>&1; then
        if "$VIGILCC" -O1 -g -fno-omit-frame-pointer -I"$ROOT/include" -I"$ROOT/tools/leak/include" -ffunction-sections -fdata-sections \
                -fuse-ld=lld -Wl,--gc-sections "$HERE/never_freed.c" -o "$WORK/never_freed_lld" 2>"$WORK/lld.cc.log" &&
           VIGIL_OPTIONS="$OPTS:out=$WORK/out-lld" "$WORK/never_freed_lld" >/dev/null 2>"$WORK/lld.stderr" &&
           ! grep -q 'unknown tool' "$WORK/lld.stderr" &&
           "$VIGIL" leaks "$(ls -d "$WORK"/out-lld/*/ 2>/dev/null | head -n1)" 2>/dev/null | grep -q 'allocated at *make_record'; then
            ok "linked by lld with --gc-sections: the leak tool is there and reports"
        else bad "lld --gc-sections: $(head -c 300 "$WORK/lld.cc.log" "$WORK/lld.stderr" | tr '\n' ' ')"; fi
    else echo "NOTE leak: ld.lld not installed: the lld --gc-sections check did not run"; fi
    # The main thread's stack bounds come from __libc_stack_end and RLIMIT_STACK, or, with no
    # stack limit, from pthread_getattr_np (runtime/stack.c): either way the walk reaches main.
    stack_reaches_main() {   # leaks.json -> "ok" or what the make_record group's stack was
        python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
g = [g for g in d["groups"] if g["stack"] and g["stack"][0].get("function") == "make_record"]
names = [f.get("function") for f in g[0]["stack"]] if g else None
print("ok" if names and "main" in names[1:] else "stack %s" % names)' "$1"
    }
    verdict=$(stack_reaches_main "$WORK/leaks.json")
    [ "$verdict" = ok ] && ok "allocation stacks of the main thread reach main" || bad "main thread's allocation stack: $verdict"
    if (ulimit -s unlimited 2>/dev/null) && \
       (ulimit -s unlimited; VIGIL_OPTIONS="$OPTS:out=$WORK/out-unlimited" "$WORK/never_freed" >/dev/null 2>&1); then
        "$VIGIL" leaks --json "$(ls -d "$WORK"/out-unlimited/*/ | head -n1)" >"$WORK/leaks-unlimited.json" 2>&1
        verdict=$(stack_reaches_main "$WORK/leaks-unlimited.json")
        [ "$verdict" = ok ] && ok "with no stack limit, allocation stacks still reach main" \
            || bad "no stack limit: $verdict"
    fi
    printf '# test suppressions\nfunction:make_rec*\n' >"$WORK/supp.txt"
    if "$VIGIL" leaks --suppress "$WORK/supp.txt" "$rep" | grep -q '^0 leak groups.*1 suppressed'; then
        ok "suppression by function pattern"
    else bad "suppression by function: $("$VIGIL" leaks --suppress "$WORK/supp.txt" "$rep" | head -2 | tr '\n' ' ')"; fi
    printf 'file:never_freed.c\n' >"$WORK/supp2.txt"
    "$VIGIL" leaks --suppress "$WORK/supp2.txt" "$rep" | grep -q '^0 leak groups' \
        && ok "suppression by file" || bad "suppression by file"
    printf 'bogus line\n' >"$WORK/supp3.txt"
    if "$VIGIL" leaks --suppress "$WORK/supp3.txt" "$rep" >/dev/null 2>"$WORK/supp3.err"; then
        bad "a malformed suppression file is accepted"
    else grep -q 'supp3.txt:1:' "$WORK/supp3.err" && ok "malformed suppression file names its line" \
        || bad "malformed suppression message: $(cat "$WORK/supp3.err")"; fi
fi

# SIGTERM while threads allocate: the signal often lands inside the leak tool's hook (a shard
# lock held) or inside malloc (its arena lock held), where the report's own allocations would
# wait for ever (the process hung before). Each run must die of SIGTERM within 15 s and leave
# a complete report, no temporary directory, and leak.json unless the runtime said why not
# (the signal interrupted the C library: "no report from leak").
cat >"$WORK/sigterm_churn.c" <<'C'
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
static void *churn(void *arg)
{
    (void)arg;
    void *keep[64] = {0};
    for (unsigned long i = 0;; i++) {
        int k = i % 64;
        free(keep[k]);
        keep[k] = malloc(16 + (i * 37) % 4000);
        memset(keep[k], 1, 16);
    }
    return NULL;
}
int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, churn, NULL);
    churn(NULL);
}
C
if "$VIGILCC" -O1 -g "$WORK/sigterm_churn.c" -o "$WORK/sigterm_churn" -lpthread 2>"$WORK/sigterm.cc.log"; then
    problems=""
    for i in 1 2 3 4 5; do
        VIGIL_OPTIONS="$OPTS:out=$WORK/out-sigterm" timeout --foreground -s KILL 15 "$WORK/sigterm_churn" \
            2>>"$WORK/sigterm.stderr" &
        pid=$!
        sleep 0.$((i * 2 - 1))
        kill -TERM "$pid" 2>/dev/null
        wait "$pid"; status=$?
        [ "$status" = 143 ] || problems+=" run $i: status $status (143 expected; 137: hung, killed after 15 s);"
    done
    reports=$(ls "$WORK"/out-sigterm/*/run.txt 2>/dev/null | wc -l)
    complete=$(ls "$WORK"/out-sigterm/*/leak.json 2>/dev/null | wc -l)
    said=$(grep -c 'no report from leak: the signal interrupted the C library' "$WORK/sigterm.stderr")
    [ "$reports" = 5 ] || problems+=" $reports of 5 reports;"
    [ $((complete + said)) = 5 ] || problems+=" $complete of 5 reports with leak.json, $said said why not;"
    ls -A "$WORK/out-sigterm" | grep -q '^\.' && problems+=" a temporary report directory left;"
    [ -z "$problems" ] && ok "SIGTERM while threads allocate: 5 of 5 died of it, with a complete report" \
        || bad "SIGTERM while threads allocate:$problems stderr: $(sort -u "$WORK/sigterm.stderr" | head -n 3 | tr '\n' ' ')"
else
    bad "sigterm_churn does not build: $(head -c 300 "$WORK/sigterm.cc.log")"
fi

# Signals the program raises through the C library (SIGPIPE from a write to a closed pipe,
# abort, raise): the report has the tools' part, and stderr stays the plain build's (a line
# "no report from leak" was printed, and gnulib's test-sigpipe failed on it). SIGUSR2, the
# leak tool's snapshot request: the program sees SIG_DFL, and its own raise ends it (it saw
# the tool's handler and lived on before).
cat >"$WORK/self_signal.c" <<'C'
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    char *kept = malloc(32);
    memset(kept, 1, 32);
    if (strcmp(argv[1], "abort") == 0)
        abort();
    if (strcmp(argv[1], "term") == 0)
        raise(SIGTERM);
    if (strcmp(argv[1], "unblock") == 0) {   /* diff's way: raised while blocked, then unblocked */
        sigset_t set, old;
        sigemptyset(&set);
        sigaddset(&set, SIGPIPE);
        sigprocmask(SIG_BLOCK, &set, &old);
        signal(SIGPIPE, SIG_DFL);
        raise(SIGPIPE);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return 7;
    }
    if (strcmp(argv[1], "usr2") == 0) {   /* the leak tool's snapshot signal, unseen */
        struct sigaction old;
        if (sigaction(SIGUSR2, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            return 5;
        raise(SIGUSR2);
        return 6;
    }
    for (;;)
        if (write(1, "y\n", 2) <= 0)
            return 1;
}
C
if "$VIGILCC" -O1 -g "$WORK/self_signal.c" -o "$WORK/self_signal" 2>"$WORK/self_signal.cc.log"; then
    problems=""
    for how in abort:134 term:143 pipe:141 unblock:141 usr2:140; do
        out="$WORK/out-self-${how%%:*}"
        VIGIL_OPTIONS="$OPTS:out=$out" timeout --foreground -s KILL 30 "$WORK/self_signal" "${how%%:*}" \
            2>"$WORK/self_signal.stderr" | head -c 2 >/dev/null
        status=${PIPESTATUS[0]}
        [ "$status" = "${how#*:}" ] || problems+=" ${how%%:*}: status $status, not ${how#*:};"
        [ -s "$WORK/self_signal.stderr" ] && problems+=" ${how%%:*}: stderr $(head -c 200 "$WORK/self_signal.stderr");"
        ls "$out"/*/leak.json >/dev/null 2>&1 || problems+=" ${how%%:*}: no leak.json;"
    done
    [ -z "$problems" ] && ok "abort, raise, SIGPIPE in write, a pending SIGPIPE unblocked, a SIGUSR2 of its own (SIG_DFL, as plain): the leak report written, stderr as plain" \
        || bad "signals the program raises:$problems"
else
    bad "self_signal does not build: $(head -c 300 "$WORK/self_signal.cc.log")"
fi

# findings_summary=1: the program itself ends with one SUMMARY line naming the leak's bytes and
# objects (never_freed's records are unreachable at exit); without it, stderr has none.
if [ -x "$WORK/never_freed" ]; then
    VIGIL_OPTIONS="$OPTS:findings_summary=1:out=$WORK/out-summary" "$WORK/never_freed" >/dev/null 2>"$WORK/summary.stderr"
    VIGIL_OPTIONS="$OPTS:out=$WORK/out-nosummary" "$WORK/never_freed" >/dev/null 2>"$WORK/nosummary.stderr"
    line=$(grep '^SUMMARY: vigil: leak: ' "$WORK/summary.stderr")
    if [ "$(grep -c '^SUMMARY:' "$WORK/summary.stderr")" = 1 ] &&
       grep -Eq '^SUMMARY: vigil: leak: [0-9]+ bytes in [1-9][0-9]* objects leaked \([1-9][0-9]* unreachable at exit, [0-9]+ stale\)$' <<<"$line" &&
       ! grep -q SUMMARY "$WORK/nosummary.stderr"; then
        ok "findings_summary=1: one SUMMARY line from the program ($line); none without it"
    else
        bad "findings_summary: with: $(head -c 300 "$WORK/summary.stderr"); without: $(head -c 200 "$WORK/nosummary.stderr")"
    fi
fi

# The page links every frame of the inlined chain to its line in the embedded source.
if [ -d "$WORK/report-inlined_chain" ] && "$VIGIL" html "$WORK/report-inlined_chain" -o "$WORK/inlined.html" 2>"$WORK/inlined.html.err"; then
    verdict=$(python3 - "$WORK/inlined.html" <<'PY'
import re, sys
page = open(sys.argv[1]).read()
stack = re.search(r'<ol class="stack">(.*?)</ol>', page, re.S)
frames = re.findall(r'<li>(.*?)</li>', stack.group(1)) if stack else []
links = [re.search(r'href="#([^"]+)"', f) for f in frames]
ours = [f for f in frames if "inlined_chain.c:" in f]
# every frame in the test's source links to its line; no link anywhere points nowhere
missing = [f for f, l in zip(frames, links) if ("inlined_chain.c:" in f and not l) or (l and ('id="%s"' % l.group(1)) not in page)]
print("ok" if len(ours) >= 6 and not missing else "%d frames in inlined_chain.c, unlinked or dangling: %s" % (len(ours), missing[:2]))
PY
)
    [ "$verdict" = ok ] && ok "html: every frame of the inlined chain links to its source line" || bad "html: $verdict"
else
    bad "html: vigil html failed on inlined_chain: $(head -c 300 "$WORK/inlined.html.err" 2>/dev/null)"
fi

# Forks while other threads allocate (tests/progs/fork_threads.c, as memcheck's test: two workers
# malloc and free on the main thread's CPU while it forks 150 times, each child reads and
# allocates): every child must finish, with the plain build's output and status. A lock of the
# heap model held by a worker at the fork, or a relink it had begun (odd sequence), stayed so in
# the child, which then spun at its first lookup in that shard (heap_after_fork).
fork_src=$ROOT/tests/progs/fork_threads.c
if "$VIGILCC" -O2 -g "$fork_src" -o "$WORK/fork_threads" -lpthread 2>"$WORK/fork.log" &&
    clang -O2 -g "$fork_src" -o "$WORK/fork_threads.plain" -lpthread 2>>"$WORK/fork.log"; then
    "$WORK/fork_threads.plain" >"$WORK/fork.plain.stdout" 2>/dev/null
    pst=$?
    rm -rf "$WORK/out-fork"
    VIGIL_OPTIONS="tools=leak:out=$WORK/out-fork" timeout -s KILL 120 "$WORK/fork_threads" \
        >"$WORK/fork.stdout" 2>"$WORK/fork.stderr"
    st=$?
    nreports=$(find "$WORK/out-fork" -name leak.json 2>/dev/null | wc -l)
    if [ "$st" = "$pst" ] && cmp -s "$WORK/fork.stdout" "$WORK/fork.plain.stdout" && [ "$nreports" = 151 ]; then
        ok "fork while threads allocate: 150 children finish, 151 leak reports"
    else
        bad "fork while threads allocate: status $st (plain $pst), $nreports leak reports of 151, stdout: $(tail -n 2 "$WORK/fork.stdout" | tr '\n' ' ')"
    fi
else
    bad "tests/progs/fork_threads.c does not build: $(head -c 200 "$WORK/fork.log")"
fi

if command -v chromium >/dev/null 2>&1; then
    if bash "$HERE/html_test.sh" "$WORK/report-error_path" "$WORK"; then ok "HTML viewer in headless Chromium"
    else bad "HTML viewer in headless Chromium"; fi
else
    echo "SKIP leak/html: viewer test (no chromium; apt-get install -y chromium)"
fi

echo
printf '%-14s %6s %6s %16s\n' program found missed false-positives
for k in $(printf '%s\n' "${!table[@]}" | sort); do
    read -r f m p <<<"${table[$k]}"
    printf '%-14s %6s %6s %16s\n' "$k" "$f" "$m" "$p"
done
echo "leak tests: $pass passed, $fail failed"
[ "$fail" = 0 ]
