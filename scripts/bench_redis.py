#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bench, a real server: Debian's redis-server (jemalloc) under redis-benchmark.

Usage: scripts/bench_redis.py [--rounds N] [--requests N] [--no-doc]

Each round starts a fresh redis-server on 127.0.0.1 (a free port, no
persistence) for each mode, interleaved so that drift of the machine spreads
over all of them alike:
  untraced     redis alone
  memleakbpf   ./memleakbpf -p PID attached before the benchmark starts
  sample-64K, sample-512K
               the same with --sample 64K and 512K (issue 26)
  floor        the same, with BPF programs that return at once
               (MEMLEAKBPF_BENCH_FLOOR=1): what the uprobes alone cost
  heaptrack    heaptrack -p PID (runtime injection through gdb)
and runs `redis-benchmark -t set,get -d 100 -n REQUESTS` against it. The
figure is requests per second, SET and GET together (the harmonic mean of
the two rates, which is what the whole run achieved); the result is each
tracer's throughput over the untraced one, median over the rounds; beside
it, redis's own CPU time per request in each mode (the traps and the BPF
programs run in its time; waiting for a core does not). Traffic
goes to the loopback address only, bounded in count and time.

Prints the table and rewrites the redis section of docs/PERFORMANCE.md.
"""

import os
import signal
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
TRACER = os.path.join(ROOT, "memleakbpf")
DOC = os.path.join(ROOT, "docs", "PERFORMANCE.md")
BEGIN, END = "<!-- bench-redis:begin -->", "<!-- bench-redis:end -->"
MODES = ("untraced", "memleakbpf", "sample-64K", "sample-512K", "floor", "heaptrack")
SAMPLES = {"sample-64K": ["--sample", "64K"], "sample-512K": ["--sample", "512K"]}
HOST = "127.0.0.1"
STEP_TIMEOUT = 60
CPU = {}	# mode: [the tracer's CPU time over redis's, each run]
# mode: [redis's own CPU time per request, us, each run]: the traps and BPF
# programs run in its time, and a core's wait is not in it, so it holds
# where the machine's load moves the throughput by a third.
SERVER_US = {}


def say(msg):
	sys.stderr.write("bench-redis: %s\n" % msg)
	sys.stderr.flush()


def free_port():
	with socket.socket() as s:
		s.bind((HOST, 0))
		return s.getsockname()[1]


def wait_port(port, deadline):
	while time.monotonic() < deadline:
		try:
			with socket.create_connection((HOST, port), timeout=0.2):
				return
		except OSError:
			time.sleep(0.05)
	raise RuntimeError("redis-server did not listen on port %d" % port)


def wait_line(path, text, deadline, proc):
	while time.monotonic() < deadline:
		if os.path.exists(path) and text in open(path, errors="replace").read():
			return
		if proc.poll() is not None:
			raise RuntimeError("%s exited (%s): see %s" % (proc.args[0], proc.returncode, path))
		time.sleep(0.05)
	raise RuntimeError("no %r in %s" % (text, path))


def rps(port, requests):
	"""Requests per second over the whole SET+GET run."""
	out = subprocess.run(["redis-benchmark", "-h", HOST, "-p", str(port), "-t", "set,get",
			      "-d", "100", "-n", str(requests), "-q", "--csv"],
			     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=600,
			     check=True).stdout.decode()
	rates = [float(line.split(",")[1].strip('"')) for line in out.splitlines()[1:] if line]
	if len(rates) != 2:
		raise RuntimeError("redis-benchmark printed %r" % out)
	return len(rates) / sum(1 / r for r in rates)


def cpu_s(pid):
	"""utime + stime of pid, in seconds (the BPF programs run in redis's time, not ours)."""
	with open("/proc/%d/stat" % pid) as f:
		fields = f.read().rsplit(")", 1)[1].split()
	return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop(proc, sig=signal.SIGINT):
	if proc.poll() is None:
		proc.send_signal(sig)
		try:
			proc.wait(30)
		except subprocess.TimeoutExpired:
			proc.kill()
			proc.wait()


def one_run(mode, requests, work):
	port = free_port()
	log = os.path.join(work, "%s.%d" % (mode, port))
	server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", HOST, "--save", "",
				   "--appendonly", "no", "--daemonize", "no"],
				  stdout=open(log + ".redis", "wb"), stderr=subprocess.STDOUT)
	tracer = None
	try:
		wait_port(port, time.monotonic() + STEP_TIMEOUT)
		if mode in ("memleakbpf", "floor") or mode in SAMPLES:
			env = dict(os.environ, MEMLEAKBPF_BENCH_FLOOR="1" if mode == "floor" else "0")
			tracer = subprocess.Popen([TRACER] + SAMPLES.get(mode, []) +
						  ["-p", str(server.pid), "3600"], env=env,
						  stdout=subprocess.DEVNULL, stderr=open(log + ".err", "wb"))
			wait_line(log + ".err", "memleakbpf: tracing", time.monotonic() + STEP_TIMEOUT, tracer)
		elif mode == "heaptrack":
			tracer = subprocess.Popen(["heaptrack", "-o", log + ".heaptrack", "-p", str(server.pid)],
						  stdout=open(log + ".err", "wb"), stderr=subprocess.STDOUT)
			wait_line(log + ".err", "injection finished", time.monotonic() + STEP_TIMEOUT, tracer)
		c0 = cpu_s(server.pid), cpu_s(tracer.pid) if tracer and mode != "heaptrack" else 0
		r = rps(port, requests)
		# SET and GET: 2 * requests in all.
		SERVER_US.setdefault(mode, []).append((cpu_s(server.pid) - c0[0]) * 1e6 / (2 * requests))
		if tracer and mode != "heaptrack":
			CPU.setdefault(mode, []).append((cpu_s(tracer.pid) - c0[1]) /
							max(cpu_s(server.pid) - c0[0], 1e-9))
		return r
	finally:
		if tracer and mode != "heaptrack":
			stop(tracer)
		stop(server, signal.SIGTERM)
		if tracer:
			stop(tracer)


def measure(rounds, requests, work):
	vals, errors = {}, {}
	for r in range(rounds):
		say("round %d of %d" % (r + 1, rounds))
		for mode in MODES:
			try:
				vals.setdefault(mode, []).append(one_run(mode, requests, work))
			except (RuntimeError, OSError, subprocess.SubprocessError) as e:
				errors[mode] = str(e)
	return vals, errors


def rows_of(vals, errors):
	rows = [("mode", "requests/s (median)", "spread (min..max)", "x untraced")]
	base = statistics.median(vals["untraced"]) if vals.get("untraced") else None
	for mode in MODES:
		v = vals.get(mode)
		if not v:
			rows.append((mode, "n/a", errors.get(mode, "not run")[:60], ""))
			continue
		m = statistics.median(v)
		rows.append((mode, "%.0f" % m, "%.0f..%.0f" % (min(v), max(v)),
			     "%.2f" % (m / base) if base else ""))
	return rows


def verdicts(vals):
	med = {m: statistics.median(v) for m, v in vals.items() if v}
	if "untraced" not in med or "memleakbpf" not in med:
		return []
	x = med["memleakbpf"] / med["untraced"]
	lines = ["memleakbpf -p keeps %.2f of redis's throughput (target at least 0.5: %s)" % (
		x, "met" if x >= 0.5 else "not met")]
	if "floor" in med:
		lines.append("the bare probes (floor) keep %.2f: memleakbpf's programs cost %.0f%% of "
			     "what tracing takes" % (med["floor"] / med["untraced"],
						     100 * (1 / x - med["untraced"] / med["floor"]) /
						     max(1 / x - 1, 1e-9)))
	if "sample-512K" in med:
		sx = med["sample-512K"] / med["untraced"]
		lines.append("memleakbpf -p --sample 512K keeps %.2f (target at least 0.72: %s)" % (
			sx, "met" if sx >= 0.72 else "not met"))
	if SERVER_US.get("untraced"):
		base = statistics.median(SERVER_US["untraced"])
		lines.append("redis's own CPU per request, us (median; untraced over it, the throughput "
			     "a CPU-bound redis would keep): " + ", ".join(
				     "%s %.1f (%.2f)" % (m, statistics.median(SERVER_US[m]),
							 base / statistics.median(SERVER_US[m]))
				     for m in MODES if SERVER_US.get(m)))
	for mode in ("memleakbpf", "sample-512K"):
		if CPU.get(mode):
			c = statistics.median(CPU[mode])
			lines.append("%s: the tracer's own CPU %.1f%% of redis's (target under 5%%: %s)" % (
				mode, 100 * c, "met" if c < 0.05 else "not met"))
	if "heaptrack" in med:
		h = med["heaptrack"] / med["untraced"]
		lines.append("heaptrack -p keeps %.2f (target: memleakbpf no worse: %s)" % (
			h, "met" if x >= h else "not met"))
	return lines


def write_doc(rows, lines, rounds, requests):
	stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
	table = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
	table += ["| " + " | ".join(r) + " |" for r in rows[1:]]
	section = [BEGIN, "", "Last run: %s; %d interleaved rounds of `redis-benchmark -t set,get "
		   "-d 100 -n %d` against a fresh redis-server each." % (stamp, rounds, requests), ""]
	section += table + [""] + ["- " + l for l in lines] + ["", END]
	text = open(DOC).read()
	if BEGIN in text and END in text:
		head, rest = text.split(BEGIN, 1)
		text = head + "\n".join(section) + rest.split(END, 1)[1]
	else:
		text += "\n## A real server: redis\n\n" + "\n".join(section) + "\n"
	with open(DOC, "w") as f:
		f.write(text)


def main(argv):
	rounds, requests, doc = 3, 200000, True
	args = list(argv)
	while args:
		a = args.pop(0)
		if a == "--rounds":
			rounds = int(args.pop(0))
		elif a == "--requests":
			requests = int(args.pop(0))
		elif a == "--no-doc":
			doc = False
		else:
			print(__doc__.strip())
			return 0 if a in ("-h", "--help") else 2
	for tool in ("redis-server", "redis-benchmark"):
		if not any(os.access(os.path.join(d, tool), os.X_OK)
			   for d in os.environ.get("PATH", "").split(":")):
			say("skipped: %s is not installed (scripts/deps.sh installs redis-server, redis-tools)" % tool)
			return 0
	work = "/tmp/memleakbpf-bench-redis"
	os.makedirs(work, exist_ok=True)
	vals, errors = measure(rounds, requests, work)
	rows, lines = rows_of(vals, errors), verdicts(vals)
	print("\n".join("  ".join(c.ljust(22) for c in r).rstrip() for r in rows))
	for l in lines:
		print("target: " + l)
	for mode, why in errors.items():
		say("%s: %s" % (mode, why))
	if doc and rounds >= 3:
		write_doc(rows, lines, rounds, requests)
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
