#!/usr/bin/env bash
# Builds examples/demo.c with vigil-cc, runs it under `vigil run`, shows the per-site rates.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
build/bin/vigil-cc -O2 -g examples/demo.c -o "$out/demo"
echo "== vigil run -- demo"
build/bin/vigil run --out "$out/reports" -- "$out/demo"
echo "== vigil stats"
build/bin/vigil stats "$(ls -d "$out"/reports/demo.* | head -1)"
