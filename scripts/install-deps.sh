#!/usr/bin/env bash
# Installs every Debian package vigil needs to build, test and benchmark. The one list; the
# README's set-up command and .ci/run both call it. Run as root on Debian (bookworm).
set -euo pipefail
packages=(
  make clang llvm-dev          # vigil-cc: Debian's default LLVM (14 on bookworm) and its C API
  llvm-15-dev clang-15 llvm-16-dev clang-16   # vigil-cc must keep building and working with these
  libelf-dev libdw-dev         # elfutils: site tables and PC -> file:line in `vigil`
  libsqlite3-dev sqlite3       # the embedded report store
  libzstd-dev zstd             # the memory checker's compressed event log (runtime: libzstd.so.1, loaded when written)
  libpq-dev postgresql         # the fleet report store (tests start a throwaway cluster)
  dpkg-dev tcl                 # `apt-get source` of real programs; tcl builds sqlite3's amalgamation
  ed                           # bc's build edits its generated libmath.h with ed
  autoconf automake libtool libonig-dev   # bench/run.py's jq: its Debian source needs autoreconf; regexes from oniguruma
  valgrind time                # benchmarks: instruction counts, peak RSS
  uftrace linux-perf           # bench/hotspot.sh: the function tracer and perf record beside the walker
  ccache                       # bench/cache.sh: vigil's cache beside ccache on the plain build
  chromium                     # headless test of the leak viewer page (`vigil html`)
  libclang-rt-14-dev           # libFuzzer for the parser fuzzers, LeakSanitizer (tests/real compares the leak tool with it)
  libomp-14-dev                # -fopenmp with clang: LLVM's libomp and <omp-tools.h> (the race tool's OMPT part)
  binutils xz-utils python3 ca-certificates
)
if [ "$(id -u)" != 0 ]; then echo "install-deps: run as root (apt-get install)" >&2; exit 1; fi
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
