# SPDX-License-Identifier: GPL-2.0
"""Processes the target starts: counted without --follow.

children_not_traced: v_fork's three workers under -c without --follow: the
parent's figures exact (its children's frees of their copies of its blocks
are not its frees), and the report says that 3 processes were not traced,
naming --follow, in the text and in the JSON (totals.untraced_children).
"""

import subprocess
import time

import lib
from lib import (TRACE, TRACER, check_report, common_checks, load_report, read_truth,
	tracer_env, victim, wait_exit)


def run_fork_victim(work, mode, n, extra=()):
	"""memleakbpf --json J [extra] -c 'v_fork MODE N' to completion: (rc, report, truth)."""
	js = work.path("report.json")
	argv = [TRACER, "--json", js] + list(extra) + ["-c", "%s %s %d" % (victim("v_fork"), mode, n)]
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	p = work.start(argv, env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, deadline, "memleakbpf -c v_fork")
	return rc, load_report(js), read_truth(work)


def case_children_not_traced(work):
	rc, rep, truth = run_fork_victim(work, "workers", 3)
	errs = check_report(rep, truth, victim("v_fork"), "v_fork.c")
	n = rep["totals"].get("untraced_children")
	if n != 3:
		errs.append("totals.untraced_children %r, expected 3" % n)
	out = work.read("tracer.stdout")
	want = "Not traced: 3 processes started by pid "
	lines = [l for l in out.splitlines() if l.startswith(want)]
	if len(lines) != 1 or "--follow" not in lines[0]:
		errs.append("no line %r naming --follow in the text report" % want)
	common_checks(work, rc, 0, errs)
	return errs


CASES = [
	# (name, kind, needs extra files, function)
	("children_not_traced", TRACE, [], case_children_not_traced),
]
