#!/usr/bin/env python3
"""A/B of vigil-cc settings: the real programs of bench/run.py built by vigil-cc under
different VIGIL_CC_* settings, run side by side with the plain build in one alternating run,
and the text size of each build.

usage: bench/ab.py [--runs N] [--modes off,adaptive] [--programs bc,lua,...] [--scale F]
                   [--instructions] NAME=SETTINGS [NAME=SETTINGS ...]
  SETTINGS: VAR=VALUE pairs joined by ':' ('-' for the defaults), for example
    bench/ab.py base=- nosplit=VIGIL_CC_SPLIT_COLD=0

Each variant's compiler is a one-line wrapper that sets its settings and runs a snapshot of
build/bin/vigil-cc; builds are cached like bench/run.py's (tests/real/sources.sh). Prints, per
workload, the median CPU time of plain and each variant's ratio to it in each mode, then the
geomeans, then each program's text (`size`) per variant. `--runs 0` only builds and sizes.
`--instructions` also counts each variant's instructions in each mode on bench/run.py's small
workloads (cachegrind; deterministic, where these shared cores move times by a few percent).
Nothing is asserted; `>> bench/results/<file>` to keep a run."""
import argparse
import math
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (bench/run.py: workloads, builds, the child timer)


def wrapper(name, settings, vigilcc):
    """$VIGIL_REAL_DIR/ab/<name>/bin/vigil-cc, with lib/ beside it as vigil-cc expects (and as
    tests/real/sources.sh hashes into the build key)."""
    root = os.path.join(bench.REAL_DIR, "ab", name)
    os.makedirs(os.path.join(root, "bin"), exist_ok=True)
    lib = os.path.join(root, "lib")
    if os.path.islink(lib):
        os.unlink(lib)
    os.symlink(os.path.join(os.path.dirname(os.path.dirname(vigilcc)), "lib"), lib)
    exports = "".join(f"export {pair}\n" for pair in settings)
    path = os.path.join(root, "bin", "vigil-cc")
    with open(path + ".tmp", "w") as f:
        f.write(f"#!/bin/sh\n{exports}exec {vigilcc} \"$@\"\n")
    os.chmod(path + ".tmp", 0o755)
    os.rename(path + ".tmp", path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--modes", default="off,adaptive")
    ap.add_argument("--programs", default="")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--instructions", action="store_true", help="cachegrind instruction ratios too")
    ap.add_argument("variants", nargs="+", metavar="NAME=SETTINGS")
    args = ap.parse_args()
    variants = []
    for spec in args.variants:
        name, sep, settings = spec.partition("=")
        pairs = [] if settings in ("", "-") else settings.split(":")
        if not sep or not name.isidentifier() or any("=" not in p or not p.startswith("VIGIL_CC_") for p in pairs):
            ap.error(f"{spec!r}: expected NAME=VIGIL_CC_X=V[:VIGIL_CC_Y=W...] or NAME=-")
        variants.append((name, pairs))
    vigilcc = bench.snapshot_vigil()
    compilers = {name: wrapper(name, pairs, vigilcc) for name, pairs in variants}
    wanted = [p for p in args.programs.split(",") if p]
    modes = [m for m in args.modes.split(",") if m]
    report_dir = tempfile.mkdtemp(prefix="vigil-ab-")
    timer = bench.ChildTimer()
    ratios, texts, counts = {}, {}, {}
    print(f"# bench/ab.py --runs {args.runs} --modes {args.modes} --scale {args.scale}"
          f"{' --instructions' if args.instructions else ''} " + " ".join(args.variants))
    for workload, program, make in bench.workloads(args.scale):
        if wanted and program not in wanted and workload not in wanted:
            continue
        binaries = {"plain": bench.build(program, "plain")}
        for name, compiler in compilers.items():
            os.environ["VIGILCC"] = compiler
            binaries[name] = bench.build(program, "vigil")
        os.environ.pop("VIGILCC", None)
        texts[program] = {name: bench.text_size(binary) for name, binary in binaries.items()}
        if args.instructions:
            argv, stdin = make({program: binaries["plain"]}, True)
            plain = bench.cachegrind_instructions(binaries["plain"], argv, stdin, None)
            row = {f"{name}-{mode}": bench.cachegrind_instructions(binaries[name], argv, stdin, mode)
                   for mode in modes for name, _ in variants}
            if not plain or not all(row.values()):
                sys.exit(f"ab: cachegrind failed on {workload}")
            for c, v in row.items():
                counts.setdefault(c, []).append(v / plain)
            print(f"{workload:18s} instructions plain {plain:,}  " +
                  "  ".join(f"{c} {v / plain:.4f}" for c, v in row.items()), flush=True)
        if args.runs == 0:
            continue
        argv, stdin = make({program: binaries["plain"]}, False)
        columns = [("plain", binaries["plain"], None)] + \
                  [(f"{name}-{mode}", binaries[name], mode) for mode in modes for name, _ in variants]
        times = {column: [] for column, _, _ in columns}
        for r in range(args.runs):
            for column, binary, mode in columns[r % len(columns):] + columns[:r % len(columns)]:
                code, cpu, _, err = timer.measure(binary, argv, stdin, mode, report_dir)
                if code != 0:
                    sys.exit(f"ab: {column} on {workload} exited {code}: {err[-300:]!r}")
                times[column].append(cpu)
        plain = statistics.median(times["plain"])
        row = {c: statistics.median(v) / plain for c, v in times.items() if c != "plain"}
        for c, v in row.items():
            ratios.setdefault(c, []).append(v)
        print(f"{workload:18s} plain {plain:6.2f}s  " + "  ".join(f"{c} {v:.3f}" for c, v in row.items()), flush=True)
    if ratios:
        print(f"{'geomean':18s} {'':14s}" + "  ".join(
            f"{c} {math.exp(sum(map(math.log, v)) / len(v)):.3f}" for c, v in ratios.items()))
    if counts:
        print(f"{'geomean':18s} instructions  " + "  ".join(
            f"{c} {math.exp(sum(map(math.log, v)) / len(v)):.4f}" for c, v in counts.items()))
    for program, sizes in texts.items():
        print(f"text {program:13s} plain {sizes['plain']:9d}  " + "  ".join(
            f"{name} {size} ({size / sizes['plain']:.2f}x)" for name, size in sizes.items() if name != "plain"))


if __name__ == "__main__":
    main()
