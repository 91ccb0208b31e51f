#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make fuzz: run each libFuzzer target for a bounded time and sum it up.

Usage: scripts/fuzz.py [--runs N] [--time S] NAME...

Each .output/fuzz/fuzz_NAME runs until N inputs or S seconds, whichever
comes first, from tests/fuzz/corpus/NAME (read only: new inputs go to
.output/fuzz/work/NAME), with AddressSanitizer and UndefinedBehaviorSanitizer.
A crash, a sanitizer report, a broken invariant, a hang (10 s per input) or
running out of memory fails the run; the input is kept as
.output/fuzz/crash-NAME-*. One line per target, then the table is also in
.output/fuzz/summary.txt (docs/RELIABILITY.md records a run).
"""

import os
import re
import subprocess
import sys
import time

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
FUZZ = os.path.join(ROOT, ".output", "fuzz")


def run(name, runs, seconds):
	binary = os.path.join(FUZZ, "fuzz_" + name)
	work = os.path.join(FUZZ, "work", name)
	corpus = os.path.join(ROOT, "tests", "fuzz", "corpus", name)
	os.makedirs(work, exist_ok=True)
	log = os.path.join(FUZZ, name + ".log")
	argv = [binary, "-runs=%d" % runs, "-max_total_time=%d" % seconds, "-timeout=10",
		"-rss_limit_mb=2048", "-print_final_stats=1",
		"-artifact_prefix=%s/crash-%s-" % (FUZZ, name), work, corpus]
	t0 = time.monotonic()
	with open(log, "w") as f:
		rc = subprocess.call(argv, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT)
	took = time.monotonic() - t0
	text = open(log, errors="replace").read()
	m = re.search(r"stat::number_of_executed_units:\s*(\d+)", text)
	execs = int(m.group(1)) if m else 0
	m = re.search(r"stat::peak_rss_mb:\s*(\d+)", text)
	rss = int(m.group(1)) if m else 0
	cov = re.findall(r"cov: (\d+) ft: (\d+)", text)
	units = len(os.listdir(work)) + len(os.listdir(corpus))
	return rc, execs, took, rss, cov[-1] if cov else ("?", "?"), units, log


def main(argv):
	runs, seconds, names = 1000000, 600, []
	args = list(argv)
	while args:
		a = args.pop(0)
		if a == "--runs":
			runs = int(args.pop(0))
		elif a == "--time":
			seconds = int(args.pop(0))
		else:
			names.append(a)
	lines, failed = [], False
	for name in names:
		rc, execs, took, rss, (cov, ft), units, log = run(name, runs, seconds)
		ok = rc == 0
		failed |= not ok
		line = "%-9s %s %10d executions in %6.1f s (%7.0f/s), coverage %s edges, %s features, corpus %d, peak RSS %d MiB" % (
			name, "ok  " if ok else "FAIL", execs, took, execs / took if took else 0, cov, ft,
			units, rss)
		if not ok:
			line += " -- see %s" % log
		print(line, flush=True)
		lines.append(line)
	with open(os.path.join(FUZZ, "summary.txt"), "w") as f:
		f.write("\n".join(lines) + "\n")
	return 1 if failed else 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
