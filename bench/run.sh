#!/usr/bin/env bash
# Benchmark entry point: see bench/run.py (plain vs vigil-cc on real programs, side by side).
set -euo pipefail
exec python3 "$(dirname "$0")/run.py" "$@"
