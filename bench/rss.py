#!/usr/bin/env python3
"""Peak RSS of the vigil build against the plain build on bench/run.py's workloads, with no
tool: without VIGIL_OPTIONS (no report, nothing observes a burst), and with a run report in
mode=off and mode=adaptive. The variants run in alternating order (rotated every round); the
table shows the median peak RSS (ru_maxrss of each process, from wait4) and the ratios to plain,
then their geomeans. Nothing is asserted.

usage: bench/rss.py [--runs N] [--programs bzip2,lua,...] [--scale F] [--small]
  --small: the smaller inputs bench/run.py gives cachegrind (quicker; start-up weighs more).
vigil-cc is a snapshot of build/ (unless VIGILCC is set); builds as in bench/run.py."""
import argparse
import datetime
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (bench/run.py: workloads, builds)

# name -> VIGIL_OPTIONS (None: not set); "plain" runs the plain build.
VARIANTS = [("plain", None), ("none", None), ("off", "mode=off:out={out}"), ("adaptive", "mode=adaptive:out={out}")]


def peak_rss_kb(binary, argv, stdin_path, options, out):
    env = bench.run_env(None if options is None else options.format(out=out))
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    # Through GNU time, a small process: a child's ru_maxrss counts what its parent had before
    # the exec (this Python process), which would hide any program smaller than it.
    fd, measure = tempfile.mkstemp(prefix="vigil-bench-rss-")
    os.close(fd)
    try:
        code = subprocess.run(["/usr/bin/time", "-o", measure, "-f", "%M", binary] + argv, stdin=stdin,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                              cwd=bench.INPUTS).returncode   # cpio-create reads relative paths
        with open(measure) as f:
            kb = int(f.read().split()[-1])
    finally:
        os.unlink(measure)
        if stdin_path:
            stdin.close()
    return code, kb


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--programs", default="bzip2,lua,sqlite3,bc")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--small", action="store_true")
    args = ap.parse_args()
    programs = [p for p in args.programs.split(",") if p]
    if "VIGILCC" not in os.environ:
        os.environ["VIGILCC"] = bench.snapshot_vigil()
    bins = {}
    for program in programs:
        for variant in ("plain", "vigil"):
            try:
                bins[(program, variant)] = bench.build(program, variant)
            except RuntimeError as e:
                bench.log(f"rss: build of {program} ({variant}) failed: {e}")
    plain_bins = {p: bins.get((p, "plain")) for p in programs}
    commit = bench.commit()
    print(f"# bench/rss.py {' '.join(sys.argv[1:])}  {datetime.datetime.now().isoformat(timespec='seconds')}"
          f"  commit {commit}  vigil-cc {os.environ['VIGILCC']}")
    print("peak RSS (KB) medians; none: no VIGIL_OPTIONS; off, adaptive: VIGIL_OPTIONS=mode=M:out=DIR (a run report)")
    names = [v[0] for v in VARIANTS]
    header = f"{'workload':<18}" + "".join(f"{n:>10}" for n in names) + "".join(f"{'x ' + n:>12}" for n in names[1:])
    print(header)
    print("-" * len(header))
    ratios = {n: [] for n in names[1:]}
    out = tempfile.mkdtemp(prefix="vigil-bench-rss-")
    try:
        for name, program, make in bench.workloads(args.scale):
            if program not in programs:
                continue
            plain, vigil = bins.get((program, "plain")), bins.get((program, "vigil"))
            if not plain or not vigil:
                print(f"{name:<18} (not built)")
                continue
            argv, stdin_path = make(plain_bins, args.small)
            rss = {n: [] for n in names}
            failed = []
            order = list(VARIANTS)
            for _ in range(args.runs):
                for variant, options in order:
                    code, kb = peak_rss_kb(plain if variant == "plain" else vigil, argv, stdin_path, options, out)
                    if code != 0:
                        failed.append(f"{variant}: exit {code}")
                    rss[variant].append(kb)
                order = order[1:] + order[:1]
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out, exist_ok=True)
            med = {n: statistics.median(rss[n]) for n in names}
            row = f"{name:<18}" + "".join(f"{med[n]:>10.0f}" for n in names)
            for n in names[1:]:
                ratios[n].append(med[n] / med["plain"])
                row += f"{med[n] / med['plain']:>11.3f}x"
            print(row, flush=True)
            for why in sorted(set(failed)):
                print(f"  !! {name} {why}")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print("-" * len(header))
    print(f"{'geomean':<18}" + " " * (10 * len(names)) + "".join(f"{bench.geomean(ratios[n]):>11.3f}x" for n in names[1:]))


if __name__ == "__main__":
    main()
