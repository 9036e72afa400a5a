#!/usr/bin/env bash
# End-to-end test of statistical debugging: build tools/preds/tests/wordstat.c (one seeded bug) with
# vigil-cc, run it on a pool of inputs under tools=preds (modes full and adaptive), ingest the
# feedback reports into SQLite and PostgreSQL, and check that `vigil rank` puts the seeded
# bug's predicate first. Also: idempotent and concurrent ingest, a bad report adds no rows,
# an oracle label (label.txt) overrides the exit status, both stores rank identically.
# PostgreSQL runs as a throwaway cluster (initdb in a temporary directory, loopback port, as
# the unprivileged user `postgres` when run as root); if it cannot start, that is a FAIL.
# Prints "PASS preds: check" or "FAIL preds: check (why)" per check and "preds: N passed, N failed"; exits 0/1.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
VIGIL=$REPO/build/bin/vigil
VIGILCC=$REPO/build/bin/vigil-cc
POOL=${PREDS_POOL:-160}
T=$(mktemp -d /tmp/vigil-preds.XXXXXX)
chmod 755 "$T"
passed=0 failed=0
pass() { echo "PASS preds: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL preds: $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }

PGDIR= PGBIN= PGUSER_RUN=
cleanup() {
    if [ -n "$PGDIR" ] && [ -f "$PGDIR/data/postmaster.pid" ]; then
        as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -m immediate -w stop >/dev/null 2>&1
    fi
    rm -rf "$T"
}
trap cleanup EXIT

as_pg() {
    if [ -n "$PGUSER_RUN" ]; then
        local cmd; printf -v cmd '%q ' "$@"
        su "$PGUSER_RUN" -s /bin/sh -c "$cmd"
    else
        "$@"
    fi
}

finish() {
    echo "preds: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}

# ---- build and run the pool ----
SRC=$REPO/tools/preds/tests/wordstat.c
BUG_LINE=$(grep -n 'if (len > 12).*SEEDED-BUG' "$SRC" | cut -d: -f1)
if ! "$VIGILCC" -g -O1 "$SRC" -o "$T/wordstat" 2>"$T/cc.err"; then
    fail "vigil-cc builds wordstat.c: $(head -3 "$T/cc.err")"
    finish
fi
pass "vigil-cc builds wordstat.c"

bash "$(dirname "$0")/wordstat-inputs.sh" "$POOL" "$T/inputs"

run_pool() {   # mode outdir
    local mode=$1 out=$2 crashes=0 f
    for f in "$T"/inputs/in*; do
        VIGIL_OPTIONS="tools=preds:mode=$mode:out=$out" "$T/wordstat" <"$f" >/dev/null 2>&1 || crashes=$((crashes + 1))
    done
    echo "$crashes"
}
crashes=$(run_pool full "$T/out-full")
nreports=$(ls "$T/out-full" | wc -l)
check "pool of $POOL runs (mode=full): $nreports reports, $crashes failing" \
    test "$nreports" -eq "$POOL" -a "$crashes" -gt 0 -a "$crashes" -lt "$POOL"
npreds=$(ls "$T"/out-full/*/preds.txt 2>/dev/null | wc -l)
check "every report has preds.txt ($npreds)" test "$npreds" -eq "$POOL"
crashes_adaptive=$(run_pool adaptive "$T/out-adaptive")

# ---- checks shared by both stores ----
json_field() {   # file field: the first occurrence of "field": value in pretty JSON
    sed -n "s/^ *\"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$1" | head -1
}

top_is_bug() {   # label db by
    local label=$1 db=$2 by=$3 j=$T/rank-$1-$3.json
    "$VIGIL" rank --db "$db" --by "$by" --top 3 --json >"$j" 2>"$T/rank.err" || {
        fail "$label: vigil rank --by $by: $(head -2 "$T/rank.err")"; return; }
    local line kind pred
    line=$(json_field "$j" line); kind=$(json_field "$j" kind); pred=$(json_field "$j" predicate)
    check "$label: rank --by $by puts wordstat.c:$BUG_LINE branch true first (got $kind $pred in $(json_field "$j" function) at line $line, site $(json_field "$j" site_index))" \
        test "$line" = "$BUG_LINE" -a "$kind" = branch -a "$pred" = true
}

store_checks() {   # label db
    local label=$1 db=$2
    if "$VIGIL" ingest --quiet --db "$db" "$T/out-full" 2>"$T/ingest.err"; then
        pass "$label: ingest $POOL reports"
    else
        fail "$label: ingest: $(tail -2 "$T/ingest.err")"; return
    fi
    "$VIGIL" ingest --db "$db" "$T/out-full" 2>"$T/again.err"
    check "$label: ingesting again adds nothing" grep -q "0 added, $POOL already present" "$T/again.err"
    "$VIGIL" rank --db "$db" --json --top 1 >"$T/totals.json"
    check "$label: store counts $POOL runs, $crashes failing" \
        test "$(json_field "$T/totals.json" runs)" = "$POOL" -a "$(json_field "$T/totals.json" failing_runs)" = "$crashes"
    for by in importance ttest eliminate increase; do top_is_bug "$label" "$db" "$by"; done
    "$VIGIL" rank --db "$db" --top 5 >"$T/rank.txt" 2>&1
    check "$label: text ranking names wordstat.c:$BUG_LINE" grep -q "wordstat.c:$BUG_LINE" "$T/rank.txt"

    # bad reports are rejected with a reason and add no rows: a torn preds.txt (no `end`), and
    # one whose site ids are in no module of its run.txt (both with a new run.txt, pid 1)
    local bad=$T/bad-$label src; src=$(ls -d "$T"/out-full/* | head -1)
    mkdir -p "$bad"; cp -r "$src" "$bad/torn"; cp -r "$src" "$bad/alien"
    sed -i 's/^pid .*/pid 1/' "$bad"/*/run.txt "$bad"/*/preds.txt
    sed -i '/^end$/d' "$bad/torn/preds.txt"
    sed -i 's/^site [0-9]* /site 999999 /' "$bad/alien/preds.txt"
    sed -i '/^site 999999 /{x;/./{x;d};x;h}' "$bad/alien/preds.txt"   # keep ids unique
    "$VIGIL" ingest --db "$db" "$bad" 2>"$T/bad.err"
    local rc=$?
    check "$label: bad reports are rejected with file:line or the site (exit $rc)" \
        sh -c "[ $rc -ne 0 ] && grep -q 'torn: rejected: .*preds.txt:[0-9]*: missing .end.' '$T/bad.err' &&
               grep -q 'alien: rejected: .*site 999999 is in no module' '$T/bad.err'"
    "$VIGIL" rank --db "$db" --json --top 1 >"$T/totals2.json"
    check "$label: ... and adds no rows" test "$(json_field "$T/totals2.json" runs)" = "$POOL"
}

# ---- SQLite ----
store_checks sqlite "$T/vigil.db"

# oracle label: one successful report relabelled as a failure through label.txt
ok_report=$(grep -l '^exit 0$' "$T"/out-full/*/run.txt | head -1 | xargs dirname)
mkdir -p "$T/labelled"; cp -r "$ok_report" "$T/labelled/r"
printf 'vigil-feedback 1\nlabel failure\nend\n' >"$T/labelled/r/label.txt"
"$VIGIL" ingest --quiet --db "$T/label.db" "$T/labelled" 2>/dev/null
"$VIGIL" rank --db "$T/label.db" --json --top 1 >"$T/label.json"
check "sqlite: label.txt overrides exit status 0" test "$(json_field "$T/label.json" failing_runs)" = 1

# concurrent ingests of the same reports count each run once
for k in 1 2 3 4; do "$VIGIL" ingest --quiet --db "$T/conc.db" "$T/out-full" 2>"$T/conc$k.err" & done
wait
"$VIGIL" rank --db "$T/conc.db" --json --top 1 >"$T/conc.json"
check "sqlite: 4 concurrent ingests count $POOL runs once" test "$(json_field "$T/conc.json" runs)" = "$POOL"

# adaptive sampling (rare code stays near 100%): the bug must still come first
if "$VIGIL" ingest --quiet --db "$T/adaptive.db" "$T/out-adaptive" 2>"$T/ad.err"; then
    top_is_bug "sqlite adaptive ($crashes_adaptive failing)" "$T/adaptive.db" importance
else
    fail "sqlite adaptive: ingest: $(tail -1 "$T/ad.err")"
fi

# static removal of redundant branch predicates (seed 002 3.1): counters left out by vigil-cc,
# counts reconstructed at ingest; the ranking (with every count) equals the one without removal
for r in 0 1; do
    VIGIL_DEBUG=1 VIGIL_CC_PRED_REMOVE=$r VIGIL_CC_PRED_COUNTERS=1 "$VIGILCC" -g -O1 "$SRC" -o "$T/ws-rm$r" 2>"$T/rm$r.err"
    for f in "$T"/inputs/in0[0-5]*; do
        (VIGIL_OPTIONS="tools=preds:preds.collect=all:mode=off:out=$T/out-rm$r" "$T/ws-rm$r" <"$f" >/dev/null 2>&1) 2>/dev/null
    done 2>/dev/null   # the seeded bug crashes: no "Segmentation fault" lines from the shell
    "$VIGIL" ingest --quiet --db "$T/rm$r.db" "$T/out-rm$r" 2>/dev/null
    "$VIGIL" rank --db "$T/rm$r.db" --by importance --json --top 1000 | grep -v '"store"' >"$T/rm$r.json"
done
removed=$(sed -n 's/.*(\([0-9]*\) branch predicates left out).*/\1/p' "$T/rm1.err")
check "static removal: vigil-cc leaves out ${removed:-0} branch predicates of wordstat.c" test "${removed:-0}" -gt 0
check "static removal: reconstructed counts rank exactly like complete counts" cmp -s "$T/rm0.json" "$T/rm1.json"

# a plan store: the same runs in two rounds, the first counting the complete run's top
# predictor's site, the second another site. Its NumF is the failing runs of the first round,
# not of both, and it scores as in the complete store.
read -r top_hash top_site top_score other_site < <(python3 -c '
import json, sys
ps = json.load(open(sys.argv[1]))["predicates"]
other = [p["site_index"] for p in ps if p["site_index"] != ps[0]["site_index"]][0]
print(ps[0]["tu_hash"], ps[0]["site_index"], repr(ps[0]["score"]), other)' "$T/rm0.json")
nsites=$("$VIGIL" sites "$T/ws-rm0" | sed -n "s/^table 0 tu $top_hash .*(\([0-9]*\) sites)$/\1/p")
for r in 1 2; do
    site=$top_site; [ $r = 2 ] && site=$other_site
    printf 'vigil-plan 1\nmodule %s %s\nsite %s %s\nend\n' "$top_hash" "$nsites" "$top_hash" "$site" >"$T/round$r.vplan"
    for f in "$T"/inputs/in0[0-5]*; do
        (VIGIL_PLAN=$T/round$r.vplan VIGIL_OPTIONS="tools=preds:mode=off:out=$T/out-numf$r" "$T/ws-rm0" <"$f" >/dev/null 2>&1) 2>/dev/null
    done 2>/dev/null
    "$VIGIL" ingest --quiet --db "$T/numf.db" "$T/out-numf$r" 2>/dev/null
done
"$VIGIL" rank --db "$T/numf.db" --json --top 1000 >"$T/numf.json"
numf=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["predicates"] if p["tu_hash"] == sys.argv[2] and p["site_index"] == int(sys.argv[3])][0]
print(d["failing_runs"], p["NumF"], p["rank"], repr(p["score"]))' "$T/numf.json" "$top_hash" "$top_site")
check "plan store: NumF of a site counted in 1 of 2 rounds is that round's failing runs (store, NumF, rank, score: $numf; complete store: $top_score)" \
    python3 -c 'import sys; f, n, rank, score = sys.argv[1].split(); sys.exit(not (int(f) == 2 * int(n) and rank == "1" and abs(float(score) - float(sys.argv[2])) < 1e-9))' "$numf" "$top_score"

# ---- PostgreSQL: a throwaway cluster ----
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
start_postgres() {
    [ -x "$PGBIN/initdb" ] || { echo "no initdb under /usr/lib/postgresql (apt-get install postgresql)"; return 1; }
    PGDIR=$T/pg; mkdir -p "$PGDIR"
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || { echo "running as root and there is no user postgres"; return 1; }
        PGUSER_RUN=postgres; chown postgres "$PGDIR"
    fi
    PGPORT=$((20000 + RANDOM % 20000))
    as_pg "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U vigil >"$T/initdb.log" 2>&1 || { tail -3 "$T/initdb.log"; return 1; }
    as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w -t 30 \
        -o "-p $PGPORT -k $PGDIR -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null 2>&1 \
        || { tail -3 "$PGDIR/log"; return 1; }
}
if start_postgres >"$T/pgstart.log" 2>&1; then
    pass "postgresql: throwaway cluster on 127.0.0.1:$PGPORT"
    PGURL="postgresql://vigil@127.0.0.1:$PGPORT/postgres"
    store_checks postgresql "$PGURL"
    # both stores rank identically (the same SQL aggregation)
    for by in importance eliminate ttest; do
        "$VIGIL" rank --db "$T/vigil.db" --by "$by" --json --top 20 | grep -v '"store"' >"$T/s.json"
        "$VIGIL" rank --db "$PGURL" --by "$by" --json --top 20 | grep -v '"store"' >"$T/p.json"
        check "sqlite and postgresql rank identically (--by $by)" cmp -s "$T/s.json" "$T/p.json"
    done
    as_pg "$PGBIN/createdb" -h 127.0.0.1 -p "$PGPORT" -U vigil conc 2>/dev/null
    for k in 1 2 3 4; do
        "$VIGIL" ingest --quiet --db "postgresql://vigil@127.0.0.1:$PGPORT/conc" "$T/out-full" 2>"$T/pconc$k.err" &
    done
    wait
    "$VIGIL" rank --db "postgresql://vigil@127.0.0.1:$PGPORT/conc" --json --top 1 >"$T/pconc.json"
    check "postgresql: 4 concurrent ingests count $POOL runs once" test "$(json_field "$T/pconc.json" runs)" = "$POOL"
else
    fail "postgresql: cannot start a throwaway cluster: $(tail -3 "$T/pgstart.log" | tr '\n' ' ')"
fi
finish
