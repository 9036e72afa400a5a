#!/usr/bin/env bash
# vigil-cc must build and work with LLVM 15 and 16 too (opaque pointers), not only Debian's
# default 14. For each version: build everything into build-llvmN with that llvm-config, then
# run the end-to-end programs at -O2 in modes adaptive and full with that vigil-cc and clang.
# Prints PASS/FAIL lines named llvmN/...; a missing version is a FAIL (install-deps installs them).
set -uo pipefail
cd "$(dirname "$0")/.."
versions=${LLVM_VERSIONS:-15 16}
status=0
for v in $versions; do
    if ! command -v "llvm-config-$v" >/dev/null || ! command -v "clang-$v" >/dev/null; then
        echo "FAIL llvm$v/toolchain: llvm-config-$v or clang-$v missing (bash scripts/install-deps.sh)"
        status=1
        continue
    fi
    log=$(mktemp)
    if make -j2 B="build-llvm$v" LLVM_CONFIG="llvm-config-$v" >"$log" 2>&1; then
        echo "PASS llvm$v/build"
    else
        echo "FAIL llvm$v/build: $(grep -m1 -E 'error' "$log" | cut -c1-200)"
        status=1
        rm -f "$log"
        continue
    fi
    rm -f "$log"
    VIGILCC="$PWD/build-llvm$v/bin/vigil-cc" VIGIL_CC_CLANG="clang-$v" PLAINCC="clang-$v" E2E_OPT="-O2" \
        E2E_MODES="adaptive full" bash tests/e2e/run.sh 2>&1 \
        | sed -n -e "s/^PASS /PASS llvm$v\//p" -e "s/^FAIL /FAIL llvm$v\//p"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
done
exit $status
