#!/usr/bin/env python3
"""vigil benchmark: plain clang vs vigil-cc builds of real programs (Debian sources), side by
side in one run.

For each workload the plain build and the vigil build in modes off, adaptive and full run in
alternating order (the order rotates every round), --runs times each (5); the table shows the
median CPU time (user+sys of the child) of each, the ratio to plain, and the geomean of the
ratios. Then compile time and text size (`size`) of vigil vs plain, and instruction counts
from `valgrind --tool=cachegrind --cache-sim=no` on smaller workloads. Nothing is asserted:
this only prints (and writes bench/results/<date>.txt).

usage: bench/run.py [--runs N] [--programs bzip2,lua,...] [--modes off,adaptive,full]
                    [--no-compile] [--no-cachegrind] [--scale F] [--cg-scale F] [--no-verify]
--runs 0 leaves out the CPU times; --cg-scale sizes the instruction counts' workloads (default
0.05 of --scale 1's) and the output check, which runs each workload once per mode and compares
stdout and exit status with plain's.
vigil-cc is a snapshot of build/ (unless VIGILCC is set). Builds come from tests/real/sources.sh (cached in $VIGIL_REAL_DIR, default /var/tmp/vigil-real);
both variants use the same flags (REAL_CFLAGS, default -O2 -gdwarf-4; zstd raises the -O level
to its Makefile's -O3). The default set is PROGRAMS below.
"""
import argparse
import datetime
import math
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES_SH = os.path.join(ROOT, "tests", "real", "sources.sh")
WORKLOADS = os.path.join(ROOT, "bench", "workloads")
REAL_DIR = os.environ.get("VIGIL_REAL_DIR", "/var/tmp/vigil-real")
INPUTS = os.path.join(REAL_DIR, "inputs")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def commit():
    """The repository's HEAD, abbreviated ("" outside a git checkout)."""
    return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True).stdout.strip()


def run_env(options=None):
    """The environment of a measured run: this one without the caller's VIGIL_OPTIONS and
    VIGIL_PLAN, and VIGIL_OPTIONS=options when options is not None."""
    env = dict(os.environ)
    env.pop("VIGIL_OPTIONS", None)
    env.pop("VIGIL_PLAN", None)
    if options is not None:
        env["VIGIL_OPTIONS"] = options
    return env


def shell_sources(command):
    """Run a bash command with tests/real/sources.sh sourced; returns stdout (stripped)."""
    result = subprocess.run(["bash", "-c", f'source "{SOURCES_SH}" && {command}'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip().splitlines()[-5:] if result.stderr else command)
    return result.stdout.strip()


def snapshot_vigil():
    """Copy build/bin/vigil-cc with build/lib and build/include into $VIGIL_REAL_DIR/snapshots/
    <content hash>/, so that one benchmark uses one compiler even if build/ is rebuilt meanwhile.
    vigil-cc finds its runtime in ../lib relative to itself."""
    import hashlib
    build_dir = os.path.join(ROOT, "build")
    for attempt in range(10):
        try:
            digest = hashlib.sha1()
            for rel in ("bin/vigil-cc", "lib/libvigil.a", "lib/libvigil_common.a"):
                with open(os.path.join(build_dir, rel), "rb") as f:
                    digest.update(f.read())
            target = os.path.join(REAL_DIR, "snapshots", digest.hexdigest()[:16])
            if not os.path.exists(os.path.join(target, "bin", "vigil-cc")):
                tmp = target + ".tmp"
                shutil.rmtree(tmp, ignore_errors=True)
                for sub in ("bin", "lib", "include"):
                    if os.path.isdir(os.path.join(build_dir, sub)):
                        shutil.copytree(os.path.join(build_dir, sub), os.path.join(tmp, sub))
                with open(os.path.join(tmp, "bin", "vigil-cc"), "rb") as f:
                    check = hashlib.sha1(f.read())
                for lib in ("libvigil.a", "libvigil_common.a"):
                    with open(os.path.join(tmp, "lib", lib), "rb") as f:
                        check.update(f.read())
                if check.hexdigest()[:16] != digest.hexdigest()[:16]:
                    raise OSError("build/ changed while copying")
                os.rename(tmp, target)
            return os.path.join(target, "bin", "vigil-cc")
        except OSError as e:
            log(f"bench: snapshot of build/ failed ({e}), retrying")
            time.sleep(5)
    raise SystemExit("bench: cannot snapshot build/bin/vigil-cc")


def build(program, variant):
    return shell_sources(f"real_build {program} {variant}")


def generated_text(size_mb):
    path = os.path.join(INPUTS, f"bench-text-{size_mb}m.txt")
    if not os.path.exists(path):
        os.makedirs(INPUTS, exist_ok=True)
        rng = random.Random(424242)
        words = ("monitor sample burst check copy vigil adaptive rate floor site leak race "
                 "alpha beta gamma delta kernel thread signal buffer").split()
        lines, total, i = [], 0, 0
        while total < size_mb << 20:
            line = "%07d %s" % (i, " ".join(rng.choice(words) + (str(rng.randrange(10 ** rng.randrange(1, 7)))
                                                                   if rng.random() < 0.3 else "")
                                            for _ in range(rng.randrange(4, 16))))
            lines.append(line)
            total += len(line) + 1
            i += 1
        with open(path + ".tmp", "w") as f:
            f.write("\n".join(lines) + "\n")
        os.rename(path + ".tmp", path)
    return path


def generated_json(size_mb):
    """A JSON array of records (numbers, strings, nested arrays and objects) of about size_mb MB."""
    path = os.path.join(INPUTS, f"bench-json-{size_mb}m.json")
    if not os.path.exists(path):
        os.makedirs(INPUTS, exist_ok=True)
        rng = random.Random(515151)
        words = "alpha beta gamma delta kernel thread signal buffer monitor sample burst".split()
        total, i = 0, 0
        with open(path + ".tmp", "w") as f:
            f.write("[\n")
            while total < size_mb << 20:
                record = ('{"id":%d,"name":"%s-%d","score":%.3f,"active":%s,"tags":[%s],'
                          '"pos":{"x":%d,"y":%d},"note":"%s"}'
                          % (i, rng.choice(words), rng.randrange(1000), rng.random() * 100,
                             "true" if rng.random() < 0.5 else "false",
                             ",".join('"%s"' % rng.choice(words) for _ in range(rng.randrange(0, 6))),
                             rng.randrange(-500, 500), rng.randrange(-500, 500),
                             " ".join(rng.choice(words) for _ in range(rng.randrange(1, 8)))))
                f.write(("," if i else "") + record + "\n")
                total += len(record) + 2
                i += 1
            f.write("]\n")
        os.rename(path + ".tmp", path)
    return path


def generated_tree(size_mb):
    """A directory of files (sizes from a few bytes to 256 KB, text and binary) of about size_mb MB
    in all; returns the path of the list of its files (cpio -o reads it on stdin)."""
    root = os.path.join(INPUTS, f"bench-tree-{size_mb}m")
    listing = root + ".list"
    if not os.path.exists(listing):
        rng = random.Random(777)
        shutil.rmtree(root, ignore_errors=True)
        names, total, i = [], 0, 0
        while total < size_mb << 20:
            sub = os.path.join(root, "d%02d" % (i % 37))
            os.makedirs(sub, exist_ok=True)
            name = os.path.join(sub, "f%05d" % i)
            n = int(2 ** rng.uniform(3, 18))
            with open(name, "wb") as f:
                f.write(rng.randbytes(n) if i % 3 == 0 else
                        (b"%07d vigil sample burst %d\n" % (i, n)) * (n // 30 + 1))
            names.append(os.path.relpath(name, INPUTS))
            total += n
            i += 1
        for path in [root] + [os.path.join(root, d) for d in os.listdir(root)] + \
                [os.path.join(INPUTS, n) for n in names]:
            os.utime(path, (1700000000, 1700000000))   # same archive every time
        with open(listing + ".tmp", "w") as f:
            f.write("\n".join(names) + "\n")
        os.rename(listing + ".tmp", listing)
    return listing


def cpio_archive(plain_bin, listing):
    path = listing[:-len(".list")] + ".cpio"
    if not os.path.exists(path):
        with open(listing, "rb") as src, open(path + ".tmp", "wb") as out:
            subprocess.run([plain_bin, "-o", "-H", "crc", "--quiet"], stdin=src, stdout=out,
                           cwd=INPUTS, check=True)
        os.rename(path + ".tmp", path)
    return path


def compressed(program, plain_bin, source, suffix, flags):
    path = source + suffix
    if not os.path.exists(path):
        with open(source, "rb") as src, open(path + ".tmp", "wb") as out:
            subprocess.run([plain_bin] + flags, stdin=src, stdout=out, check=True)
        os.rename(path + ".tmp", path)
    return path


def scaled_file(template, scale_key, value, suffix):
    with open(os.path.join(WORKLOADS, template)) as f:
        text = f.read().replace(scale_key, str(value))
    fd, path = tempfile.mkstemp(suffix=suffix, prefix="vigil-bench-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


# Every program of the benchmark, of different kinds: compressors (bzip2, gzip, xz; zstd at its
# own -O3, with two threads), interpreters (lua, bc, mawk), a database (sqlite3), a JSON
# processor (jq) and an archiver (cpio).
PROGRAMS = ["bzip2", "lua", "sqlite3", "bc", "gzip", "xz", "zstd", "jq", "mawk", "cpio"]


# Workloads: name -> (program, function(binaries, small) -> (argv tail, stdin path)).
# Sizes aim at 1-5 s of CPU on the plain build at --scale 1 (measured 2026-11-24 on the 2-core
# VM: bzip2-c 1.0 s, lua 1.1 s, gzip-c 4.3 s; bzip2-d, sqlite3, bc and gzip-d were 0.4-0.9 s
# and are now larger); "small" is for cachegrind.
def workloads(scale, small_scale=0.05):
    def size(n, small):
        return max(1, int(n * (small_scale if small else scale)))

    def bzip2_compress(bins, small):
        return ["-9", "-c"], generated_text(size(16, small))

    def bzip2_decompress(bins, small):
        text = generated_text(size(40, small))
        return ["-d", "-c"], compressed("bzip2", bins["bzip2"], text, ".bz2", ["-9", "-c"])

    def lua(bins, small):
        return [os.path.join(WORKLOADS, "bench.lua"), str(size(150, small))], None

    def sqlite3(bins, small):
        return [":memory:"], scaled_file("bench.sql", "@ROWS@", size(1000000, small), ".sql")

    def bc(bins, small):
        digits = int(120 * math.sqrt(small_scale / 0.05)) if small else int(1700 * math.sqrt(scale))
        fd, path = tempfile.mkstemp(suffix=".bc", prefix="vigil-bench-")
        with os.fdopen(fd, "w") as f:
            f.write(f"scale={digits}\n4*a(1)\ne(1)\n")
        return ["-l"], path

    def gzip_compress(bins, small):
        return ["-6", "-n", "-c"], generated_text(size(96, small))

    def gzip_decompress(bins, small):
        text = generated_text(size(240, small))
        return ["-d", "-c"], compressed("gzip", bins["gzip"], text, ".gz", ["-6", "-n", "-c"])

    def xz_compress(bins, small):
        return ["-6", "-c", "-T1"], generated_text(size(3, small))

    def xz_decompress(bins, small):
        text = generated_text(size(48, small))
        return ["-d", "-c"], compressed("xz", bins["xz"], text, ".xz", ["-3", "-c", "-T1"])

    def zstd_compress(bins, small):   # two worker threads
        return ["-9", "-T2", "-c"], generated_text(size(64, small))

    def zstd_decompress(bins, small):
        text = generated_text(size(240, small))
        return ["-d", "-c"], compressed("zstd", bins["zstd"], text, ".zst", ["-9", "-c", "-q"])

    def jq(bins, small):
        return ["-c", "-f", os.path.join(WORKLOADS, "bench.jq")], generated_json(size(16, small))

    def mawk(bins, small):
        return ["-f", os.path.join(WORKLOADS, "bench.awk")], generated_text(size(48, small))

    def cpio_create(bins, small):   # the "crc" format sums every byte of every file
        return ["-o", "-H", "crc", "--quiet"], generated_tree(size(160, small))

    def cpio_extract(bins, small):
        archive = cpio_archive(bins["cpio"], generated_tree(size(160, small)))
        return ["-i", "--to-stdout", "--quiet"], archive

    return [("bzip2-compress", "bzip2", bzip2_compress), ("bzip2-decompress", "bzip2", bzip2_decompress),
            ("lua", "lua", lua), ("sqlite3", "sqlite3", sqlite3), ("bc", "bc", bc),
            ("gzip-compress", "gzip", gzip_compress), ("gzip-decompress", "gzip", gzip_decompress),
            ("xz-compress", "xz", xz_compress), ("xz-decompress", "xz", xz_decompress),
            ("zstd-compress", "zstd", zstd_compress), ("zstd-decompress", "zstd", zstd_decompress),
            ("jq", "jq", jq), ("mawk", "mawk", mawk),
            ("cpio-create", "cpio", cpio_create), ("cpio-extract", "cpio", cpio_extract)]


def run_once(binary, argv, stdin_path, mode, report_dir, timeout=900):
    env = run_env(None if mode is None else f"mode={mode}:out={report_dir}")
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    start = time.monotonic()
    proc = subprocess.Popen([binary] + argv, stdin=stdin, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env, cwd=INPUTS)
    try:
        _, err = proc.communicate(timeout=timeout)
    finally:
        if stdin_path:
            stdin.close()
    wall = time.monotonic() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc.returncode, wall, usage, err


class ChildTimer:
    """CPU time of each finished child: difference of RUSAGE_CHILDREN around the run."""

    def __init__(self):
        self.last = resource.getrusage(resource.RUSAGE_CHILDREN)

    def measure(self, *args):
        self.last = resource.getrusage(resource.RUSAGE_CHILDREN)
        code, wall, usage, err = run_once(*args)
        cpu = (usage.ru_utime - self.last.ru_utime) + (usage.ru_stime - self.last.ru_stime)
        self.last = usage
        return code, cpu, wall, err


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def runtime_text_baseline(vigilcc, cflags):
    """Text bytes that vigil-cc adds to an empty program (the runtime library), or 0."""
    work = tempfile.mkdtemp(prefix="vigil-bench-size-")
    try:
        src = os.path.join(work, "empty.c")
        with open(src, "w") as f:
            f.write("int main(void) { return 0; }\n")
        sizes = []
        for cc in (os.environ.get("PLAINCC", "clang"), vigilcc):
            out = os.path.join(work, "empty-" + os.path.basename(cc))
            subprocess.run([cc] + cflags.split() + [src, "-o", out], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            sizes.append(text_size(out))
        return sizes[1] - sizes[0]
    except (OSError, subprocess.CalledProcessError):
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def text_size(binary):
    out = subprocess.run(["size", binary], stdout=subprocess.PIPE, text=True, check=True).stdout
    return int(out.splitlines()[1].split()[0])


# Sources compiled for the compile-time comparison (file list, flags), per program.
COMPILE_SETS = {
    "bzip2": (["blocksort.c", "huffman.c", "crctable.c", "randtable.c", "compress.c", "decompress.c",
               "bzlib.c", "bzip2.c"], ["-D_FILE_OFFSET_BITS=64"]),
    "lua": (None, ["-std=gnu99", "-DLUA_COMPAT_5_3", "-DLUA_USE_LINUX"]),   # None: every *.c
    "sqlite3": (["sqlite3.c", "shell.c"], ["-DSQLITE_THREADSAFE=1", "-DSQLITE_ENABLE_MATH_FUNCTIONS"]),
}


def compile_cpu_seconds(program, plain_binary, compiler, cflags, timer):
    """CPU seconds (compiler and its children) to compile the program's sources with -c, one at
    a time, from the plain build's directory (sources and headers are there)."""
    files, flags = COMPILE_SETS[program]
    src = os.path.dirname(plain_binary)
    if files is None:
        files = sorted(f for f in os.listdir(src) if f.endswith(".c"))
    out = tempfile.mkdtemp(prefix="vigil-bench-cc-")
    total = 0.0
    try:
        for f in files:
            timer.last = resource.getrusage(resource.RUSAGE_CHILDREN)
            result = subprocess.run([compiler] + cflags.split() + flags + ["-c", os.path.join(src, f),
                                     "-o", os.path.join(out, f + ".o")], cwd=src,
                                    # compile time of the transform, not of cache hits
                                    env=dict(os.environ, VIGIL_CC_CACHE="0"),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            total += (usage.ru_utime - timer.last.ru_utime) + (usage.ru_stime - timer.last.ru_stime)
            timer.last = usage
            if result.returncode != 0:
                return None
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return total


def output_digest(binary, argv, stdin_path, mode):
    """(exit status, SHA-1 of stdout) of one run."""
    import hashlib
    report_dir = tempfile.mkdtemp(prefix="vigil-bench-check-")
    env = run_env(None if mode is None else f"mode={mode}:out={report_dir}")
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    digest = hashlib.sha1()
    try:
        proc = subprocess.Popen([binary] + argv, stdin=stdin, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env, cwd=INPUTS)
        for chunk in iter(lambda: proc.stdout.read(1 << 16), b""):
            digest.update(chunk)
        code = proc.wait()
    finally:
        if stdin_path:
            stdin.close()
        shutil.rmtree(report_dir, ignore_errors=True)
    return code, digest.hexdigest()


def cachegrind_instructions(binary, argv, stdin_path, mode):
    report_dir = tempfile.mkdtemp(prefix="vigil-bench-cg-")
    env = run_env(None if mode is None else f"mode={mode}:out={report_dir}")
    # valgrind's debuginfo reader gives up on binaries that mix DWARF 4 (the program, -gdwarf-4)
    # with DWARF 5 (libvigil): count instructions on a copy without debug info.
    stripped = os.path.join(report_dir, os.path.basename(binary))
    if subprocess.run(["objcopy", "--strip-debug", binary, stripped]).returncode != 0:
        stripped = binary
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        result = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                                 "--cachegrind-out-file=/dev/null", stripped] + argv,
                                stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, env=env, timeout=3600, cwd=INPUTS)
    finally:
        if stdin_path:
            stdin.close()
        shutil.rmtree(report_dir, ignore_errors=True)
    m = re.search(r"I\s+refs:\s+([\d,]+)", result.stderr)
    return int(m.group(1).replace(",", "")) if m else None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--modes", default="off,adaptive,full")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply workload sizes")
    parser.add_argument("--no-compile", action="store_true", help="skip compile time and text size")
    parser.add_argument("--quick-compile", action="store_true", help="skip the (long) sqlite3 compile")
    parser.add_argument("--no-cachegrind", action="store_true")
    parser.add_argument("--cg-scale", type=float, default=0.05,
                        help="workload sizes of the instruction counts and the output check")
    parser.add_argument("--no-verify", action="store_true",
                        help="skip the check that every mode prints what plain prints")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = parser.parse_args()
    if args.runs < 0:
        parser.error("--runs must be 0 (no CPU times) or more")
    programs = [p for p in args.programs.split(",") if p]
    modes = [m for m in args.modes.split(",") if m]
    lines = []

    def emit(line=""):
        print(line, flush=True)
        lines.append(line)

    if "VIGILCC" not in os.environ:
        os.environ["VIGILCC"] = snapshot_vigil()
        log(f"bench: using a snapshot of build/: {os.environ['VIGILCC']}")
    bins = {}
    for program in programs:
        for variant in ("plain", "vigil"):
            log(f"bench: build {program} ({variant})")
            try:
                bins[(program, variant)] = build(program, variant)
            except RuntimeError as e:
                log(f"bench: build of {program} ({variant}) failed: {e}")
    plain_bins = {p: bins.get((p, "plain")) for p in programs}

    vigilcc = os.environ["VIGILCC"]
    cflags = os.environ.get("REAL_CFLAGS", "-O2 -gdwarf-4")
    emit("$ python3 bench/run.py " + " ".join(sys.argv[1:]))
    emit(f"vigil benchmark {datetime.datetime.now().isoformat(timespec='seconds')}  host {os.uname().nodename}"
         f"  cpus {os.cpu_count()}  runs {args.runs}  scale {args.scale}")
    emit(f"plain: clang {cflags}   vigil: {vigilcc} {cflags}   (commit {commit()})")
    selected = [w for w in workloads(args.scale, args.cg_scale) if w[1] in programs]
    chosen_inputs = {}
    if not args.no_verify:
        differ = []
        for name, program, make in selected:
            plain, vigil = bins.get((program, "plain")), bins.get((program, "vigil"))
            if not plain or not vigil:
                continue
            log(f"bench: output check {name}")
            argv, stdin_path = make(plain_bins, True)
            expected = output_digest(plain, argv, stdin_path, None)
            for m in modes:
                got = output_digest(vigil, argv, stdin_path, m)
                if got != expected:
                    differ.append(f"{name} mode={m} (exit {got[0]}, plain {expected[0]}; "
                                  f"stdout {'same' if got[1] == expected[1] else 'differs'})")
            if stdin_path and os.path.basename(stdin_path).startswith("vigil-bench-"):
                os.unlink(stdin_path)
        emit(f"output check (scale {args.cg_scale}): " + ("stdout and exit status of every mode identical"
             " to plain's on every workload" if not differ else "DIFFERS: " + "; ".join(differ)))
    if args.runs > 0:   # --runs 0: no CPU times (instruction counts only)
        emit("CPU time (user+sys) medians in seconds; ratio = vigil / plain")
        emit()
        columns = ["plain"] + modes
        header = f"{'workload':<18}" + "".join(f"{c:>10}" for c in columns) + "".join(f"{'x ' + m:>11}" for m in modes)
        emit(header)
        emit("-" * len(header))
        ratios = {m: [] for m in modes}
        timer = ChildTimer()
        for name, program, make in selected:
            plain = bins.get((program, "plain"))
            vigil = bins.get((program, "vigil"))
            if not plain or not vigil:
                emit(f"{name:<18} (not built)")
                continue
            try:
                argv, stdin_path = make(plain_bins, False)
            except (OSError, subprocess.CalledProcessError) as e:
                emit(f"{name:<18} (input failed: {e})")
                continue
            chosen_inputs[name] = (argv, stdin_path)
            report_dir = tempfile.mkdtemp(prefix="vigil-bench-reports-")
            times = {c: [] for c in columns}
            failures = {}
            order = list(columns)
            for round_index in range(args.runs):
                for column in order:
                    binary, mode = (plain, None) if column == "plain" else (vigil, column)
                    code, cpu, wall, err = timer.measure(binary, argv, stdin_path, mode, report_dir)
                    if code != 0:
                        failures[column] = f"exit {code}: {err.decode(errors='replace').strip().splitlines()[-1:] }"
                    times[column].append(cpu)
                order = order[1:] + order[:1]
                shutil.rmtree(report_dir, ignore_errors=True)
                os.makedirs(report_dir, exist_ok=True)
            shutil.rmtree(report_dir, ignore_errors=True)
            medians = {c: statistics.median(times[c]) for c in columns}
            row = f"{name:<18}" + "".join(f"{medians[c]:>10.3f}" for c in columns)
            for m in modes:
                r = medians[m] / medians["plain"] if medians["plain"] > 0 else float("nan")
                ratios[m].append(r)
                row += f"{r:>10.3f}x"
            emit(row)
            for column, why in failures.items():
                emit(f"  !! {name} {column}: {why}")
        emit("-" * len(header))
        emit(f"{'geomean':<18}" + " " * (10 * len(columns)) + "".join(f"{geomean(ratios[m]):>10.3f}x" for m in modes))
        emit()

    if not args.no_compile:
        emit(f"{'program':<10}{'compile plain':>15}{'compile vigil':>15}{'ratio':>8}"
             f"{'text plain':>13}{'text vigil':>13}{'ratio':>8}{'w/o rt':>8}")
        compile_ratios, size_ratios, code_ratios = [], [], []
        runtime_text = runtime_text_baseline(vigilcc, cflags)
        plaincc = os.environ.get("PLAINCC", "clang")
        for program in programs:
            plain, vigil = bins.get((program, "plain")), bins.get((program, "vigil"))
            if not plain or not vigil:
                continue
            cp = cv = None
            if program in COMPILE_SETS and not (program == "sqlite3" and args.quick_compile):
                log(f"bench: compile time {program}")
                rounds = 1 if program == "sqlite3" else 3
                tp, tv = [], []
                for _ in range(rounds):   # alternating
                    tp.append(compile_cpu_seconds(program, plain, plaincc, cflags, timer))
                    tv.append(compile_cpu_seconds(program, plain, vigilcc, cflags, timer))
                if None not in tp and None not in tv:
                    cp, cv = statistics.median(tp), statistics.median(tv)
            sp, sv = text_size(plain), text_size(vigil)
            size_ratios.append(sv / sp)
            code_ratios.append((sv - runtime_text) / sp)
            sizes = f"{sp:>13}{sv:>13}{sv / sp:>7.2f}x{(sv - runtime_text) / sp:>7.2f}x"
            if cp and cv:
                compile_ratios.append(cv / cp)
                emit(f"{program:<10}{cp:>15.2f}{cv:>15.2f}{cv / cp:>7.2f}x{sizes}")
            else:
                emit(f"{program:<10}{'-':>15}{'-':>15}{'-':>8}{sizes}")
        emit(f"{'geomean':<10}{'':>30}{geomean(compile_ratios):>7.2f}x{'':>26}{geomean(size_ratios):>7.2f}x"
             f"{geomean(code_ratios):>7.2f}x")
        emit("(compile: CPU seconds to compile the sources with -c, median of 3 alternating rounds, 1 for"
             " sqlite3;\n text: `size` text column; the vigil binary includes libvigil, w/o rt subtracts the"
             f" {runtime_text} text bytes vigil-cc adds to an empty program)")
        emit()

    if not args.no_cachegrind and shutil.which("valgrind"):
        emit(f"instructions (valgrind --tool=cachegrind --cache-sim=no, workloads at scale {args.cg_scale}),"
             " ratio to plain")
        header = f"{'workload':<18}{'plain':>15}" + "".join(f"{'x ' + m:>11}" for m in modes)
        emit(header)
        cg_ratios = {m: [] for m in modes}
        for name, program, make in selected:
            plain, vigil = bins.get((program, "plain")), bins.get((program, "vigil"))
            if not plain or not vigil:
                continue
            log(f"bench: cachegrind {name}")
            argv, stdin_path = make(plain_bins, True)
            base = cachegrind_instructions(plain, argv, stdin_path, None)
            row = f"{name:<18}{base or 0:>15,}"
            for m in modes:
                n = cachegrind_instructions(vigil, argv, stdin_path, m)
                r = n / base if n and base else float("nan")
                cg_ratios[m].append(r)
                row += f"{r:>10.3f}x"
            emit(row)
        emit(f"{'geomean':<18}{'':>15}" + "".join(f"{geomean(cg_ratios[m]):>10.3f}x" for m in modes))

    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, datetime.date.today().isoformat() + ".txt")
    with open(path, "a") as f:
        f.write("\n".join(lines) + "\n\n")
    log(f"bench: results appended to {path}")
    for argv, stdin_path in chosen_inputs.values():
        if stdin_path and os.path.basename(stdin_path).startswith("vigil-bench-"):
            os.unlink(stdin_path)


if __name__ == "__main__":
    main()
