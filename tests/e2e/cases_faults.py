# SPDX-License-Identifier: GPL-2.0
"""Faults in the target, in the tracer and in the output files.

The target (v_wait, v_life) is killed, stopped, execs another program or
forks; the tracer is killed (every BPF link and program it held goes, and
-c's watchdog resumes a command stopped for it) or interrupted at any moment,
attaching included; the output's file system is full (--snapshot-dir's
too), standard output is /dev/full, the output directory is removed while
tracing, an output is a FIFO (at the start, or put there while tracing), a
pipe nobody reads, or a terminal that takes no bytes.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import termios
import time

import lib
from lib import (LineReader, PLUGINS, TRACE, TRACER, UNSHARE, check_report, children, comm,
	common_checks, find_line, finish_victim, go_until, gone, load_report, log, open_bytes,
	proc_state, read_truth, report_count, run_command_case, start_tracing, tracer_env,
	tracing_line_count, victim, wait_exit, wait_for)


BPFTOOL = shutil.which("bpftool") or "/usr/sbin/bpftool"
OUR_PROGS = {"api_enter", "api_exit", "dl_debug_state", "exec_stop", "fork_follow"}
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
		t = start_tracing(work, ["--json", js, "-p", str(pid)] + tail, step())
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
	# The new program's path is read from /proc when the exec is seen: v_basic may
	# have exited by then (under load), and the message says "a new program".
	msgs = ["memleakbpf: pid %d executed %s: tracing ends" % (pid, exe)
		for exe in (os.path.realpath(victim("v_basic")), "a new program")]
	if not any(m in work.read("tracer.stderr") for m in msgs):
		errs.append("no %r message on stderr" % msgs[0])
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
		errs += bpf_and_watchdogs_gone(ids, wd, "after SIGKILL")
		if gone(pid):
			errs.append("the target died with the tracer")
		log("  %d links, %d programs, all gone" % (len(ids["link_id"]), len(ids["prog_id"])))
		if pid_mode:
			finish_victim(v, deadline)
		return errs
	return run


def bpf_and_watchdogs_gone(ids, wd, when):
	"""What is left of the tracer's BPF objects (ids) and watchdogs (wd), 5 s on."""
	errs = []
	left = wait_bpf_gone(ids, time.monotonic() + 5)
	if left:
		errs.append("left behind %s: %s" % (when, ", ".join(left)))
	for w in wd:
		if not wait_for(lambda: gone(w), time.monotonic() + 5, "the watchdog to end"):
			errs.append("the watchdog %d is still running" % w)
	return errs


def case_tracer_end_hands_links(work):
	"""-c: once the command has ended, the tracer hands its uprobe links to
	the watchdog (-v says so) instead of waiting for their grace periods;
	the watchdog closes every one of them, and ends. A run ended by SIGINT
	while the command runs closes them itself (tracer_sigint_any)."""
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	t = work.start([TRACER, "-v", "-c", victim("v_wait")], env=tracer_env(work),
		       stdin=subprocess.PIPE, stdout=subprocess.PIPE, tag="tracer")
	out = LineReader(t.stdout)
	pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	work.pids.append((pid, "v_wait"))
	go_until(t, out, "LEAKED", step())
	ids = bpf_ids(t.pid)
	wd = tracer_proc(work, t)
	errs = []
	if not ids["link_id"] or not wd:
		errs.append("no link or no watchdog while tracing: the case proves nothing")
	t.stdin.write(b"exit\n")
	t.stdin.close()
	rc = wait_exit(t, deadline, "memleakbpf")
	if rc != 0:
		errs.append("memleakbpf exited %s, expected the command's 0" % rc)
	said = re.search(r"^memleakbpf: (\d+) uprobe links handed to the watchdog",
			 work.read("tracer.stderr"), re.M)
	if not said:
		errs.append("-v did not say the links were handed to the watchdog")
	elif int(said.group(1)) < 2:
		errs.append("only %s links handed over" % said.group(1))
	errs += bpf_and_watchdogs_gone(ids, wd, "by the watchdog")
	log("  %d links handed over, all gone" % len(ids["link_id"]))
	return errs


def case_tracer_kill_stopped(work):
	"""-c: the tracer is killed while the command is stopped for it (at a
	dlopen): the watchdog resumes the command, which finishes untraced."""
	plugin = os.path.join(PLUGINS, "libp_kept.so")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	t = work.start([TRACER, "-c", "%s dlopen %s" % (victim("v_life"), plugin)],
		       env=tracer_env(work), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
		       tag="tracer")
	out = LineReader(t.stdout)
	pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	work.pids.append((pid, "v_life"))
	return kill_while_stopped(work, t, out, pid, b"dlopen\n", lambda: proc_state(pid) == "T",
				  "v_life to be stopped at its dlopen", "LOADED", "resumed it", step)


def kill_while_stopped(work, t, out, pid, trigger, stopped, what, after, said, step):
	"""The tracer, itself stopped, is killed once the victim (told trigger)
	has a process stopped for it: the watchdog says the tracer died (by
	SIGKILL, where the kernel tells it: Linux 6.15), resumes that process
	(saying said), the victim goes on (its line after), and no BPF object is
	left."""
	ids = bpf_ids(t.pid)
	os.kill(t.pid, signal.SIGSTOP)	# it cannot resume anything now
	t.stdin.write(trigger)
	t.stdin.flush()
	wait_for(stopped, step(), what)
	t.send_signal(signal.SIGKILL)
	t.wait(5)
	out.expect(after, step())
	errs = []
	left = wait_bpf_gone(ids, time.monotonic() + 5)
	if left:
		errs.append("left behind after SIGKILL: %s" % ", ".join(left))
	if said not in work.read("tracer.stderr"):
		errs.append("the watchdog did not say %r" % said)
	death = re.search(r"^memleakbpf: the tracer \(pid %d\) (was killed by SIG\w+|died without)"
			  % t.pid, work.read("tracer.stderr"), re.M)
	if not death or death.group(1) not in ("was killed by SIGKILL", "died without"):
		errs.append("the watchdog did not say the tracer (pid %d) died by SIGKILL: %r" % (
			t.pid, death.group(0) if death else None))
	t.stdin.write(b"exit\n")
	t.stdin.flush()
	wait_for(lambda: gone(pid), step(), "the victim to exit")
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


# Exec argv[1:] with SIGINT ignored, as a shell starts a script's background job.
IGNORING_SIGINT = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
		   "os.execv(sys.argv[1], sys.argv[1:])")


def case_tracer_sigint_ignored(work):
	"""A tracer started with SIGINT ignored (`memleakbpf -c cmd &` in a
	script) still ends on a SIGINT that comes while it loads its probes,
	before it blocks the signal for its signalfd: it kept the ignore it
	inherited, the signal was lost, and it traced on. And after it traces,
	with its final report."""
	errs = []
	for i, delay in enumerate((0.1, 0.15, None)):
		tag = "run%d" % i
		token = "memleakbpf-e2e-%d-%s" % (os.getpid(), tag)
		t = work.start(["/usr/bin/python3", "-c", IGNORING_SIGINT, TRACER, "--json",
				work.path(tag + ".json"), "-c", "%s %s" % (victim("v_wait"), token)],
			       env=tracer_env(work), stdin=subprocess.PIPE, tag=tag)
		if delay is None:
			wait_for(lambda: tracing_line_count(work.read(tag + ".stderr")),
				 time.monotonic() + lib.STEP_TIMEOUT, "the tracing line", alive=t)
		else:
			time.sleep(delay)
		t.send_signal(signal.SIGINT)
		try:
			t.wait(GRACE_S + 8)
		except subprocess.TimeoutExpired:
			errs.append("SIGINT %s: still running %g s after it" % (
				"once tracing" if delay is None else "after %g s" % delay, GRACE_S + 8))
			continue
		began = tracing_line_count(work.read(tag + ".stderr")) == 1
		if began and "Final report" not in work.read(tag + ".stdout"):
			errs.append("SIGINT after tracing began: no final report")
		t.stdin.close()
		left = lambda: [p for p in filter(str.isdigit, os.listdir("/proc"))
				if token.encode() in open_bytes("/proc/%s/cmdline" % p)]
		if not wait_for(lambda: not left(), time.monotonic() + 5, "the command to end"):
			errs.append("the command is still there")
	return errs


def on_full_fs(work, outputs):
	"""memleakbpf OUTPUTS -c v_basic, the outputs on a full 64 KiB tmpfs
	("$1" in outputs names it): its directory, and stderr with the exit
	status ("rc=N") and the files left there ("left: ...") at the end."""
	d = work.path("full")
	os.makedirs(d)
	script = ('mount -t tmpfs -o size=64k tmpfs "$1" || exit 99; '
		  'dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null; '
		  '"$2" ' + outputs + ' -c "$3"; '
		  'echo "rc=$?" >&2; echo "left: $(ls -A "$1" | tr "\\n" " ")" >&2')
	t = work.start([UNSHARE, "--mount", "--propagation", "private", "sh", "-c", script, "sh", d,
			TRACER, victim("v_basic")], env=tracer_env(work), stdin=subprocess.DEVNULL,
		       tag="tracer")
	wait_exit(t, time.monotonic() + lib.CASE_TIMEOUT, "unshare ... memleakbpf")
	err, errs = work.read("tracer.stderr"), []
	if "rc=1\n" not in err:
		errs.append("exit status %s, expected 1" % (find_line(err, "rc=") or "?"))
	if "left: fill \n" not in err:
		errs.append("files left on the full file system: %s" % find_line(err, "left:"))
	return d, err, errs


def case_output_full_disk(work):
	"""The output's file system is full at the end: a clear error, the text
	report still on stdout, no temporary left, exit status 1."""
	d, err, errs = on_full_fs(work, '--json "$1/report.json" --folded "$1/report.folded"')
	for name in ("report.json", "report.folded"):
		want = "memleakbpf: cannot write %s/%s: No space left on device" % (d, name)
		if want not in err:
			errs.append("no %r on stderr" % want)
	if "Final report" not in work.read("tracer.stdout"):
		errs.append("no final text report on stdout")
	return errs


def case_output_snapshot_full(work):
	"""--snapshot-dir on a full file system: each snapshot that cannot be
	written is said, no temporary is left, and the exit status is 1, as for
	--json."""
	d, err, errs = on_full_fs(work, '--snapshot-dir "$1"')
	if not re.search(r"memleakbpf: cannot write snapshot %s/memleak\.\d+\.0001\.pb\.gz: "
			 r"No space left on device" % re.escape(d), err):
		errs.append("no 'cannot write snapshot ...: No space left on device' on stderr")
	return errs


FILE_OPTIONS = ("--json", "--folded", "--pprof", "--flamegraph", "--timeline", "--timeline-svg")


def case_output_fifo(work):
	"""Every output option at a FIFO: one line and exit status 2 before
	anything is traced (it would hold the final write for good, SIGTERM
	blocked); --snapshot-dir at one likewise. A FIFO put at the --json path
	while tracing, and a pipe of ours that nobody reads (/dev/stdin): the
	final write does not wait for a reader, it says why, and the exit status
	is 1."""
	fifo = work.path("fifo")
	os.mkfifo(fifo)
	errs = []
	for opt in FILE_OPTIONS + ("--snapshot-dir",):
		tag = "refused" + opt.replace("-", "_")
		p = work.start([TRACER, opt, fifo, "-c", victim("v_basic")], env=tracer_env(work),
			       stdin=subprocess.DEVNULL, tag=tag)
		rc = wait_exit(p, time.monotonic() + lib.ERROR_TIMEOUT, "memleakbpf %s FIFO" % opt)
		lines = work.read(tag + ".stderr").splitlines()
		want = "not a directory" if opt == "--snapshot-dir" else "it is a FIFO"
		if rc != 2 or len(lines) != 1 or want not in lines[0]:
			errs.append("%s FIFO: exit %s, stderr %r; expected 2 and one line saying %r"
				    % (opt, rc, lines[:3], want))
	return errs + fifo_planted(work) + pipe_unread(work)


def fifo_planted(work):
	js = work.path("report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	t = work.start([TRACER, "--json", js, "-c", victim("v_wait")], env=tracer_env(work),
		       stdin=subprocess.PIPE, tag="tracer")
	wait_for(lambda: find_line(work.read("tracer.stdout"), "READY pid="), deadline,
		 "READY from v_wait", alive=t)
	os.mkfifo(js)	# after the checks at the start
	t.stdin.write(b"go\nexit\n")
	t.stdin.close()
	rc = wait_exit(t, time.monotonic() + lib.ERROR_TIMEOUT, "memleakbpf with a FIFO at --json")
	return said_and_failed(work, rc, "memleakbpf: cannot write %s: it is a FIFO" % js, [])


def said_and_failed(work, rc, want, errs):
	"""errs, and what is wrong if want is not on the tracer's stderr or its
	exit status not 1."""
	if want not in work.read("tracer.stderr"):
		errs.append("no %r on stderr" % want)
	common_checks(work, rc, 1, errs)
	return errs


def pipe_unread(work):
	r, w = os.pipe()
	os.close(r)
	try:
		t = work.start([TRACER, "--json", "/dev/stdin", "-c", victim("v_basic")],
			       env=tracer_env(work), stdin=w, tag="unread")
	finally:
		os.close(w)
	rc = wait_exit(t, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf --json to an unread pipe")
	want = "memleakbpf: cannot write /dev/stdin: no process reads the pipe"
	errs = [] if want in work.read("unread.stderr") else ["no %r on stderr" % want]
	return errs + ([] if rc == 1 else ["an unread pipe: exit status %s, expected 1" % rc])


def case_output_stuck_tty(work):
	"""--json to a terminal whose output is suspended (Ctrl-S): the final
	write takes no bytes, and SIGTERM still ends the tracer within a second,
	saying so, exit status 1 (it used to wait with SIGTERM blocked)."""
	master, slave = os.openpty()
	try:
		tty = os.ttyname(slave)
		termios.tcflow(slave, termios.TCOOFF)
		deadline = time.monotonic() + lib.CASE_TIMEOUT
		t = work.start([TRACER, "--json", tty, "-c", victim("v_basic")], env=tracer_env(work),
			       stdin=subprocess.DEVNULL, tag="tracer")
		wait_for(lambda: "Final report" in work.read("tracer.stdout"), deadline,
			 "the final text report", alive=t)
		time.sleep(0.5)	# into the write to the terminal
		if t.poll() is not None:
			return ["memleakbpf exited (%s) before SIGTERM: the terminal took the report?"
				% t.returncode]
		sent = time.monotonic()
		t.send_signal(signal.SIGTERM)
		rc = wait_exit(t, sent + lib.ERROR_TIMEOUT, "memleakbpf writing to a stopped terminal")
		took = time.monotonic() - sent
	finally:
		os.close(slave)
		os.close(master)
	errs = [] if took < 1.0 else ["SIGTERM took %.1f s to end it" % took]
	want = "memleakbpf: cannot write %s: it took no bytes, and SIGINT or SIGTERM came" % tty
	return said_and_failed(work, rc, want, errs)


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
	want = "memleakbpf: cannot write %s: directory %s does not exist" % (js, d)
	if want not in work.read("tracer.stderr"):
		errs.append("no %r on stderr" % want)
	if "Final report" not in work.read("tracer.stdout"):
		errs.append("no final text report on stdout")
	common_checks(work, rc, 1, errs)
	return errs


CASES = [
	("target_kill_p", TRACE, [], case_target_kill(True)),
	("target_kill_c", TRACE, [], case_target_kill(False)),
	("target_stop_p", TRACE, [], case_target_stop(True)),
	("target_stop_c", TRACE, [], case_target_stop(False)),
	("target_exec_p", TRACE, [], case_target_exec_p),
	("target_fork_c", TRACE, [], case_target_fork_c),
	("tracer_kill_p", TRACE, [BPFTOOL], case_tracer_kill(True)),
	("tracer_kill_c", TRACE, [BPFTOOL], case_tracer_kill(False)),
	("tracer_kill_stopped", TRACE, [BPFTOOL], case_tracer_kill_stopped),
	("tracer_end_hands_links", TRACE, [BPFTOOL], case_tracer_end_hands_links),
	("tracer_sigint_any", TRACE, [BPFTOOL], case_tracer_sigint_any),
	("tracer_sigint_ignored", TRACE, [], case_tracer_sigint_ignored),
	("output_full_disk", TRACE, [UNSHARE], case_output_full_disk),
	("output_snapshot_full", TRACE, [UNSHARE], case_output_snapshot_full),
	("output_fifo", TRACE, [], case_output_fifo),
	("output_stuck_tty", TRACE, [], case_output_stuck_tty),
	("output_stdout_full", TRACE, [], case_output_stdout_full),
	("output_dir_gone", TRACE, [], case_output_dir_gone),
]
