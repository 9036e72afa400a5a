#!/usr/bin/env bash
# make demo: builds examples/demo.c with vigil-cc, runs it under the leak tool, and shows what
# vigil found: the leak of its rare path (`vigil leaks`: allocation line, last access) and the
# per-site sampling rates (`vigil stats`: the hot loop at the 0.1% floor, the rare path at 100%).
# Uses build/bin, so it works before `make install`.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== vigil-cc -O2 -g -fno-omit-frame-pointer examples/demo.c -o demo"
"$bin/vigil-cc" -O2 -g -fno-omit-frame-pointer examples/demo.c -o "$work/demo"
cd "$work"   # the run writes its report under ./vigil-out, as in the README's tour
echo
echo "== vigil run --tool leak -- ./demo"
"$bin/vigil" run --tool leak -- ./demo
runs=(vigil-out/demo.*)
run=${runs[0]}
echo
echo "== vigil leaks $run"
"$bin/vigil" leaks "$run"
echo
echo "== vigil stats $run"
"$bin/vigil" stats "$run"
