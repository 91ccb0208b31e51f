#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""End-to-end tests: run the real ./memleakbpf on the victims and compare.

Usage: tests/e2e/run.py [-v] [--keep] [--list] [--timeout S] [CASE|GLOB ...]

Each victim (tests/victims/, see truth.h there) writes TRUTH lines to the
file named by $VICTIM_TRUTH: per allocation site (a site_* function) and API,
the bytes and blocks it still holds, the line of the allocation call, and its
own callers. A case traces the victim with `--json`, groups the report's
stacks by (frames[0].function, api) and compares bytes and allocs with the
truth exactly. It also checks that no other victim site holds anything
(freed sites, blocks from before a -p attach), the caller chain in frames[1..],
frames[0]'s module, file and line, the exit status, the one
"memleakbpf: tracing" line, the totals against the stacks, and that nothing
was dropped.

Error cases check that a bad command line gives exactly one stderr line
starting with "memleakbpf: " and a non-zero exit, within a few seconds.

Tracing cases need root, /sys/kernel/btf/vmlinux and ./memleakbpf; without
them they are reported as skipped, never passed. Output: one line per case
(`ok NAME`, `FAIL NAME: why`, `skip NAME: why`), then
`e2e: N passed, N failed, N skipped`; exit status 1 when any case failed.
$MEMLEAKBPF overrides the tracer's path. A failed case keeps its files (report JSON, stdout, stderr, truth) in the
directory named in its FAIL line; -v also prints the details to stderr.
"""

import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import lib
import cases_basics
import cases_outputs
import cases_placement
import cases_symbols
import cases_unwinding
import cases_insight
import cases_python
from lib import (CaseFailed, LineReader, PLUGINS, Skip, TRACE, TRACER, TRACING_LINE, UNSHARE,
	Work, build_victims, check_report, children, comm, common_checks, find_line, finish_victim,
	fn_name, go_until, gone, load_report, log, open_bytes, proc_state, read_truth, report_count,
	run_command_case, skip_reason, start_tracing, tracer_env, tracing_line_count, victim, wait_exit,
	wait_for)
from cases_symbols import PRIVATE_TMP_SCRIPT, jit_specs, sym_check


CASES = cases_basics.CASES + cases_outputs.CASES + cases_placement.CASES + cases_symbols.CASES + cases_unwinding.CASES + cases_insight.CASES + cases_python.CASES

# ================================================================ end of Python (issue 9)


# ================================================================ reliability (issue 7)
#
# Exact under contention, capacity, faults in the target and in the tracer,
# output files, privileges and container paths. The victims: v_stress
# (threads handing blocks to each other), v_many (N blocks outstanding),
# v_life (exec, fork, dlopen on a trigger) and v_wait. The full-size runs
# (10 M blocks, millions of operations) are `make stress`
# (scripts/stress.py); these are the same checks at a size `make test`
# affords. Everything here is used only by the cases appended to CASES at its
# end.

BPFTOOL = shutil.which("bpftool") or "/usr/sbin/bpftool"
SETPRIV = shutil.which("setpriv") or "setpriv (util-linux: not on PATH)"
STRESS_THREADS = 2
STRESS_OPS = 250000		# per thread: about a million allocator calls in all
CAPACITY_N = 200000
CAPACITY_SMALL = 50000		# --max-allocs that cannot hold them
CAPACITY_RAISED = 262144
DEFAULT_MAX_ALLOCS = 1 << 20	# opts.h
MEASURED = {}			# case name -> figures, for scripts/stress.py
OUR_PROGS = {"api_enter", "api_exit", "dl_debug_state", "exec_stop", "fork_follow"}
NOBODY = 65534
GRACE_S = 2.0			# the tracer's SIGINT grace for a -c command (main.c)


def bpf_ids(pid):
	"""The BPF links and programs process pid holds fds of, from its fdinfo."""
	ids = {"link_id": set(), "prog_id": set()}
	try:
		fds = os.listdir("/proc/%d/fdinfo" % pid)
	except OSError:
		return ids
	for fd in fds:
		try:
			with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
				text = f.read()
		except OSError:
			continue
		for key in ids:
			m = re.search(r"^%s:\s*(\d+)" % key, text, re.M)
			if m:
				ids[key].add(int(m.group(1)))
	return ids


def bpftool_json(*args):
	r = subprocess.run([BPFTOOL, "-j"] + list(args), stdout=subprocess.PIPE,
			   stderr=subprocess.DEVNULL)
	try:
		return json.loads(r.stdout.decode() or "null")
	except ValueError:
		return None


def bpf_exists(kind, ident):
	r = subprocess.run([BPFTOOL, kind, "show", "id", str(ident)], stdout=subprocess.DEVNULL,
			   stderr=subprocess.DEVNULL)
	return r.returncode == 0


def wait_bpf_gone(ids, deadline):
	"""[] once none of ids (from bpf_ids) exists any more, else what is left."""
	left = []
	while True:
		left = ["link %d" % i for i in ids["link_id"] if bpf_exists("link", i)]
		left += ["prog %d" % i for i in ids["prog_id"] if bpf_exists("prog", i)]
		if not left or time.monotonic() > deadline:
			return left
		time.sleep(0.1)


def orphan_links():
	"""Links of our programs that no process holds: what a leak would look like.
	Checked three times a second apart, so that a tracer exiting just then
	(another one, running in parallel) is not taken for one."""
	orphans = None
	for _ in range(3):
		progs = {p["id"]: p.get("name") for p in bpftool_json("prog", "show") or []}
		ours = {l["id"] for l in bpftool_json("link", "list") or []
			if progs.get(l.get("prog_id")) in OUR_PROGS}
		held = set()
		for pid in filter(str.isdigit, os.listdir("/proc")):
			held |= bpf_ids(int(pid))["link_id"]
		now = ours - held
		orphans = now if orphans is None else orphans & now
		if not orphans:
			return set()
		time.sleep(1)
	return orphans


def notes(work):
	"""The victim's "# key: value" lines."""
	return dict(m.groups() for m in re.finditer(r"^# (\w+): (.*)$", work.read("truth.txt"), re.M))


def site_totals(rep, site, api):
	got = [s for s in rep["stacks"]
	       if s["frames"] and fn_name(s["frames"][0]) == site and s.get("api") == api]
	return sum(s["total_allocs"] for s in got), sum(s["total_bytes"] for s in got)


def check_churn_totals(work, rep):
	"""Every churn allocation counted: the sites' totals since tracing began."""
	errs = []
	for m in re.finditer(r"^# total: (\S+) (\S+) allocs=(\d+) bytes=(\d+)$",
			     work.read("truth.txt"), re.M):
		site, api, want = m.group(1), m.group(2), (int(m.group(3)), int(m.group(4)))
		got = site_totals(rep, site, api)
		if got != want:
			errs.append("%s/%s: %d allocations of %d bytes since tracing began, truth %d of %d"
				    % ((site, api) + got + want))
		else:
			log("  %s/%s: %d allocations, %d bytes: exact" % ((site, api) + got))
	if not errs and "# total:" not in work.read("truth.txt"):
		errs.append("the victim wrote no '# total:' notes")
	return errs


def untracked(rep):
	return (rep.get("totals") or {}).get("untracked_frees")


def no_losses(rep):
	"""Under contention no free may be missed (replaced) and no stack lost."""
	return ["dropped.%s = %s" % (k, v) for k, v in sorted(rep["totals"]["dropped"].items())
		if v and k in ("replaced", "stack_collisions", "stacks_map_full", "sites_map_full")]


def case_stress_c(work):
	"""-c v_stress: threads freeing and reallocating each other's blocks; every
	site exact, and every churn allocation counted, none of them missed."""
	binary = victim("v_stress")

	def check(work, truth):
		rep = load_report(work.path("report.json"))
		errs = check_churn_totals(work, rep) + no_losses(rep)
		if untracked(rep) != 0:
			errs.append("untracked_frees %r under -c, expected 0" % untracked(rep))
		return errs
	return run_command_case(work, "%s %d %d" % (binary, STRESS_THREADS, STRESS_OPS), binary,
				"v_stress.c", check=check)


def case_stress_p(work):
	"""v_stress wait under -p, attached while its threads churn: what was
	allocated before is not reported, its frees are ignored and counted."""
	binary = victim("v_stress")
	js = work.path("report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	v = work.start([binary, "wait", str(STRESS_THREADS), str(STRESS_OPS)], env=tracer_env(work),
		       stdin=subprocess.PIPE, stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	time.sleep(0.2)		# churning for a while already
	t = start_tracing(work, ["--json", js, "-p", str(pid)], step())
	time.sleep(0.2)		# and traced while it churns
	go_until(v, out, "LEAKED", step())
	finish_victim(v, deadline)
	rc = wait_exit(t, deadline, "memleakbpf -p after its target exited")
	rep = load_report(js)
	errs = check_report(rep, read_truth(work), binary, "v_stress.c", pid=pid, exclude_phase="pre")
	errs += check_churn_totals(work, rep) + no_losses(rep)
	n = notes(work)
	low, high = int(n.get("pre_freed", -1)), int(n.get("pre_freed", -1)) + int(n.get("in_flight_max", 0))
	if untracked(rep) is None or not low <= untracked(rep) <= high:
		errs.append("untracked_frees %r, expected %d (site_pre_freed) to %d (plus the blocks "
			    "in flight at the attach)" % (untracked(rep), low, high))
	log("  untracked_frees %s: %d of the pre phase, %s in flight at the attach" % (
		untracked(rep), low, untracked(rep) - low if untracked(rep) else "?"))
	if "Ignored: " not in work.read("tracer.stdout"):
		errs.append("the text report does not show the ignored frees")
	common_checks(work, rc, 0, errs)
	return errs


def bpf_memlock(pid):
	"""Kernel memory charged for the BPF maps and programs process pid holds:
	(all, the live-block map alone), from the memlock lines of its fdinfo."""
	total, allocs = 0, 0
	for fd in os.listdir("/proc/%d/fdinfo" % pid):
		text = open_bytes("/proc/%d/fdinfo/%s" % (pid, fd)).decode()
		m = re.search(r"^memlock:\s*(\d+)", text, re.M)
		if not m:
			continue
		total += int(m.group(1))
		# An array of struct alloc_bucket: the live blocks.
		if all(re.search(r"^%s:\s*%s$" % kv, text, re.M) for kv in
		       (("map_type", 2), ("key_size", 4), ("value_size", ALLOC_BUCKET_BYTES))):
			allocs = max(allocs, int(m.group(1)))
	return total, allocs


ALLOC_BUCKET_SLOTS = 7		# bpf/memleak.h: struct alloc_bucket
ALLOC_BUCKET_BYTES = 232


def table_slots(max_allocs):
	"""Slots of the live-block table for --max-allocs (user/probes.c: size_maps):
	room for at least max_allocs, one and a half slots per block at least, in a
	power of two of buckets."""
	buckets = 64
	while buckets * ALLOC_BUCKET_SLOTS < 3 * max_allocs // 2:
		buckets *= 2
	return buckets * ALLOC_BUCKET_SLOTS


def capacity_case(max_allocs, exact):
	"""-c v_many N (--max-allocs, or its default when None): exact when it fits,
	else every block that was not tracked is counted and the report names the
	option to raise."""
	def run(work):
		binary = victim("v_many")
		js = work.path("report.json")
		opt = ["--max-allocs", str(max_allocs)] if max_allocs else []
		t0 = time.monotonic()
		t = start_tracing(work, ["--json", js] + opt + ["-c", "%s %d" % (binary, CAPACITY_N)],
				  time.monotonic() + lib.CASE_TIMEOUT)
		memlock = bpf_memlock(t.pid)
		rc = wait_exit(t, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c v_many")
		took = time.monotonic() - t0
		cap = max_allocs or DEFAULT_MAX_ALLOCS
		rep = load_report(js)
		errs = []
		dropped = rep["totals"]["dropped"]["allocs_map_full"]
		tracked = sum(s["allocs"] for s in rep["stacks"]
			      if s["frames"] and fn_name(s["frames"][0]) == "site_many")
		if exact:
			errs += check_report(rep, read_truth(work), binary, "v_many.c")
		else:
			if tracked + dropped != CAPACITY_N or not cap <= tracked <= table_slots(cap):
				errs.append("site_many: %d tracked + %d allocs_map_full, expected %d in all "
					    "(%d to %d tracked)" % (tracked, dropped, CAPACITY_N, cap,
								    table_slots(cap)))
			if not re.search(r"^Dropped: [\d,]+ allocations not tracked: .*\(raise --max-allocs\)$",
					 work.read("tracer.stdout"), re.M):
				errs.append("the text report does not say to raise --max-allocs")
		MEASURED[work.dir] = {"max_allocs": cap, "tracked": tracked, "dropped": dropped,
				      "memlock": memlock[0], "allocs_map": memlock[1], "seconds": took}
		log("  --max-allocs %d: %d tracked, %d counted as allocs_map_full; BPF memlock %.1f MiB "
		    "(live-block map %.1f MiB); %.1f s" % (cap, tracked, dropped,
							   memlock[0] / 2**20, memlock[1] / 2**20, took))
		common_checks(work, rc, 0, errs)
		return errs
	return run


def wait_case(work, pid_mode, interval=None):
	"""v_wait under -p or -c, up to LEAKED: (tracer, victim or None, victim pid,
	LineReader or None, deadline). Under -c the victim talks through the tracer."""
	binary = victim("v_wait")
	js = work.path("report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	tail = [str(interval)] if interval else []
	if pid_mode:
		v = work.start([binary], env=tracer_env(work), stdin=subprocess.PIPE,
			       stdout=subprocess.PIPE, tag="victim")
		out = LineReader(v.stdout)
		pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
		t = work.start([TRACER, "--json", js, "-p", str(pid)] + tail, env=tracer_env(work),
			       stdin=subprocess.DEVNULL, tag="tracer")
		wait_for(lambda: tracing_line_count(work.read("tracer.stderr")), step(),
			 repr(TRACING_LINE), alive=t)
		go_until(v, out, "LEAKED", step())
		return t, v, pid, out, deadline
	t = work.start([TRACER, "--json", js, "-c", binary] + tail, env=tracer_env(work),
		       stdin=subprocess.PIPE, tag="tracer")
	ready = wait_for(lambda: find_line(work.read("tracer.stdout"), "READY pid="), step(),
			 "READY from v_wait", alive=t)
	pid = int(ready.split("=", 1)[1])
	work.pids.append((pid, "v_wait"))
	t.stdin.write(b"go\n")
	t.stdin.flush()
	wait_for(lambda: find_line(work.read("tracer.stdout"), "LEAKED"), step(), "LEAKED", alive=t)
	return t, None, pid, None, deadline


def wait_report_errs(work, pid, pid_mode):
	js = work.path("report.json")
	if not os.path.exists(js):
		return ["no JSON report written"]
	return check_report(load_report(js), read_truth(work), victim("v_wait"), "v_wait.c", pid=pid,
			    exclude_phase="pre" if pid_mode else None)


def case_target_kill(pid_mode):
	"""The target dies of SIGKILL while traced: the final report is written, and
	-c exits with 128 + 9."""
	def run(work):
		t, v, pid, out, deadline = wait_case(work, pid_mode)
		os.kill(pid, signal.SIGKILL)
		rc = wait_exit(t, deadline, "memleakbpf after its target was killed")
		if v:
			v.wait(5)
		errs = wait_report_errs(work, pid, pid_mode)
		if "Final report" not in work.read("tracer.stdout"):
			errs.append("no final text report")
		common_checks(work, rc, 0 if pid_mode else 128 + signal.SIGKILL, errs)
		return errs
	return run


def case_target_stop(pid_mode):
	"""The target is stopped (SIGSTOP): reports go on, SIGINT ends the tracer
	within its grace period. -p leaves the target stopped, as it found it; -c
	passes SIGINT on and continues the command so that it acts on it."""
	def run(work):
		t, v, pid, out, deadline = wait_case(work, pid_mode, interval=0.2)
		os.kill(pid, signal.SIGSTOP)
		wait_for(lambda: proc_state(pid) == "T", deadline, "v_wait to stop")
		seen = report_count(work)
		wait_for(lambda: report_count(work) >= seen + 3, min(deadline, time.monotonic() + 10),
			 "3 more reports while the target is stopped", alive=t)
		t0 = time.monotonic()
		t.send_signal(signal.SIGINT)
		rc = wait_exit(t, min(deadline, t0 + GRACE_S + 3), "memleakbpf after SIGINT")
		took = time.monotonic() - t0
		errs = wait_report_errs(work, pid, pid_mode)
		if pid_mode:
			if proc_state(pid) != "T":
				errs.append("-p changed the stopped target's state to %r" % proc_state(pid))
			os.kill(pid, signal.SIGCONT)
			finish_victim(v, deadline)
		elif not gone(pid):
			errs.append("the stopped command is still there after SIGINT (state %r)" % proc_state(pid))
		log("  SIGINT to exit: %.2f s" % took)
		common_checks(work, rc, 0 if pid_mode else 128 + signal.SIGINT, errs)
		return errs
	return run


def case_target_exec_p(work):
	"""-p, and the target execs another program: tracing ends with a message and
	the report of the program that was traced; the new one is not counted."""
	binary = victim("v_life")
	js = work.path("report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	v = work.start([binary, "exec", victim("v_basic")], env=tracer_env(work),
		       stdin=subprocess.PIPE, stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	t = start_tracing(work, ["--json", js, "-p", str(pid)], step())
	go_until(v, out, "LEAKED", step())
	v.stdin.write(b"exec\n")
	v.stdin.close()
	rc = wait_exit(t, deadline, "memleakbpf -p after its target's exec")
	wait_exit(v, deadline, "v_basic, exec'd by v_life")
	# v_basic's sites are not in v_life's truth: check_report flags any.
	errs = check_report(load_report(js), read_truth(work), binary, "v_life.c", pid=pid,
			    exclude_phase="pre")
	msg = "memleakbpf: pid %d executed %s: tracing ends" % (pid, os.path.realpath(victim("v_basic")))
	if msg not in work.read("tracer.stderr"):
		errs.append("no %r message on stderr" % msg)
	common_checks(work, rc, 0, errs)
	return errs


def case_target_fork_c(work):
	"""A forked child frees its copies of the parent's blocks (same addresses)
	and leaks its own: neither is counted as the parent's (probes are
	filtered by process)."""
	binary = victim("v_life")
	return run_command_case(work, "%s fork" % binary, binary, "v_life.c")


def tracer_proc(work, t):
	"""The tracer's watchdog (-c), if any: a child named memleakbpf-wd."""
	return [c for c in children(t.pid) if comm(c) == "memleakbpf-wd"]


def case_tracer_kill(pid_mode):
	"""SIGKILL of the tracer: every link and program it held is gone
	afterwards, and -c's watchdog has ended too."""
	def run(work):
		t, v, pid, out, deadline = wait_case(work, pid_mode)
		ids = bpf_ids(t.pid)
		wd = tracer_proc(work, t)
		errs = []
		if not ids["link_id"] or not ids["prog_id"]:
			errs.append("the tracer holds no BPF link or program: the case proves nothing")
		if not pid_mode and not wd:
			errs.append("no memleakbpf-wd watchdog under -c")
		t.send_signal(signal.SIGKILL)
		t.wait(5)
		left = wait_bpf_gone(ids, time.monotonic() + 5)
		if left:
			errs.append("left behind after SIGKILL: %s" % ", ".join(left))
		for w in wd:
			if not wait_for(lambda: gone(w), time.monotonic() + 5, "the watchdog to end"):
				errs.append("the watchdog %d is still running" % w)
		if gone(pid):
			errs.append("the target died with the tracer")
		log("  %d links, %d programs, all gone" % (len(ids["link_id"]), len(ids["prog_id"])))
		if pid_mode:
			finish_victim(v, deadline)
		return errs
	return run


def case_tracer_kill_stopped(work):
	"""-c: the tracer is killed while the command is stopped for it (at a
	dlopen): the watchdog resumes the command, which finishes untraced."""
	lib = os.path.join(PLUGINS, "libp_kept.so")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	t = work.start([TRACER, "-c", "%s dlopen %s" % (victim("v_life"), lib)],
		       env=tracer_env(work), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
		       tag="tracer")
	out = LineReader(t.stdout)
	pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	work.pids.append((pid, "v_life"))
	ids = bpf_ids(t.pid)
	os.kill(t.pid, signal.SIGSTOP)	# it cannot resume anything now
	t.stdin.write(b"dlopen\n")
	t.stdin.flush()
	wait_for(lambda: proc_state(pid) == "T", step(), "v_life to be stopped at its dlopen")
	t.send_signal(signal.SIGKILL)
	t.wait(5)
	out.expect("LOADED", step())
	errs = []
	left = wait_bpf_gone(ids, time.monotonic() + 5)
	if left:
		errs.append("left behind after SIGKILL: %s" % ", ".join(left))
	if "resumed it" not in work.read("tracer.stderr"):
		errs.append("the watchdog did not say it resumed the command")
	t.stdin.write(b"exit\n")
	t.stdin.flush()
	wait_for(lambda: gone(pid), step(), "v_life to exit")
	return errs


def case_tracer_sigint_any(work):
	"""SIGINT or SIGTERM at any moment, loading and attaching included: the
	tracer ends within a few seconds, writes the report if tracing had begun,
	leaves no link, and under -c no command behind."""
	errs = []
	runs = []
	wait_bin = victim("v_wait")
	v = work.start([wait_bin], env=tracer_env(work), stdin=subprocess.PIPE,
		       stdout=subprocess.PIPE, tag="victim")
	vpid = int(LineReader(v.stdout).expect("READY pid=", time.monotonic() + lib.STEP_TIMEOUT)
		   .split("=", 1)[1])
	for mode, delays in (("-c", (0, 0.002, 0.01, 0.03, 0.06, 0.1, 0.2, 0.5)),
			     ("-p", (0, 0.005, 0.02, 0.05, 0.1, 0.3))):
		for i, delay in enumerate(delays):
			tag = "run%s%d" % (mode, i)
			js = work.path(tag + ".json")
			token = "memleakbpf-e2e-%d-%s" % (os.getpid(), tag)
			target = ["-c", "%s %s" % (wait_bin, token)] if mode == "-c" else ["-p", str(vpid)]
			t = work.start([TRACER, "--json", js] + target, env=tracer_env(work),
				       stdin=subprocess.PIPE if mode == "-c" else subprocess.DEVNULL,
				       tag=tag)
			sig = (signal.SIGINT, signal.SIGTERM)[i % 2]
			time.sleep(delay)
			t.send_signal(sig)
			try:
				rc = t.wait(GRACE_S + 8)
			except subprocess.TimeoutExpired:
				errs.append("%s %s after %g s: still running after %g s" % (
					mode, sig.name, delay, GRACE_S + 8))
				continue
			began = tracing_line_count(work.read(tag + ".stderr")) == 1
			runs.append("%s%s+%gs:%s%s" % (mode, sig.name[3:4], delay, rc, "*" if began else ""))
			if began and ("Final report" not in work.read(tag + ".stdout") or
				      not os.path.exists(js)):
				errs.append("%s signal after %g s: tracing had begun but no final report" % (
					mode, delay))
			if mode == "-p" and began and rc != 0:
				errs.append("-p signal after %g s: exit status %s" % (delay, rc))
			if mode == "-c":
				t.stdin.close()
				left = lambda: [p for p in filter(str.isdigit, os.listdir("/proc"))
						if token.encode() in open_bytes("/proc/%s/cmdline" % p)]
				if not wait_for(lambda: not left(), time.monotonic() + 5, "the command to end") :
					errs.append("-c signal after %g s: the command is still there" % delay)
	v.stdin.close()
	wait_exit(v, time.monotonic() + 10, "v_wait")
	orphans = orphan_links()
	if orphans:
		errs.append("links of our programs held by no process: %s" % sorted(orphans))
	log("  exit statuses (* tracing had begun): " + " ".join(runs))
	return errs


def case_output_full_disk(work):
	"""The output's file system is full at the end: a clear error, the text
	report still on stdout, no temporary left, exit status 1."""
	d = work.path("full")
	os.makedirs(d)
	script = ('mount -t tmpfs -o size=64k tmpfs "$1" || exit 99; '
		  'dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null; '
		  '"$2" --json "$1/report.json" --folded "$1/report.folded" -c "$3"; '
		  'echo "rc=$?" >&2; echo "left: $(ls -A "$1" | tr "\\n" " ")" >&2')
	t = work.start([UNSHARE, "--mount", "--propagation", "private", "sh", "-c", script, "sh", d,
			TRACER, victim("v_basic")], env=tracer_env(work), stdin=subprocess.DEVNULL,
		       tag="tracer")
	wait_exit(t, time.monotonic() + lib.CASE_TIMEOUT, "unshare ... memleakbpf")
	err, errs = work.read("tracer.stderr"), []
	for name in ("report.json", "report.folded"):
		want = "memleakbpf: cannot write %s/%s: No space left on device" % (d, name)
		if want not in err:
			errs.append("no %r on stderr" % want)
	if "rc=1\n" not in err:
		errs.append("exit status %s, expected 1" % (find_line(err, "rc=") or "?"))
	if "left: fill \n" not in err:
		errs.append("files left on the full file system: %s" % find_line(err, "left:"))
	if "Final report" not in work.read("tracer.stdout"):
		errs.append("no final text report on stdout")
	return errs


def case_output_stdout_full(work):
	"""Standard output is /dev/full: said once on stderr; the JSON file is still
	written and exact; exit status 1."""
	binary = victim("v_basic")
	js = work.path("report.json")
	with open("/dev/full", "wb") as full:
		t = work.start([TRACER, "--json", js, "-c", binary], env=tracer_env(work),
			       stdin=subprocess.DEVNULL, stdout=full, tag="tracer")
		rc = wait_exit(t, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf > /dev/full")
	errs = check_report(load_report(js), read_truth(work), binary, "v_basic.c")
	n = work.read("tracer.stderr").count("cannot write the report to standard output: "
					     "No space left on device")
	if n != 1:
		errs.append("%d stderr lines about standard output, expected 1" % n)
	common_checks(work, rc, 1, errs)
	return errs


def case_output_dir_gone(work):
	"""The output directory is removed while tracing: a clear error at the end,
	the text report still on stdout, exit status 1."""
	d = work.path("out")
	os.makedirs(d)
	js = os.path.join(d, "report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	t = work.start([TRACER, "--json", js, "-c", victim("v_wait")], env=tracer_env(work),
		       stdin=subprocess.PIPE, tag="tracer")
	wait_for(lambda: find_line(work.read("tracer.stdout"), "READY pid="), deadline,
		 "READY from v_wait", alive=t)
	shutil.rmtree(d)
	t.stdin.write(b"go\nexit\n")
	t.stdin.close()
	rc = wait_exit(t, deadline, "memleakbpf -c v_wait")
	errs = []
	want = "memleakbpf: cannot write %s: No such file or directory" % js
	if want not in work.read("tracer.stderr"):
		errs.append("no %r on stderr" % want)
	if "Final report" not in work.read("tracer.stdout"):
		errs.append("no final text report on stdout")
	common_checks(work, rc, 1, errs)
	return errs


def as_nobody(argv):
	return subprocess.run([SETPRIV, "--reuid", str(NOBODY), "--regid", str(NOBODY),
			       "--clear-groups"] + argv, stdout=subprocess.PIPE,
			      stderr=subprocess.STDOUT)


def case_output_symlinks(work):
	"""Outputs in a sticky world-writable directory where uid 65534 planted a
	symlink to a root file (before the start and during the run), a dangling
	symlink and a FIFO: none is followed or opened; each report replaces the
	planted entry, atomically. A symlink root made there is followed."""
	sticky = tempfile.mkdtemp(prefix="memleakbpf-e2e-sticky-")
	try:
		return output_symlinks(work, sticky)
	finally:
		shutil.rmtree(sticky, ignore_errors=True)


def output_symlinks(work, sticky):
	os.chmod(sticky, 0o1777)
	secret = work.path("secret")
	with open(secret, "w") as f:
		f.write("root's file\n")
	p = lambda name: os.path.join(sticky, name)
	errs = []
	for argv in (["ln", "-s", secret, p("j.json")], ["ln", "-s", p("created"), p("f.folded")],
		     ["mkfifo", p("g.svg")]):
		r = as_nobody(argv)
		if r.returncode:
			raise CaseFailed("as uid %d: %s: %s" % (NOBODY, " ".join(argv), r.stdout))
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	t = work.start([TRACER, "--json", p("j.json"), "--folded", p("f.folded"), "--flamegraph",
			p("g.svg"), "--pprof", p("p.heap"), "-c", victim("v_wait")],
		       env=tracer_env(work), stdin=subprocess.PIPE, tag="tracer")
	wait_for(lambda: find_line(work.read("tracer.stdout"), "READY pid="), deadline,
		 "READY from v_wait", alive=t)
	r = as_nobody(["ln", "-s", secret, p("p.heap")])	# after the checks at the start
	if r.returncode:
		raise CaseFailed("as uid %d: ln -s: %s" % (NOBODY, r.stdout))
	t.stdin.write(b"go\nexit\n")
	t.stdin.close()
	rc = wait_exit(t, deadline, "memleakbpf with planted outputs")
	if open(secret).read() != "root's file\n":
		errs.append("the root file a planted symlink pointed to was written")
	if os.path.lexists(p("created")):
		errs.append("a dangling symlink's target was created")
	for name, head in (("j.json", "{"), ("f.folded", ""), ("g.svg", "<?xml"), ("p.heap", "heap profile:")):
		st = os.lstat(p(name))
		if not stat_is_reg(st) or st.st_uid != 0:
			errs.append("%s: not a regular file of root's (mode %o, uid %d)" % (
				name, st.st_mode, st.st_uid))
		elif not open(p(name), errors="replace").read().startswith(head):
			errs.append("%s: not the report" % name)
	common_checks(work, rc, 0, errs)
	# Root's own symlink in the same directory is followed.
	target = work.path("own-target.json")
	open(target, "w").close()
	os.symlink(target, p("own.json"))
	t = work.start([TRACER, "--json", p("own.json"), "-c", victim("v_basic")],
		       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="own")
	wait_exit(t, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf --json to root's symlink")
	if not os.path.islink(p("own.json")) or not open(target).read().startswith("{"):
		errs.append("root's own symlink was not followed")
	return errs


def stat_is_reg(st):
	import stat as stat_mod
	return stat_mod.S_ISREG(st.st_mode)


def proc_ids(pid):
	"""Uid, Gid and Groups of /proc/PID/status, and HOME/USER from its environ."""
	out = {}
	with open("/proc/%d/status" % pid) as f:
		for line in f:
			k, _, v = line.partition(":")
			if k in ("Uid", "Gid", "Groups"):
				out[k] = v.split()
	env = dict(e.split(b"=", 1) for e in open_bytes("/proc/%d/environ" % pid).split(b"\0") if b"=" in e)
	out["HOME"] = env.get(b"HOME", b"").decode()
	out["USER"] = env.get(b"USER", b"").decode()
	return out


def sudo_case(user_arg, want_uid):
	"""Under sudo (SUDO_UID/SUDO_GID of nobody) the -c command runs as the
	invoking user, with that user's groups and HOME; -u names another."""
	def run(work):
		import pwd
		pw = pwd.getpwuid(want_uid)
		env = dict(tracer_env(work), SUDO_UID=str(NOBODY), SUDO_GID=str(NOBODY), SUDO_USER="nobody")
		argv = [TRACER] + (["-u", user_arg] if user_arg else []) + ["-c", "sleep 30", "30"]
		t = work.start(argv, env=env, stdin=subprocess.DEVNULL, tag="tracer")
		deadline = time.monotonic() + lib.STEP_TIMEOUT
		wait_for(lambda: tracing_line_count(work.read("tracer.stderr")), deadline,
			 repr(TRACING_LINE), alive=t)
		cmd = wait_for(lambda: [c for c in children(t.pid) if comm(c) == "sleep"], deadline,
			       "the command as a child of the tracer")[0]
		got = proc_ids(cmd)
		t.send_signal(signal.SIGINT)
		wait_exit(t, time.monotonic() + 10, "memleakbpf after SIGINT")
		groups = sorted(str(g) for g in os.getgrouplist(pw.pw_name, NOBODY if user_arg is None else pw.pw_gid))
		gid = str(NOBODY if user_arg is None else pw.pw_gid)
		want = {"Uid": [str(want_uid)] * 4, "Gid": [gid] * 4, "Groups": groups,
			"HOME": pw.pw_dir, "USER": pw.pw_name}
		got["Groups"] = sorted(got.get("Groups", []))
		errs = ["%s: %r, expected %r" % (k, got.get(k), v) for k, v in sorted(want.items())
			if got.get(k) != v]
		log("  the command: uid %s, gid %s, groups %s, HOME=%s" % (
			got.get("Uid"), got.get("Gid"), got.get("Groups"), got.get("HOME")))
		return errs
	return run


def caps_case(caps, missing):
	"""Run as uid 65534 with only `caps`: one line naming exactly what is missing."""
	def run(work):
		extra = ["--inh-caps", caps, "--ambient-caps", caps] if caps else []
		p = work.start([SETPRIV, "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]
			       + extra + [TRACER, "-p", str(os.getpid())],
			       stdin=subprocess.DEVNULL, tag="tracer")
		rc = wait_exit(p, time.monotonic() + lib.ERROR_TIMEOUT, "memleakbpf as uid 65534")
		lines = work.read("tracer.stderr").splitlines()
		errs = [] if rc == 1 else ["exit status %s, expected 1" % rc]
		want = "memleakbpf: missing capabilit%s %s " % ("y" if len(missing) == 1 else "ies",
								 ", ".join(missing))
		if len(lines) != 1 or not lines[0].startswith(want):
			errs.append("stderr %r, expected one line starting %r" % (lines[:3], want))
		return errs
	return run


def case_container_symlink(work):
	"""v_jit in its own mount and pid namespaces, whose /tmp/perf-1.map is an
	absolute symlink to /tmp/real.map in its own /tmp. Through /proc/PID/root
	that link would lead to the host's /tmp/real.map (planted here with other
	names): the JIT frame must be named from the container's file."""
	binary = victim("v_jit")
	decoy = "/tmp/memleakbpf-e2e-real-%d.map" % os.getpid()
	script = PRIVATE_TMP_SCRIPT
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	v = work.start([UNSHARE, "--mount", "--pid", "--fork", "--mount-proc", "--propagation",
			"private", "sh", "-c", script, "sh", work.path("truth.txt"), binary],
		       env=tracer_env(work), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
		       tag="victim")
	try:
		out = LineReader(v.stdout)
		nspid = int(out.expect("READY pid=", step()).split("=", 1)[1])
		pid = children(v.pid)[0]
		js, fd = work.path("report.json"), work.path("report.folded")
		t = start_tracing(work, ["--json", js, "--folded", fd, "-T", "1000", "-p", str(pid)], step())
		go_until(v, out, "LEAKED", step())
		# The map is written by now; the tracer reads it for its report.
		ctmp = "/proc/%d/root/tmp" % pid
		real = os.path.basename(decoy)
		text = open("%s/perf-%d.map" % (ctmp, nspid)).read()
		os.rename("%s/perf-%d.map" % (ctmp, nspid), "%s/%s" % (ctmp, real))
		os.symlink("/tmp/" + real, "%s/perf-%d.map" % (ctmp, nspid))
		with open(decoy, "w") as f:
			f.write(re.sub(r"^(\S+ \S+) .*$", r"\1 HOST_FILE_WAS_READ", text, flags=re.M))
		t.send_signal(signal.SIGINT)
		rc = wait_exit(t, deadline, "memleakbpf -p after SIGINT")
		finish_victim(v, deadline)
	finally:
		if os.path.exists(decoy):
			os.unlink(decoy)
	errs = []
	if "HOST_FILE_WAS_READ" in work.read("tracer.stdout") + work.read("report.folded"):
		errs.append("the JIT frame was named from the host's file")
	errs += sym_check(load_report(js), read_truth(work), jit_specs(binary),
			  {os.path.realpath(binary)}, work.read("tracer.stdout"),
			  work.read("report.folded"), nspid=nspid)
	common_checks(work, rc, 0, errs)
	return errs


CASES += [
	("stress_c", TRACE, [], case_stress_c),
	("stress_p", TRACE, [], case_stress_p),
	("capacity_drops", TRACE, [], capacity_case(CAPACITY_SMALL, False)),
	("capacity_raised", TRACE, [], capacity_case(CAPACITY_RAISED, True)),
	("target_kill_p", TRACE, [], case_target_kill(True)),
	("target_kill_c", TRACE, [], case_target_kill(False)),
	("target_stop_p", TRACE, [], case_target_stop(True)),
	("target_stop_c", TRACE, [], case_target_stop(False)),
	("target_exec_p", TRACE, [], case_target_exec_p),
	("target_fork_c", TRACE, [], case_target_fork_c),
	("tracer_kill_p", TRACE, [BPFTOOL], case_tracer_kill(True)),
	("tracer_kill_c", TRACE, [BPFTOOL], case_tracer_kill(False)),
	("tracer_kill_stopped", TRACE, [BPFTOOL], case_tracer_kill_stopped),
	("tracer_sigint_any", TRACE, [BPFTOOL], case_tracer_sigint_any),
	("output_full_disk", TRACE, [UNSHARE], case_output_full_disk),
	("output_stdout_full", TRACE, [], case_output_stdout_full),
	("output_dir_gone", TRACE, [], case_output_dir_gone),
	("output_symlinks", TRACE, [SETPRIV], case_output_symlinks),
	("priv_sudo", TRACE, [], sudo_case(None, NOBODY)),
	("priv_sudo_u_root", TRACE, [], sudo_case("root", 0)),
	("priv_no_caps", TRACE, [SETPRIV],
	 caps_case(None, ["CAP_BPF", "CAP_PERFMON", "CAP_SYS_PTRACE"])),
	("priv_some_caps", TRACE, [SETPRIV], caps_case("+bpf", ["CAP_PERFMON", "CAP_SYS_PTRACE"])),
	("container_symlink", TRACE, [UNSHARE], case_container_symlink),
]

# ================================================================ end of reliability (issue 7)


def main(argv):
	keep, names = False, []
	args = list(argv)
	while args:
		a = args.pop(0)
		if a == "-v":
			lib.VERBOSE = True
		elif a == "--keep":
			keep = True
		elif a == "--timeout":
			lib.CASE_TIMEOUT = float(args.pop(0))
		elif a == "--list":
			for name, kind, _, _ in CASES:
				print("%-24s %s" % (name, kind))
			return 0
		elif a in ("-h", "--help"):
			print(__doc__.strip())
			return 0
		else:
			names.append(a)

	selected = [c for c in CASES if not names or any(fnmatch.fnmatch(c[0], n) for n in names)]
	unknown = [n for n in names if not any(fnmatch.fnmatch(c[0], n) for c in CASES)]
	if unknown:
		sys.stderr.write("run.py: no case named %s (--list)\n" % ", ".join(unknown))
		return 2

	build_err = None
	if any(c[1] == TRACE for c in selected):
		build_err = build_victims()
	base = tempfile.mkdtemp(prefix="memleakbpf-e2e-")
	passed = failed = skipped = 0
	for name, kind, needs, fn in selected:
		why = skip_reason(kind, needs)
		if why:
			print("skip %s: %s" % (name, why), flush=True)
			skipped += 1
			continue
		work = Work(base, name)
		try:
			if kind == TRACE and build_err:
				raise CaseFailed(build_err)
			errs = fn(work)
		except Skip as e:
			print("skip %s: %s" % (name, e), flush=True)
			skipped += 1
			continue
		except CaseFailed as e:
			errs = [str(e)]
		except Exception as e:	# a bug here must not pass a case
			errs = ["run.py error: %s: %s" % (type(e).__name__, e)]
		finally:
			work.close()
		if errs:
			tail = work.read("tracer.stderr").strip().splitlines()[-2:]
			if tail and kind == TRACE:
				errs.append("tracer stderr: " + " | ".join(tail))
			failed += 1
			with open(work.path("errors.txt"), "w") as f:
				f.write("\n".join(errs) + "\n")
			more = " (+%d more)" % (len(errs) - 3) if len(errs) > 3 else ""
			print("FAIL %s: %s%s [%s]" % (name, "; ".join(errs[:3]), more, work.dir), flush=True)
			for e in errs:
				log("    " + e)
		else:
			passed += 1
			print("ok %s" % name, flush=True)
	if not failed and not keep:
		shutil.rmtree(base, ignore_errors=True)
	elif failed:
		log("files of failed cases kept in %s" % base)
	print("e2e: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
	return 1 if failed else 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
