# Sourced by tests/real/run.sh and bench/run.sh: fetches Debian source packages into a cache
# directory outside the repository and builds each program twice (plain clang, vigil-cc).
#
#   VIGIL_REAL_DIR  cache directory (default /var/tmp/vigil-real); sources in src/, builds in
#                   build/<variant>/<package>/
#   VIGILCC         compiler for the vigil variant (default: build/bin/vigil-cc of this repo)
#   PLAINCC         compiler for the plain variant (default: clang)
#   REAL_CFLAGS     optimization flags of both variants (default: -O2)
#
# Functions: real_fetch PKG, real_build PKG VARIANT (plain|vigil) -> prints the binary path.

REPO_ROOT=${REPO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
VIGIL_REAL_DIR=${VIGIL_REAL_DIR:-/var/tmp/vigil-real}
VIGILCC=${VIGILCC:-$REPO_ROOT/build/bin/vigil-cc}
PLAINCC=${PLAINCC:-clang}
REAL_CFLAGS=${REAL_CFLAGS:--O2}

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
        command -v dpkg-source >/dev/null || real_die "dpkg-source missing: apt-get install dpkg-dev"
        real_ensure_deb_src
        real_log "fetching Debian source of $srcpkg"
        (cd "$VIGIL_REAL_DIR/src" && apt-get source -q "$srcpkg" >&2) \
            || real_die "apt-get source $srcpkg failed"
        dir=$(find "$VIGIL_REAL_DIR/src" -mindepth 1 -maxdepth 1 -type d -name "$srcpkg-[0-9]*" | sort | tail -n1)
        [ -n "$dir" ] || real_die "apt-get source $srcpkg left no directory"
    fi
    echo "$dir"
}
