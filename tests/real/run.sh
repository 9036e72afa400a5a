#!/usr/bin/env bash
# Real programs from Debian sources (bzip2, lua5.4, sqlite3, bc; gzip with --full; xz, zstd, jq,
# mawk, cpio when named), each built
# with plain clang and with vigil-cc at the same -O level; the vigil build runs every workload
# in modes off, adaptive and full (bursty too with --full), full with the memory checker
# (which must report nothing) and adaptive with the leak tool (which must find unreachable at
# exit the blocks LeakSanitizer finds in a -fsanitize=leak build of the same program), and
# must give the plain build's output, output files and exit status. One line per workload:
# "PASS name" / "FAIL name: why".
#
# usage: tests/real/run.sh [--fast|--full] [PROGRAM...]
#        (programs: bzip2 lua sqlite3 bc gzip xz zstd jq mawk cpio)
#
# Environment: VIGIL_REAL_DIR (cache of sources, builds, inputs; default /var/tmp/vigil-real),
# VIGILCC, PLAINCC, REAL_CFLAGS (see tests/real/sources.sh), REAL_TIMEOUT (seconds per run,
# default 600), REAL_KEEP=1 keeps the run directories for inspection.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sources.sh
source "$HERE/sources.sh"
WORKLOADS=$HERE/workloads
BENCH_WORKLOADS=$HERE/../../bench/workloads
REAL_TIMEOUT=${REAL_TIMEOUT:-600}
level=fast
programs=()
for arg in "$@"; do
    case "$arg" in
        --fast) level=fast ;;
        --full) level=full ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        -*) echo "real: unknown option $arg" >&2; exit 2 ;;
        *) programs+=("$arg") ;;
    esac
done
if [ ${#programs[@]} = 0 ]; then
    programs=(bzip2 lua sqlite3 bc)
    [ "$level" = full ] && programs+=(gzip)
fi
# memcheck: mode=full with the memory checker (tools/memcheck), which must also report nothing;
# leak: mode=adaptive with the leak tool, compared with LeakSanitizer
modes="off adaptive full memcheck leak"
[ "$level" = full ] && modes="off adaptive bursty full memcheck leak"

RUNS=$VIGIL_REAL_DIR/runs/$$
mkdir -p "$RUNS" "$VIGIL_REAL_DIR/inputs"
[ "${REAL_KEEP:-0}" = 1 ] || trap 'rm -rf "$RUNS"' EXIT
ulimit -c 0

passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# A deterministic text file of about SIZE_KB kilobytes (words, numbers, some repetition).
generated_text() {
    local size_kb=$1 file=$VIGIL_REAL_DIR/inputs/text-$1k.txt
    if [ ! -s "$file" ]; then
        awk -v limit=$((size_kb * 1024)) 'BEGIN {
            split("alpha beta gamma delta monitor sample burst check copy vigil adaptive rate floor site leak race", words, " ");
            srand(20240601); total = 0; line = 0;
            while (total < limit) {
                s = sprintf("%06d", line++);
                n = 4 + int(rand() * 12);
                for (i = 0; i < n; i++) s = s " " words[1 + int(rand() * 16)] (rand() < 0.3 ? int(rand() * 100000) : "");
                print s; total += length(s) + 1;
            }
        }' >"$file.tmp" && mv "$file.tmp" "$file"
    fi
    echo "$file"
}
# A deterministic binary file (poorly compressible) of SIZE_KB kilobytes.
generated_binary() {
    local size_kb=$1 file=$VIGIL_REAL_DIR/inputs/binary-$1k.bin
    if [ ! -s "$file" ]; then
        python3 -c "
import random, sys
r = random.Random(7)
sys.stdout.buffer.write(bytes(r.getrandbits(8) if i % 5 else i % 251 for i in range($size_kb * 1024)))" >"$file.tmp" \
            && mv "$file.tmp" "$file"
    fi
    echo "$file"
}

# A deterministic JSON array of COUNT records (what bench/workloads/bench.jq reads).
generated_json() {
    local count=$1 file=$VIGIL_REAL_DIR/inputs/records-$1.json
    if [ ! -s "$file" ]; then
        python3 -c "
import json, random
r = random.Random(11)
w = 'alpha beta gamma delta kernel thread signal buffer'.split()
print(json.dumps([{'id': i, 'name': '%s-%d' % (r.choice(w), r.randrange(99)), 'score': round(r.random() * 100, 3),
                   'active': r.random() < 0.5, 'tags': [r.choice(w) for _ in range(r.randrange(4))],
                   'pos': {'x': r.randrange(-50, 50), 'y': r.randrange(-50, 50)},
                   'note': ' '.join(r.choice(w) for _ in range(1 + r.randrange(5)))} for i in range($count)], indent=1))" \
            >"$file.tmp" && mv "$file.tmp" "$file"
    fi
    echo "$file"
}

# ---- workloads: each runs in an empty directory (cwd) with $BIN; its result is everything
# it prints and every file it leaves in the directory. Listed by real_workloads PROGRAM.
workloads_bzip2() {
    echo compress-text compress-binary own-samples corrupt-input
}
workload_bzip2_compress_text() {
    local kb=1024; [ "$level" = full ] && kb=16384
    cp "$(generated_text $kb)" input.txt
    "$BIN" -9 -k -v input.txt 2>&1
    "$BIN" -d -c input.txt.bz2 >roundtrip.txt && cmp input.txt roundtrip.txt && echo roundtrip ok
    "$BIN" -1 -c <input.txt >fast.bz2 && "$BIN" -t fast.bz2 && echo test ok
    rm -f input.txt roundtrip.txt
}
workload_bzip2_compress_binary() {
    local kb=512; [ "$level" = full ] && kb=4096
    "$BIN" -c -6 <"$(generated_binary $kb)" >binary.bz2
    "$BIN" -d -c binary.bz2 | cmp - "$(generated_binary $kb)" && echo roundtrip ok
}
workload_bzip2_own_samples() {
    local src n
    src=$(real_fetch bzip2)
    for n in 1 2 3; do
        "$BIN" -1 -c <"$src/sample$n.ref" >sample$n.rb2
        "$BIN" -d -c <"$src/sample$n.bz2" >sample$n.tst
        cmp -s "$src/sample$n.bz2" sample$n.rb2 && echo "sample$n compress matches" || echo "sample$n compress differs"
        cmp -s "$src/sample$n.ref" sample$n.tst && echo "sample$n decompress matches" || echo "sample$n decompress differs"
        [ "$level" = full ] || break
    done
    rm -f ./*.tst
}
workload_bzip2_corrupt_input() {
    local src
    src=$(real_fetch bzip2)
    head -c 20000 "$src/sample1.bz2" >truncated.bz2
    "$BIN" -d -c truncated.bz2 >/dev/null 2>stderr.txt
    echo "status $?"
    sed 's/^[^:]*bzip2: /bzip2: /' stderr.txt | head -n 3
    rm -f stderr.txt
}

workloads_lua() { echo strings tables closures gc; }
lua_scale() { if [ "$level" = full ]; then echo 8; else echo 1; fi; }
workload_lua_strings() { "$BIN" "$WORKLOADS/strings.lua" "$(lua_scale)"; }
workload_lua_tables() { "$BIN" "$WORKLOADS/tables.lua" "$(lua_scale)"; }
workload_lua_closures() { "$BIN" "$WORKLOADS/closures.lua" "$(lua_scale)"; }
workload_lua_gc() { "$BIN" "$WORKLOADS/gc.lua" "$(lua_scale)"; }

workloads_sqlite3() { echo schema text; }
sqlite_rows() { if [ "$level" = full ]; then echo 200000; else echo 20000; fi; }
workload_sqlite3_schema() {
    sed "s/@ROWS@/$(sqlite_rows)/g" "$WORKLOADS/sqlite_schema.sql" >script.sql
    "$BIN" -batch test.db <script.sql
    "$BIN" -batch test.db 'SELECT count(*) FROM orders; PRAGMA integrity_check;'
    rm -f test.db
}
workload_sqlite3_text() {
    sed "s/@ROWS@/$(sqlite_rows)/g" "$WORKLOADS/sqlite_text.sql" >script.sql
    "$BIN" -batch -header -column :memory: <script.sql
}

workloads_bc() { echo pi math; }
workload_bc_pi() {
    local scale=500; [ "$level" = full ] && scale=2000
    sed "s/@SCALE@/$scale/" "$WORKLOADS/bc_pi.bc" >pi.bc
    BC_LINE_LENGTH=0 "$BIN" -l pi.bc </dev/null
}
workload_bc_math() { BC_LINE_LENGTH=0 "$BIN" -l "$WORKLOADS/bc_math.bc" </dev/null; }

workloads_gzip() { echo compress-levels corrupt-input; }
workload_gzip_compress_levels() {
    local in lvl
    in=$(generated_text 4096)
    for lvl in 1 6 9; do
        "$BIN" -n -c -$lvl <"$in" >text.$lvl.gz
        "$BIN" -d -c text.$lvl.gz | cmp - "$in" && echo "level $lvl roundtrip ok"
    done
    "$BIN" -n -c <"$(generated_binary 2048)" >binary.gz && "$BIN" -t -v binary.gz 2>&1
}
workload_gzip_corrupt_input() {
    "$BIN" -n -c <"$(generated_text 1024)" | head -c 30000 >truncated.gz
    "$BIN" -d -c truncated.gz >/dev/null 2>stderr.txt
    echo "status $?"
    sed 's/^[^:]*gzip: /gzip: /' stderr.txt
    rm -f stderr.txt
}

workloads_xz() { echo roundtrip threads corrupt-input; }
workload_xz_roundtrip() {
    local in; in=$(generated_text 1024)
    "$BIN" -6 -c -T1 <"$in" >text.xz && "$BIN" -d -c text.xz | cmp - "$in" && echo "roundtrip ok"
    "$BIN" -l text.xz | tail -n 1
    "$BIN" -0 -c <"$(generated_binary 512)" >binary.xz && "$BIN" -t -v binary.xz 2>&1
}
workload_xz_threads() {
    local in; in=$(generated_text 2048)
    "$BIN" -3 -T2 --block-size=262144 -c <"$in" >blocks.xz && "$BIN" -d -T2 -c blocks.xz | cmp - "$in" && echo "threads ok"
}
workload_xz_corrupt_input() {
    "$BIN" -c <"$(generated_text 1024)" | head -c 30000 >truncated.xz
    "$BIN" -d -c truncated.xz >/dev/null 2>stderr.txt
    echo "status $?"
    sed 's/^[^:]*xz: /xz: /' stderr.txt
    rm -f stderr.txt
}

workloads_zstd() { echo roundtrip corrupt-input; }
workload_zstd_roundtrip() {
    local in; in=$(generated_text 4096)
    "$BIN" -q -9 -T2 -c <"$in" >text.zst && "$BIN" -q -d -c text.zst | cmp - "$in" && echo "roundtrip ok"
    "$BIN" -q -1 -c <"$(generated_binary 1024)" >binary.zst && "$BIN" -q -t binary.zst && echo "test ok"
}
workload_zstd_corrupt_input() {
    "$BIN" -q -c <"$(generated_text 1024)" | head -c 30000 >truncated.zst
    "$BIN" -q -d -c truncated.zst >/dev/null 2>stderr.txt
    echo "status $?"
    sed 's/^[^:]*zstd: /zstd: /' stderr.txt
    rm -f stderr.txt
}

workloads_jq() { echo records errors; }
workload_jq_records() {
    local n=2000; [ "$level" = full ] && n=20000
    "$BIN" -c -f "$BENCH_WORKLOADS/bench.jq" "$(generated_json $n)"
    "$BIN" -r '[.[] | .tags[]] | group_by(.) | map("\(.[0]) \(length)") | .[]' "$(generated_json $n)"
    "$BIN" -c '[paths(type == "number")] | length' "$(generated_json $n)"
    "$BIN" -r '.[] | select(.name | test("^a.*[0-9]$")) | .id' "$(generated_json $n)" | tail -n 3
}
workload_jq_errors() {
    echo '{"a": [1, 2' | "$BIN" . 2>&1; echo "status $?"
    echo '{"a": 1}' | "$BIN" '.a | error("custom")' 2>&1; echo "status $?"
}

workloads_mawk() { echo words; }
workload_mawk_words() {
    local kb=1024; [ "$level" = full ] && kb=16384
    "$BIN" -f "$BENCH_WORKLOADS/bench.awk" "$(generated_text $kb)"
    "$BIN" 'BEGIN { for (i = 0; i < 20000; i++) s += sin(i) * sqrt(i); printf "%.6f\n", s }'
}

workloads_cpio() { echo roundtrip; }
workload_cpio_roundtrip() {
    local f
    mkdir -p tree/a tree/b
    for f in 1 2 3 4 5 6; do head -c $((f * 40000)) "$(generated_text 1024)" >tree/a/t$f; done
    cp "$(generated_binary 512)" tree/b/bin
    find tree -type f | sort >list
    "$BIN" -o -H crc --quiet <list >a.cpio
    "$BIN" -o -H newc --quiet <list >b.cpio
    rm -rf tree
    "$BIN" -i -d --quiet <a.cpio && echo "extract ok"
    "$BIN" -i --only-verify-crc --quiet <a.cpio && echo "crc ok"
    "$BIN" -t --quiet <b.cpio | sort
    cmp a.cpio b.cpio >/dev/null || echo "formats differ"
    rm -f a.cpio b.cpio
}

# Real bugs of a program's Debian version that the memory checker reports (a regular
# expression matching "KIND at FILE:LINE"); any other finding fails the workload.
memcheck_known() {
    case "$1" in
        # jq 1.6: jq_init leaves jq->nomem_handler and its data unset, and every
        # jv_nomem_handler(jq->nomem_handler, jq->nomem_handler_data) call passes them on.
        jq) echo 'uninitialized-read at src/execute\.c:(342|1039|1155)' ;;
        # xz 5.4.1: crc64_clmul reads whole aligned 16-byte vectors, past the end of the
        # buffer, on purpose (later xz versions exempt it from AddressSanitizer).
        xz) echo 'heap-buffer-overflow at check/crc64_fast\.c:[0-9]+' ;;
        *) echo '' ;;
    esac
}

# leak_versus_lsan REPORTS_DIR LSAN_LOG_DIR: prints how the leak tool's verdict at exit differs
# from LeakSanitizer's (nothing when the blocks and bytes found unreachable, direct and
# indirect, summed over the workload's processes, are the same). Fewer is a leak missed; more
# is a false alarm or a leak LeakSanitizer misses, for a person to tell (none so far).
leak_versus_lsan() {
    python3 - "$1" "$2" <<'PY'
import glob, json, re, sys
reports = glob.glob(sys.argv[1] + "/*/leak.json")
if not reports:
    print("no leak.json"); sys.exit()
blocks = nbytes = 0
for path in reports:
    final = json.load(open(path)).get("final")
    if not final:
        print("%s has no final section" % path); sys.exit()
    blocks += final["unreachable_objects"]; nbytes += final["unreachable_bytes"]
lsan_blocks = lsan_bytes = 0
for path in glob.glob(sys.argv[2] + "/log*"):
    text = open(path).read()
    if "LeakSanitizer has encountered a fatal error" in text:
        print("LeakSanitizer could not check the run (%s)" % path); sys.exit()
    m = re.search(r"SUMMARY: \w+: (\d+) byte\(s\) leaked in (\d+) allocation", text)
    if m:
        lsan_bytes += int(m.group(1)); lsan_blocks += int(m.group(2))
if (blocks, nbytes) != (lsan_blocks, lsan_bytes):
    print("the leak tool found %d unreachable blocks (%d bytes), LeakSanitizer %d (%d bytes)"
          % (blocks, nbytes, lsan_blocks, lsan_bytes))
PY
}

# run_workload PROGRAM WORKLOAD BINARY MODE DIR: runs it in DIR (fresh), leaving DIR/.output
# (stdout+stderr without "vigil:" lines) and DIR/.status.
run_workload() {
    local prog=$1 workload=$2 bin=$3 mode=$4 dir=$5 fn
    fn=workload_${prog}_${workload//-/_}
    rm -rf "$dir" "$dir.lsan" && mkdir -p "$dir"
    (
        cd "$dir" || exit 125
        export BIN=$bin
        if [ "$mode" = plain ]; then
            unset VIGIL_OPTIONS
        elif [ "$mode" = memcheck ]; then
            export VIGIL_OPTIONS="mode=full:tools=memcheck:out=$RUNS/reports"
        elif [ "$mode" = leak ]; then
            export VIGIL_OPTIONS="mode=adaptive:tools=leak:out=$RUNS/reports"
        elif [ "$mode" = lsan ]; then
            # one log per process (workloads run the program several times), none on stderr
            unset VIGIL_OPTIONS
            mkdir -p "$dir.lsan"
            export LSAN_OPTIONS="exitcode=0:log_path=$dir.lsan/log"
        else
            export VIGIL_OPTIONS="mode=$mode:out=$RUNS/reports"
        fi
        export -f "$fn" generated_text generated_binary generated_json real_fetch real_source_package real_log real_die lua_scale sqlite_rows
        export level VIGIL_REAL_DIR WORKLOADS BENCH_WORKLOADS
        exec timeout -k 10 "$REAL_TIMEOUT" bash -c "set -o pipefail; $fn"
    ) </dev/null >"$dir.raw" 2>&1
    echo $? >"$dir.status"
    grep -v '^vigil:' "$dir.raw" >"$dir.output" || true
}

# compare_workload EXPECTED_DIR ACTUAL_DIR: prints what diverged (nothing when equal).
compare_workload() {
    local e=$1 a=$2 d
    if [ "$(cat "$e.status")" != "$(cat "$a.status")" ]; then
        echo "exit status $(cat "$a.status"), expected $(cat "$e.status")$( [ "$(cat "$a.status")" = 124 ] && echo " (timeout ${REAL_TIMEOUT}s)")"
        return
    fi
    if ! cmp -s "$e.output" "$a.output"; then
        echo "output differs: $(diff "$e.output" "$a.output" | grep -m2 '^[<>]' | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    d=$(diff -rq "$e" "$a" 2>&1 | head -n 2 | tr '\n' ' ')
    [ -n "$d" ] && echo "files differ: $d"
}

for prog in "${programs[@]}"; do
    real_source_package "$prog" >/dev/null || continue
    if ! plain_bin=$(real_build "$prog" plain 2>"$RUNS/build-$prog-plain.log"); then
        fail "real/$prog/build" "plain build failed: $(grep -v '^real:' "$RUNS/build-$prog-plain.log" | grep -m1 -iE 'error' | cut -c1-200)"
        continue
    fi
    if ! vigil_bin=$(real_build "$prog" vigil 2>"$RUNS/build-$prog-vigil.log"); then
        fail "real/$prog/build" "vigil-cc build failed: $(grep -v '^real:' "$RUNS/build-$prog-vigil.log" | grep -m1 -iE 'error|undefined' | cut -c1-200) (log: $VIGIL_REAL_DIR/build/vigil/$prog/<key>.log)"
        continue
    fi
    pass "real/$prog/build (plain and vigil-cc $REAL_CFLAGS)"
    # LeakSanitizer's verdict, the leak tool's reference: a build of its own (cached).
    lsan_bin=""
    if [[ " $modes " == *" leak "* ]] && ! lsan_bin=$(real_side_build lsan plain -fsanitize=leak "$prog" 2>"$RUNS/build-$prog-lsan.log"); then
        fail "real/$prog/build" "-fsanitize=leak build failed: $(grep -v '^real:' "$RUNS/build-$prog-lsan.log" | grep -m1 -iE 'error|undefined' | cut -c1-200)"
        lsan_bin=""
    fi
    for workload in $("workloads_$prog"); do
        [ "$level" = fast ] && [ "$prog/$workload" = bzip2/compress-binary ] && continue
        name="real/$prog/$workload"
        run_workload "$prog" "$workload" "$plain_bin" plain "$RUNS/$prog-$workload-plain"
        [ -n "$lsan_bin" ] && run_workload "$prog" "$workload" "$lsan_bin" lsan "$RUNS/$prog-$workload-lsan"
        problems=""
        for mode in $modes; do
            rm -rf "$RUNS/reports"
            run_workload "$prog" "$workload" "$vigil_bin" "$mode" "$RUNS/$prog-$workload-$mode"
            why=$(compare_workload "$RUNS/$prog-$workload-plain" "$RUNS/$prog-$workload-$mode")
            if [ -z "$why" ] && [ "$(basename "$VIGILCC")" = vigil-cc ] \
                && ! find "$RUNS/reports" -name run.txt 2>/dev/null | grep -q .; then
                why="no run report written under out=$RUNS/reports"
            fi
            if [ -z "$why" ] && [ "$mode" = memcheck ]; then
                why=$(python3 - "$RUNS/reports" "$(memcheck_known "$prog")" <<'PY'
import glob, json, re, sys
found, files = [], glob.glob(sys.argv[1] + "/*/memcheck.json")
known = re.compile(sys.argv[2]) if sys.argv[2] else None
for path in files:
    for f in json.load(open(path))["findings"]:
        l = f["locations"][0]
        finding = "%s at %s:%d" % (f["kind"], l["file"], l["line"])
        if not (known and known.fullmatch(finding)):
            found.append("%s: %s" % (finding, f["message"]))
print("no memcheck.json" if not files else "memcheck reported %d: %s" % (len(found), "; ".join(found[:2])) if found else "")
PY
)
            fi
            if [ -z "$why" ] && [ "$mode" = leak ]; then
                if [ -n "$lsan_bin" ]; then
                    why=$(leak_versus_lsan "$RUNS/reports" "$RUNS/$prog-$workload-lsan.lsan")
                else
                    why="no -fsanitize=leak build to compare with"
                fi
            fi
            [ -n "$why" ] && problems+="${problems:+; }mode $mode: $why"
        done
        if [ -z "$problems" ]; then pass "$name [$modes]"; else fail "$name" "$problems"; fi
    done
done
echo "real: $passed passed, $failed failed" >&2
[ "$failed" = 0 ]
