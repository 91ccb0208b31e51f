#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make soak: trace a busy victim for a long time, and watch the tracer's memory.

Usage: scripts/soak.py [--seconds S] [--threads N]

Runs memleakbpf -c 'v_stress wait N 1000' 1: two threads (by default) churn
through malloc, calloc, realloc and free, freeing each other's blocks, without
end, and the tracer prints a report every second. Every 10 s it samples the
tracer's resident memory (VmRSS), the kernel memory charged for its BPF maps
and programs (memlock in its fdinfo), the outstanding blocks of the last
report, and the victim's allocator calls since tracing began. After S seconds
(600) the victim is told to finish; its final report must then be exact.

Passes when the tracer's RSS grew by less than 10 % from the first minute to
the end, the BPF memory did not change, and the final report is exact.
Results of a run are kept in docs/RELIABILITY.md.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "tests", "e2e"))
import lib  # noqa: E402
import cases_stress  # noqa: E402

SAMPLE_S = 10
OUTSTANDING = re.compile(r"^Outstanding: .* in ([\d,]+) allocations? \(([\d,]+) allocations?, ([\d,]+) frees?",
			 re.M)


def rss_kib(pid):
	with open("/proc/%d/status" % pid) as f:
		return int(re.search(r"^VmRSS:\s*(\d+)", f.read(), re.M).group(1))


def last_report(path):
	"""(outstanding blocks, allocations since tracing began) of the last report."""
	with open(path, "rb") as f:
		f.seek(max(0, os.path.getsize(path) - 65536))
		text = f.read().decode("utf-8", "replace")
	m = None
	for m in OUTSTANDING.finditer(text):
		pass
	if not m:
		return 0, 0
	return int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))


def main(argv):
	seconds, threads = 600, 2
	args = list(argv)
	while args:
		a = args.pop(0)
		if a == "--seconds":
			seconds = int(args.pop(0))
		elif a == "--threads":
			threads = int(args.pop(0))
	why = lib.skip_reason(lib.TRACE, [])
	if why:
		print("soak: skipped: %s" % why)
		return 0
	base = tempfile.mkdtemp(prefix="memleakbpf-soak-")
	work = lib.Work(base, "soak")
	binary = lib.victim("v_stress")
	out = work.path("tracer.stdout")
	t = work.start([lib.TRACER, "--json", work.path("report.json"), "-c",
			"%s wait %d 1000" % (binary, threads), "1"], env=lib.tracer_env(work),
		       stdin=subprocess.PIPE, tag="tracer")
	try:
		lib.wait_for(lambda: lib.find_line(work.read("tracer.stdout"), "READY pid="),
			     time.monotonic() + 30, "READY", alive=t)
		t0 = time.monotonic()
		rows = []
		print("%6s %10s %12s %12s %14s" % ("s", "RSS KiB", "BPF KiB", "live blocks",
						   "allocs traced"), flush=True)
		while True:
			el = time.monotonic() - t0
			live, allocs = last_report(out)
			row = (el, rss_kib(t.pid), cases_stress.bpf_memlock(t.pid)[0] // 1024, live, allocs)
			rows.append(row)
			print("%6.0f %10d %12d %12d %14d" % row, flush=True)
			if el >= seconds:
				break
			time.sleep(min(SAMPLE_S, seconds - el) or SAMPLE_S)
		t.stdin.write(b"go\nexit\n")
		t.stdin.close()
		rc = lib.wait_exit(t, time.monotonic() + 120, "memleakbpf at the end of the soak")
		reports = lib.report_count(work)
		errs = lib.check_report(lib.load_report(work.path("report.json")), lib.read_truth(work),
					binary, "v_stress.c")
		errs += cases_stress.check_churn_totals(work, lib.load_report(work.path("report.json")))
		if rc != 0:
			errs.append("exit status %s" % rc)
	finally:
		work.close()
	warm = next((r for r in rows if r[0] >= 60), rows[0])
	end = rows[-1]
	growth = (end[1] - warm[1]) / warm[1] if warm[1] else 0
	if growth > 0.10:
		errs.append("tracer RSS grew %.1f %% after the first minute" % (100 * growth))
	if len({r[2] for r in rows}) != 1:
		errs.append("BPF memory changed: %s KiB" % sorted({r[2] for r in rows}))
	print("soak: %d s, %d reports; tracer RSS %d KiB at %d s, %d KiB at the end (%+.1f %%); "
	      "BPF %d KiB throughout; %d allocator calls traced" % (
		      end[0], reports, warm[1], warm[0], end[1], 100 * growth, end[2], end[4]))
	print("soak: %s%s" % ("FAIL: " if errs else "ok", "; ".join(errs)))
	if not errs:
		shutil.rmtree(base, ignore_errors=True)
	return 1 if errs else 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
