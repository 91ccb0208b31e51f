#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make soak, the server half: memleakbpf left on a busy redis under --sample.

Usage: scripts/soak_redis.py [--seconds S] [--interval I] [--sample BYTES]

Starts Debian's redis-server (jemalloc; 127.0.0.1, a free port, no
persistence), attaches `memleakbpf -p PID --sample 512K --snapshot-dir DIR I`
as one would leave it on a server (I: 60 s), and keeps redis-benchmark
running against it (SET and GET of 100-byte values over 30,000 keys, in
batches, loopback only) for S seconds (600). Every 10 s it samples the
tracer's resident memory (VmRSS), the kernel memory charged for its BPF
maps and programs (memlock in its fdinfo), the snapshots written so far and
their size, and the CPU time of the tracer and of redis (utime + stime). The
reports' history is read from the tracer's output at the end: each report's
estimated outstanding bytes, its interval and its verdict.

Passes when the tracer's RSS grew by less than 10 % from the first minute
(or its first report) to the end, the BPF memory by less than 1 % (the
stack map grows by about 1 KiB a stack as it holds them), a snapshot
was written at every report, redis's estimated heap stayed within the
reports' intervals of one another (flat: the keys are rewritten, not
added), no report said leak, and the tracer's CPU stayed under 5 % of
redis's. Results of a run are kept in docs/RELIABILITY.md.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "tests", "e2e"))
import lib  # noqa: E402
import cases_stress  # noqa: E402
from bench_redis import HOST, cpu_s, free_port, wait_port  # noqa: E402
from soak import rss_kib  # noqa: E402

SAMPLE_S = 10
KEYS = 30000	# about 7 MiB of keys, values and entries, set within the first batch
OUTSTANDING = re.compile(r"^Outstanding: ~(\S+ \S+) ±(\S+ \S+) in ~([\d,]+) allocations? from "
			 r"([\d,]+) samples?", re.M)
VERDICT = re.compile(r"^Verdict: ([^\n]*)", re.M)
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def size_of(text):
	n, unit = text.split()
	return float(n) * UNITS[unit]


def history(text):
	"""Each report's (estimated outstanding bytes, its 95% margin, samples, verdict)."""
	verdicts = VERDICT.findall(text)
	rows = [(size_of(m.group(1)), size_of(m.group(2)), int(m.group(4).replace(",", "")))
		for m in OUTSTANDING.finditer(text)]
	return [r + (v,) for r, v in zip(rows, verdicts)]


def snapshots(d):
	files = [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".pb.gz")]
	return len(files), sum(os.path.getsize(f) for f in files)


def load(port, end):
	"""redis-benchmark in batches until end: the number of requests answered."""
	done = 0
	while time.monotonic() < end:
		subprocess.run(["redis-benchmark", "-h", HOST, "-p", str(port), "-t", "set,get", "-d", "100",
				"-r", str(KEYS), "-n", "100000", "-q"], stdout=subprocess.DEVNULL,
			       stderr=subprocess.DEVNULL, timeout=300, check=True)
		done += 200000
	return done


def check(rows, hist, interval, errs):
	warm = next((r for r in rows if r[0] >= max(60, interval)), rows[0])
	end = rows[-1]
	growth = (end[1] - warm[1]) / warm[1] if warm[1] else 0
	if growth > 0.10:
		errs.append("tracer RSS grew %.1f %% from %d s to the end" % (100 * growth, warm[0]))
	# The stack map takes about 1 KiB for each stack it holds, as it holds them.
	if end[2] > warm[2] * 1.01:
		errs.append("BPF memory grew from %d to %d KiB after %d s" % (warm[2], end[2], warm[0]))
	if end[4] and end[5] > 0.05 * end[4]:
		errs.append("tracer CPU %.1f s, %.1f %% of redis's %.1f s" % (
			end[5], 100 * end[5] / end[4], end[4]))
	# Flat: the reports' 95% intervals overlap (those of one or two samples say little).
	steady = [h for h in hist[1:] if h[2] > 2]
	lo = max((b - m for b, m, _, _ in steady), default=0)
	hi = min((b + m for b, m, _, _ in steady), default=0)
	if lo > hi:
		errs.append("the estimates of redis's heap do not overlap: %s" % [
			"%.1f±%.1f MiB" % (b / 2**20, m / 2**20) for b, m, _, _ in steady])
	said = [v for _, _, _, v in hist if v.startswith("leak")]
	if said:
		errs.append("%d reports said leak: %r" % (len(said), said[0]))
	return growth, warm


def main(argv):
	seconds, interval, sample = 600, 60, "512K"
	args = list(argv)
	while args:
		a = args.pop(0)
		if a == "--seconds":
			seconds = int(args.pop(0))
		elif a == "--interval":
			interval = int(args.pop(0))
		elif a == "--sample":
			sample = args.pop(0)
	why = lib.skip_reason(lib.TRACE, [])
	if not why and not (shutil.which("redis-server") and shutil.which("redis-benchmark")):
		why = "redis-server or redis-benchmark not installed (scripts/deps.sh installs them)"
	if why:
		print("soak-redis: skipped: %s" % why)
		return 0
	base = tempfile.mkdtemp(prefix="memleakbpf-soak-redis-")
	work = lib.Work(base, "soak")
	snapdir = work.path("snapshots")
	os.mkdir(snapdir)
	port = free_port()
	errs, rows = [], []
	try:
		server = work.start(["redis-server", "--port", str(port), "--bind", HOST, "--save", "",
				     "--appendonly", "no", "--daemonize", "no"], tag="redis")
		wait_port(port, time.monotonic() + 30)
		t = work.start([lib.TRACER, "-p", str(server.pid), "--sample", sample, "--snapshot-dir",
				snapdir, str(interval)], env=lib.tracer_env(work), tag="tracer")
		lib.wait_for(lambda: "memleakbpf: tracing" in work.read("tracer.stderr"),
			     time.monotonic() + 60, "the tracing line", alive=t)
		t0 = time.monotonic()
		c0 = cpu_s(server.pid), cpu_s(t.pid)
		print("%6s %10s %10s %10s %12s %10s %10s" % ("s", "RSS KiB", "BPF KiB", "snapshots",
							       "snap KiB", "redis CPU", "tracer CPU"),
		      flush=True)
		bench = subprocess.Popen([sys.executable, __file__, "--load", str(port),
					  str(seconds)], stdout=subprocess.PIPE)
		while True:
			el = time.monotonic() - t0
			n, size = snapshots(snapdir)
			# s, RSS KiB, BPF KiB, snapshots, redis CPU s, tracer CPU s, snapshots KiB
			row = (el, rss_kib(t.pid), cases_stress.bpf_memlock(t.pid)[0] // 1024, n,
			       cpu_s(server.pid) - c0[0], cpu_s(t.pid) - c0[1], size // 1024)
			rows.append(row)
			print("%6.0f %10d %10d %10d %12d %10.1f %10.1f" % (
				row[0], row[1], row[2], row[3], row[6], row[4], row[5]), flush=True)
			if el >= seconds:
				break
			time.sleep(min(SAMPLE_S, seconds - el) or SAMPLE_S)
		requests = int(bench.communicate(timeout=600)[0] or 0)
		t.send_signal(signal.SIGINT)
		rc = lib.wait_exit(t, time.monotonic() + 120, "memleakbpf at the end of the soak")
		if rc != 0:
			errs.append("exit status %s" % rc)
		hist = history(work.read("tracer.stdout"))
		reports = len(hist)
		n = snapshots(snapdir)[0]
		if n < reports - 1 or not reports:
			errs.append("%d reports, %d snapshots" % (reports, n))
		growth, warm = check(rows, hist, interval, errs)
	finally:
		work.close()
	end = rows[-1]
	print("soak-redis: %d s, %d requests, %d reports; tracer RSS %d KiB at %d s, %d KiB at the "
	      "end (%+.1f %%); BPF %d KiB at the end; %d snapshots, %d KiB; CPU: redis %.1f s, "
	      "tracer %.1f s (%.2f %%)" % (end[0], requests, reports, warm[1], warm[0], end[1],
					 100 * growth, end[2], end[3], end[6], end[4], end[5],
					 100 * end[5] / end[4] if end[4] else 0))
	for b, m, s, v in hist:
		print("  report: ~%.1f MiB ±%.1f MiB from %d samples; %s" % (b / 2**20, m / 2**20, s, v))
	print("soak-redis: %s%s" % ("FAIL: " if errs else "ok", "; ".join(errs)))
	if not errs:
		shutil.rmtree(base, ignore_errors=True)
	return 1 if errs else 0


if __name__ == "__main__":
	if sys.argv[1:2] == ["--load"]:
		print(load(int(sys.argv[2]), time.monotonic() + float(sys.argv[3])))
		sys.exit(0)
	sys.exit(main(sys.argv[1:]))
