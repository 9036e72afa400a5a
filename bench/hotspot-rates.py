#!/usr/bin/env python3
"""The hot-spot profiler's sampling cost on one CPU-bound program, alternating runs, medians of
CPU time (user + system, from wait4), each variant against the first (the same vigil build in
mode=off: what a run with the hotspot tool alone runs as). The run's output goes to /dev/null,
its report to a temporary directory.

usage: bench/hotspot-rates.py "PROGRAM ARGS" NAME=VIGIL_OPTIONS...      Environment: RUNS (9)
e.g.   bench/hotspot-rates.py ./callers off=mode=off hot=tools=hotspot one=tools=hotspot:hotspot.late_period=0
(tools/hotspot/tests/callers.c built with vigil-cc -O2 -g -fno-omit-frame-pointer)
"""
import os
import shutil
import statistics
import sys
import tempfile

if len(sys.argv) < 3 or any('=' not in a for a in sys.argv[2:]):
    sys.exit(__doc__)
cmd = sys.argv[1].split()
variants = [a.split('=', 1) for a in sys.argv[2:]]
runs = int(os.environ.get('RUNS', '9'))
out = tempfile.mkdtemp(prefix='vigil-rates.')
cpu = {name: [] for name, _ in variants}
try:
    for r in range(runs):
        for name, opts in (variants if r % 2 == 0 else variants[::-1]):
            shutil.rmtree(out + '/r', ignore_errors=True)
            env = dict(os.environ, VIGIL_OPTIONS=opts + ':out=' + out + '/r')
            pid = os.fork()
            if pid == 0:
                fd = os.open('/dev/null', os.O_WRONLY)
                os.dup2(fd, 1)
                os.execvpe(cmd[0], cmd, env)
            _, status, usage = os.wait4(pid, 0)
            if status != 0:
                sys.exit('%s: %s exited with status %d' % (name, cmd[0], status))
            cpu[name].append(usage.ru_utime + usage.ru_stime)
finally:
    shutil.rmtree(out, ignore_errors=True)
base = statistics.median(cpu[variants[0][0]])
print('%s, %d alternating runs, medians of CPU time:' % (' '.join(cmd), runs))
for name, opts in variants:
    m = statistics.median(cpu[name])
    print('  %-10s %7.3f s  x %.3f   (%s)' % (name, m, m / base, opts))
