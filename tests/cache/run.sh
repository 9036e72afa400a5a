#!/usr/bin/env bash
# The instrumentation cache (docs/cache.md): vigil-cc's entries, keys and hits, and `vigil cache`.
# Every check uses a cache directory of its own under a temporary directory, never the user's.
#
# Prints one line per check, "PASS name", "FAIL name: reason" or "SKIP name: why"; exit 1 if any
# check failed.
#
# Environment:
#   VIGILCC   compiler under test (default build/bin/vigil-cc)
#   VIGIL     the vigil command (default: next to VIGILCC)
#   HOSTCC    compiler of the SHA-256 check (default clang)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VIGILCC=${VIGILCC:-$ROOT/build/bin/vigil-cc}
case "$VIGILCC" in /*) ;; */*) VIGILCC=$PWD/$VIGILCC ;; esac
VIGIL=${VIGIL:-$(dirname "$VIGILCC")/vigil}
HOSTCC=${HOSTCC:-clang}
WORK=$(mktemp -d /tmp/vigil-cache-tests.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
ulimit -c 0
# Nothing of the caller's: no settings, no cache directory of his.
for v in $(env | sed -n 's/^\(VIGIL_CC_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset VIGIL_DEBUG VIGIL_OPTIONS

status=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; status=1; }
skip() { echo "SKIP $1: $2"; }
oneline() { tr '\n' ' ' <"$1" | cut -c1-${2:-240}; }

if ! [ -x "$VIGILCC" ] || ! [ -x "$VIGIL" ]; then
    fail cache/setup "no vigil-cc or vigil at $VIGILCC, $VIGIL (make -j2)"
    exit 1
fi

# counter DIR NAME: a counter of `vigil cache --json` (hits, misses, stored, damaged, entries, ...)
counter() {
    "$VIGIL" cache --dir "$1" --json 2>/dev/null | sed -n "s/^ *\"$2\": *\([0-9]*\).*/\1/p"
}

# ---- a small multi-file project: six units, a header, make with -MD ----
make_project() {  # DIR
    local d=$1 i
    mkdir -p "$d"
    cat >"$d/config.h" <<'EOF'
#define SCALE 3
#ifndef BIAS
#define BIAS 0
#endif
long u1(long), u2(long), u3(long), u4(long), u5(long), u6(long);
EOF
    for i in 1 2 3 4 5 6; do
        cat >"$d/u$i.c" <<EOF
#include <stdlib.h>
#include <string.h>
#include "config.h"
struct node$i { struct node$i *next; long v; };
long weigh$i(long v) { if (v % $((i + 1)) == 0) return SCALE * $i + BIAS; if (v & 1) return v % 7; return 1; }
long u$i(long n)
{
    struct node$i *head = NULL;
    long sum = 0;
    for (long k = 0; k < n; k++) {
        struct node$i *x = malloc(sizeof *x);
        if (!x) abort();
        x->v = weigh$i(k + $i);
        x->next = head;
        head = x;
    }
    char buf[64];
    memset(buf, $i, sizeof buf);
    for (struct node$i *p = head; p; p = p->next) sum += p->v + buf[p->v & 63];
    while (head) { struct node$i *next = head->next; free(head); head = next; }
    return sum;
}
EOF
    done
    cat >"$d/main.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include "config.h"
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000;
    printf("%ld %ld %ld %ld %ld %ld scale %d\n", u1(n), u2(n), u3(n), u4(n), u5(n), u6(n), SCALE);
    return 0;
}
EOF
    cat >"$d/Makefile" <<'EOF'
CFLAGS ?= -O2 -g
OBJS = main.o u1.o u2.o u3.o u4.o u5.o u6.o
prog: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $(OBJS)
%.o: %.c
	$(CC) $(CFLAGS) -MD -MP -c $< -o $@
clean:
	rm -f prog *.o *.d
-include $(OBJS:.o=.d)
EOF
}
NUNITS=7

cd "$WORK" || exit 2
make_project "$WORK/proj"

# ---- SHA-256 against sha256sum ----
check_sha256() {
    local why="" f
    cat >sha.c <<'EOF'
#include <stdio.h>
#include "cachefmt.h"
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) return 2;
        struct vigil_sha256 s;
        vigil_sha256_init(&s);
        char buf[777];   /* odd reads: blocks split everywhere */
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0) vigil_sha256_update(&s, buf, n);
        fclose(f);
        unsigned char d[32];
        char hex[65];
        vigil_sha256_final(&s, d);
        vigil_sha256_hex(d, hex);
        printf("%s  %s\n", hex, argv[i]);
    }
    return 0;
}
EOF
    if ! $HOSTCC -std=gnu11 -D_GNU_SOURCE -O1 -I"$ROOT/common" sha.c "$ROOT/common/cachefmt.c" -o sha >sha.log 2>&1; then
        fail cache/sha256 "does not compile: $(oneline sha.log)"
        return
    fi
    : >empty; printf abc >abc; printf 'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq' >two-blocks
    head -c 55 /dev/urandom >b55; head -c 56 /dev/urandom >b56; head -c 64 /dev/urandom >b64
    head -c 1000003 /dev/urandom >big
    for f in empty abc two-blocks b55 b56 b64 big; do
        [ "$(./sha "$f")" = "$(sha256sum "$f")" ] || why+="$f: $(./sha "$f" | cut -c1-16) vs $(sha256sum "$f" | cut -c1-16); "
        # the portable compression too, where the SHA extensions are used by default
        [ "$(VIGIL_SHA256_PORTABLE=1 ./sha "$f")" = "$(sha256sum "$f")" ] || why+="$f (portable): $(VIGIL_SHA256_PORTABLE=1 ./sha "$f" | cut -c1-16) vs $(sha256sum "$f" | cut -c1-16); "
    done
    if [ -z "$why" ]; then pass cache/sha256; else fail cache/sha256 "$why"; fi
}

# ---- the settings are listed ----
check_help() {
    local why="" name
    "$VIGILCC" --vigil-help >help.txt 2>&1
    awk '/^Settings/{u=1} /^Development knobs/{u=0} u' help.txt >user-settings.txt
    for name in VIGIL_CC_CACHE VIGIL_CC_CACHE_DIR VIGIL_CC_CACHE_MAX_SIZE VIGIL_CC_CACHE_BASEDIR; do
        grep -qE "^  $name " user-settings.txt || why+="$name is not among the user settings; "
    done
    "$VIGIL" help cache >vhelp.txt 2>&1 && grep -q 'vigil cache show' vhelp.txt && grep -q -- '--dir' vhelp.txt ||
        why+="vigil help cache: $(oneline vhelp.txt 120); "
    if [ -z "$why" ]; then pass cache/settings; else fail cache/settings "$why"; fi
}

# ---- a warm rebuild after make clean: hits, byte-identical objects, the same program ----
check_warm_rebuild() {
    local why="" c=$WORK/c-warm o d=$WORK/warm
    cp -a "$WORK/proj" "$d"
    # the reference: cache off
    (cd "$d" && make -j2 CC="$VIGILCC" VIGIL_CC_CACHE=0 >off.log 2>&1) || { fail cache/warm-rebuild "build without the cache fails: $(oneline "$d/off.log")"; return; }
    [ -e "$c" ] && why+="VIGIL_CC_CACHE=0 created the cache directory; "
    mkdir -p "$d/off" && cp "$d"/*.o "$d"/*.d "$d/prog" "$d/off/"
    (cd "$d" && make clean >/dev/null && VIGIL_CC_CACHE_DIR=$c make -j2 CC="$VIGILCC" >cold.log 2>&1) ||
        { fail cache/warm-rebuild "cold build fails: $(oneline "$d/cold.log")"; return; }
    mkdir -p "$d/cold" && cp "$d"/*.o "$d"/*.d "$d/prog" "$d/cold/"
    [ "$(counter "$c" misses)" = $NUNITS ] || why+="cold build: $(counter "$c" misses) misses, expected $NUNITS; "
    [ "$(counter "$c" entries)" = $NUNITS ] || why+="cold build: $(counter "$c" entries) entries, expected $NUNITS; "
    (cd "$d" && make clean >/dev/null && VIGIL_CC_CACHE_DIR=$c VIGIL_CC_VERBOSE=1 make -j2 CC="$VIGILCC" >warm.log 2>&1) ||
        { fail cache/warm-rebuild "warm build fails: $(oneline "$d/warm.log")"; return; }
    [ "$(counter "$c" hits)" = $NUNITS ] || why+="warm build: $(counter "$c" hits) hits, expected $NUNITS; "
    [ "$(counter "$c" misses)" = $NUNITS ] || why+="warm build added misses ($(counter "$c" misses)); "
    grep -q -- '-emit-llvm' "$d/warm.log" && why+="the warm build ran a front end: $(grep -m1 -- -emit-llvm "$d/warm.log" | cut -c1-100); "
    grep -qE 'run: .* -c .*\.bc ' "$d/warm.log" && why+="the warm build ran a back end; "
    grep -q 'loading .*vigil-cc-transform.so' "$d/warm.log" && why+="the warm build loaded the transforming part (libLLVM); "
    for o in "$d"/*.o; do
        o=$(basename "$o")
        cmp -s "$d/$o" "$d/cold/$o" || why+="$o differs from the cold build's; "
        cmp -s "$d/$o" "$d/off/$o" || why+="$o differs from the build without the cache; "
        cmp -s "$d/${o%.o}.d" "$d/cold/${o%.o}.d" || why+="${o%.o}.d differs from the cold build's; "
    done
    cmp -s "$d/prog" "$d/cold/prog" || why+="the program differs from the cold build's; "
    if [ -z "$why" ]; then pass cache/warm-rebuild; else fail cache/warm-rebuild "$why"; fi

    # The program built from the cache: same output, same site table as the cold build.
    why=""
    "$d/cold/prog" 3000 >cold.out 2>&1; "$d/prog" 3000 >warm.out 2>&1
    cmp -s cold.out warm.out || why+="output differs: '$(oneline cold.out 80)' vs '$(oneline warm.out 80)'; "
    VIGIL_OPTIONS=mode=full:out=$WORK/runs "$d/prog" 500 >full.out 2>&1 || why+="a run in mode full fails: $(oneline full.out); "
    "$VIGIL" sites "$d/cold/prog" | sed 1d >cold.sites 2>&1
    "$VIGIL" sites "$d/prog" | sed 1d >warm.sites 2>&1
    [ "$(wc -l <cold.sites)" -gt 50 ] || why+="the cold build's site table has $(wc -l <cold.sites) lines; "
    cmp -s cold.sites warm.sites || why+="vigil sites differs; "
    if [ -z "$why" ]; then pass cache/same-program; else fail cache/same-program "$why"; fi

    # The metadata: one entry per source; its site count is the object's table.
    why=""
    if "$VIGIL" cache show --dir "$c" "$d/u3.c" >show.txt 2>show.err; then
        [ "$(grep -c '^entry ' show.txt)" = 1 ] || why+="$(grep -c '^entry ' show.txt) entries for u3.c, expected 1; "
        grep -qE '^  u3 +(transfer|outlined|cloned)' show.txt || why+="no line for function u3: $(oneline show.txt 200); "
        grep -qE '^  weigh3 ' show.txt || why+="no line for function weigh3; "
        local meta sites table
        meta=$(find "$c" -name meta.txt -exec grep -l '^source u3.c$' {} +)
        sites=$(sed -n 's/^module .*sites=\([0-9]*\).*/\1/p' "$meta")
        table=$("$VIGIL" sites "$d/u3.o" | sed -n 's/.*1 site table, \([0-9]*\) sites.*/\1/p')
        [ -n "$sites" ] && [ "$sites" = "$table" ] || why+="metadata says $sites sites, the object's table $table; "
        local sum
        sum=$(sed -n 's/^function .* sites=\([0-9]*\) .*/\1/p' "$meta" | awk '{s+=$1} END {print s+0}')
        [ "$sum" = "$sites" ] || why+="the functions' sites add up to $sum, the module has $sites; "
    else
        why+="vigil cache show u3.c fails: $(oneline show.err); "
    fi
    "$VIGIL" cache show --dir "$c" nosuch.c >/dev/null 2>show2.err && why+="show of a source without entries succeeds; "
    if [ -z "$why" ]; then pass cache/show; else fail cache/show "$why"; fi
}

# ---- no stale hit when any part of the key changes ----
# compile_unit CACHE LOG [VAR=VALUE...] -- [compiler args]: compiles u1.c of the project into u1.o
compile_unit() {
    local c=$1 log=$2
    shift 2
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    (cd "$WORK/stale" && env VIGIL_CC_CACHE_DIR="$c" "${envs[@]}" "$VIGILCC" -O2 -c u1.c -o u1.o "$@") >"$log" 2>&1
}

check_stale() {
    local c=$WORK/c-stale why="" name hits misses
    cp -a "$WORK/proj" "$WORK/stale"
    compile_unit "$c" base.log -- || { fail cache/no-stale "first compile fails: $(oneline base.log)"; return; }
    cp "$WORK/stale/u1.o" base.o
    compile_unit "$c" base2.log -- && cmp -s "$WORK/stale/u1.o" base.o && [ "$(counter "$c" hits)" = 1 ] ||
        { fail cache/no-stale "the same compile again is not a hit ($(counter "$c" hits) hits)"; return; }
    # change: a compile that must miss, and must give what a compile without the cache gives
    try_change() {  # NAME [same] [VAR=VALUE...] -- [args]; same: the object may be the unchanged one's
        local name=$1 same=0
        shift
        [ "$1" = same ] && { same=1; shift; }
        local envs=() args=()
        while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
        shift
        args=("$@")
        hits=$(counter "$c" hits); misses=$(counter "$c" misses)
        if ! compile_unit "$c" "ch-$name.log" "${envs[@]}" -- "${args[@]}"; then
            why+="$name: compile fails: $(oneline "ch-$name.log" 120); "
            return
        fi
        [ "$(counter "$c" hits)" = "$hits" ] || why+="$name: a hit (stale); "
        [ "$(counter "$c" misses)" = $((misses + 1)) ] || why+="$name: not counted as a miss; "
        cp "$WORK/stale/u1.o" "ch-$name.o"
        compile_unit "$c" "ch-$name-off.log" "${envs[@]}" VIGIL_CC_CACHE=0 -- "${args[@]}"
        cmp -s "$WORK/stale/u1.o" "ch-$name.o" || why+="$name: the object differs from a compile without the cache; "
        [ $same = 0 ] && cmp -s base.o "ch-$name.o" && why+="$name: the object is the unchanged one's; "
    }
    try_change setting VIGIL_CC_PROBE_BRANCHES=0 --
    try_change dev-setting VIGIL_CC_MERGE_SPAN=0 --
    # a tool's setting (the first --vigil-help lists; only the transforming part knows them)
    local tool_setting
    tool_setting=$("$VIGILCC" --vigil-help | awk '/^Tool settings/{t=1; next} t && /^  VIGIL_CC_/ {print $1; exit}')
    if [ -n "$tool_setting" ]; then try_change tool-setting same "$tool_setting=0" --; else why+="--vigil-help lists no tool setting; "; fi
    try_change define -- -DBIAS=5
    # the configuration file (docs/config.md): its contents, not only its path
    printf '[skip]\nfun:u1\n' >"$WORK/skip.conf"
    try_change config VIGIL_CC_CONFIG="$WORK/skip.conf" --
    printf '[skip]\nfun:weigh1\n' >"$WORK/skip.conf"
    try_change config-contents VIGIL_CC_CONFIG="$WORK/skip.conf" --
    try_change optlevel -- -O1
    cp "$WORK/stale/config.h" config.h.orig
    sed -i 's/#define SCALE 3/#define SCALE 4/' "$WORK/stale/config.h"
    try_change header --
    cp config.h.orig "$WORK/stale/config.h"
    # back to the first key: a hit, the first object
    hits=$(counter "$c" hits)
    compile_unit "$c" back.log --
    [ "$(counter "$c" hits)" = $((hits + 1)) ] && cmp -s "$WORK/stale/u1.o" base.o || why+="the unchanged compile after the changes is not a hit with the first object; "
    # settings that cannot change the object share the entry
    hits=$(counter "$c" hits)
    compile_unit "$c" tmpdir.log TMPDIR="$WORK" --
    [ "$(counter "$c" hits)" = $((hits + 1)) ] || why+="TMPDIR changed the key; "

    # vigil-cc rebuilt: the same binary with another build id
    local id new alt=$WORK/alt lib f
    lib=$(cd "$(dirname "$VIGILCC")/../lib" && pwd)
    mkdir -p "$alt/bin" "$alt/lib"
    for f in "$lib"/*; do [ "$(basename "$f")" = vigil-cc-transform.so ] || ln -s "$f" "$alt/lib/"; done
    id=$("$VIGILCC" --version | sed -n 's/^vigil-cc .*(build \([0-9a-z]*\)).*/\1/p')
    new=$(echo "$id" | tr '0-9a-f' 'fedcba9876543210')
    # the driver and its transforming part, each with the other id (the driver refuses a part of
    # another build: checked first)
    patch_id() {  # FROM TO
        python3 - "$1" "$2" "$id" "$new" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
old, new = sys.argv[3].encode(), sys.argv[4].encode()
assert data.count(old) >= 1 and len(old) == len(new)
open(sys.argv[2], "wb").write(data.replace(old, new))
EOF
    }
    if [ -n "$id" ] && patch_id "$VIGILCC" "$alt/bin/vigil-cc"; then
        chmod +x "$alt/bin/vigil-cc"
        ln -s "$lib/vigil-cc-transform.so" "$alt/lib/vigil-cc-transform.so"
        (cd "$WORK/stale" && VIGIL_CC_CACHE=0 "$alt/bin/vigil-cc" -O2 -c u1.c -o alt.o) >alt-refused.log 2>&1 &&
            why+="a driver with a transforming part of another build compiles; "
        grep -qF "vigil-cc-transform.so is of another build ($id; vigil-cc is $new)" alt-refused.log ||
            why+="no message for a transforming part of another build: $(oneline alt-refused.log 160); "
        rm "$alt/lib/vigil-cc-transform.so"
        patch_id "$lib/vigil-cc-transform.so" "$alt/lib/vigil-cc-transform.so" || why+="cannot patch the transforming part; "
        if [ "$("$alt/bin/vigil-cc" --version | grep -c "build $new")" != 0 ]; then
            local saved=$VIGILCC
            VIGILCC=$alt/bin/vigil-cc
            try_change build-id same --
            VIGILCC=$saved
        else
            why+="the patched vigil-cc does not show build $new; "
        fi
    else
        why+="cannot make a vigil-cc with another build id (id '$id'); "
    fi
    if [ -z "$why" ]; then pass cache/no-stale; else fail cache/no-stale "$why"; fi

    # another LLVM: the LLVM 15 build of the same sources (tests/llvm-versions.sh makes it)
    local v15=$ROOT/build-llvm15/bin/vigil-cc
    if [ -x "$v15" ] && command -v clang-15 >/dev/null && [ "$("$v15" --vigil-help 2>/dev/null | grep -c VIGIL_CC_CACHE_DIR)" != 0 ] &&
       [ "$("$v15" --version | sed -n 's/.*(build \(.*\)).*/\1/p')" = "$id" ]; then
        why=""
        local saved=$VIGILCC
        VIGILCC=$v15
        try_change llvm15 same --
        VIGILCC=$saved
        if [ -z "$why" ]; then pass cache/no-stale-llvm; else fail cache/no-stale-llvm "$why"; fi
    else
        skip cache/no-stale-llvm "no up-to-date build-llvm15 (make B=build-llvm15 LLVM_CONFIG=llvm-config-15)"
    fi
}


# ---- direct mode: manifests instead of the preprocessor, and never a stale hit ----
# dcompile NAME [VAR=VALUE...] -- [args]: compiles src/main.c of the direct project into main.o
# (-MD), logs in NAME.log; then the same without the cache into off.o, for comparison.
dcompile() {
    local name=$1 envs=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    (cd "$WORK/direct" && env VIGIL_CC_CACHE_DIR="$WORK/c-direct" VIGIL_CC_VERBOSE=1 "${envs[@]}" \
        "$VIGILCC" -O2 -Iinc1 -Iinc2 -MD -c src/main.c -o main.o "$@") >"$name.log" 2>&1 || return 1
    cp "$WORK/direct/main.o" "$name.o"; cp "$WORK/direct/main.d" "$name.d"
    (cd "$WORK/direct" && env "${envs[@]}" VIGIL_CC_CACHE=0 "$VIGILCC" -O2 -Iinc1 -Iinc2 -MD -c src/main.c -o off.o "$@" &&
        sed 's/^off\.o:/main.o:/' off.d >"$WORK/$name-off.d") >/dev/null 2>&1
    cp "$WORK/direct/off.o" "$name-off.o"
}
old() { touch -d '-1 min' "$@"; }   # older than the compile by more than a second: recorded

check_direct() {
    local c=$WORK/c-direct why="" d=$WORK/direct hits direct name
    mkdir -p "$d/src" "$d/inc1" "$d/inc2"
    printf '#define A 1\n' >"$d/src/a.h"
    printf '#ifndef B\n#define B 2\n#endif\n' >"$d/inc2/b.h"
    cat >"$d/src/main.c" <<'EOF'
#include <stdio.h>
#include "a.h"
#include <b.h>
int f(int x) { return x * A + B; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", f(argc)); return 0; }
EOF
    old "$d"/src/* "$d"/inc2/*
    # same: the result equals the compile without the cache (object and .d)
    same() {  # NAME
        cmp -s "$1.o" "$1-off.o" || why+="$1: the object differs from a compile without the cache; "
        cmp -s "$1.d" "$1-off.d" || why+="$1: the dependency file differs from clang's: $(oneline "$1.d" 100); "
    }
    # expect NAME hit|direct|miss: what the last compile was
    expect() {
        local name=$1 want=$2 h d m
        h=$(counter "$c" hits); d=$(counter "$c" direct_hits); m=$(counter "$c" misses)
        case $want in
            direct) [ "$d" = $((direct + 1)) ] && [ "$h" = $((hits + 1)) ] || why+="$name: not a direct hit ($(grep -m1 'direct:' "$name.log" | cut -c1-120)); " ;;
            hit) [ "$d" = "$direct" ] && [ "$h" = $((hits + 1)) ] || why+="$name: not a hit after preprocessing (hits $hits -> $h, direct $direct -> $d); " ;;
            miss) [ "$h" = "$hits" ] || why+="$name: a hit (stale: hits $hits -> $h, direct $direct -> $d); " ;;
        esac
        hits=$h; direct=$d
    }
    hits=0; direct=0
    dcompile first -- || { fail cache/direct "first compile fails: $(oneline first.log)"; return; }
    expect first miss; same first
    grep -q 'direct: manifest' first.log || why+="first: no manifest written: $(grep -m1 'direct:' first.log | cut -c1-120); "
    dcompile again -- && expect again direct; same again
    grep -q 'run: .* -E ' again.log && why+="again: the direct hit ran the preprocessor; "
    # a header changes: preprocessed again, a miss
    printf '#define A 5\n' >"$d/src/a.h"; old "$d/src/a.h"
    dcompile header -- && expect header miss; same header
    dcompile header-again -- && expect header-again direct; same header-again
    # a new header in an earlier -I directory shadows inc2/b.h
    printf '#define B 7\n' >"$d/inc1/b.h"; old "$d/inc1/b.h" "$d/inc1"
    dcompile shadow -- && expect shadow miss; same shadow
    cmp -s shadow.o header.o && why+="shadow: the object is the shadowed header's; "
    rm "$d/inc1/b.h"
    dcompile unshadow -- && expect unshadow hit; same unshadow
    # a -D, the configuration, vigil-cc's settings: other keys
    dcompile define -- -DB=9 && expect define miss; same define
    printf '[skip]\nfun:f\n' >"$WORK/direct.conf"
    dcompile config VIGIL_CC_CONFIG="$WORK/direct.conf" -- && expect config miss; same config
    printf '[skip]\nfun:main\n' >"$WORK/direct.conf"
    dcompile config2 VIGIL_CC_CONFIG="$WORK/direct.conf" -- && expect config2 miss; same config2
    dcompile setting VIGIL_CC_PROBE_BRANCHES=0 -- && expect setting miss; same setting
    # the dependency file names the output: another -o is another direct key
    (cd "$d" && VIGIL_CC_CACHE_DIR=$c "$VIGILCC" -O2 -Iinc1 -Iinc2 -MD -c src/main.c -o other.o) >other.log 2>&1
    grep -q '^other.o:' "$d/other.d" || why+="other: the dependency file names $(cut -d: -f1 "$d/other.d"); "
    hits=$(counter "$c" hits); direct=$(counter "$c" direct_hits)
    # a damaged manifest: one message, preprocessed (a hit), the manifest written again
    local manifest
    manifest=$(grep -l "src/main.c$" "$c"/*/*.manifest | head -n1)
    dcompile before-damage -- && expect before-damage direct
    manifest=$(ls -t "$c"/*/*.manifest | head -n1)
    sed -i 's/^file \([0-9]*\) \(.\)/file \1 0/' "$manifest"
    (cd "$d" && VIGIL_CC_CACHE_DIR=$c "$VIGILCC" -O2 -Iinc1 -Iinc2 -MD -c src/main.c -o main.o) >damaged.log 2>&1 ||
        why+="damaged: the compile fails; "
    [ "$(grep -c 'cache manifest .* is damaged (the checksum does not match); preprocessing src/main.c' damaged.log)" = 1 ] &&
        [ "$(wc -l <damaged.log)" = 1 ] || why+="damaged: expected one message, got: $(oneline damaged.log 160); "
    expect damaged hit
    cmp -s "$d/main.o" before-damage.o || why+="damaged: the object differs; "
    dcompile after-damage -- && expect after-damage direct
    # __DATE__: never a manifest
    printf '#include "a.h"\nconst char *when(void) { return __DATE__; }\n' >"$d/src/date.c"; old "$d/src/date.c"
    (cd "$d" && VIGIL_CC_CACHE_DIR=$c VIGIL_CC_VERBOSE=1 "$VIGILCC" -O2 -c src/date.c -o date.o) >date.log 2>&1
    grep -q 'no manifest for src/date.c: a file read uses __DATE__' date.log || why+="date: $(grep -m1 'direct' date.log | cut -c1-120); "
    # a file changed less than a second ago: no manifest (it may have changed during the compile)
    printf '#define A 6\n' >"$d/src/a.h"
    dcompile fresh -- && expect fresh miss; same fresh
    grep -q 'no manifest for src/main.c: a file read changed less than a second before' fresh.log || why+="fresh: $(grep -m1 'direct' fresh.log | cut -c1-120); "
    # VIGIL_CC_CACHE_DIRECT=0: the preprocessor every time
    old "$d/src/a.h"
    dcompile pre -- && expect pre hit
    dcompile nodirect VIGIL_CC_CACHE_DIRECT=0 -- && expect nodirect hit; same nodirect
    [ "$(counter "$c" damaged)" = 1 ] || why+="$(counter "$c" damaged) damaged counted, expected 1; "
    if [ -z "$why" ]; then pass cache/direct; else fail cache/direct "$why"; fi
}

# ---- two make -j2 sharing one cache at once ----
check_parallel() {
    local c=$WORK/c-par why="" round d
    mkdir -p "$WORK/par"
    cp -a "$WORK/proj" "$WORK/par/a"
    cp -a "$WORK/proj" "$WORK/par/b"
    (cd "$WORK/par/a" && VIGIL_CC_CACHE=0 make -j2 CC="$VIGILCC" >ref.log 2>&1 && ./prog 1500 >../ref.out && mkdir ref && cp ./*.o ref/ && make clean >/dev/null) ||
        { fail cache/parallel "reference build fails"; return; }
    for round in 1 2 3; do
        # the same keys from both (base directory): both write and read the same entries
        for d in a b; do
            (cd "$WORK/par/$d" && make clean >/dev/null &&
             VIGIL_CC_CACHE_DIR=$c VIGIL_CC_CACHE_BASEDIR=$WORK/par make -j2 CC="$VIGILCC" >build$round.log 2>&1) &
        done
        wait
        for d in a b; do
            if ! [ -x "$WORK/par/$d/prog" ]; then
                why+="round $round: build in $d fails: $(oneline "$WORK/par/$d/build$round.log" 160); "
                continue
            fi
            "$WORK/par/$d/prog" 1500 >"$d.out" 2>&1
            cmp -s "$d.out" "$WORK/par/ref.out" || why+="round $round: $d's program prints '$(oneline "$d.out" 60)'; "
            grep -q 'damaged\|warning' "$WORK/par/$d/build$round.log" && why+="round $round: $(grep -m1 'damaged\|warning' "$WORK/par/$d/build$round.log" | cut -c1-120); "
        done
    done
    local looked=$(( $(counter "$c" hits) + $(counter "$c" misses) ))
    [ "$looked" = $((3 * 2 * NUNITS)) ] || why+="hits + misses = $looked, expected $((3 * 2 * NUNITS)); "
    [ "$(counter "$c" entries)" = $NUNITS ] || why+="$(counter "$c" entries) entries, expected $NUNITS; "
    [ "$(counter "$c" hits)" -ge $((2 * 2 * NUNITS)) ] || why+="only $(counter "$c" hits) hits in rounds 2 and 3; "
    [ "$(counter "$c" damaged)" = 0 ] || why+="$(counter "$c" damaged) damaged entries; "
    # direct mode: rounds 2 and 3 find their manifests (written by either build)
    [ "$(counter "$c" direct_hits)" -ge $((2 * NUNITS)) ] || why+="only $(counter "$c" direct_hits) direct hits in rounds 2 and 3; "
    ls -d "$c"/*/*.tmp.* >/dev/null 2>&1 && why+="temporary entries left: $(ls -d "$c"/*/*.tmp.* | head -n1); "
    if [ -z "$why" ]; then pass cache/parallel; else fail cache/parallel "$why"; fi
}

# ---- a damaged entry: a miss with one message, a correct object, the entry replaced ----
check_corrupt() {
    local c=$WORK/c-bad why="" what file entry
    mkdir -p "$WORK/bad" && cp "$WORK/proj"/*.c "$WORK/proj"/*.h "$WORK/bad/"
    (cd "$WORK/bad" && VIGIL_CC_CACHE_DIR=$c "$VIGILCC" -O2 -c u2.c -o good.o) || { fail cache/corrupt "compile fails"; return; }
    for what in object meta stderr; do
        entry=$(dirname "$(find "$c" -name meta.txt | head -n1)")
        case $what in
            object) file=$entry/object.o; printf 'DAMAGEDDAMAGED' | dd of="$file" bs=1 seek=300 conv=notrunc 2>/dev/null ;;
            meta) file=$entry/meta.txt; sed -i 's/^source u2.c$/source u9.c/' "$file" ;;
            stderr) file=$entry/stderr.txt; echo "a warning nobody printed" >>"$file" ;;
        esac
        (cd "$WORK/bad" && VIGIL_CC_CACHE_DIR=$c "$VIGILCC" -O2 -c u2.c -o u2.o) >"bad-$what.log" 2>&1 ||
            { why+="$what: the compile fails: $(oneline "bad-$what.log" 120); "; continue; }
        [ "$(grep -c 'is damaged' "bad-$what.log")" = 1 ] && [ "$(wc -l <"bad-$what.log")" = 1 ] ||
            why+="$what: expected one message, got: $(oneline "bad-$what.log" 160); "
        cmp -s "$WORK/bad/u2.o" "$WORK/bad/good.o" || why+="$what: the object differs from the good one; "
        (cd "$WORK/bad" && VIGIL_CC_CACHE_DIR=$c "$VIGILCC" -O2 -c u2.c -o u2b.o) >"bad-$what-2.log" 2>&1
        [ -s "bad-$what-2.log" ] && why+="$what: the next compile prints $(oneline "bad-$what-2.log" 80); "
        cmp -s "$WORK/bad/u2b.o" "$WORK/bad/good.o" || why+="$what: the object of the replaced entry differs; "
    done
    [ "$(counter "$c" damaged)" = 3 ] || why+="$(counter "$c" damaged) damaged counted, expected 3; "
    [ "$(counter "$c" hits)" = 3 ] || why+="$(counter "$c" hits) hits after the replacements, expected 3; "
    if [ -z "$why" ]; then pass cache/corrupt; else fail cache/corrupt "$why"; fi
}

# ---- a full cache evicts the least recently used ----
check_evict() {
    local c=$WORK/c-evict why="" i size limit
    mkdir -p "$WORK/ev" && cp "$WORK/proj"/*.c "$WORK/proj"/*.h "$WORK/ev/"
    ev_compile() { (cd "$WORK/ev" && VIGIL_CC_CACHE_DIR=$c VIGIL_CC_CACHE_MAX_SIZE=${limit:-0} "$VIGILCC" -O2 -c "$1.c" -o "$1.o") >"ev-$1.log" 2>&1; }
    # u4, u5, u6 are alike: entries of about one size
    limit=0
    ev_compile u4 && size=$(counter "$c" bytes) || { fail cache/evict "compile fails: $(oneline ev-u4.log)"; return; }
    limit=$((size * 36 / 10))   # room for 3.6 entries; eviction goes down to 90%: 3.24
    ev_compile u5; ev_compile u6
    [ "$(counter "$c" entries)" = 3 ] || why+="$(counter "$c" entries) entries before the limit, expected 3; "
    sleep 0.05; ev_compile u4   # a hit: u4 is now the most recently used, u5 the least
    [ "$(counter "$c" hits)" = 1 ] || why+="the second compile of u4 is not a hit; "
    sleep 0.05; ev_compile u1   # over the limit: u5 goes
    [ "$(counter "$c" entries)" = 3 ] || why+="$(counter "$c" entries) entries after the eviction, expected 3; "
    [ "$(counter "$c" evicted)" = 1 ] || why+="$(counter "$c" evicted) evicted, expected 1; "
    "$VIGIL" cache show --dir "$c" u5.c >/dev/null 2>&1 && why+="u5.c (least recently used) is still there; "
    for i in u4 u6 u1; do
        "$VIGIL" cache show --dir "$c" $i.c >/dev/null 2>&1 || why+="$i.c was evicted; "
    done
    [ "$(counter "$c" bytes)" -le "$limit" ] || why+="$(counter "$c" bytes) bytes over the limit $limit; "
    if [ -z "$why" ]; then pass cache/evict; else fail cache/evict "$why"; fi
}

# ---- another build directory under the same VIGIL_CC_CACHE_BASEDIR hits ----
check_basedir() {
    local c=$WORK/c-base why="" p f objs
    for p in p1 p2; do
        mkdir -p "$WORK/base/$p/src" "$WORK/base/$p/build"
        cp "$WORK/proj"/*.c "$WORK/proj"/*.h "$WORK/base/$p/src/"
    done
    build_abs() {  # P CACHE-ENV...: absolute paths everywhere, as CMake writes them
        local p=$1 src=$WORK/base/$1/src
        shift
        (cd "$WORK/base/$p/build" && rm -f ./*.o prog &&
         for f in main u1 u2 u3 u4 u5 u6; do env "$@" "$VIGILCC" -O2 -g -I"$src" -c "$src/$f.c" -o "$f.o" || exit 1; done &&
         "$VIGILCC" -O2 -g -o prog ./*.o) >"base-$p.log" 2>&1
    }
    build_abs p1 VIGIL_CC_CACHE_DIR="$c" VIGIL_CC_CACHE_BASEDIR="$WORK/base" || { fail cache/basedir "build in p1 fails: $(oneline base-p1.log)"; return; }
    build_abs p2 VIGIL_CC_CACHE_DIR="$c" VIGIL_CC_CACHE_BASEDIR="$WORK/base" || { fail cache/basedir "build in p2 fails: $(oneline base-p2.log)"; return; }
    [ "$(counter "$c" misses)" = $NUNITS ] || why+="$(counter "$c" misses) misses, expected $NUNITS (p1's); "
    [ "$(counter "$c" hits)" = $NUNITS ] || why+="$(counter "$c" hits) hits, expected $NUNITS (p2's); "
    for f in "$WORK/base/p1/build"/*.o; do
        cmp -s "$f" "$WORK/base/p2/build/$(basename "$f")" || why+="$(basename "$f") differs between p1 and p2; "
    done
    "$WORK/base/p2/build/prog" 700 >p2.out 2>&1 && "$WORK/base/p1/build/prog" 700 >p1.out 2>&1 && cmp -s p1.out p2.out ||
        why+="the programs differ: $(oneline p1.out 60) / $(oneline p2.out 60); "
    # debug info and the site table name relative paths and the directory '.'
    "$VIGIL" sites "$WORK/base/p2/build/prog" >base.sites 2>&1
    sed 1d base.sites | grep -q "$WORK" && why+="the site table names $WORK: $(sed 1d base.sites | grep -m1 "$WORK" | cut -c1-100); "
    grep -q '\.\./src/u1\.c' base.sites || why+="the site table does not name ../src/u1.c; "
    if command -v readelf >/dev/null; then
        readelf --debug-dump=info "$WORK/base/p2/build/u1.o" >base.dwarf 2>/dev/null
        grep -q "DW_AT_comp_dir.*$WORK" base.dwarf && why+="debug info names the build directory; "
        grep -qE 'DW_AT_comp_dir.*: \.$' base.dwarf || why+="debug info does not name the directory '.': $(grep -m1 comp_dir base.dwarf); "
    fi
    # without the base directory the directories' names are in the key: no hit across them
    local c2=$WORK/c-nobase
    build_abs p1 VIGIL_CC_CACHE_DIR="$c2" && build_abs p2 VIGIL_CC_CACHE_DIR="$c2"
    [ "$(counter "$c2" hits)" = 0 ] || why+="without VIGIL_CC_CACHE_BASEDIR p2 hits p1's entries ($(counter "$c2" hits)); "
    if [ -z "$why" ]; then pass cache/basedir; else fail cache/basedir "$why"; fi
}

# ---- warnings, dependency files, what the cache does not take, clear ----
check_details() {
    local c=$WORK/c-misc why="" clang
    mkdir -p "$WORK/misc" && cd "$WORK/misc" || return
    cat >w.c <<'EOF'
#include <stdio.h>
#include "w.h"
#warning "a preprocessor warning"
int f(int x) { int unused; if (x = W) return 1; return 0; }
int main(void) { printf("%d\n", f(2)); return 0; }
EOF
    echo '#define W 3' >w.h
    VIGIL_CC_CACHE_DIR=$c "$VIGILCC" -Wall -MMD -MP -c w.c -o w.o 2>miss.err || why+="compile fails: $(oneline miss.err); "
    cp w.d miss.d; rm -f w.d w.o
    VIGIL_CC_CACHE_DIR=$c "$VIGILCC" -Wall -MMD -MP -c w.c -o w.o 2>hit.err || why+="compile (hit) fails; "
    [ "$(counter "$c" hits)" = 1 ] || why+="second compile is not a hit; "
    [ "$(grep -c 'warning: "a preprocessor warning"' miss.err)" = 1 ] ||
        why+="the #warning is printed $(grep -c 'warning: "a preprocessor warning"' miss.err) times on a miss; "
    grep -q 'unused variable' miss.err || why+="no -Wall warning on a miss; "
    cmp -s miss.err hit.err || why+="a hit prints other warnings than the miss: $(oneline hit.err 100); "
    clang=$(VIGIL_CC_VERBOSE=1 "$VIGILCC" -dumpversion 2>&1 >/dev/null | sed -n 's/^vigil-cc: run: \([^ ]*\) -dumpversion$/\1/p' | head -n1)
    "$clang" -Wall -MMD -MP -c w.c -o w.o 2>/dev/null; mv w.d clang.d
    cmp -s miss.d clang.d || why+="the .d of a miss differs from clang's; "
    [ -f w.d ] || true
    VIGIL_CC_CACHE_DIR=$c "$VIGILCC" -Wall -MMD -MP -c w.c -o w.o 2>/dev/null
    cmp -s w.d clang.d || why+="the .d of a hit differs from clang's; "
    VIGIL_CC_CACHE_DIR=$c "$VIGILCC" -Wall -MD -MT custom-target -c w.c -o other.o 2>/dev/null
    grep -q '^custom-target:' other.d || why+="-MT on a hit: $(head -c 80 other.d); "
    # -S is compiled, not cached; VIGIL_CC_CACHE=0 leaves the cache alone
    VIGIL_CC_CACHE_DIR=$c "$VIGILCC" -S w.c -o w.s 2>/dev/null && [ -s w.s ] || why+="-S fails; "
    [ "$(counter "$c" uncached)" = 1 ] || why+="-S counted $(counter "$c" uncached) uncached, expected 1; "
    local before
    before=$(counter "$c" hits)/$(counter "$c" misses)
    VIGIL_CC_CACHE=0 VIGIL_CC_CACHE_DIR=$c "$VIGILCC" -Wall -c w.c -o w.o 2>/dev/null
    [ "$(counter "$c" hits)/$(counter "$c" misses)" = "$before" ] || why+="VIGIL_CC_CACHE=0 counted; "
    # a compile error is not stored
    echo 'int broken(void) { return nosuch; }' >bad.c
    VIGIL_CC_CACHE_DIR=$c "$VIGILCC" -c bad.c -o bad.o 2>bad.err && why+="a compile error succeeds; "
    grep -q "nosuch" bad.err || why+="the error is not shown: $(oneline bad.err 80); "
    "$VIGIL" cache show --dir "$c" bad.c >/dev/null 2>&1 && why+="a failed compile was stored; "
    # clear
    "$VIGIL" cache clear --dir "$c" >clear.out || why+="vigil cache clear fails; "
    [ "$(counter "$c" entries)" = 0 ] || why+="$(counter "$c" entries) entries after clear; "
    [ "$(counter "$c" hits)" -ge 1 ] || why+="clear zeroed the counters; "
    VIGIL_CC_CACHE_DIR=$c "$VIGILCC" -Wall -c w.c -o w.o 2>/dev/null
    [ "$(counter "$c" entries)" = 1 ] || why+="no entry after clear and a compile; "
    "$VIGIL" cache clear --stats --dir "$c" >/dev/null && [ "$(counter "$c" hits)" = 0 ] || why+="clear --stats keeps the counters; "
    "$VIGIL" cache --dir "$c" >summary.txt && grep -q '^hits' summary.txt && grep -q '^entries' summary.txt ||
        why+="vigil cache prints: $(oneline summary.txt 100); "
    # the default directory: under XDG_CACHE_HOME
    (cd "$WORK/misc" && XDG_CACHE_HOME=$WORK/xdg "$VIGILCC" -c w.c -o w.o 2>/dev/null)
    [ -d "$WORK/xdg/vigil" ] && [ "$(counter "$WORK/xdg/vigil" entries)" = 1 ] ||
        why+="no entry in \$XDG_CACHE_HOME/vigil; "
    cd "$WORK" || return
    if [ -z "$why" ]; then pass cache/details; else fail cache/details "$why"; fi
}

check_sha256
check_help
check_warm_rebuild
check_stale
check_direct
check_parallel
check_corrupt
check_evict
check_basedir
check_details
exit $status
