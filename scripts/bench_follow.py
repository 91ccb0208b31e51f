#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""--follow's costs (`make bench`, or alone: bench_follow.py [--runs N]).

Three runs of tests/bench/wl, each untraced, under memleakbpf -c (the
children not followed) and under memleakbpf -c --follow, interleaved, the
medians of N rounds:

  forks 1000 1       per fork: the time of the fork-and-wait loop per child
                     (--follow holds each child at its fork until its links
                     are made, and closes them when it exits)
  forks 1 200000     per call in a child: one child's malloc/free pairs,
                     timed in the child (followed: a hash lookup of its tgid
                     on each probe; not followed: the trap without BPF)
  loop 200000 64     per call in the target itself: --follow adds nothing
                     there (the target's tgid is compared first)

Prints a table; the figures are for the final message or docs/PERFORMANCE.md.
"""

import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
TRACER = os.path.join(ROOT, "memleakbpf")
WL = os.path.join(ROOT, ".output", "bench", "wl")
RUNS = 5
TIMEOUT = 300

WORKLOADS = {
	"per fork": (["forks", "1000", "1"], "ns_per_fork"),
	"per call, child": (["forks", "1", "200000"], "ns_per_pair"),
	"per call, target": (["loop", "200000", "64"], "ns_per_pair"),
}
MODES = {
	"untraced": [],
	"memleakbpf": [TRACER, "-c"],
	"memleakbpf --follow": [TRACER, "--follow", "-c"],
}


def run(work, argv, mode):
	out = os.path.join(work, "result")
	if os.path.exists(out):
		os.unlink(out)
	prog = [WL] + argv
	cmd = prog if not MODES[mode] else MODES[mode] + [" ".join(prog)]
	env = dict(os.environ, BENCH_OUT=out)
	subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
		       stderr=subprocess.DEVNULL, timeout=TIMEOUT, check=False)
	with open(out) as f:
		return dict((k, float(v)) for k, v in (x.split("=", 1) for x in f.read().split()))


def measure(runs):
	vals = {}
	work = tempfile.mkdtemp(prefix="memleakbpf-follow-")
	for r in range(runs):
		sys.stderr.write("bench_follow: round %d of %d\n" % (r + 1, runs))
		for w, (argv, key) in WORKLOADS.items():
			for m in MODES:
				try:
					vals.setdefault((w, m), []).append(run(work, argv, m)[key])
				except (OSError, KeyError, subprocess.TimeoutExpired) as e:
					sys.stderr.write("bench_follow: %s under %s: %s\n" % (w, m, e))
	return vals


def table(vals):
	rows = [("what", "mode", "ns (median)", "min..max", "added to untraced")]
	for w, (_, key) in WORKLOADS.items():
		base = statistics.median(vals.get((w, "untraced")) or [0])
		for m in MODES:
			v = vals.get((w, m))
			if not v:
				rows.append((w, m, "failed", "", ""))
				continue
			med = statistics.median(v)
			rows.append((w, m, "%.0f" % med, "%.0f..%.0f" % (min(v), max(v)),
				     "" if m == "untraced" else "%+.0f" % (med - base)))
	widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
	return "\n".join("  ".join(c.ljust(wd) for c, wd in zip(r, widths)) for r in rows)


def bench(runs=RUNS):
	if os.geteuid() != 0 or not os.path.exists(WL) or not os.path.exists(TRACER):
		sys.stderr.write("bench_follow: needs root, %s and %s (make bench)\n" % (TRACER, WL))
		return 1
	print(table(measure(runs)))
	return 0


if __name__ == "__main__":
	n = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "--runs" else RUNS
	sys.exit(bench(n))
