#!/bin/bash
# `vigil report` and what `vigil run` says about findings (issue 33): programs built with
# build/bin/vigil-cc (and plain clang, for comparison) run under `vigil run`; then
#   - the program's standard output under `vigil run` is byte for byte the plain build's
#     (binary data and text), vigil's summary is on stderr and names the findings;
#   - "SUMMARY: vigil: ..." is there when the run has findings and not when it has none;
#   - --error-exitcode N exits N with findings, else the program's own status;
#   - an unknown --tool is rejected before anything runs;
#   - vigil report: text, --json (python3 json), --sarif (2.1.0 fields), --html (headless
#     Chromium when installed), the newest run by default, a directory of runs listed,
#     suppressions applied, damaged and missing runs named with file and line.
# Prints "PASS report/<check>" or "FAIL report/<check>: reason" per check; exit 1 on a failure.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
VIGIL=${VIGIL:-$ROOT/build/bin/vigil}
WORK=$(mktemp -d /tmp/vigil-reporttest.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
unset VIGIL_OPTIONS VIGIL_PLAN
pass=0 fail=0
ok()  { echo "PASS report/$1"; pass=$((pass + 1)); }
bad() { echo "FAIL report/$1: $2"; fail=$((fail + 1)); }
# check NAME REASON COMMAND...: PASS when the command succeeds, else FAIL with the reason
check() { local name=$1 why=$2; shift 2; if "$@"; then ok "$name"; else bad "$name" "$why"; fi; }
snippet() { head -c "${2:-300}" "$1" 2>/dev/null | tr '\n' ' '; }

[ -x "$VIGILCC" ] && [ -x "$VIGIL" ] || { echo "FAIL report: build first (make): $VIGILCC, $VIGIL"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL report: python3 is needed to parse the JSON and SARIF"; exit 1; }

# A program that writes binary data (every byte value, NULs included) and text to stdout, and
# leaks: 12 records of 48 bytes allocated in make_record, every pointer dropped.
cat >"$WORK/mixed.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct record { int id; char name[44]; };
static __attribute__((noinline)) struct record *make_record(int id)
{
    struct record *r = malloc(sizeof *r);   /* the allocation line */
    r->id = id;
    snprintf(r->name, sizeof r->name, "record-%d", id);
    return r;
}
int main(void)
{
    unsigned char bytes[256];
    for (int i = 0; i < 256; i++)
        bytes[i] = (unsigned char)(255 - i);
    unsigned long total = 0;
    for (int i = 0; i < 12; i++) {
        struct record *r = make_record(i);
        total += (unsigned long)r->id + strlen(r->name);
        fwrite(bytes, 1, sizeof bytes, stdout);
        printf("record %d: %s\n", r->id, r->name);
    }
    printf("total %lu\n", total);
    return 0;
}
C
# No leak; exits with argv[1]; creates the file argv[2] (a side effect to look for).
cat >"$WORK/clean.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    char *p = malloc(100);
    strcpy(p, "clean run");
    puts(p);
    free(p);
    if (argc > 2) {
        FILE *f = fopen(argv[2], "w");
        if (f)
            fclose(f);
    }
    return argc > 1 ? atoi(argv[1]) : 0;
}
C
ALLOC_LINE=$(grep -n 'the allocation line' "$WORK/mixed.c" | cut -d: -f1)
cd "$WORK" || exit 1
for p in mixed clean; do
    if ! "$VIGILCC" -O1 -g -fno-omit-frame-pointer "$p.c" -o "$p" 2>"$p.cc.log"; then
        echo "FAIL report: $p.c does not build with vigil-cc: $(snippet "$p.cc.log")"; exit 1
    fi
done
clang -O1 -g mixed.c -o mixed.plain || { echo "FAIL report: mixed.c does not build with clang"; exit 1; }

# ---- vigil run: standard output, the summary, SUMMARY, --error-exitcode, --tool ----
./mixed.plain >plain.stdout
"$VIGIL" run --out "$WORK/out-mixed" --tool leak -- ./mixed >vigil.stdout 2>vigil.stderr
status=$?
check "run: exit status 0 as the program's" "status $status; stderr: $(snippet vigil.stderr)" [ "$status" = 0 ]
check "run: stdout byte for byte the plain build's (binary and text)" \
    "$(cmp plain.stdout vigil.stdout 2>&1); vigil.stdout starts: $(head -c 120 vigil.stdout | od -c | head -n 2 | tr '\n' ' ')" \
    cmp -s plain.stdout vigil.stdout
check "run: the output compared holds NUL bytes and text" "$(wc -c <plain.stdout) bytes" \
    bash -c 'tr -d "\000" <plain.stdout | cmp -s - plain.stdout; [ $? = 1 ] && grep -aq "^total 164$" plain.stdout'
"$VIGIL" run --out "$WORK/out-pipe" --tool leak -- ./mixed 2>/dev/null | cat >pipe.stdout
check "run: stdout through a pipe is the plain build's too" "$(cmp plain.stdout pipe.stdout 2>&1)" cmp -s plain.stdout pipe.stdout
check "run: the summary is on stderr and names the findings" "stderr: $(snippet vigil.stderr 600)" \
    grep -q '^  findings    leak: 1 finding, 12 objects, 576 bytes  (vigil report ' vigil.stderr
check "run: SUMMARY line with findings" "stderr: $(snippet vigil.stderr 800)" \
    grep -qx 'SUMMARY: vigil: 1 finding (leak: 1 finding, 12 objects, 576 bytes)' vigil.stderr
if command -v gzip >/dev/null; then
    head -c 200000 /dev/urandom >data.bin
    "$VIGIL" run --out "$WORK/out-gzip" -- gzip -c data.bin >data.bin.gz 2>gzip.stderr
    check "run: vigil run -- gzip -c f > f.gz gives a valid f.gz (a program not built with vigil-cc)" \
        "status $?; $(gzip -dc data.bin.gz 2>&1 | cmp - data.bin 2>&1 | head -c 200)" \
        bash -c 'gzip -dc data.bin.gz | cmp -s - data.bin'
fi

"$VIGIL" run --out "$WORK/out-clean" --tool leak -- ./clean >clean.stdout 2>clean.stderr
status=$?
check "run: no SUMMARY line without findings" "status $status; stderr: $(snippet clean.stderr 600)" \
    bash -c '[ '"$status"' = 0 ] && ! grep -q "^SUMMARY" clean.stderr && grep -q "^  findings    none (tools leak)" clean.stderr'
check "run: without findings stdout is the program's alone" "$(snippet clean.stdout)" \
    bash -c '[ "$(cat clean.stdout)" = "clean run" ]'

"$VIGIL" run --out "$WORK/out-e1" --error-exitcode=42 --tool leak -- ./mixed >/dev/null 2>e1.stderr
status=$?
check "run: --error-exitcode=42 with findings exits 42" "status $status; $(snippet e1.stderr)" [ "$status" = 42 ]
"$VIGIL" run --out "$WORK/out-e2" --error-exitcode 9 --tool leak -- ./mixed >/dev/null 2>e2.stderr
status=$?
check "run: --error-exitcode 9 (separate value) with findings exits 9" "status $status" [ "$status" = 9 ]
"$VIGIL" run --out "$WORK/out-e3" --error-exitcode=42 --tool leak -- ./clean >/dev/null 2>e3.stderr
status=$?
check "run: --error-exitcode=42 without findings exits with the program's 0" "status $status; $(snippet e3.stderr)" [ "$status" = 0 ]
"$VIGIL" run --out "$WORK/out-e4" --error-exitcode=42 --tool leak -- ./clean 3 >/dev/null 2>e4.stderr
status=$?
check "run: --error-exitcode=42 without findings exits with the program's 3" "status $status" [ "$status" = 3 ]
"$VIGIL" run --out "$WORK/out-e5" --error-exitcode=0 -- ./clean >/dev/null 2>e5.stderr
status=$?
check "run: --error-exitcode=0 rejected (1 to 255)" "status $status; $(snippet e5.stderr)" \
    bash -c '[ '"$status"' = 2 ] && grep -q "expected an exit status from 1 to 255" e5.stderr && [ ! -e out-e5 ]'

"$VIGIL" run --out "$WORK/out-unknown" --tool leak --tool nosuchtool -- ./clean 0 "$WORK/touched" >unknown.stdout 2>unknown.stderr
status=$?
check "run: an unknown --tool is rejected before running, the tools listed" \
    "status $status, touched $([ -e touched ] && echo yes || echo no), stdout $(snippet unknown.stdout), stderr $(snippet unknown.stderr)" \
    bash -c '[ '"$status"' = 2 ] && [ ! -e touched ] && [ ! -e out-unknown ] && [ ! -s unknown.stdout ] &&
             grep -q "nosuchtool" unknown.stderr && grep -q "leak" unknown.stderr && grep -q "count" unknown.stderr'
"$VIGIL" run --out "$WORK/out-unknown2" --tool leak,bogus -- ./clean 0 "$WORK/touched" >/dev/null 2>unknown2.stderr
status=$?
check "run: an unknown name in --tool a,b is rejected too" "status $status; $(snippet unknown2.stderr)" \
    bash -c '[ '"$status"' = 2 ] && [ ! -e touched ] && grep -q "\"bogus\"" unknown2.stderr'

# ---- --help ----
# Every subcommand, the core's and each tool's, explains its flags with an example in --help.
missing=""
for c in $("$VIGIL" help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1}'); do
    [ "$c" = help ] && continue
    "$VIGIL" "$c" --help >help.out 2>&1 && grep -q '^usage: vigil ' help.out && grep -q '^example: ' help.out \
        || missing+="$c "
done
check "every subcommand's --help: usage and an example" "missing in: $missing" [ -z "$missing" ]

# ---- vigil report on one run ----
RUN=$(ls -d "$WORK"/out-mixed/*/ 2>/dev/null | head -n1)
RUN=${RUN%/}
if [ -z "$RUN" ]; then
    bad "report: the mixed run" "no run directory in out-mixed"
    echo "report tests: $pass passed, $fail failed"
    exit 1
fi
"$VIGIL" report "$RUN" >text.out 2>text.err
status=$?
check "report: text, worst first, the stack mapped to file:line" "status $status; $(snippet text.out 700) $(snippet text.err)" \
    bash -c '[ '"$status"' = 0 ] && grep -q "^1 finding (leak: 1 finding, 12 objects, 576 bytes)$" text.out &&
             grep -q "^#1 leak/unreachable \[error\]" text.out &&
             grep -q "^    12 objects, 576 bytes, allocated in make_record and never freed" text.out &&
             grep -q "^    at make_record  .*mixed\.c:'"$ALLOC_LINE"'" text.out &&
             grep -q "^      #0 make_record  .*mixed\.c:'"$ALLOC_LINE"'" text.out &&
             grep -q "^      #1 main  .*mixed\.c:[0-9]" text.out'

"$VIGIL" report --json "$RUN" >report.json 2>json.err
verdict=$(python3 - report.json "$RUN" "$ALLOC_LINE" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("not JSON: %s" % e); sys.exit()
run, line = sys.argv[2], int(sys.argv[3])
problems = []
want = lambda cond, what: cond or problems.append(what)
want(d.get("format") == "vigil-findings" and d.get("version") == 1, "format/version %r %r" % (d.get("format"), d.get("version")))
want(d.get("run") == run and d.get("program", "").endswith("/mixed"), "run/program %r %r" % (d.get("run"), d.get("program")))
want(d.get("suppressed") == 0, "suppressed %r" % d.get("suppressed"))
fs = d.get("findings", [])
want(len(fs) == 1, "%d findings" % len(fs))
if fs:
    f = fs[0]
    want((f["tool"], f["kind"], f["severity"]) == ("leak", "unreachable", "error"), "tool/kind/severity %r" % [f["tool"], f["kind"], f["severity"]])
    want(f["message"].startswith("12 objects, 576 bytes, allocated in make_record and never freed"), "message %r" % f["message"])
    want(f["score"] > 0, "score %r" % f["score"])
    loc = f["locations"][0] if f["locations"] else {}
    want(loc.get("role") == "allocation" and loc.get("function") == "make_record" and loc.get("file", "").endswith("mixed.c")
         and loc.get("line") == line, "location %r" % loc)
    st = f["stacks"][0] if f["stacks"] else {}
    frames = [(fr["function"], fr["line"]) for fr in st.get("frames", [])]
    want(st.get("label") == "allocation" and frames[:1] == [("make_record", line)] and len(frames) > 1 and frames[1][0] == "main",
         "stack %r" % frames)
    want(all(fr["pc"].startswith("0x") for fr in st.get("frames", [])), "pc strings")
    fields = {x["key"]: x for x in f["fields"]}
    want(fields.get("objects", {}).get("value") == 12 and fields["objects"].get("total") is True, "objects %r" % fields.get("objects"))
    want(fields.get("bytes", {}).get("value") == 576 and fields["bytes"].get("unit") == "bytes", "bytes %r" % fields.get("bytes"))
    want(fields.get("unreachable_objects", {}).get("value") == 12, "unreachable_objects")
print("ok" if not problems else "; ".join(problems))
PY
)
check "report: --json is a vigil-findings document with the leak's fields" "$verdict; $(snippet json.err)" [ "$verdict" = ok ]

"$VIGIL" report --sarif "$RUN" >report.sarif 2>sarif.err
verdict=$(python3 - report.sarif "$ALLOC_LINE" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("not JSON: %s" % e); sys.exit()
line = int(sys.argv[2])
problems = []
want = lambda cond, what: cond or problems.append(what)
want(d.get("version") == "2.1.0", "version %r" % d.get("version"))
want("sarif-2.1.0" in d.get("$schema", ""), "$schema %r" % d.get("$schema"))
run = d["runs"][0]
driver = run["tool"]["driver"]
want(driver.get("name") == "vigil", "driver.name %r" % driver.get("name"))
rules = [r["id"] for r in driver.get("rules", [])]
want(rules == ["leak/unreachable"], "rules %r" % rules)
rs = run.get("results", [])
want(len(rs) == 1, "%d results" % len(rs))
for r in rs:
    want(r.get("ruleId") == "leak/unreachable" and r.get("ruleIndex") == 0, "ruleId %r" % r.get("ruleId"))
    want(r.get("level") == "error", "level %r" % r.get("level"))
    want("make_record" in r.get("message", {}).get("text", ""), "message.text %r" % r.get("message"))
    pl = r["locations"][0]["physicalLocation"]
    want(pl["artifactLocation"]["uri"].startswith("file:///") and pl["artifactLocation"]["uri"].endswith("/mixed.c"),
         "uri %r" % pl["artifactLocation"]["uri"])
    want(pl["region"]["startLine"] == line and pl["region"].get("startColumn", 0) > 0, "region %r" % pl["region"])
    flows = r.get("codeFlows", [])
    locs = flows[0]["threadFlows"][0]["locations"] if flows else []
    want(locs and locs[-1]["location"]["physicalLocation"]["region"]["startLine"] == line, "codeFlows end at the allocation")
    want(any(x.get("message", {}).get("text", "").startswith("most recent sampled access") for x in r.get("relatedLocations", [])),
         "relatedLocations: the last access")
print("ok" if not problems else "; ".join(problems))
PY
)
check "report: --sarif 2.1.0 with ruleId, level, message, location at the allocation line" "$verdict; $(snippet sarif.err)" [ "$verdict" = ok ]

# --html: the page, written atomically, rendered by headless Chromium.
"$VIGIL" report --html "$WORK/page.html" "$RUN" >html.out 2>html.err
status=$?
check "report: --html writes a self-contained page, no temporary file left" "status $status; $(snippet html.err)" \
    bash -c '[ '"$status"' = 0 ] && grep -q "<script" page.html && ! grep -q "src=\"http" page.html &&
             [ -z "$(ls -A | grep "page.html.tmp")" ] && grep -q "^vigil report: wrote" html.out'
if command -v chromium >/dev/null 2>&1; then
    profile=$(mktemp -d)
    timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
        --dump-dom "file://$WORK/page.html#g1" >dom.html 2>chromium.log
    rm -rf "$profile"
    section=$(awk 'index($0, "id=\"detail-g1\"") { on = 1 } on { print } on && /<\/section>/ { exit }' dom.html)
    check "report: --html renders in headless Chromium with the finding's function, selected, source highlighted" \
        "dom $(wc -c <dom.html) bytes; $(grep -m1 '<tr id="g1"' dom.html | head -c 300)" \
        bash -c 'grep -q "<table id=\"groups\"" dom.html && grep -q "data-selected=\"g1\"" dom.html &&
                 grep "<tr id=\"g1\" class=\"selected\"" dom.html | grep -q "make_record" &&
                 printf "%s" "$1" | head -n1 | grep -qv hidden &&
                 printf "%s" "$1" | grep -q "class=\"line allocation[^\"]*\" data-line=\"'"$ALLOC_LINE"'\""' _ "$section"
else
    echo "SKIP report/html in Chromium: not installed (apt-get install -y chromium)"
fi

# ---- suppressions ----
printf '# the records are meant to live for ever\nleak:make_record\n' >supp1.txt
"$VIGIL" report --suppress supp1.txt "$RUN" >supp1.out 2>supp1.err
check "report: a suppression by function removes the finding, counted" "$(snippet supp1.out 400) $(snippet supp1.err)" \
    bash -c 'grep -q "^no findings; 1 suppressed$" supp1.out && ! grep -q "^#1" supp1.out &&
             grep -q "^ *1  leak:make_record  (line 2)$" supp1.out'
printf '*:mixed.c\n' >supp2.txt
"$VIGIL" report --json --suppress supp2.txt "$RUN" >supp2.json 2>supp2.err
check "report: *:FILE suppresses in --json too (findings [], suppressed 1)" "$(snippet supp2.json) $(snippet supp2.err)" \
    python3 -c 'import json,sys; d=json.load(open("supp2.json")); sys.exit(not (d["findings"] == [] and d["suppressed"] == 1))'
"$VIGIL" report --sarif --suppress supp2.txt "$RUN" >supp2.sarif 2>/dev/null
check "report: and in --sarif (no results)" "$(snippet supp2.sarif)" \
    python3 -c 'import json,sys; d=json.load(open("supp2.sarif")); sys.exit(not (d["runs"][0]["results"] == []))'
printf 'leak:no_such_function\n*:other.c\n' >supp3.txt
"$VIGIL" report --suppress supp3.txt "$RUN" >supp3.out 2>&1
check "report: suppressions that match nothing keep the finding" "$(snippet supp3.out)" grep -q "^#1 leak/unreachable" supp3.out
printf 'leak:x\n\nbogus line\n' >supp4.txt
"$VIGIL" report --suppress supp4.txt "$RUN" >/dev/null 2>supp4.err
status=$?
check "report: a malformed suppression line is rejected with file:line" "status $status; $(snippet supp4.err)" \
    bash -c '[ '"$status"' = 1 ] && grep -q "supp4.txt:3: expected TOOL:PATTERN or \*:PATTERN" supp4.err'
printf 'leak:x\nnosuchtool:y\n' >supp5.txt
"$VIGIL" report --suppress supp5.txt "$RUN" >/dev/null 2>supp5.err
status=$?
check "report: a suppression for an unknown tool is rejected with file:line" "status $status; $(snippet supp5.err)" \
    bash -c '[ '"$status"' = 1 ] && grep -q "supp5.txt:2: unknown tool \"nosuchtool\"" supp5.err'

# ---- the newest run by default, a directory of runs listed ----
mkdir -p cwd && cd cwd || exit 1
"$VIGIL" run --tool leak -- ../clean 3 >/dev/null 2>&1
sleep 0.05
"$VIGIL" run --tool leak -- ../mixed >/dev/null 2>&1
"$VIGIL" report >newest1.out 2>newest1.err
check "report: no RUN reads the newest run of ./vigil-out (the leaky one)" "$(snippet newest1.out 200) $(snippet newest1.err)" \
    bash -c 'head -n1 newest1.out | grep -q "^vigil report: vigil-out/mixed\.[0-9]* (.*/mixed, pid" && grep -q "^#1 leak/unreachable" newest1.out'
sleep 0.05
"$VIGIL" run --tool leak -- ../clean 0 >/dev/null 2>&1
"$VIGIL" report >newest2.out 2>&1
check "report: ... and after another run, that one (no findings)" "$(snippet newest2.out 200)" \
    bash -c 'head -n1 newest2.out | grep -q "^vigil report: vigil-out/clean\.[0-9]* (.*/clean, pid .*, exit 0" && grep -q "^no findings$" newest2.out'
mkdir -p "$WORK/elsewhere"
(cd "$WORK/elsewhere" && "$VIGIL" run --out "$WORK/elsewhere/runs" --tool leak -- ../mixed >/dev/null 2>&1)
VIGIL_OPTIONS="mode=adaptive:out=$WORK/elsewhere/runs" "$VIGIL" report >newest3.out 2>&1
check "report: no RUN reads out= of VIGIL_OPTIONS when set" "$(snippet newest3.out 200)" \
    grep -q "^vigil report: $WORK/elsewhere/runs/mixed\.[0-9]* " newest3.out
"$VIGIL" report vigil-out >list.out 2>list.err
status=$?
verdict=$(awk 'NR == 1 && !/^vigil report: 3 runs in vigil-out, newest first$/ { print "header: " $0; exit }
               NR == 3 && !($1 ~ /^clean\./ && $4 == "exit" && $5 == "0" && $6 == "0" && $7 ~ /\/clean$/) { print "row 1: " $0; exit }
               NR == 4 && !($1 ~ /^mixed\./ && $4 == "exit" && $5 == "0" && $6 == "1" && $7 ~ /\/mixed$/) { print "row 2: " $0; exit }
               NR == 5 && !($1 ~ /^clean\./ && $4 == "exit" && $5 == "3" && $6 == "0") { print "row 3: " $0; exit }
               END { if (NR < 5) print "only " NR " lines" }' list.out)
check "report: a directory of runs is listed newest first (name, start, status, findings, program)" \
    "status $status; $verdict; $(snippet list.out 500) $(snippet list.err)" bash -c '[ '"$status"' = 0 ] && [ -z "$1" ]' _ "$verdict"
"$VIGIL" report --suppress ../supp1.txt vigil-out >list2.out 2>&1
check "report: the listing counts findings after suppressions" "$(snippet list2.out 500)" \
    bash -c '! awk "\$1 ~ /^mixed\\./ && \$6 != 0 { bad = 1 } END { exit !bad }" list2.out && grep -q "^  mixed\." list2.out'
cd "$WORK" || exit 1

# ---- missing and damaged runs ----
"$VIGIL" report "$WORK/no-such-run" >/dev/null 2>missing.err
status=$?
check "report: a missing run is named" "status $status; $(snippet missing.err)" \
    bash -c '[ '"$status"' = 1 ] && grep -q "no-such-run: No such file or directory" missing.err'
mkdir -p emptydir
"$VIGIL" report emptydir >/dev/null 2>empty.err
status=$?
check "report: a directory that is neither a run nor holds runs" "status $status; $(snippet empty.err)" \
    bash -c '[ '"$status"' = 1 ] && grep -q "emptydir: not a run (no run.txt) and holds no runs" empty.err'
cp -r "$RUN" torn-run
grep -v '^end$' "$RUN/run.txt" >torn-run/run.txt
"$VIGIL" report torn-run >/dev/null 2>torn.err
status=$?
check "report: a run.txt without its end line is rejected with file:line" "status $status; $(snippet torn.err)" \
    bash -c '[ '"$status"' = 1 ] && grep -q "torn-run/run.txt:[0-9]*:" torn.err'
cp -r "$RUN" bad-leak
size=$(wc -c <"$RUN/leak.json")
head -c $((size / 2)) "$RUN/leak.json" >bad-leak/leak.json
"$VIGIL" report bad-leak >/dev/null 2>badleak.err
status=$?
check "report: a damaged leak.json is rejected with file:line:column and what was expected" "status $status; $(snippet badleak.err)" \
    bash -c '[ '"$status"' = 1 ] && grep -q "bad-leak/leak.json:[0-9]*:[0-9]*: .*\(expected\|unexpected\|unterminated\)" badleak.err'
"$VIGIL" run --out "$WORK/out-e6" --error-exitcode=5 -- ./clean >/dev/null 2>/dev/null
status=$?
check "run: --error-exitcode without a tool and without findings keeps the status" "status $status" [ "$status" = 0 ]

# ---- the leak tool's shortcuts still work ----
"$VIGIL" leaks "$RUN" >leaks.out 2>&1
check "vigil leaks still reports the group" "$(snippet leaks.out 300)" grep -q "allocated at  make_record" leaks.out
"$VIGIL" html "$RUN" -o leaks.html >/dev/null 2>leakshtml.err
check "vigil html still makes the page (the same findings page)" "$(snippet leakshtml.err)" \
    bash -c 'grep "^<tr id=\"g1\">" leaks.html | grep -q make_record && grep -q "class=\"line allocation" leaks.html'

echo "report tests: $pass passed, $fail failed"
[ "$fail" = 0 ]
