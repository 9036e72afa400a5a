#!/usr/bin/env python3
"""The seeded-fault evaluation of statistical debugging (issue 35): 4 programs of
bench/preds-faults/, 5 faults each (switch cases, inlined helpers, constants, abort and other
crashes), one input pool per program, the reference build (FAULT=0, plain clang) as the oracle.

For each fault: build it with vigil-cc -O2 -g and predicate counters (VIGIL_CC_PRED_COUNTERS=1),
run the pool under preds.collect=all, label each run by the oracle (label.txt: the faulty
build's stdout and exit status differ from the reference's), ingest, and rank. Printed per
fault: failing runs; the rank of the first fault-related predicate (on a line tagged FAULT-k in
the source) under importance, increase, ttest, failcount and eliminate ('-' = not among the
ranked rows: the fault has no predicate there); then the adaptive forward search (vigil plan,
importance heuristic, up to MAX_ITER rounds of the whole pool under the plan): whether it
reaches the complete run's top predictor (or one tied with it in Importance: "found (tied)"),
in how many rounds, and the share of predicate sites it monitored. Then the totals against the issue's targets (top-5 for 70% of the faults
with a predicate; the search finds the top predictor in 90% of runs with at most 30% of sites).
Nothing is asserted; appends to bench/results/preds-faults-<date>.txt unless --no-save.
--replay: the search's rounds do not run the pool; each round's store gets the complete run's
rows of the planned sites (the same runs, hence the same counts), which gives the same
adaptive column in a fraction of the time (to try variants of vigil plan).
--keep DIR: work in DIR and keep it: a fault whose binary and complete store are there already
is not built or run again (with --replay, variants of vigil plan are then measured in seconds;
remove DIR after a change to vigil-cc or the pools). Each fault's `vigil plan` lines go to
DIR/PROGRAM-K.trace.

usage: bench/preds-faults.py [--pool N] [--max-iter N] [--programs csvstat,calc,...]
                             [--faults 1,2,...] [--no-adaptive] [--no-save] [--replay] [--keep DIR]
"""
import argparse
import datetime
import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(REPO, "bench", "preds-faults")
BUILD = os.environ.get("VIGIL_BUILD", os.path.join(REPO, "build"))   # another build to measure: VIGIL_BUILD=DIR
VIGIL = os.path.join(BUILD, "bin", "vigil")
VIGILCC = os.path.join(BUILD, "bin", "vigil-cc")
SCORES = ["importance", "increase", "ttest", "failcount", "eliminate"]


# ---- input pools (deterministic) ----

def csvstat_input(r):
    rows = []
    for _ in range(r.randint(1, 10)):
        cells = []
        ncols = r.choice([1, 2, 3, 4, 5, 6, 8, 10, 12]) if r.random() > 0.06 else 16
        for _ in range(ncols):
            x = r.random()
            if x < 0.45:
                v = r.randint(0, 20)
                sign = r.choice(["", "", "", "-"]) if r.random() > 0.05 else "+"
                cells.append(sign + str(v))
            elif x < 0.75:
                cells.append("".join(r.choice("abcxyz") for _ in range(r.randint(1, 8))))
            elif x < 0.9:
                body = "".join(r.choice("ab, ") for _ in range(r.randint(0, 6)))
                if r.random() < 0.15:
                    body += "\t" + "".join(r.choice("xy") for _ in range(r.randint(1, 3)))
                if r.random() < 0.2:
                    body += '""'
                cells.append('"' + body + '"')
            else:
                cells.append("w\\" + r.choice("nqn,ab") + "z" * r.randint(0, 3))
        rows.append(",".join(cells))
    return ("\n".join(rows) + "\n").encode()


def calc_input(r):
    def num():
        if r.random() < 0.04:
            return str(r.randint(100000, 9999999))
        return str(r.randint(0, 30))

    def operand(depth):
        x = r.random()
        if depth < 2 and x < 0.2:
            return "(" + expr(depth + 1) + ")"
        if x < 0.25 and r.random() < 0.3:
            return "-" + num()
        if x < 0.35:
            return r.choice("abc")
        return num()

    def expr(depth=0):
        s = operand(depth)
        for _ in range(r.randint(0, 3)):
            op = r.choices(["+", "*", "/", "%", "^", "-"], [30, 25, 12, 8, 10, 3])[0]
            rhs = operand(depth)
            if op == "^":
                rhs = str(r.choice([0, 1, 2, 3])) if r.random() < 0.9 else "0"
            if op in "/%" and r.random() < 0.1:
                rhs = "0"
            s += " " + op + " " + rhs
        return s

    lines = []
    for _ in range(r.randint(2, 8)):
        lines.append((r.choice("abc") + " = " if r.random() < 0.3 else "") + expr())
    return ("\n".join(lines) + "\n").encode()


WORDS = ["the", "and", "cat", "cats", "catalog", "dog", "dogma", "dot", "hat", "hats", "it's",
         "don't", "tree", "trees", "treetop", "run", "runs", "rung", "sun", "sunny", "a", "an",
         "plan", "plans", "planet", "sea", "seal", "seat", "o'clock", "zip"]


def wordfreq_input(r):
    vocab = r.sample(WORDS, r.randint(4, 16))
    if r.random() < 0.08:   # many distinct words
        vocab += ["w%03d" % i for i in range(r.randint(90, 130))]
    elif r.random() < 0.25:
        vocab += ["x%02d" % i for i in range(r.randint(1, 6))]
    if r.random() < 0.1:
        vocab.append("pneumonoultramicroscopicsilicovolcano"[: r.randint(22, 32)])
    words = [r.choice(vocab) for _ in range(r.randint(10, 80))]
    if len(vocab) > 60:   # every word of a big vocabulary at least once
        words += vocab
    text = " ".join(w.upper() if r.random() < 0.1 else w for w in words)
    return (text + "\n").encode()


def rle_input(r):
    out = bytearray()
    for _ in range(r.randint(2, 12)):
        x = r.random()
        if x < 0.35:
            out += bytes([r.choice(b"abcdef")]) * r.choice([1, 2, 3, 3, 4, 5, 9, 20, 60])
        elif x < 0.45:
            out += bytes([r.choice(b"xyz")]) * r.randint(100, 140)
        elif x < 0.52:
            out += bytes([r.choice(b"pq")]) * r.randint(131, 300)
        elif x < 0.6:
            out += bytes(r.randrange(256) for _ in range(r.randint(1, 12)))
        elif x < 0.64:
            out += bytes(r.choice(b"abcdefghij") for _ in range(r.randint(129, 200)))
        else:
            out += bytes(r.choice(b"abcdefghijklmnopqrstuvwxyz ") for _ in range(r.randint(1, 60)))
    return bytes(out)


PROGRAMS = {
    "csvstat": (csvstat_input, []),
    "calc": (calc_input, []),
    "wordfreq": (wordfreq_input, []),
    "rle": (rle_input, ["t"]),
}


def run(cmd, **kw):
    return subprocess.run(cmd, **kw)


def fault_lines(src, k):
    return {i + 1 for i, line in enumerate(open(src)) if re.search(r"FAULT-%d\b" % k, line)}


def rank_json(db, by, top=100000):
    p = run([VIGIL, "rank", "--db", db, "--by", by, "--top", str(top), "--json", "--all"],
            capture_output=True, text=True)
    if p.returncode != 0:
        return None
    return json.loads(p.stdout)


def first_related(db, by, name, lines):
    doc = rank_json(db, by, 50 if by == "eliminate" else 100000)
    if not doc:
        return None
    for row in doc["predicates"]:
        if os.path.basename(row["file"]) == name + ".c" and row["line"] in lines:
            return row["rank"] if (by == "eliminate" or row["score"] is not None and row["score"] > 0) else None
    return None


def top_predictor(db):
    doc = rank_json(db, "importance", 1)
    if not doc or not doc["predicates"]:
        return None
    row = doc["predicates"][0]
    return (row["tu_hash"], row["site_index"], row["predicate"])


def top_tied(db):
    """The predicates tied with the complete run's top one (same Importance), itself excluded:
    the ranking orders them by a tie-break, and the search may reach any of them first."""
    doc = rank_json(db, "importance", 50)
    if not doc or not doc["predicates"]:
        return set()
    top = doc["predicates"][0]["score"]
    return {(r["tu_hash"], r["site_index"], r["predicate"]) for r in doc["predicates"][1:]
            if r["score"] is not None and top is not None and abs(r["score"] - top) <= 1e-12}


def run_pool(binary, args, inputs, out_dir, labels, plan=None):
    """Run every input; write label.txt beside each run's report from the oracle's verdict."""
    os.makedirs(out_dir, exist_ok=True)
    for i, data in enumerate(inputs):
        d = os.path.join(out_dir, "r%04d" % i)
        env = dict(os.environ)
        env["VIGIL_OPTIONS"] = "tools=preds:mode=off:out=%s" % d + ("" if plan else ":preds.collect=all")
        if plan:
            env["VIGIL_PLAN"] = plan
        p = run([binary] + args, input=data, capture_output=True, env=env)
        result = (p.returncode, p.stdout)
        if labels is not None and len(labels) <= i:
            labels.append(result)
        for sub in os.listdir(d) if os.path.isdir(d) else []:
            with open(os.path.join(d, sub, "label.txt"), "w") as f:
                f.write("vigil-feedback 1\nlabel %s\nend\n" % ("failure" if result != REFERENCE[i] else "success"))
            os.rename(os.path.join(d, sub), os.path.join(out_dir, "r%04d.%s" % (i, sub)))   # one level: vigil ingest DIR
        shutil.rmtree(d, ignore_errors=True)
    return labels


REFERENCE = []


def replay_begin(db, pdb):
    """A plan store with the complete store's schema and site descriptions, and no runs."""
    shutil.copy(db, pdb)
    c = sqlite3.connect(pdb)
    c.execute("CREATE TABLE replay_runs AS SELECT * FROM runs")
    c.execute("CREATE TABLE replay_obs AS SELECT * FROM observations")
    c.execute("DELETE FROM observations")
    c.execute("DELETE FROM crashes")
    c.execute("DELETE FROM runs")
    c.commit()
    return c


def replay_round(c, plan, it):
    """The runs of round it under the plan: the complete run's rows of the planned sites."""
    sites = [(f[1], int(f[2])) for f in (line.split() for line in open(plan)) if f and f[0] == "site"]
    c.execute("CREATE TEMPORARY TABLE IF NOT EXISTS planned (tu_hash TEXT, site_index INTEGER)")
    c.execute("DELETE FROM planned")
    c.executemany("INSERT INTO planned VALUES (?, ?)", sites)
    offset = it * 1000003   # a new run id per round
    c.execute("INSERT INTO runs SELECT run_id + ?, report_path, program, pid, start_unix_ns, failed, label_source,"
              " exit_status, signal, stack, 'plan', binary_counts FROM replay_runs", (offset,))
    c.execute("INSERT INTO observations SELECT o.run_id + ?, o.tu_hash, o.site_index, o.kind, o.observed, o.c0, o.c1, o.c2"
              " FROM replay_obs o JOIN planned p ON p.tu_hash = o.tu_hash AND p.site_index = o.site_index", (offset,))
    c.commit()


def sites_total(binary):
    p = run([VIGIL, "sites", binary], capture_output=True, text=True)
    return sum(1 for line in p.stdout.splitlines() if len(line.split()) > 1 and line.split()[1] in ("branch", "return", "case"))


def monitored(state):
    seen = set()
    for line in open(state):
        f = line.split()
        if f and f[0] in ("monitored", "planned"):
            seen.add((f[1], f[2]) if len(f) > 2 else tuple(f[1:]))
    return len(seen)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool", type=int, default=500)
    ap.add_argument("--max-iter", type=int, default=10)
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--faults", default="1,2,3,4,5")
    ap.add_argument("--no-adaptive", action="store_true")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--replay", action="store_true")
    ap.add_argument("--keep", metavar="DIR")
    a = ap.parse_args()
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    work = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix="vigil-preds-faults.")
    lines_out = []

    def say(s):
        print(s, flush=True)
        lines_out.append(s)

    commit = run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    say("# bench/preds-faults.py at %s: pool %d, adaptive up to %d rounds (importance, forward)%s"
        % (commit, a.pool, a.max_iter, ", replayed from the complete runs" if a.replay else ""))
    say("%-9s %5s %6s  %5s %5s %5s %5s %5s  %s" % ("program", "fault", "fail", "imp", "inc", "ttest", "fcnt", "elim", "adaptive"))
    results = []
    try:
        for name in a.programs.split(","):
            gen, args = PROGRAMS[name]
            src = os.path.join(SRC, name + ".c")
            r = random.Random(35000 + len(name))
            inputs = [gen(r) for _ in range(a.pool)]
            ref = os.path.join(work, name + "-ref")
            run(["clang", "-O2", "-w", "-DFAULT=0", src, "-o", ref], check=True)
            REFERENCE.clear()
            for data in inputs:
                p = run([ref] + args, input=data, capture_output=True)
                REFERENCE.append((p.returncode, p.stdout))
            for k in [int(x) for x in a.faults.split(",")]:
                lines = fault_lines(src, k)
                if not lines:
                    continue
                binary = os.path.join(work, "%s-%d" % (name, k))
                db = os.path.join(work, "%s-%d.db" % (name, k))
                kept = os.path.join(work, "%s-%d.nfail" % (name, k))
                if a.keep and os.path.exists(kept) and os.path.exists(binary) and os.path.exists(db):
                    nfail = int(open(kept).read())
                else:
                    env = dict(os.environ, VIGIL_CC_PRED_COUNTERS="1")
                    if run([VIGILCC, "-O2", "-g", "-w", "-DFAULT=%d" % k, src, "-o", binary], env=env).returncode:
                        say("%-9s %5d  build failed" % (name, k))
                        continue
                    labels = run_pool(binary, args, inputs, os.path.join(work, "%s-%d-all" % (name, k)), [])
                    nfail = sum(1 for i, res in enumerate(labels) if res != REFERENCE[i])
                    for f in (db, db + "-wal", db + "-shm"):
                        if os.path.exists(f):
                            os.remove(f)
                    run([VIGIL, "ingest", "-q", "--db", db, os.path.join(work, "%s-%d-all" % (name, k))], capture_output=True)
                    with open(kept, "w") as f:
                        f.write("%d\n" % nfail)
                ranks = [first_related(db, by, name, lines) for by in SCORES]
                adaptive = "-"
                found = None
                if not a.no_adaptive and nfail:
                    want = top_predictor(db)
                    tied = top_tied(db)
                    total = sites_total(binary)
                    pdb, state, plan = db + ".plan", db + ".state", db + ".vplan"
                    for f in (pdb, pdb + "-wal", pdb + "-shm", state):
                        if os.path.exists(f):
                            os.remove(f)
                    trace = open(os.path.join(work, "%s-%d.trace" % (name, k)), "w") if a.keep else None
                    found, it = False, 0
                    replay = replay_begin(db, pdb) if a.replay else None
                    p = run([VIGIL, "plan", "--db", pdb, "--state", state, binary, "-o", plan], capture_output=True, text=True)
                    if trace:
                        trace.write(p.stdout + p.stderr)
                    while p.returncode == 0 and it < a.max_iter:
                        it += 1
                        if replay:
                            replay_round(replay, plan, it)
                        else:
                            out = os.path.join(work, "%s-%d-it%d" % (name, k, it))
                            run_pool(binary, args, inputs, out, None, plan)
                            run([VIGIL, "ingest", "-q", "--db", pdb, out], capture_output=True)
                            shutil.rmtree(out, ignore_errors=True)
                        got = top_predictor(pdb)
                        if got == want or got in tied:
                            found = "found" if got == want else "found (tied)"
                            break
                        p = run([VIGIL, "plan", "--db", pdb, "--state", state, binary, "-o", plan], capture_output=True, text=True)
                        if trace:
                            trace.write(p.stdout + p.stderr)
                        if "search complete" in p.stdout:
                            break
                    if replay:
                        replay.close()
                    if trace:
                        trace.close()
                    share = 100.0 * monitored(state) / total if total else 0
                    adaptive = "%s after %d rounds, %.0f%% of %d sites" % (found or "NOT found", it, share, total)
                    found = (found, share)
                shutil.rmtree(os.path.join(work, "%s-%d-all" % (name, k)), ignore_errors=True)
                say("%-9s %5d %6d  %5s %5s %5s %5s %5s  %s" % (name, k, nfail, *[str(x) if x else "-" for x in ranks], adaptive))
                results.append((name, k, nfail, ranks, found))
        with_fail = [x for x in results if x[2]]
        with_pred = [x for x in with_fail if any(x[3])]
        say("")
        say("faults %d, with failing runs %d, with a fault-related predicate ranked %d" % (len(results), len(with_fail), len(with_pred)))
        for i, by in enumerate(SCORES):
            top1 = sum(1 for x in with_pred if x[3][i] == 1)
            top5 = sum(1 for x in with_pred if x[3][i] and x[3][i] <= 5)
            say("  %-10s first %2d, top-5 %2d of %d (%.0f%%; target 70%%)" % (by, top1, top5, len(with_pred), 100.0 * top5 / len(with_pred) if with_pred else 0))
        ad = [x[4] for x in with_fail if x[4]]
        if ad:
            hits = [s for f, s in ad if f]
            say("  adaptive   found the top predictor in %d of %d (%.0f%%; target 90%%; %d of them a predicate tied with it), sites monitored when found: mean %.0f%%, at most 30%% in %d"
                % (len(hits), len(ad), 100.0 * len(hits) / len(ad), sum(1 for f, s in ad if f == "found (tied)"),
                   sum(hits) / len(hits) if hits else 0, sum(1 for s in hits if s <= 30)))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    if not a.no_save:
        path = os.path.join(REPO, "bench", "results", "preds-faults-%s.txt" % datetime.date.today().isoformat())
        # appended, under the command that produced it: a day's earlier runs stay
        with open(path, "a") as f:
            f.write("\n## %s: python3 bench/preds-faults.py %s\n" % (
                datetime.datetime.now().isoformat(timespec="seconds"), " ".join(sys.argv[1:])))
            f.write("\n".join(lines_out) + "\n")
        print("appended to " + path)


if __name__ == "__main__":
    main()
