#!/usr/bin/env bash
# Ingest speed of statistical debugging (issue 35): reports per second that `vigil ingest`
# loads into a new SQLite store on disk. The reports: N runs (default 1500) of
# tools/preds/tests/wordstat.c (-O2, predicate counters; no switch, so that an older build's
# vigil can read them too) under preds.collect=all (every predicate of every run), made once.
# Columns, alternating, the order rotating every round (RUNS rounds, default 5):
#   vigil     this tree's build/bin/vigil
#   base      BASE_VIGIL=path, another build's vigil (optional), e.g. of an older commit
#   sqlite3   a peer, when the sqlite3 shell is installed: the same rows (one per site and
#             run) inserted from one SQL script in one transaction; what SQLite itself costs
#             for the data, without reading or checking any report
# Prints per column the median wall time and CPU time (user+sys of the child) and the reports
# per second of each. The machine is shared: the CPU time is the steadier figure.
# Usage: bench/preds-ingest.sh [N]   (RUNS=5 BASE_VIGIL=... STORE_DIR=/var/tmp)
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=${1:-1500}
RUNS=${RUNS:-5}
VIGIL=$REPO/build/bin/vigil
VIGILCC=$REPO/build/bin/vigil-cc
STORE_DIR=${STORE_DIR:-/var/tmp}
T=$(mktemp -d "$STORE_DIR/vigil-bench-ingest.XXXXXX")
trap 'rm -rf "$T"' EXIT

VIGIL_CC_PRED_COUNTERS=1 "$VIGILCC" -O2 -g "$REPO/tools/preds/tests/wordstat.c" -o "$T/wordstat" || exit 1
bash "$REPO/tools/preds/tests/wordstat-inputs.sh" "$N" "$T/in"
for f in "$T"/in/in*; do
    (VIGIL_OPTIONS="tools=preds:preds.collect=all:mode=off:out=$T/reports" "$T/wordstat" <"$f" >/dev/null 2>&1)
done 2>/dev/null
sites=$(awk '$1 == "site"' "$(ls -d "$T"/reports/*/ | head -1)/preds.txt" | wc -l)
nreports=$(ls "$T/reports" | wc -l)
echo "reports: $nreports ($sites sites in the first), $(du -sh "$T/reports" | cut -f1); store on $(df --output=source "$STORE_DIR" | tail -1)"

columns="vigil"
[ -n "${BASE_VIGIL:-}" ] && columns="$columns base"
if command -v sqlite3 >/dev/null; then
    columns="$columns sqlite3"
    {   # the peer's script: one INSERT per site line of every preds.txt
        echo "PRAGMA journal_mode=WAL; CREATE TABLE o (run INTEGER, site INTEGER, kind TEXT, observed INTEGER, c0 INTEGER, c1 INTEGER, c2 INTEGER); BEGIN;"
        k=0
        for d in "$T"/reports/*/; do
            k=$((k + 1))
            awk -v r="$k" '$1 == "site" { printf "INSERT INTO o VALUES (%d, %s, '"'"'%s'"'"', %s, %s, %s, %s);\n", r, $2, $3, $4, $5, $6, ($7 == "" ? 0 : $7) }' "$d/preds.txt"
        done
        echo "COMMIT;"
    } >"$T/peer.sql"
fi

measure() {   # column -> "wall cpu"
    local db=$T/store-$1.db
    rm -f "$db" "$db-wal" "$db-shm"
    case $1 in
        vigil) /usr/bin/time -f "%e %U %S" -o "$T/time" "$VIGIL" ingest -q --db "$db" "$T/reports" ;;
        base) /usr/bin/time -f "%e %U %S" -o "$T/time" "$BASE_VIGIL" ingest -q --db "$db" "$T/reports" ;;
        sqlite3) /usr/bin/time -f "%e %U %S" -o "$T/time" sqlite3 "$db" <"$T/peer.sql" >/dev/null ;;
    esac
    awk '{ printf "%s %.3f\n", $1, $2 + $3 }' "$T/time"
}

declare -A wall cpu
read -r -a cols <<<"$columns"
for round in $(seq 0 $((RUNS - 1))); do
    for k in $(seq 0 $((${#cols[@]} - 1))); do   # rotate the order every round
        c=${cols[$(( (round + k) % ${#cols[@]} ))]}
        read -r w u <<<"$(measure "$c")"
        wall[$c]="${wall[$c]:-} $w"
        cpu[$c]="${cpu[$c]:-} $u"
    done
done
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf "%-8s %10s %10s %14s %14s\n" column "wall s" "cpu s" "reports/s wall" "reports/s cpu"
for c in $columns; do
    w=$(echo "${wall[$c]}" | median) u=$(echo "${cpu[$c]}" | median)
    awk -v c="$c" -v w="$w" -v u="$u" -v n="$nreports" 'BEGIN { printf "%-8s %10.3f %10.3f %14.0f %14.0f\n", c, w, u, (w > 0 ? n / w : 0), (u > 0 ? n / u : 0) }'
done
echo "medians of $RUNS rounds; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
