#!/usr/bin/env bash
# vigil-cc as a compiler driver: `--version` (clang's first line first, then vigil-cc's version
# and build id), `--vigil-help` (user settings first, development knobs apart), the refusal of
# -static links, and the DWARF 4 line tables of a build without -g (Valgrind 3.19, gdb).
# Small programs are built in a temporary directory.
#
# Prints one line per check, "PASS name", "FAIL name: reason" or "SKIP name: why"; exit 1 if any
# check failed.
#
# Environment:
#   VIGILCC      compiler under test (default build/bin/vigil-cc)
#   VIGIL        the vigil command, for the version comparison (default: next to VIGILCC)
#   CC_REBUILD   0 skips cc/build-id, which builds vigil-cc twice in a copy of its sources
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
case "$VIGILCC" in /*) ;; */*) VIGILCC=$PWD/$VIGILCC ;; esac
VIGIL=${VIGIL:-$(dirname "$VIGILCC")/vigil}
CC_REBUILD=${CC_REBUILD:-1}
WORK=$(mktemp -d /tmp/vigil-cc-tests.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
ulimit -c 0

status=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; status=1; }
skip() { echo "SKIP $1: $2"; }
oneline() { tr '\n' ' ' <"$1" | cut -c1-${2:-240}; }

if ! [ -x "$VIGILCC" ]; then
    fail cc/setup "no vigil-cc at $VIGILCC (make -j2)"
    exit 1
fi
# The clang vigil-cc runs (VIGIL_CC_CLANG, else clang-<its LLVM major>, else clang): the
# reference for what clang alone prints and builds.
CLANG=$(VIGIL_CC_VERBOSE=1 "$VIGILCC" -dumpversion 2>&1 >/dev/null |
        sed -n 's/^vigil-cc: run: \([^ ]*\) -dumpversion$/\1/p' | head -n1)
if [ -z "$CLANG" ] || ! command -v "$CLANG" >/dev/null; then
    fail cc/setup "cannot tell which clang $VIGILCC runs (got '${CLANG}')"
    exit 1
fi

cd "$WORK" || exit 2

# A program with allocations, branches, calls and loops: checking copies, instrumented copies
# and outlined copies all get line tables.
cat >prog.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node { struct node *next; int value; };

static int weight(int v)
{
    if (v % 3 == 0) return 3;
    if (v % 5 == 0) return 5;
    return 1;
}

static struct node *push(struct node *head, int v)
{
    struct node *n = malloc(sizeof *n);
    if (!n) exit(1);
    n->value = v;
    n->next = head;
    return n;
}

int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 3000;
    struct node *head = NULL;
    long sum = 0;
    for (int i = 0; i < count; i++) {
        head = push(head, i);
        sum += weight(i);
    }
    char *name = strdup("vigil");
    while (head) {
        struct node *next = head->next;
        sum += head->value;
        free(head);
        head = next;
    }
    printf("sum=%ld name=%s\n", sum, name);
    free(name);
    return 0;
}
EOF
if ! "$CLANG" -O2 prog.c -o plain.out >plain.log 2>&1 || ! ./plain.out >plain.txt 2>&1 ||
   ! ./plain.out 10 >plain10.txt 2>&1; then
    fail cc/setup "the plain clang build of the test program does not work: $(oneline plain.log)"
    exit 1
fi

# ---- --version ----

ID_RE='^vigil-cc [0-9]+\.[0-9]+\.[0-9]+ \(build [0-9a-f]{16}\)$'

check_version() {
    local why=""
    "$CLANG" --version >clang.ver 2>clang.ver.err || why+="$CLANG --version fails; "
    if ! "$VIGILCC" --version >vcc.ver 2>vcc.ver.err; then
        fail cc/version "vigil-cc --version exits with status $?: $(oneline vcc.ver.err)"
        return
    fi
    [ "$(sed -n 1p vcc.ver)" = "$(sed -n 1p clang.ver)" ] ||
        why+="first line '$(sed -n 1p vcc.ver)' is not clang's '$(sed -n 1p clang.ver)'; "
    grep -Eq "$ID_RE" <(sed -n 2p vcc.ver) ||
        why+="second line '$(sed -n 2p vcc.ver)' is not 'vigil-cc X.Y.Z (build <16 hex digits>)'; "
    [ "$(grep -c '^vigil-cc ' vcc.ver)" = 1 ] || why+="not exactly one vigil-cc line; "
    cmp -s <(sed 2d vcc.ver) clang.ver || why+="the rest of clang's output is not kept as it is; "
    [ -s vcc.ver.err ] && why+="stderr is not empty: $(oneline vcc.ver.err 120); "
    # The same through a response file (the command line vigil-cc classifies is the expanded one).
    echo "--version" >ver.rsp
    "$VIGILCC" @ver.rsp >vcc.rsp.ver 2>/dev/null && cmp -s vcc.rsp.ver vcc.ver ||
        why+="vigil-cc @file holding --version prints something else; "
    if [ -z "$why" ]; then pass cc/version; else fail cc/version "$why"; fi

    if [ -x "$VIGIL" ]; then
        local mine theirs
        mine=$(sed -n 2p vcc.ver | cut -d' ' -f2)
        theirs=$("$VIGIL" --version 2>/dev/null | sed -n 's/^vigil \([^ ]*\).*/\1/p')
        if [ -n "$mine" ] && [ "$mine" = "$theirs" ]; then pass cc/version-matches-vigil
        else fail cc/version-matches-vigil "vigil-cc says '$mine', $VIGIL --version says '$theirs'"; fi
    else
        skip cc/version-matches-vigil "no vigil command at $VIGIL"
    fi
}

# Invocations that only clang answers still answer as clang does.
check_clang_only() {
    local why="" rc
    [ "$("$VIGILCC" -dumpversion 2>&1)" = "$("$CLANG" -dumpversion 2>&1)" ] || why+="-dumpversion differs from clang's; "
    [ "$("$VIGILCC" -dumpmachine 2>&1)" = "$("$CLANG" -dumpmachine 2>&1)" ] || why+="-dumpmachine differs from clang's; "
    [ "$("$VIGILCC" -v 2>&1)" = "$("$CLANG" -v 2>&1)" ] || why+="-v alone differs from clang's; "
    # Meson and others ask the linker for its version through the compiler.
    [ "$("$VIGILCC" -Wl,--version 2>&1 | head -n1)" = "$("$CLANG" -Wl,--version 2>&1 | head -n1)" ] ||
        why+="-Wl,--version differs from clang's; "
    # The value of an option is not a --version of vigil-cc's (here the linker's).
    [ "$("$VIGILCC" -Xlinker --version 2>&1)" = "$("$CLANG" -Xlinker --version 2>&1)" ] ||
        why+="-Xlinker --version differs from clang's; "
    VIGIL_CC_DISABLE=1 "$VIGILCC" --version >dis.ver 2>&1; rc=$?
    [ $rc = 0 ] && [ "$(sed -n 1p dis.ver)" = "$(sed -n 1p clang.ver)" ] ||
        why+="VIGIL_CC_DISABLE=1 --version: status $rc, first line '$(sed -n 1p dis.ver)'; "
    # --version with other arguments: clang prints its version and stops.
    "$VIGILCC" --version -c prog.c -o should-not-exist.o >args.ver 2>&1; rc=$?
    [ $rc = 0 ] && cmp -s args.ver vcc.ver && ! [ -e should-not-exist.o ] ||
        why+="--version -c prog.c: status $rc, prints something else or compiles; "
    # A clang that fails: its status and output, and no vigil-cc line.
    printf '#!/bin/sh\necho "fake clang 1.0"\nexit 3\n' >fakeclang && chmod +x fakeclang
    VIGIL_CC_CLANG=$PWD/fakeclang "$VIGILCC" --version >fake.ver 2>&1; rc=$?
    [ $rc = 3 ] && [ "$(cat fake.ver)" = "fake clang 1.0" ] ||
        why+="a failing clang: status $rc (want 3), output '$(oneline fake.ver 80)'; "
    if [ -z "$why" ]; then pass cc/version-clang-only; else fail cc/version-clang-only "$why"; fi
}

# The build id changes when vigil-cc's sources do (and only then): build vigil-cc in a copy of
# its sources, change a comment in common/, build again.
check_build_id() {
    if [ "$CC_REBUILD" = 0 ]; then skip cc/build-id "CC_REBUILD=0"; return; fi
    if ! command -v make >/dev/null; then skip cc/build-id "no make"; return; fi
    local src=$WORK/src why="" id1 id2 id3 before after
    mkdir -p "$src"
    cp -r "$ROOT/Makefile" "$ROOT/compiler" "$ROOT/common" "$ROOT/include" "$ROOT/tools" "$src"/ 2>/dev/null
    rm -rf "$src/build"
    if ! make -C "$src" -j2 build/bin/vigil-cc >build1.log 2>&1; then
        fail cc/build-id "building vigil-cc in a copy of the sources: $(grep -m1 -E 'error|Error' build1.log | cut -c1-200)"
        return
    fi
    id1=$("$src/build/bin/vigil-cc" --version | sed -n 2p)
    grep -Eq "$ID_RE" <<<"$id1" || why+="first build: '$id1'; "
    make -C "$src" -j2 build/bin/vigil-cc >build2.log 2>&1 || why+="a second make fails; "
    id2=$("$src/build/bin/vigil-cc" --version | sed -n 2p)
    [ "$id2" = "$id1" ] || why+="the id changed without a change of the sources ('$id1', '$id2'); "
    before=$(stat -c %Y "$src/build/obj/host/compiler/args.o")
    echo "/* a change of vigil-cc's sources (tests/cc/run.sh) */" >>"$src/common/textfmt.c"
    sleep 1
    if make -C "$src" -j2 build/bin/vigil-cc >build3.log 2>&1; then
        id3=$("$src/build/bin/vigil-cc" --version | sed -n 2p)
        grep -Eq "$ID_RE" <<<"$id3" && [ "$id3" != "$id1" ] ||
            why+="after a change in common/textfmt.c the id is '$id3' (was '$id1'); "
        after=$(stat -c %Y "$src/build/obj/host/compiler/args.o")
        [ "$before" = "$after" ] || why+="compiler/args.o was rebuilt too (only driver.o holds the id); "
    else
        why+="rebuild after the change fails: $(grep -m1 -E 'error|Error' build3.log | cut -c1-160); "
    fi
    if [ -z "$why" ]; then pass cc/build-id; else fail cc/build-id "$why"; fi
    rm -rf "$src"
}

# ---- --vigil-help ----

check_vigil_help() {
    local why="" inc=$ROOT/compiler/settings.inc name cat userline devline line n
    if ! "$VIGILCC" --vigil-help >help.txt 2>help.err; then
        fail cc/vigil-help "exits with status $?: $(oneline help.err)"
        return
    fi
    # The table: NAME and category of each setting, each defined once.
    grep -oE 'VIGIL_CC_SETTING\([a-z_]+, "[A-Z_]+", [A-Za-z_]+' "$inc" |
        sed -E 's/.*"([A-Z_]+)", ([A-Za-z_]+)/\1 \2/' >table.txt
    [ "$(wc -l <table.txt)" -ge 20 ] || why+="only $(wc -l <table.txt) settings read from settings.inc; "
    [ "$(grep -cE '^VIGIL_CC_SETTING\(' "$inc")" = "$(wc -l <table.txt)" ] ||
        why+="some VIGIL_CC_SETTING lines have no category column; "
    dups=$(cut -d' ' -f1 table.txt | sort | uniq -d | tr '\n' ' ')
    [ -z "$dups" ] || why+="defined more than once: $dups; "
    bad=$(awk '$2 != "USER" && $2 != "DEV" {print $1}' table.txt | tr '\n' ' ')
    [ -z "$bad" ] || why+="category not USER or DEV: $bad; "

    userline=$(grep -n '^Settings' help.txt | head -n1 | cut -d: -f1)
    devline=$(grep -n '^Development knobs' help.txt | head -n1 | cut -d: -f1)
    if [ -z "$userline" ] || [ -z "$devline" ] || [ "$userline" -ge "$devline" ]; then
        why+="no 'Settings' heading followed by a 'Development knobs' heading; "
    else
        while read -r name cat; do
            n=$(grep -cE "^  $name " help.txt)
            [ "$n" = 1 ] || { why+="$name listed $n times; "; continue; }
            line=$(grep -nE "^  $name " help.txt | cut -d: -f1)
            if [ "$cat" = USER ]; then
                [ "$line" -gt "$userline" ] && [ "$line" -lt "$devline" ] || why+="$name is not among the settings; "
            else
                [ "$line" -gt "$devline" ] || why+="$name is not among the development knobs; "
            fi
        done <table.txt
        # The settings a user needs come first; the tuning knobs do not.
        for name in VIGIL_CC_DISABLE VIGIL_CC_PROBE_ACCESSES VIGIL_CC_PROBE_BRANCHES VIGIL_CC_PROBE_RETURNS \
                    VIGIL_CC_PROBE_CALLS VIGIL_CC_PRED_COUNTERS; do
            grep -qx "$name USER" table.txt || why+="$name is not a user setting; "
        done
        for name in VIGIL_CC_PLACEMENT VIGIL_CC_CSR_COST VIGIL_CC_DUAL_MAX VIGIL_CC_KEEP_TEMPS; do
            grep -qx "$name DEV" table.txt || why+="$name is not a development knob; "
        done
        # the tools' settings have a heading of their own between the two
        toolline=$(grep -n '^Tool settings' help.txt | head -n1 | cut -d: -f1)
        [ -n "$toolline" ] && [ "$toolline" -gt "$userline" ] && [ "$toolline" -lt "$devline" ] ||
            why+="no 'Tool settings' heading between the settings and the knobs; "
        n=$(awk -v t="${toolline:-0}" -v d="$devline" 'NR > t && NR < d && /^  [A-Z_]+ +default /' help.txt | wc -l)
        [ "$(grep -cE '^  [A-Z_]+ +default ' help.txt)" = "$(( $(wc -l <table.txt) + n ))" ] ||
            why+="help lists $(grep -cE '^  [A-Z_]+ +default ' help.txt) settings, the table $(wc -l <table.txt) and the tools $n; "
        grep -qE '^  VIGIL_CC_MEMCHECK +default 1 ' help.txt || why+="the memcheck tool's VIGIL_CC_MEMCHECK is not listed; "
    fi
    if [ -z "$why" ]; then pass cc/vigil-help; else fail cc/vigil-help "$why"; fi

    # The same table drives the reader: every setting, set to its default, is known.
    why=""
    local envs=() def
    while read -r name cat; do
        def=$(grep -A0 "\"$name\"" "$inc" | sed -E 's/.*"'"$name"'", [A-Z]+, "([^"]*)".*/\1/')
        envs+=("$name=$def")
    done <table.txt
    env "${envs[@]}" "$VIGILCC" -O1 -c prog.c -o known.o >known.log 2>&1 || why+="a compile with every setting at its default fails: $(oneline known.log 160); "
    grep -q 'unknown setting' known.log && why+="$(grep -m1 'unknown setting' known.log); "
    VIGIL_CC_NO_SUCH_THING=1 "$VIGILCC" -O1 -c prog.c -o unknown.o >unknown.log 2>&1
    grep -q 'unknown setting VIGIL_CC_NO_SUCH_THING' unknown.log || why+="an unknown VIGIL_CC_ variable gets no warning; "
    if [ -z "$why" ]; then pass cc/settings-known; else fail cc/settings-known "$why"; fi
}

# ---- -static ----

check_static() {
    local why="" rc flag
    for flag in -static -static-pie --static; do
        rm -f static.out
        "$VIGILCC" -O1 $flag prog.c -o static.out >static.log 2>&1; rc=$?
        [ $rc != 0 ] || why+="$flag: the link succeeds (status 0); "
        [ -e static.out ] && why+="$flag: an output was written; "
        [ "$(wc -l <static.log)" = 1 ] || why+="$flag: $(wc -l <static.log) lines on stderr, want one: $(oneline static.log 160); "
        grep -q "^vigil-cc: error: " static.log && grep -qF -- "$flag" static.log &&
            grep -q 'symbol interposition' static.log && grep -q 'malloc' static.log &&
            grep -q 'pthread' static.log && grep -q 'static link with the C library' static.log ||
            why+="$flag: the message does not name the reason: $(oneline static.log 200); "
    done
    # Objects only (maybe instrumented ones): the runtime would be linked, so refused too.
    "$VIGILCC" -O1 -c prog.c -o prog.o >c.log 2>&1 || why+="-c prog.c fails: $(oneline c.log 120); "
    "$VIGILCC" prog.o -static -o static.out >objs.log 2>&1 && why+="-static with objects only links; "
    if [ -z "$why" ]; then pass cc/static-refused; else fail cc/static-refused "$why"; fi

    why=""
    # -static in CFLAGS of a compile-only command is fine (clang ignores it there).
    rm -f sc.o
    "$VIGILCC" -O1 -static -c prog.c -o sc.o >sc.log 2>&1; rc=$?
    [ $rc = 0 ] && [ -s sc.o ] || why+="-static -c: status $rc: $(oneline sc.log 160); "
    grep -q 'interposition' sc.log && why+="-static -c prints the refusal; "
    "$VIGILCC" -O1 -static-pie -S prog.c -o sc.s >ss.log 2>&1 && [ -s sc.s ] || why+="-static-pie -S fails: $(oneline ss.log 160); "
    # Options that only make a runtime library static keep the C library shared.
    "$VIGILCC" -O1 -static-libgcc prog.c -o libgcc.out >lg.log 2>&1 && ./libgcc.out 10 >lg.txt 2>&1 &&
        cmp -s lg.txt plain10.txt ||
        why+="-static-libgcc: $(oneline lg.log 160); "
    # With vigil-cc disabled it is plain clang, which may link statically.
    if "$CLANG" -static prog.c -o plain-static.out >/dev/null 2>&1; then
        VIGIL_CC_DISABLE=1 "$VIGILCC" -static prog.c -o dis-static.out >ds.log 2>&1 && [ -x dis-static.out ] ||
            why+="VIGIL_CC_DISABLE=1 -static: $(oneline ds.log 160); "
    fi
    if [ -z "$why" ]; then pass cc/static-compile-ok; else fail cc/static-compile-ok "$why"; fi
}

# ---- DWARF 4 when the user gave no -g ----

# "VERSION PRODUCER" per compile unit of an object or executable.
cu_versions() {
    readelf --debug-dump=info "$1" 2>/dev/null | awk '
        /Compilation Unit @/ { v = ""; want = 1 }
        want && /^ *Version:/ { v = $2 }
        want && /DW_AT_producer/ { sub(/.*\): /, ""); print v, $0; want = 0 }'
}

check_dwarf() {
    local why="" v
    if ! command -v readelf >/dev/null; then skip cc/dwarf4-without-g "no readelf"; return; fi
    for opt in -O0 -O2; do
        if ! "$VIGILCC" $opt prog.c -o nog$opt >nog.log 2>&1; then
            why+="$opt build fails: $(oneline nog.log 160); "
            continue
        fi
        cu_versions nog$opt >nog$opt.cus
        grep -q ' clang version' nog$opt.cus || why+="$opt: no compile unit of prog.c (no line tables?); "
        [ "$opt" = -O0 ] || grep -q 'vigil-cc (instrumented copies)' nog$opt.cus ||
            why+="$opt: no compile unit of the outlined copies; "
        v=$(awk '$1 != 4' nog$opt.cus | head -n3 | tr '\n' ' ')
        [ -z "$v" ] || why+="$opt without -g: units not DWARF 4: $v; "
        readelf --debug-dump=rawline nog$opt >nog$opt.lines 2>/dev/null
        grep -q 'DWARF Version: *4' nog$opt.lines || why+="$opt: no DWARF 4 line table; "
        grep -q 'DWARF Version: *5' nog$opt.lines && why+="$opt: a DWARF 5 line table; "
    done
    if [ -z "$why" ]; then pass cc/dwarf4-without-g; else fail cc/dwarf4-without-g "$why"; fi

    # The user's own -g keeps clang's choice of version; an explicit -gdwarf-N is obeyed.
    why=""
    local want got
    for g in -g -gdwarf-5 -gdwarf-4 "-gline-tables-only"; do
        "$CLANG" -O1 $g -c prog.c -o plain-g.o 2>/dev/null
        "$VIGILCC" -O1 $g -c prog.c -o vcc-g.o >g.log 2>&1 || { why+="$g: build fails: $(oneline g.log 120); "; continue; }
        want=$(cu_versions plain-g.o | awk '{print $1}' | head -n1)
        got=$(cu_versions vcc-g.o | awk '{print $1}' | sort -u | tr '\n' ' ')
        [ -n "$want" ] && [ "$got" = "$want " ] || why+="$g: units are DWARF '$got', clang's '$want'; "
    done
    if [ -z "$why" ]; then pass cc/dwarf-user-choice; else fail cc/dwarf-user-choice "$why"; fi

    if ! command -v gdb >/dev/null; then
        skip cc/gdb-dwarf4 "no gdb"
    else
        gdb -nx -batch -ex 'info line weight' -ex 'list weight' -ex 'info source' ./nog-O2 >gdb.log 2>&1
        if grep -q 'Compiled with DWARF 4 debugging format' gdb.log && grep -qE '^Line [0-9]+ of "prog\.c"' gdb.log; then
            pass cc/gdb-dwarf4
        else
            fail cc/gdb-dwarf4 "$(grep -m2 -E 'DWARF|^Line|rror|No ' gdb.log | tr '\n' ' ' | cut -c1-200)"
        fi
    fi
}

check_valgrind() {
    if ! command -v valgrind >/dev/null; then
        skip cc/valgrind-without-g "valgrind is not installed"
        return
    fi
    local why="" rc opt
    for opt in -O0 -O2; do
        [ -x nog$opt ] || "$VIGILCC" $opt prog.c -o nog$opt >/dev/null 2>&1 || { why+="$opt build fails; "; continue; }
        valgrind --error-exitcode=9 ./nog$opt >vg$opt.out 2>vg$opt.err; rc=$?
        [ $rc = 0 ] || why+="$opt: valgrind status $rc: $(grep -m1 -iE 'corrupt|error|invalid' vg$opt.err | cut -c1-160); "
        grep -qi 'corrupted' vg$opt.err && why+="$opt: $(grep -m1 -i corrupted vg$opt.err | cut -c1-160); "
        cmp -s vg$opt.out plain.txt || why+="$opt: output '$(oneline vg$opt.out 80)' is not the plain build's '$(oneline plain.txt 80)'; "
    done
    if [ -z "$why" ]; then pass cc/valgrind-without-g; else fail cc/valgrind-without-g "$why"; fi
}

# ---- Frame pointers: kept by default (but in loop-free leaves), unless -fomit-frame-pointer or
# VIGIL_CC_FRAME_POINTERS=0; a -fno-omit-frame-pointer of the command line keeps every one ----
check_frame_pointers() {
    local why="" n
    cat >fp.c <<'SRC'
int fp_callee(int x);
int fp_caller(int x) { return fp_callee(x * 3) + fp_callee(x + 1); }
int fp_leaf(int *p, int n) { int s = 0; for (int i = 0; i < n; i++) s += p[i] * i; return s; }
int fp_tiny(int x) { return x * 7 + 1; }
SRC
    # "mov %rsp,%rbp" in fp_caller's checking copy: it sets up a frame pointer
    frames() { objdump -d --no-show-raw-insn "$1" 2>/dev/null | awk -v fn="<${2:-fp_caller}>:" '$2 == fn { f = 1; next } /^$/ { f = 0 } f && /mov +%rsp,%rbp/ { n++ } END { print n + 0 }'; }
    for cache in 0 1; do   # the setting is part of the cache key: a cached object never answers for the other
        export VIGIL_CC_CACHE=$cache
        "$VIGILCC" -O2 -c fp.c -o fp-default.o 2>fp.log || why+="default build fails: $(oneline fp.log 120); "
        "$VIGILCC" -O2 -fomit-frame-pointer -c fp.c -o fp-omit.o 2>>fp.log || why+="-fomit-frame-pointer build fails; "
        VIGIL_CC_FRAME_POINTERS=0 "$VIGILCC" -O2 -c fp.c -o fp-off.o 2>>fp.log || why+="VIGIL_CC_FRAME_POINTERS=0 build fails; "
        "$VIGILCC" -O2 -fomit-frame-pointer -fno-omit-frame-pointer -c fp.c -o fp-last.o 2>>fp.log || why+="last-wins build fails; "
        [ "$(frames fp-default.o)" -ge 1 ] || why+="cache=$cache: no frame pointer by default; "
        [ "$(frames fp-omit.o)" = 0 ] || why+="cache=$cache: a frame pointer despite -fomit-frame-pointer; "
        [ "$(frames fp-off.o)" = 0 ] || why+="cache=$cache: a frame pointer with VIGIL_CC_FRAME_POINTERS=0; "
        [ "$(frames fp-last.o)" -ge 1 ] || why+="cache=$cache: -fno-omit-frame-pointer after -fomit-frame-pointer gives none; "
        VIGIL_CC_FRAME_POINTERS=nonleaf "$VIGILCC" -O2 -c fp.c -o fp-nonleaf.o 2>>fp.log || why+="nonleaf build fails; "
        [ "$(frames fp-default.o fp_leaf)" -ge 1 ] || why+="cache=$cache: no frame pointer in a leaf with a loop by default; "
        [ "$(frames fp-default.o fp_tiny)" = 0 ] || why+="cache=$cache: a frame pointer in a loop-free leaf by default; "
        [ "$(frames fp-last.o fp_tiny)" -ge 1 ] || why+="cache=$cache: -fno-omit-frame-pointer on the command line leaves a leaf without its frame; "
        VIGIL_CC_FRAME_POINTERS=1 "$VIGILCC" -O2 -c fp.c -o fp-all.o 2>>fp.log || why+="VIGIL_CC_FRAME_POINTERS=1 build fails; "
        [ "$(frames fp-all.o fp_tiny)" -ge 1 ] || why+="cache=$cache: VIGIL_CC_FRAME_POINTERS=1 leaves a leaf without its frame; "
        # nonleaf: the loop-free leaf goes without; the leaf with a loop keeps its frame, since
        # its instrumented copy runs while it stays on the stack (compiler/transfer.c keep_frame)
        [ "$(frames fp-nonleaf.o fp_caller)" -ge 1 ] && [ "$(frames fp-nonleaf.o fp_tiny)" = 0 ] &&
            [ "$(frames fp-nonleaf.o fp_leaf)" -ge 1 ] ||
            why+="cache=$cache: nonleaf: $(frames fp-nonleaf.o fp_caller) in fp_caller, $(frames fp-nonleaf.o fp_tiny) in the loop-free leaf, $(frames fp-nonleaf.o fp_leaf) in the leaf with a loop; "
    done
    unset VIGIL_CC_CACHE
    n=$("$VIGILCC" --vigil-help 2>&1 | grep -c VIGIL_CC_FRAME_POINTERS)
    [ "$n" -ge 1 ] || why+="--vigil-help does not list VIGIL_CC_FRAME_POINTERS; "
    if [ -z "$why" ]; then pass cc/frame-pointers; else fail cc/frame-pointers "$why"; fi
}

check_version
check_clang_only
check_vigil_help
check_static
check_dwarf
check_valgrind
check_build_id
check_frame_pointers
exit $status
