#!/usr/bin/env python3
"""Threaded programs on every CPU and on one: the plain build and the vigil build (no
VIGIL_OPTIONS, and mode=off with a run report) of xz and zstd compressing with two worker
threads, alternating (the order rotates every round), first free to run on all CPUs, then
pinned to CPU 0 (taskset). The table shows median CPU time (user+sys of the process, all its
threads) and the ratio to plain in each setting. A ratio much higher on all CPUs than pinned
says the threads slow each other down through memory they both write (counters shared by
threads running the same code), which an instruction count cannot show. Nothing is asserted.

usage: bench/threads.py [--runs N] [--scale F]
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
import run as bench  # noqa: E402  (bench/run.py: inputs, builds)

# name -> (program, arguments, input size in MB at scale 1)
WORKLOADS = [
    ("xz-compress-T2", "xz", ["-6", "-T2", "--block-size=2MiB", "-c"], 16),
    ("zstd-compress-T2", "zstd", ["-9", "-T2", "-c"], 64),
]
# name -> VIGIL_OPTIONS (None: not set); "plain" runs the plain build.
VARIANTS = [("plain", None), ("none", None), ("off", "mode=off:out={out}")]


def cpu_seconds(argv, stdin_path, options, out, pin):
    env = bench.run_env(None if options is None else options.format(out=out))
    prefix = ["taskset", "-c", "0"] if pin else []
    with open(stdin_path, "rb") as stdin:
        before = os.times()
        code = subprocess.run(prefix + argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=env).returncode
        after = os.times()
    return code, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0)
    args = ap.parse_args()
    if shutil.which("taskset") is None:
        sys.exit("threads: taskset (util-linux) is needed")
    if "VIGILCC" not in os.environ:
        os.environ["VIGILCC"] = bench.snapshot_vigil()
    programs = sorted({w[1] for w in WORKLOADS})
    bins = {(p, v): bench.build(p, v) for p in programs for v in ("plain", "vigil")}
    commit = bench.commit()
    print(f"# bench/threads.py {' '.join(sys.argv[1:])}  {datetime.datetime.now().isoformat(timespec='seconds')}"
          f"  commit {commit}  cpus {os.cpu_count()}  vigil-cc {os.environ['VIGILCC']}")
    print("CPU time (user+sys, all threads) medians in seconds; none: no VIGIL_OPTIONS; off: mode=off with a report")
    names = [v[0] for v in VARIANTS]
    header = f"{'workload':<18}{'cpus':>6}" + "".join(f"{n:>9}" for n in names) + "".join(f"{'x ' + n:>10}" for n in names[1:])
    print(header)
    print("-" * len(header))
    out = tempfile.mkdtemp(prefix="vigil-bench-threads-")
    try:
        for name, program, argv, mb in WORKLOADS:
            text = bench.generated_text(max(1, round(mb * args.scale)))
            for pin in (False, True):
                times = {n: [] for n in names}
                failed = set()
                order = list(VARIANTS)
                for _ in range(args.runs):
                    for variant, options in order:
                        binary = bins[(program, "plain" if variant == "plain" else "vigil")]
                        code, seconds = cpu_seconds([binary] + argv, text, options, out, pin)
                        if code != 0:
                            failed.add(f"{variant}: exit {code}")
                        times[variant].append(seconds)
                    order = order[1:] + order[:1]
                    shutil.rmtree(out, ignore_errors=True)
                    os.makedirs(out, exist_ok=True)
                med = {n: statistics.median(times[n]) for n in names}
                row = f"{name:<18}{'1' if pin else 'all':>6}" + "".join(f"{med[n]:>9.3f}" for n in names)
                row += "".join(f"{med[n] / med['plain']:>9.3f}x" for n in names[1:])
                print(row, flush=True)
                for why in sorted(failed):
                    print(f"  !! {name} {why}")
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
