# Sourced by tests/real/run.sh and bench/run.sh: fetches Debian source packages into a cache
# directory outside the repository and builds each program twice (plain clang, vigil-cc).
#
#   VIGIL_REAL_DIR  cache directory (default /var/tmp/vigil-real); sources in src/, builds in
#                   build/<variant>/<package>/
#   VIGILCC         compiler for the vigil variant (default: build/bin/vigil-cc of this repo)
#   PLAINCC         compiler for the plain variant (default: clang)
#   REAL_CFLAGS     flags of both variants (default: -O2 -gdwarf-4; DWARF 4 for valgrind)
#
# Functions: real_fetch PKG, real_build PKG VARIANT (plain|vigil) -> prints the binary path.

REPO_ROOT=${REPO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
VIGIL_REAL_DIR=${VIGIL_REAL_DIR:-/var/tmp/vigil-real}
VIGILCC=${VIGILCC:-$REPO_ROOT/build/bin/vigil-cc}
PLAINCC=${PLAINCC:-clang}
REAL_CFLAGS=${REAL_CFLAGS:--O2 -gdwarf-4}

real_log() { echo "real: $*" >&2; }
real_die() { echo "real: error: $*" >&2; exit 2; }

# Debian source package name of each program we build.
real_source_package() {
    case "$1" in
        bzip2) echo bzip2 ;;
        lua) echo lua5.4 ;;
        sqlite3) echo sqlite3 ;;
        bc) echo bc ;;
        gzip) echo gzip ;;
        xz) echo xz-utils ;;
        zstd) echo libzstd ;;
        jq) echo jq ;;
        mawk) echo mawk ;;
        cpio) echo cpio ;;
        *) real_die "unknown program $1" ;;
    esac
}

# Make sure apt knows a deb-src line for the configured mirror, so that `apt-get source` works.
real_ensure_deb_src() {
    if grep -rqsE '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)' \
            /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
        return 0
    fi
    [ "$(id -u)" = 0 ] || real_die "no deb-src entry in the apt sources and not root: add one for your mirror (e.g. 'deb-src http://deb.debian.org/debian bookworm main')"
    local stanza_file stanza
    # deb822 style (Debian 12+): copy the first non-security stanza, with Types: deb-src, so
    # that its options (Signed-By, ...) agree with the existing entry.
    for stanza_file in /etc/apt/sources.list.d/*.sources; do
        [ -f "$stanza_file" ] || continue
        stanza=$(awk 'BEGIN { RS = ""; FS = "\n" }
                      /(^|\n)Types:[^\n]*deb/ && !/-security/ && !/(^|\n)Enabled: *no/ { print; exit }' "$stanza_file" \
                 | sed -E 's/^Types:.*/Types: deb-src/')
        if [ -n "$stanza" ]; then
            real_log "adding a deb-src entry (copy of the first entry of $stanza_file) as /etc/apt/sources.list.d/vigil-deb-src.sources"
            printf '%s\n' "$stanza" > /etc/apt/sources.list.d/vigil-deb-src.sources
            break
        fi
    done
    # one-line style: copy the first non-security "deb" line as "deb-src".
    if [ -z "${stanza:-}" ]; then
        local line
        line=$(grep -hsE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
               | grep -v -- '-security' | head -n1 || true)
        if [ -z "$line" ]; then
            line="deb http://deb.debian.org/debian $(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}") main"
        fi
        line=$(echo "$line" | sed -E 's/^[[:space:]]*deb[[:space:]]/deb-src /')
        real_log "adding '$line' as /etc/apt/sources.list.d/vigil-deb-src.list"
        echo "$line" > /etc/apt/sources.list.d/vigil-deb-src.list
    fi
    apt-get update -q >&2 || real_die "apt-get update failed"
}

# Unpacked source tree of PKG (a directory under $VIGIL_REAL_DIR/src), fetched once.
real_fetch() {
    local prog=$1 srcpkg dir
    srcpkg=$(real_source_package "$prog")
    mkdir -p "$VIGIL_REAL_DIR/src"
    dir=$(find "$VIGIL_REAL_DIR/src" -mindepth 1 -maxdepth 1 -type d -name "$srcpkg-[0-9]*" 2>/dev/null | sort | tail -n1)
    if [ -z "$dir" ]; then
        exec 8>"$VIGIL_REAL_DIR/src/.fetch.lock"
        flock 8
        dir=$(find "$VIGIL_REAL_DIR/src" -mindepth 1 -maxdepth 1 -type d -name "$srcpkg-[0-9]*" | sort | tail -n1)
    fi
    if [ -z "$dir" ]; then
        command -v dpkg-source >/dev/null || real_die "dpkg-source missing: apt-get install dpkg-dev"
        real_ensure_deb_src
        real_log "fetching Debian source of $srcpkg"
        (cd "$VIGIL_REAL_DIR/src" && apt-get source -q "$srcpkg" >&2) \
            || real_die "apt-get source $srcpkg failed"
        dir=$(find "$VIGIL_REAL_DIR/src" -mindepth 1 -maxdepth 1 -type d -name "$srcpkg-[0-9]*" | sort | tail -n1)
        [ -n "$dir" ] || real_die "apt-get source $srcpkg left no directory"
    fi
    exec 8>&-
    echo "$dir"
}

# Identity of a compiler for build caching: its path and a hash of the driver (and, for
# vigil-cc, of the runtime library it links in).
real_compiler_identity() {
    local cc=$1 path
    path=$(command -v "$cc" 2>/dev/null || echo "$cc")
    # Content only (not the path), so that a copy of the same compiler (bench/run.py runs a
    # snapshot of build/) reuses the same builds.
    {
        sha1sum <"$path" 2>/dev/null || true
        if [ "$(basename "$path")" = vigil-cc ]; then
            cat "$(dirname "$path")"/../lib/libvigil.a "$(dirname "$path")"/../lib/libvigil_common.a 2>/dev/null | sha1sum
        fi
        "$path" --version 2>/dev/null | head -n1 || true
        # vigil-cc settings change the code it emits: a build with other settings is another build.
        env | grep '^VIGIL_CC_' | sort || true
    } | sha1sum | cut -c1-16
}

real_variant_cc() {
    case "$1" in
        plain) echo "$PLAINCC" ;;
        vigil) echo "$VIGILCC" ;;
        *) real_die "unknown variant $1 (plain or vigil)" ;;
    esac
}

# Compile the given C files (paths relative to the current directory) into objects next to
# them, two at a time; stops at the first failure.
real_compile_each() {
    local cc=$1 flags=$2; shift 2
    printf '%s\n' "$@" | xargs -P2 -I{} sh -c 'f={}; exec '"$cc"' '"$flags"' -c "$f" -o "${f%.c}.o"'
}

# Per-package build recipes. Run in an empty build directory $1 with CC=$2; they leave the
# program at the path printed by real_binary_path.
real_recipe_bzip2() {
    local dir=$1 cc=$2 src
    src=$(real_fetch bzip2)
    cp "$src"/*.c "$src"/*.h "$dir"/
    cd "$dir"
    real_compile_each "$cc" "$REAL_CFLAGS -D_FILE_OFFSET_BITS=64" \
        blocksort.c huffman.c crctable.c randtable.c compress.c decompress.c bzlib.c bzip2.c
    $cc $REAL_CFLAGS -o bzip2 blocksort.o huffman.o crctable.o randtable.o compress.o \
        decompress.o bzlib.o bzip2.o
}

real_recipe_lua() {
    local dir=$1 cc=$2 src f files=()
    src=$(real_fetch lua)
    cp "$src"/src/*.c "$src"/src/*.h "$dir"/
    cd "$dir"
    rm -f luac.c
    # Debian's luaconf.h includes a header that debian/rules generates.
    echo "#define DEB_HOST_MULTIARCH \"$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)\"" > lua5.4-deb-multiarch.h
    for f in *.c; do files+=("$f"); done
    real_compile_each "$cc" "-std=gnu99 $REAL_CFLAGS -DLUA_COMPAT_5_3 -DLUA_USE_LINUX" "${files[@]}"
    $cc $REAL_CFLAGS -Wl,-E -o lua ./*.o -lm -ldl
}

# The sqlite3 amalgamation (sqlite3.c, shell.c) is generated once from the source tree, with
# plain clang and tclsh; both variants then compile the same two files.
real_sqlite_amalgamation() {
    local src gen=$VIGIL_REAL_DIR/build/sqlite3-amalgamation
    src=$(real_fetch sqlite3)
    mkdir -p "$VIGIL_REAL_DIR/build"
    exec 7>"$VIGIL_REAL_DIR/build/.sqlite3-amalgamation.lock"
    flock 7
    if [ ! -f "$gen/sqlite3.c" ] || [ ! -f "$gen/shell.c" ]; then
        command -v tclsh >/dev/null || real_die "tclsh missing (needed to generate the sqlite3 amalgamation): apt-get install tcl"
        real_log "generating the sqlite3 amalgamation in $gen"
        rm -rf "$gen" && mkdir -p "$gen"
        (cd "$gen" && "$src"/configure CC="$PLAINCC" --disable-tcl >configure.log 2>&1 \
            && make -j2 sqlite3.c shell.c >make.log 2>&1) \
            || real_die "generating the sqlite3 amalgamation failed: see $gen/configure.log, $gen/make.log"
    fi
    exec 7>&-
    echo "$gen"
}

real_recipe_sqlite3() {
    local dir=$1 cc=$2 gen
    gen=$(real_sqlite_amalgamation)
    cp "$gen"/sqlite3.c "$gen"/shell.c "$gen"/sqlite3.h "$dir"/
    [ -f "$gen/sqlite3ext.h" ] && cp "$gen/sqlite3ext.h" "$dir"/
    cd "$dir"
    real_compile_each "$cc" "$REAL_CFLAGS -DSQLITE_THREADSAFE=1 -DSQLITE_ENABLE_MATH_FUNCTIONS" sqlite3.c shell.c
    $cc $REAL_CFLAGS -o sqlite3 shell.o sqlite3.o -lpthread -ldl -lm
}

# Debian's patches leave some autotools inputs newer than their outputs; make them older so
# that make does not try to run automake/autoconf (not needed, maybe not installed).
real_autotools_settle() {
    find . -name aclocal.m4 -exec touch -d '2000-01-01' {} +
    find . \( -name configure.ac -o -name configure.in -o -name Makefile.am -o -name '*.m4' -o -name '*.mk' \) \
        ! -name aclocal.m4 -exec touch -d '1999-01-01' {} +
    find . \( -name configure -o -name Makefile.in -o -name config.h.in -o -name config.hin \) \
        -exec touch -d '2001-01-01' {} +
}

# Autotools packages: copy the tree, configure with CC, make only the program.
real_recipe_bc() {
    local dir=$1 cc=$2 src
    src=$(real_fetch bc)
    cp -a "$src"/. "$dir"/
    cd "$dir"
    real_autotools_settle
    # Keep the shipped generated parser and scanner (no bison/flex needed).
    touch bc/bc.c bc/bc.h bc/scan.c
    ./configure CC="$cc" CFLAGS="$REAL_CFLAGS" >configure.log 2>&1 || { tail -n 30 config.log >&2; return 1; }
    make -C lib >make.log 2>&1 && make -C bc >>make.log 2>&1 || { tail -n 30 make.log >&2; return 1; }
}

real_recipe_gzip() {
    local dir=$1 cc=$2 src
    src=$(real_fetch gzip)
    cp -a "$src"/. "$dir"/
    cd "$dir"
    real_autotools_settle
    ./configure CC="$cc" CFLAGS="$REAL_CFLAGS" >configure.log 2>&1 || { tail -n 30 config.log >&2; return 1; }
    # Only the library and the program (the manual would need makeinfo).
    { make -j2 -C lib && make version.h && make -j2 gzip; } >make.log 2>&1 || { tail -n 30 make.log >&2; return 1; }
}

# Multithreaded programs (bench/race.sh): xz with POSIX threads and liblzma linked in
# statically (both built by the recipe's compiler), the zstd command with its library's
# multithreaded compression compiled in.
real_recipe_xz() {
    local dir=$1 cc=$2 src
    src=$(real_fetch xz)
    cp -a "$src"/. "$dir"/
    cd "$dir"
    # As unpacked, the generated files are newer than their inputs (real_autotools_settle
    # would leave the Makefile.inc files that Makefile.am includes newer than Makefile.in).
    ./configure CC="$cc" CFLAGS="$REAL_CFLAGS" --disable-shared --enable-threads=posix --disable-doc --disable-nls \
        --disable-scripts --disable-xzdec --disable-lzmadec --disable-lzmainfo --disable-lzma-links \
        >configure.log 2>&1 || { tail -n 30 config.log >&2; return 1; }
    { make -j2 -C src/liblzma && make -j2 -C src/xz; } >make.log 2>&1 || { tail -n 30 make.log >&2; return 1; }
}

real_recipe_zstd() {
    local dir=$1 cc=$2 src
    src=$(real_fetch zstd)
    cp -a "$src"/. "$dir"/
    cd "$dir"
    # CFLAGS replaces the Makefile's flags: keep its -O3 (what users get) unless REAL_CFLAGS
    # names an -O level; the program target adds -pthread -DZSTD_MULTITHREAD.
    local flags=$REAL_CFLAGS
    case " $flags " in *" -O"*) flags="${flags//-O[0-3s]/-O3}" ;; *) flags="-O3 $flags" ;; esac
    make -j2 -C programs zstd CC="$cc" CFLAGS="$flags" HAVE_ZLIB=0 HAVE_LZMA=0 HAVE_LZ4=0 >make.log 2>&1 \
        || { tail -n 30 make.log >&2; return 1; }
}

# jq: the Debian source has no generated configure (dh runs autoreconf): run it, then
# configure with the system oniguruma (libonig-dev) and keep the shipped parser and lexer.
real_recipe_jq() {
    local dir=$1 cc=$2 src
    src=$(real_fetch jq)
    cp -a "$src"/. "$dir"/
    cd "$dir"
    command -v autoreconf >/dev/null || real_die "autoreconf missing (jq's build): apt-get install autoconf automake libtool"
    autoreconf -fi >autoreconf.log 2>&1 || { tail -n 30 autoreconf.log >&2; return 1; }
    touch src/parser.c src/parser.h src/lexer.c src/lexer.h
    ./configure CC="$cc" CFLAGS="$REAL_CFLAGS" --disable-shared --disable-docs --disable-maintainer-mode \
        --with-oniguruma=yes >configure.log 2>&1 || { tail -n 30 config.log >&2; return 1; }
    { make src/builtin.inc src/version.h && make -j2 jq; } >make.log 2>&1 || { tail -n 30 make.log >&2; return 1; }
}

real_recipe_mawk() {
    local dir=$1 cc=$2 src
    src=$(real_fetch mawk)
    cp -a "$src"/. "$dir"/
    cd "$dir"
    real_autotools_settle
    touch parse.c parse.h
    ./configure CC="$cc" CFLAGS="$REAL_CFLAGS" >configure.log 2>&1 || { tail -n 30 config.log >&2; return 1; }
    make -j2 mawk >make.log 2>&1 || { tail -n 30 make.log >&2; return 1; }
}

real_recipe_cpio() {
    local dir=$1 cc=$2 src
    src=$(real_fetch cpio)
    cp -a "$src"/. "$dir"/
    cd "$dir"
    real_autotools_settle
    ./configure CC="$cc" CFLAGS="$REAL_CFLAGS" --disable-nls >configure.log 2>&1 || { tail -n 30 config.log >&2; return 1; }
    { make -j2 -C gnu && make -j2 -C lib && make -j2 -C src cpio; } >make.log 2>&1 || { tail -n 30 make.log >&2; return 1; }
}

real_binary_name() {  # PROG: the program's path inside its build directory
    case "$1" in
        bc) echo bc/bc ;;
        xz) echo src/xz/xz ;;
        zstd) echo programs/zstd ;;
        cpio) echo src/cpio ;;
        *) echo "$1" ;;
    esac
}

# Build PROG with VARIANT unless an up-to-date build exists. Every build lives in its own
# directory, build/<variant>/<prog>/<key>, where key hashes the compiler's identity, the flags
# and the recipe: several compiler versions (a test run and a benchmark on a snapshot, or two
# engineers' runs) never overwrite each other's builds. A lock serializes builds of one key.
# Prints the binary's path. Build directories unused for 3 days are removed.
real_build() {
    local prog=$1 variant=$2 cc dir key bin start end
    cc=$(real_variant_cc "$variant")
    [ -x "$(command -v "$cc" 2>/dev/null || echo "$cc")" ] || real_die "compiler $cc not found (make it first, or set VIGILCC)"
    key=$(echo "$(real_compiler_identity "$cc") $REAL_CFLAGS $(declare -f "real_recipe_$prog" | sha1sum)" | sha1sum | cut -c1-12)
    dir=$VIGIL_REAL_DIR/build/$variant/$prog/$key
    bin=$dir/$(real_binary_name "$prog")
    mkdir -p "$VIGIL_REAL_DIR/build/$variant/$prog"
    find "$VIGIL_REAL_DIR/build/$variant/$prog" -mindepth 1 -maxdepth 1 -type d -mtime +3 \
        -exec rm -rf {} + 2>/dev/null || true
    (
        flock 9
        if [ -f "$dir/.stamp" ] && [ -x "$bin" ]; then
            touch "$dir"
            exit 0
        fi
        real_fetch "$prog" >/dev/null
        [ "$prog" = sqlite3 ] && real_sqlite_amalgamation >/dev/null
        real_log "building $prog ($variant: $cc $REAL_CFLAGS) in $dir"
        rm -rf "$dir" && mkdir -p "$dir"
        start=$(date +%s.%N)
        if ! (set -e; "real_recipe_$prog" "$dir" "$cc") >"$dir.log" 2>&1; then
            echo "real: build of $prog ($variant) failed; last lines of $dir.log:" >&2
            tail -n 25 "$dir.log" >&2
            exit 1
        fi
        end=$(date +%s.%N)
        mv "$dir.log" "$dir/.build.log"
        python3 -c "print($end - $start)" >"$dir/.build_seconds" 2>/dev/null || true
        echo "$cc $REAL_CFLAGS" >"$dir/.stamp"
    ) 9>"$dir.lock" || return 1
    echo "$bin"
}

# A build in a cache directory of its own (an ASan build, say: the cache key would not tell it
# from the main build otherwise), sharing the fetched sources and the sqlite3 amalgamation with
# the main cache. usage: real_side_build CACHE_SUBDIR VARIANT EXTRA_CFLAGS PROG -> the binary.
real_side_build() {
    local main=$VIGIL_REAL_DIR
    (
        eval "$(declare -f real_fetch | sed '1s/^real_fetch /real_fetch_main /')"
        eval "$(declare -f real_sqlite_amalgamation | sed '1s/^real_sqlite_amalgamation /real_sqlite_amalgamation_main /')"
        real_fetch() { VIGIL_REAL_DIR=$main real_fetch_main "$@"; }
        real_sqlite_amalgamation() { VIGIL_REAL_DIR=$main real_sqlite_amalgamation_main "$@"; }
        mkdir -p "$main/$1/build"
        VIGIL_REAL_DIR=$main/$1 REAL_CFLAGS="$REAL_CFLAGS $3" real_build "$4" "$2"
    )
}
