#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""What each BPF program of one memleakbpf run costs, by the kernel's own
statistics (docs/PERFORMANCE.md, "Python frames at a code object's cost").

  scripts/bpf_stats.py [--tracer PATH] [--fifo] [--env K=V]... [--arg=OPTION]... -- COMMAND

Runs `memleakbpf [OPTION]... -c COMMAND 3600` (one report, at the end;
--arg=--sample --arg=512K for sampled mode) with the
kernel's run-time statistics on, held by a BPF_ENABLE_STATS descriptor for
the run (so that nothing else turning kernel.bpf_stats_enabled off ends
them early), reads run_cnt and run_time_ns of the tracer's programs from
/proc/PID/fdinfo while it runs, and prints, per program name, its runs and
its mean time per run. The statistics add about 48 ns to every run.

--fifo runs COMMAND under SCHED_FIFO 1 (chrt): uprobe programs run with
preemption on, so on a loaded machine a program's time also counts the
time others ran while it was preempted (several microseconds a run at a
load average of 14 on 2 CPUs); under SCHED_FIFO the target, in whose
context the programs run, is not preempted by ordinary tasks. It holds a
CPU for the whole run: keep COMMAND short. Needs root, like memleakbpf.

--since REGEX also gives the figures from the first line of the run's output
that matches REGEX on (the programs' statistics read as it is printed): a
part of a job, such as torch_train.py's loop ("training"), apart from its
start-up. --show REGEX prints the lines of the output that match it (the
job's own timing, say).
"""

import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYS_BPF = 321		# x86-64
BPF_ENABLE_STATS = 32
BPF_STATS_RUN_TIME = 0
POLL_S = 0.2


def enable_stats():
	"""A descriptor that keeps the statistics on while it is open."""
	libc = ctypes.CDLL(None, use_errno=True)
	attr = (ctypes.c_uint32 * 32)()
	attr[0] = BPF_STATS_RUN_TIME
	fd = libc.syscall(SYS_BPF, BPF_ENABLE_STATS, ctypes.byref(attr), ctypes.sizeof(attr))
	if fd < 0:
		sys.exit("bpf_stats: BPF_ENABLE_STATS: %s" % os.strerror(ctypes.get_errno()))
	return fd


def prog_name(prog_id):
	r = subprocess.run(["bpftool", "prog", "show", "id", str(prog_id), "-j"],
			   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
	try:
		return json.loads(r.stdout)["name"]
	except (ValueError, KeyError):
		return "prog%d" % prog_id


def read_progs(pid, names, progs):
	"""The (name, runs, ns) of each BPF program pid holds, into progs by id."""
	d = "/proc/%d/fd" % pid
	try:
		fds = os.listdir(d)
	except OSError:
		return
	for f in fds:
		try:
			if os.readlink(os.path.join(d, f)) != "anon_inode:bpf-prog":
				continue
			with open("/proc/%d/fdinfo/%s" % (pid, f)) as info:
				kv = dict(l.split(":", 1) for l in info.read().splitlines() if ":" in l)
			i = int(kv["prog_id"])
		except (OSError, KeyError, ValueError):
			continue
		if i not in names:
			names[i] = prog_name(i)
		progs[i] = (names[i], int(kv.get("run_cnt", 0)), int(kv.get("run_time_ns", 0)))


def totals(progs):
	"""{name: [runs, ns]} summed over the programs of one name."""
	out = {}
	for name, runs, ns in progs.values():
		r = out.setdefault(name, [0, 0])
		r[0] += runs
		r[1] += ns
	return out


def run(tracer, args, command, env, fifo, since, show):
	"""{name: [runs, ns]} of the tracer's programs over the run of command,
	and over its part from the first line matching since (None: no such part)."""
	cmd = ("chrt -f 1 " if fifo else "") + command
	p = subprocess.Popen([tracer] + args + ["-c", cmd, "3600"], env=env,
			     stdout=subprocess.PIPE if since or show else subprocess.DEVNULL,
			     universal_newlines=True, errors="replace")
	names, progs, mark = {}, {}, []

	def poll():
		while p.poll() is None:
			read_progs(p.pid, names, progs)
			time.sleep(POLL_S)

	def lines():
		for line in p.stdout:
			if since and not mark and re.search(since, line):
				read_progs(p.pid, names, progs)
				mark.append(totals(progs))
			if show and re.search(show, line):
				sys.stdout.write(line)
	t = threading.Thread(target=poll)
	t.start()
	r = None
	if p.stdout:
		r = threading.Thread(target=lines)
		r.start()
	p.wait()
	t.join()
	if r:
		r.join()
	whole = totals(progs)
	if not mark:
		return whole, None
	part = {n: [v[0] - mark[0].get(n, [0, 0])[0], v[1] - mark[0].get(n, [0, 0])[1]]
		for n, v in whole.items()}
	return whole, part


def show_progs(title, progs):
	if title:
		print(title)
	for name, (runs, ns) in sorted(progs.items(), key=lambda x: -x[1][1]):
		if runs:
			print("%-20s %10d runs %8.0f ns/run %8.3f s" % (name, runs, ns / runs, ns / 1e9))


def main():
	ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
	ap.add_argument("--tracer", default=os.path.join(ROOT, "memleakbpf"))
	ap.add_argument("--fifo", action="store_true")
	ap.add_argument("--env", action="append", default=[], metavar="K=V")
	ap.add_argument("--arg", action="append", default=[], metavar="OPTION")
	ap.add_argument("--since", metavar="REGEX")
	ap.add_argument("--show", metavar="REGEX")
	ap.add_argument("command", nargs="+")
	a = ap.parse_args()
	if os.geteuid():
		sys.exit("bpf_stats: needs root (memleakbpf loads BPF programs)")
	env = dict(os.environ)
	env.update(kv.split("=", 1) for kv in a.env)
	fd = enable_stats()
	whole, part = run(a.tracer, a.arg, " ".join(a.command), env, a.fifo, a.since, a.show)
	os.close(fd)
	show_progs("the whole run:" if a.since else "", whole)
	if a.since:
		if part is None:
			print("no line of the output matched %r" % a.since)
			return 1
		show_progs("from the first line matching %r:" % a.since, part)
	return 0


if __name__ == "__main__":
	sys.exit(main())
