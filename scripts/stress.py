#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make stress: the stress and capacity cases of the e2e tests at full size.

Usage: scripts/stress.py [-v] [CASE ...]

The same checks as `make test` runs on smaller victims (see
tests/e2e/cases_stress.py), with:
  capacity_default  10,000,000 blocks outstanding, default --max-allocs: every
                    block not tracked counted as allocs_map_full, the report
                    naming --max-allocs
  capacity_raised   the same with --max-allocs 16777216: exact
  stress_c          2 threads x 2,000,000 blocks churned (about 6 M allocator
                    calls), -c: every site and every churn total exact
  stress_c4         4 threads x 1,000,000 on 2 CPUs
  stress_p          2 threads x 2,000,000, -p attached while they churn
  churn_outran      524,288 distinct stacks x 10 rounds (5.2 M allocations, at
                    most 2 blocks live) into a room of 16,384 stacks: no drop,
                    the 4,096 leaking stacks exact
  preempt           v_preempt, 16 threads x 4,096 blocks on 2 CPUs, 10 runs of
                    each build (1.3 M stack captures): every block under its
                    own thread's stack (tests/e2e/cases_unwinding.py, cfi_preempt)
Each line: ok/FAIL, the figures, the time. Needs root, like the e2e tests.
Results of a run are kept in docs/RELIABILITY.md.
"""

import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "tests", "e2e"))
import lib  # noqa: E402
import cases_limits  # noqa: E402
import cases_stress  # noqa: E402
import cases_unwinding  # noqa: E402


def sized(case, **globs):
	"""Run case with cases_stress.py's module-level sizes set to globs."""
	def go(work):
		saved = {k: getattr(cases_stress, k) for k in globs}
		try:
			for k, v in globs.items():
				setattr(cases_stress, k, v)
			return case(work)
		finally:
			for k, v in saved.items():
				setattr(cases_stress, k, v)
	return go


def repeated(case, runs):
	"""case, runs times over: the errors of the first run that has any."""
	def go(work):
		for i in range(runs):
			run = lib.Work(work.dir, "run%d" % i)
			try:
				errs = case(run)
			finally:
				run.close()
			if errs:
				return ["run %d: %s" % (i, e) for e in errs]
		return []
	return go


CASES = [
	("capacity_default", sized(cases_stress.capacity_case(None, False), CAPACITY_N=10000000)),
	("capacity_raised", sized(cases_stress.capacity_case(16777216, True), CAPACITY_N=10000000)),
	("stress_c", sized(cases_stress.case_stress_c, STRESS_THREADS=2, STRESS_OPS=2000000)),
	("stress_c4", sized(cases_stress.case_stress_c, STRESS_THREADS=4, STRESS_OPS=1000000)),
	("stress_p", sized(cases_stress.case_stress_p, STRESS_THREADS=2, STRESS_OPS=2000000)),
	("churn_outran", cases_limits.churn_case(19, 10, 128)),
	("preempt", repeated(cases_unwinding.cfi_case("v_preempt", "v_preempt.c", skip=("via_recurse",),
						      victim_args="16 4096"), 10)),
]


def main(argv):
	names = [a for a in argv if not a.startswith("-")]
	lib.VERBOSE = True		# the figures are what this is for
	lib.CASE_TIMEOUT = 600.0
	lib.STEP_TIMEOUT = 120.0
	why = lib.skip_reason(lib.TRACE, [])
	if why:
		print("stress: skipped: %s" % why)
		return 0
	err = lib.build_victims()
	if err:
		print("stress: %s" % err)
		return 1
	base = tempfile.mkdtemp(prefix="memleakbpf-stress-")
	failed = 0
	for name, fn in CASES:
		if names and name not in names:
			continue
		work = lib.Work(base, name)
		t0 = time.monotonic()
		try:
			errs = fn(work)
		except lib.CaseFailed as e:
			errs = [str(e)]
		finally:
			work.close()
		took = time.monotonic() - t0
		failed += bool(errs)
		print("%s %s (%.1f s)%s" % ("FAIL" if errs else "ok", name, took,
					   ": " + "; ".join(errs[:3]) if errs else ""), flush=True)
	if not failed:
		shutil.rmtree(base, ignore_errors=True)
	else:
		print("files of failed cases kept in %s" % base)
	return 1 if failed else 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
