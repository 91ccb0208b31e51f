# SPDX-License-Identifier: GPL-2.0
"""Processes the target starts: --follow, and the count without it.

children_not_traced: v_fork's three workers under -c without --follow: the
parent's figures exact (its children's frees of their copies of its blocks
are not its frees), and the report says that 3 processes were not traced,
naming --follow, in the text and in the JSON (totals.untraced_children).

follow_workers: the same with --follow: each worker's figures exact and its
own (processes[] in the JSON, a line each in the text, --folded-by-process
lines rooted at it), the parent's exact too, the top-level totals their
sum. follow_many: 1,000 short children in a
row, each exact, and nothing left of them at the end (-v: links made and
closed, BPF's table of processes empty, no fd per child); follow_burst: 300
forked at once, each held until the tracer comes to it. follow_vfork: a
vfork+exec and a posix_spawn child of /bin/true, followed through their
exec (an entry before it, marked execed, and one after). follow_exec_child:
a forked child allocates a block and execs v_basic: the block freed by the
exec, the image's figures exact under the child's pid, its frames named
(its own files), -v's exec-to-probed delay;
follow_exec_nofp: the child execs v_basic built without frame pointers:
its stacks walked by its own files' CFI, every caller as its truth says;
follow_exec_memcheck: a shell script's real programs (jq, sqlite3), each
exec'd by a forked shell: its blocks outstanding at its exit exactly
those valgrind --trace-children memcheck has in use at that exit;
follow_exec_dlopen: the child execs v_dlopen, whose plugins, dlopen'd
after its image was probed (one dlclose'd before the end), are named
with their lines and callers, their figures exact;
follow_fork_dlopen: the same plugins dlopen'd by a forked child (no
exec) of a parent that never loads them: named in the child;
follow_fork_dlopen_nofp: the same, program and plugins built without
frame pointers: the child unwinds its plugins by their own CFI;
follow_pprof: --pprof of a child that execs v_basic: each process's
blocks at their sites (go tool pprof), and each location in its own
image's mapping (its executable's, not the target's);
follow_spawn_exec: the same by vfork+exec and by posix_spawn;
follow_shell_script: -c --follow of `v_basic; v_basic; true` (run by
/bin/sh -c): the shell is the target (no hand-over), each program exact.
follow_prefork: -p --follow of a master whose two workers run already
(taken in at the attach) and which starts a third after it: each worker's
leak after the attach exact.
follow_running_exec: -p --follow of a shell whose child, running before
the attach, exec'd v_dlopen: the child's frames are named from its own
files, not the shell's.
follow_daemon: a child that outlives the target: tracing goes on until it
has ended, its leak counted.
follow_tracer_killed: the tracer is killed
while it holds a child at its fork: the watchdog resumes the child, and no
link is left. follow_python_pool: a multiprocessing pool (fork) whose workers leak:
each worker's blocks exact at the Python line that allocated them.
follow_exec_python: -c --follow of a shell that runs a leaking Python
victim (exec'd, not forked): its blocks exact at its Python line, with
its callers, under the child's pid, as under -c (--os-exit: no shutdown);
follow_exec_python_finalize: the same through Py_FinalizeEx, which frees
the list: the child's figures end where they begin, as a Python target's.
follow_exec_python_pool: the exec'd Python's pool workers (its forks, of
its image, not the target's) exact at their Python line.
"""

import os
import re
import shlex
import shutil
import subprocess
import time

import lib
from lib import (LineReader, Skip, TRACE, TRACER, check_report, common_checks, finish_victim,
	go_until, load_report, read_truth, start_tracing, tracer_env, victim, wait_exit)
from cases_faults import kill_while_stopped
from cases_outputs import GO, compare_sites, go_pprof, go_pprof_flat, site_bytes
from cases_python import PY, PYVICTIMS, check_py_site, py_site_stacks, py_truth


def run_tracer(work, command, extra=()):
	"""memleakbpf --json J [extra] -c COMMAND to completion: (rc, report)."""
	js = work.path("report.json")
	argv = [TRACER, "--json", js] + list(extra) + ["-c", command]
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	p = work.start(argv, env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, deadline, "memleakbpf -c " + command)
	return rc, load_report(js)


def run_fork_victim(work, mode, n, extra=()):
	rc, rep = run_tracer(work, "%s %s %d" % (victim("v_fork"), mode, n), extra)
	return rc, rep, read_truth(work)


def text_lines(work, prefix):
	return [l for l in work.read("tracer.stdout").splitlines() if l.startswith(prefix)]


def totals_of(p):
	t = p["totals"]
	return t["outstanding_bytes"], t["outstanding_allocs"]


def check_sum(rep):
	"""The top-level outstanding figures are the processes' sum."""
	ps = rep.get("processes") or []
	got = (sum(totals_of(p)[0] for p in ps), sum(totals_of(p)[1] for p in ps))
	want = totals_of(rep)
	return [] if got == want else ["processes sum to %r, the totals say %r" % (got, want)]


def check_parent(rep, truth):
	"""processes[0] is the target, with the victim's own truth."""
	ps = rep.get("processes") or []
	if not ps or not ps[0].get("target"):
		return ["processes[0] is not the target: %r" % ps[:1]]
	want = (sum(t["bytes"] for t in truth), sum(t["allocs"] for t in truth))
	if totals_of(ps[0]) != want:
		return ["the target holds %r, its truth says %r" % (totals_of(ps[0]), want)]
	if ps[0]["totals"]["frees"]:
		return ["the target freed %d blocks: its children's frees counted as its own" %
			ps[0]["totals"]["frees"]]
	# It exited before the final report (the tool says so): the JSON must too.
	if ps[0].get("exited") is not True:
		return ["processes[0].exited is %r: the target had exited" % ps[0].get("exited")]
	return []


def first_fn(rep, pos):
	frames = rep["stacks"][pos]["frames"]
	return frames[0].get("function") if frames else None


def check_child(rep, p, want_bytes, want_allocs):
	errs = []
	if totals_of(p) != (want_bytes, want_allocs):
		errs.append("pid %d holds %r, expected %r" % (p["pid"], totals_of(p),
							      (want_bytes, want_allocs)))
	if p["ppid"] != rep["target"]["pid"] or not p["exited"] or not p["traced"]:
		errs.append("pid %d: ppid %r exited %r traced %r" % (p["pid"], p["ppid"], p["exited"],
								    p["traced"]))
	fns = set(first_fn(rep, pos) for pos in p["stacks"])
	if fns != {"site_child_leak"}:
		errs.append("pid %d's stacks begin at %r, expected site_child_leak" % (p["pid"], fns))
	return errs


def case_children_not_traced(work):
	rc, rep, truth = run_fork_victim(work, "workers", 3)
	errs = check_report(rep, truth, victim("v_fork"), "v_fork.c")
	n = rep["totals"].get("untraced_children")
	if n != 3:
		errs.append("totals.untraced_children %r, expected 3" % n)
	lines = text_lines(work, "Not traced: 3 processes started by pid ")
	if len(lines) != 1 or "--follow" not in lines[0]:
		errs.append("no line 'Not traced: 3 processes started by pid' naming --follow")
	common_checks(work, rc, 0, errs)
	return errs


def children_of(work):
	notes = [l for l in work.read("truth.txt").splitlines() if l.startswith("# children: ")]
	if not notes:
		raise lib.CaseFailed("the victim did not say its children's pids")
	return [int(x) for x in notes[0].split(": ", 1)[1].split(",")]


def folded_by_pid(work):
	"""pid -> the bytes of the folded lines rooted at it (--folded-by-process)."""
	got = {}
	for line in work.read("folded.txt").splitlines():
		m = re.match(r"pid (\d+) \(.*?\);.* (\d+)$", line)
		if m:
			got[int(m.group(1))] = got.get(int(m.group(1)), 0) + int(m.group(2))
	return got


def case_follow_workers(work):
	rc, rep, truth = run_fork_victim(work, "workers", 3, [
		"--follow", "--folded", work.path("folded.txt"), "--folded-by-process"])
	errs = check_parent(rep, truth) + check_sum(rep)
	ps = {p["pid"]: p for p in rep.get("processes") or []}
	for i, pid in enumerate(children_of(work)):
		if pid not in ps:
			errs.append("worker %d (pid %d) is not in processes[]" % (i, pid))
			continue
		errs += check_child(rep, ps[pid], 1000 * (i + 1), i + 1)
	if len(ps) != 4:
		errs.append("%d processes, expected the target and 3 workers" % len(ps))
	folded = folded_by_pid(work)
	want = {pid: totals_of(p)[0] for pid, p in ps.items()}
	if folded != want:
		errs.append("folded lines by process %r, expected %r" % (folded, want))
	if rep["totals"].get("untraced_children"):
		errs.append("untraced_children %r with --follow" % rep["totals"]["untraced_children"])
	if not text_lines(work, "Processes: the target and 3 it started"):
		errs.append("no 'Processes:' section in the text report")
	if not text_lines(work, "  pid %d (the target, exited) " % rep["target"]["pid"]):
		errs.append("the text report's target line does not say it exited")
	if not [l for l in text_lines(work, "Site ") if "from 3 stacks in 3 processes, at "
		"site_child_leak" in l]:
		errs.append("no site line 'from 3 stacks in 3 processes, at site_child_leak'")
	common_checks(work, rc, 0, errs)
	return errs


FOLLOW_SAY = re.compile(r"followed (\d+) processes \((\d+) exited.*links made (\d+), closed (\d+); "
			r"processes with links now (\d+), in BPF's table (\d+); our fds (-?\d+) at the "
			r"first fork, (-?\d+) now")


def case_follow_many(work, mode="many", n=1000):
	rc, rep, truth = run_fork_victim(work, mode, n, ["--follow", "-v", "--all-stacks"])
	errs = check_parent(rep, truth) + check_sum(rep)
	ps = rep.get("processes") or []
	if len(ps) != n + 1:
		errs.append("%d processes, expected %d" % (len(ps), n + 1))
	for p in ps[1:]:
		errs += check_child(rep, p, 100, 1)
		if len(errs) > 5:
			break
	m = FOLLOW_SAY.search(work.read("tracer.stderr"))
	if not m:
		errs.append("no -v line on the processes followed")
	else:
		followed, exited, made, closed, held, table, before, now = (int(x) for x in m.groups())
		if (followed, exited) != (n, n):
			errs.append("followed %d, %d exited: expected %d" % (followed, exited, n))
		if made != closed or held or table:
			errs.append("left behind: links made %d closed %d, %d processes with links, "
				    "%d in BPF's table" % (made, closed, held, table))
		if now - before > 32:
			errs.append("our fds went from %d to %d over %d children" % (before, now, n))
	common_checks(work, rc, 0, errs)
	return errs


def case_follow_vfork(work):
	rc, rep, truth = run_fork_victim(work, "vfork", 0, ["--follow"])
	errs = check_parent(rep, truth) + check_sum(rep)
	ps = rep.get("processes") or []
	before = [p for p in ps[1:] if not p.get("after_exec")]
	after = [p for p in ps[1:] if p.get("after_exec")]
	if len(before) != 2 or not all(p["execed"] and p["traced"] for p in before):
		errs.append("children before their exec %r: expected 2, traced and marked execed" %
			    [(p["pid"], p["execed"], p["traced"]) for p in before])
	if sorted(p["pid"] for p in after) != sorted(p["pid"] for p in before) or \
	   not all(p["traced"] and p["exited"] and p["command"] == "true" for p in after):
		errs.append("images after the exec %r: expected /bin/true's, traced, under the same pids" %
			    [(p["pid"], p["command"], p["traced"]) for p in after])
	if rep["totals"].get("followed_execs") != 2:
		errs.append("totals.followed_execs %r, expected 2" % rep["totals"].get("followed_execs"))
	common_checks(work, rc, 0, errs)
	return errs


def check_exec_image(rep, p, truth, binary):
	"""p, an image a followed process exec'd: the exec'd victim's truth, exact, named."""
	errs = []
	want = (sum(t["bytes"] for t in truth), sum(t["allocs"] for t in truth))
	if totals_of(p) != want:
		errs.append("pid %d (%s) holds %r, its truth says %r" % (p["pid"], p["command"],
									   totals_of(p), want))
	if not p["traced"] or not p.get("after_exec") or binary not in (p["command"] or ""):
		errs.append("pid %d: traced %r after_exec %r command %r" % (p["pid"], p["traced"],
									 p.get("after_exec"), p["command"]))
	sites = set(t["site"] for t in truth)
	fns = set(first_fn(rep, pos) for pos in p["stacks"])
	if not fns or not fns <= sites:
		errs.append("pid %d's stacks begin at %r, expected among %r" % (p["pid"], fns, sites))
	return errs


def check_exec_images(work, rep, n, binary):
	"""n images of binary exec'd by followed processes, each with its truth.txt.I."""
	ps = [p for p in rep.get("processes") or []
	      if p.get("after_exec") and binary in (p["command"] or "")]
	if len(ps) != n:
		return ["%d exec'd images, expected %d: %r" % (len(ps), n,
			[(p["pid"], p["command"]) for p in rep.get("processes") or []])]
	errs = []
	for i, p in enumerate(ps):	# in the order of their execs (their tags)
		truth = lib.parse_truth(work.read("truth.txt.%d" % (i + 1)))
		errs += check_exec_image(rep, p, truth, binary)
	return errs


def case_follow_exec_child(work):
	"""A forked child execs v_basic: its figures exact under its pid, its frames named."""
	rc, rep = run_tracer(work, "%s exec %s" % (victim("v_fork"), victim("v_basic")),
			     ["--follow", "-v"])
	truth = read_truth(work)
	errs = check_parent(rep, truth) + check_sum(rep)
	errs += check_exec_images(work, rep, 1, "v_basic")
	# Its block from before the exec: gone with the old image, freed by the exec.
	old = [p for p in rep.get("processes") or [] if p.get("execed")]
	if len(old) != 1 or totals_of(old[0]) != (0, 0) or \
	   (old[0].get("exec_freed_bytes"), old[0].get("exec_freed_allocs")) != (1000, 1):
		errs.append("the child before its exec %r: expected 1,000 bytes in 1 block freed by "
			    "the exec, none held" % old)
	if not EXEC_SAY.search(work.read("tracer.stderr")):
		errs.append("no -v line on the exec'd images probed")
	common_checks(work, rc, 0, errs)
	return errs


def case_follow_exec_nofp(work):
	"""A forked child execs v_basic built without frame pointers: unwound by its own CFI."""
	rc, rep = run_tracer(work, "%s exec %s" % (victim("v_fork"), victim("nofp/v_basic")),
			     ["--follow"])
	errs = check_sum(rep) + check_exec_images(work, rep, 1, "v_basic")
	ps = [p for p in rep.get("processes") or [] if p.get("after_exec")]
	if len(ps) == 1:
		errs += check_callers(rep, ps[0], lib.parse_truth(work.read("truth.txt.1")))
	common_checks(work, rc, 0, errs)
	return errs


def check_callers(rep, p, truth):
	"""Each stack of p that begins at a site of truth has that site's callers, whole."""
	errs = []
	for t in truth:
		for pos in p["stacks"]:
			frames = rep["stacks"][pos]["frames"]
			callers = [f.get("function") for f in frames[1:1 + len(t["callers"])]]
			if first_fn(rep, pos) == t["site"] and callers != t["callers"]:
				errs.append("%s: callers %r, expected %r" % (t["site"], callers,
									     t["callers"]))
	return errs


FD_LIMIT_EXECS = 300
FD_LIMIT = 200


def case_follow_exec_fd_limit(work):
	"""300 execs of /bin/true under ulimit -n 200, then v_basic: its figures exact, its
	stacks whole, the --json written, and our fds bounded: the images' files are shared."""
	script = "i=0; while [ $i -lt %d ]; do /bin/true; i=$((i+1)); done; VICTIM_TRUTH=%s %s" % (
		FD_LIMIT_EXECS, work.path("truth.txt.1"), victim("v_basic"))
	js = work.path("report.json")
	# Soft and hard, around the tracer: raising the soft limit cannot help here.
	argv = ["/bin/sh", "-c", 'ulimit -n %d && exec "$@"' % FD_LIMIT, "sh", TRACER, "--json", js,
		"--follow", "-v", "-c", script]
	# Each exec is probed (a grace period or two): about 8 a second on 2 busy vCPUs.
	deadline = time.monotonic() + max(lib.CASE_TIMEOUT, 240)
	p = work.start(argv, env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, deadline, "memleakbpf under ulimit -n %d" % FD_LIMIT)
	rep = load_report(js)
	errs = check_sum(rep) + check_exec_images(work, rep, 1, "v_basic")
	ps = rep.get("processes") or []
	vb = [p for p in ps if p.get("after_exec") and "v_basic" in (p["command"] or "")]
	if len(vb) == 1:
		errs += check_callers(rep, vb[0], lib.parse_truth(work.read("truth.txt.1")))
	trues = [p for p in ps if p.get("after_exec") and p["command"] == "/bin/true"]
	if len(trues) != FD_LIMIT_EXECS or not all(p["traced"] and p["exited"] for p in trues):
		errs.append("%d images of /bin/true, expected %d, each traced and exited" %
			    (len(trues), FD_LIMIT_EXECS))
	m = FOLLOW_SAY.search(work.read("tracer.stderr"))
	before, now = (int(m.group(7)), int(m.group(8))) if m else (0, 1 << 30)
	if now - before > 32:
		errs.append("our fds went from %d at the first fork to %d after %d execs" %
			    (before, now, FD_LIMIT_EXECS + 1))
	common_checks(work, rc, 0, errs)
	return errs


EXEC_SAY = re.compile(r"1 exec'd images probed, each from its exec until its allocator's "
		      r"probes were in place: at most [0-9.]+ ms")


VG_COMMAND = re.compile(r"^==(\d+)== Command: (\S+)")
VG_IN_USE = re.compile(r"^==(\d+)==\s+in use at exit: ([\d,]+) bytes in ([\d,]+) blocks")


def in_use_by_program(log):
	"""valgrind --trace-children's log: program's name -> (bytes, blocks) in use at its exit."""
	commands, out = {}, {}
	for line in log.splitlines():
		m = VG_COMMAND.match(line)
		if m:
			commands[m.group(1)] = os.path.basename(m.group(2))
		m = VG_IN_USE.match(line)
		if m and m.group(1) in commands:
			out[commands[m.group(1)]] = (int(m.group(2).replace(",", "")),
						     int(m.group(3).replace(",", "")))
	return out


RELEASED = re.compile(r"files of (\d+) images closed once their processes had ended")
DISTINCT = 20


def case_follow_exec_release(work):
	"""40 distinct programs (copies of /bin/true) exec'd one after the other, v_basic
	between them, a report every second: the files of each ended image with no site are
	closed (our fds bounded), and v_basic's, whose blocks are still in the reports, are
	kept: its frames named, its figures exact."""
	progs = []
	for i in range(2 * DISTINCT):
		progs.append(work.path("true%d" % i))
		shutil.copy("/bin/true", progs[-1])	# a file of its own: shared with no other
	run = lambda ps: "".join("%s; sleep 0.2; " % p for p in ps)
	script = run(progs[:DISTINCT]) + "VICTIM_TRUTH=%s %s; " % (
		work.path("truth.txt.1"), victim("v_basic")) + run(progs[DISTINCT:]) + "true"
	js = work.path("report.json")
	argv = [TRACER, "--json", js, "--follow", "-v", "-c", script, "1"]
	deadline = time.monotonic() + max(lib.CASE_TIMEOUT, 120)
	p = work.start(argv, env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, deadline, "memleakbpf -c " + script)
	rep = load_report(js)
	errs = check_sum(rep) + check_exec_images(work, rep, 1, "v_basic")
	vb = [p for p in rep.get("processes") or [] if p.get("after_exec") and
	      "v_basic" in (p["command"] or "")]
	if len(vb) == 1:
		errs += check_callers(rep, vb[0], lib.parse_truth(work.read("truth.txt.1")))
	stderr = work.read("tracer.stderr")
	m = RELEASED.search(stderr)
	# Each copy is released at the first report after it ended; the last few may not be.
	if not m or int(m.group(1)) < DISTINCT:
		errs.append("files of %s images released, expected at least %d" %
			    (m.group(1) if m else "no line on the", DISTINCT))
	m = FOLLOW_SAY.search(stderr)
	before, now = (int(m.group(7)), int(m.group(8))) if m else (0, 1 << 30)
	if now - before > 16:
		errs.append("our fds went from %d at the first fork to %d after %d programs" %
			    (before, now, 2 * DISTINCT))
	common_checks(work, rc, 0, errs)
	return errs


def case_follow_exec_memcheck(work):
	"""A shell script's real programs (jq, sqlite3): each exact as memcheck has it at its exit."""
	for tool in ("valgrind", "jq", "sqlite3"):
		if not shutil.which(tool):
			raise Skip("%s is not installed" % tool)
	doc, sql = work.path("in.json"), work.path("script.sql")
	with open(doc, "w") as f:
		f.write('{"a": [1, 2, 3], "b": {"c": "x"}}\n')
	with open(sql, "w") as f:
		f.write("create table t(a, b); insert into t values (1, 'x'), (2, 'y'); select * from t;\n")
	# "; true": the shell forks each program instead of exec'ing the last.
	script = "jq .b %s; sqlite3 :memory: < %s; true" % (shlex.quote(doc), shlex.quote(sql))
	# What memleakbpf sees: libc's own blocks not freed for valgrind at each exit.
	vg = subprocess.run(["valgrind", "--trace-children=yes", "--run-libc-freeres=no",
			     "--run-cxx-freeres=no", "--leak-check=no", "/bin/sh", "-c", script],
			    env=tracer_env(work), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
			    stderr=subprocess.PIPE, timeout=lib.CASE_TIMEOUT)
	theirs = in_use_by_program(vg.stderr.decode(errors="replace"))
	rc, rep = run_tracer(work, shlex.join(["/bin/sh", "-c", script]), ["--follow"])
	errs = check_sum(rep)
	for prog in ("jq", "sqlite3"):
		ps = [p for p in rep.get("processes") or [] if p.get("after_exec") and
		      os.path.basename((p["command"] or "?").split()[0]) == prog]
		if len(ps) != 1 or prog not in theirs:
			errs.append("%s: %d exec'd processes, memcheck %r" % (prog, len(ps), theirs.get(prog)))
		elif totals_of(ps[0]) != theirs[prog]:
			errs.append("%s (pid %d): %r outstanding at its exit, memcheck %r" % (
				prog, ps[0]["pid"], totals_of(ps[0]), theirs[prog]))
	common_checks(work, rc, 0, errs)
	return errs


def check_plugins(rep, p, truth):
	"""Process p's plugin blocks exact, each at its plugin's line, module and callers."""
	errs = []
	for t in truth:
		got = [rep["stacks"][pos] for pos in p["stacks"] if first_fn(rep, pos) == t["site"]]
		figures = (sum(s["bytes"] for s in got), sum(s["allocs"] for s in got))
		if figures != (t["bytes"], t["allocs"]):
			errs.append("%s: pid %d holds %r there, truth %d, %d" % (
				t["site"], p["pid"], figures, t["bytes"], t["allocs"]))
		for s in got:
			f = s["frames"][0]
			callers = [g.get("function") for g in s["frames"][1:1 + len(t["callers"])]]
			if (f.get("line"), callers) != (t["line"], t["callers"]) or \
			   not f.get("module", "").endswith("/libp_%s.so" % t["site"].split("_")[-1]):
				errs.append("%s: frames %r, expected line %d of its plugin, then %r" % (
					t["site"], s["frames"][:3], t["line"], t["callers"]))
	return errs


def check_dlopen(work, rc, rep, ps, truth_file):
	"""The one process of ps, whose v_dlopen wrote truth_file, exact at its plugins."""
	if len(ps) != 1:
		return ["%d processes that ran v_dlopen, expected 1" % len(ps)]
	text = work.read(truth_file)
	errs = check_sum(rep) + check_plugins(rep, ps[0], lib.parse_truth(text))
	if "# closed: unmapped" not in text:
		errs.append("libp_closed.so was still mapped at the end: the case proves nothing")
	common_checks(work, rc, 0, errs)
	return errs


def case_follow_exec_dlopen(work):
	"""A forked child execs v_dlopen, whose plugins come after its image was probed."""
	rc, rep = run_tracer(work, "%s exec %s" % (victim("v_fork"), victim("v_dlopen")),
			     ["--follow"])
	ps = [p for p in rep.get("processes") or [] if p.get("after_exec")]
	return check_dlopen(work, rc, rep, ps, "truth.txt.1")


def fork_dlopen_case(build):
	"""A forked child (no exec) loads plugins its parent never loaded."""
	def run(work):
		rc, rep = run_tracer(work, "%s fork" % victim(build + "v_dlopen"), ["--follow"])
		ps = [p for p in rep.get("processes") or [] if not p.get("target")]
		return check_dlopen(work, rc, rep, ps, "truth.txt")
	return run


RAW_LOCATION = re.compile(r"^\s*\d+: 0x[0-9a-f]+ (?:M=(\d+) )?\S+ (\S+):\d+")
RAW_MAPPING = re.compile(r"^(\d+): 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+)")


def case_follow_pprof(work):
	"""--pprof of a child that execs v_basic: its locations in its own image's mappings."""
	profile = work.path("final.pb.gz")
	rc, rep = run_tracer(work, "%s exec %s" % (victim("v_fork"), victim("v_basic")),
			     ["--follow", "--pprof", profile])
	truth = read_truth(work) + lib.parse_truth(work.read("truth.txt.1"))
	errs = compare_sites(go_pprof_flat(work, victim("v_fork"), profile, "inuse_space",
					   "go_inuse"), site_bytes(truth), "go tool pprof inuse_space")
	raw = go_pprof(work, ["-raw", profile], "go_raw").splitlines()
	maps = dict(m.groups() for m in map(RAW_MAPPING.match, raw) if m)
	seen = 0
	for m in filter(None, map(RAW_LOCATION.match, raw)):
		mapping, source = m.groups()
		for vic in ("v_fork", "v_basic"):
			if source != "tests/victims/%s.c" % vic:
				continue
			seen += 1
			if not maps.get(mapping, "").endswith("/" + vic):
				errs.append("a location of %s is in mapping %s (%s), not %s's" % (
					source, mapping, maps.get(mapping), vic))
	if not seen:
		errs.append("no location of either victim in the profile")
	common_checks(work, rc, 0, errs)
	return errs


def case_follow_spawn_exec(work):
	"""vfork+exec, then posix_spawn, of v_basic: each image exact under its own pid."""
	rc, rep = run_tracer(work, "%s spawn %s" % (victim("v_fork"), victim("v_basic")),
			     ["--follow"])
	truth = read_truth(work)
	errs = check_parent(rep, truth) + check_sum(rep)
	errs += check_exec_images(work, rep, 2, "v_basic")
	common_checks(work, rc, 0, errs)
	return errs


def case_follow_shell_script(work):
	"""-c --follow of a shell script that runs two leaking programs: both traced, exact."""
	vb = victim("v_basic")
	script = "VICTIM_TRUTH=%s %s; VICTIM_TRUTH=%s %s; true" % (
		work.path("truth.txt.1"), vb, work.path("truth.txt.2"), vb)
	# Shell syntax: -c runs it through /bin/sh -c, which is the target.
	rc, rep = run_tracer(work, script, ["--follow"])
	errs = check_sum(rep) + check_exec_images(work, rep, 2, "v_basic")
	ps = rep.get("processes") or []
	if not ps or not ps[0].get("target") or ps[0]["pid"] != rep["target"]["pid"]:
		errs.append("processes[0] %r is not the target (the shell)" % ps[:1])
	common_checks(work, rc, 0, errs)
	return errs


def python_site(rep, pos):
	py = [f for f in rep["stacks"][pos]["frames"] if f.get("language") == "python"]
	return (py[0].get("function"), py[0].get("line")) if py else None


def case_follow_daemon(work):
	rc, rep, truth = run_fork_victim(work, "daemon", 0, ["--follow"])
	errs = check_parent(rep, truth) + check_sum(rep)
	ps = {p["pid"]: p for p in rep.get("processes") or []}
	kid = children_of(work)[0]
	if kid not in ps:
		errs.append("the child %d is not in processes[]" % kid)
	else:
		errs += check_child(rep, ps[kid], 2000, 2)
	if "tracing goes on until the 1 process followed has ended" not in \
			work.read("tracer.stderr"):
		errs.append("no line saying tracing goes on after the target")
	common_checks(work, rc, 0, errs)
	return errs


def case_follow_python_pool(work):
	rc, rep = run_tracer(work, "%s %s" % (PY, os.path.join(PYVICTIMS, "pool_leak.py")),
			     ["--follow"])
	return check_workers(work, rc, rep)


def case_follow_exec_python(work, exit_arg=" --os-exit"):
	"""A shell's child execs Python: its frames, from its own interpreter, exact."""
	vic = os.path.join(PYVICTIMS, "grow_list.py")
	cmd = 'sh -c "VICTIM_TRUTH=%s %s %s%s; true"' % (work.path("truth.txt"), PY, vic, exit_arg)
	rc, rep = run_tracer(work, cmd, ["--follow", "--all-stacks"])
	text = work.read("tracer.stdout")
	ps = [p for p in rep.get("processes") or [] if p.get("after_exec") and
	      (p.get("command") or "").startswith(PY + " " + vic)]
	if len(ps) != 1:
		return ["%d exec'd images of %s, expected 1" % (len(ps), vic)]
	p = ps[0]
	errs = check_sum(rep)
	mine = dict(rep, stacks=[rep["stacks"][pos] for pos in p["stacks"]])
	for t in py_truth(work):
		stacks = py_site_stacks(rep, t)
		if not stacks or len(stacks) != len(py_site_stacks(mine, t)):
			errs.append("%s:%d: %d stacks, %d of them pid %d's" % (
				t["file"], t["line"], len(stacks), len(py_site_stacks(mine, t)), p["pid"]))
		errs += check_py_site(t, py_site_stacks(mine, t), False, text)
	if "pid %d exec'd Python" % p["pid"] not in work.read("tracer.stderr"):
		errs.append("no line saying pid %d exec'd Python" % p["pid"])
	common_checks(work, rc, 0, errs)
	return errs


def case_follow_exec_python_finalize(work):
	"""The same, exiting through Py_FinalizeEx, which frees the list: its figures end there."""
	return case_follow_exec_python(work, "")


def case_follow_exec_python_pool(work):
	"""A shell's child execs Python, whose pool workers (its forks) leak: named in its image."""
	cmd = 'sh -c "VICTIM_TRUTH=%s %s %s; true"' % (work.path("truth.txt"), PY,
						      os.path.join(PYVICTIMS, "pool_leak.py"))
	rc, rep = run_tracer(work, cmd, ["--follow"])
	return check_workers(work, rc, rep)


def case_torch_loader_follow(work):
	"""A DataLoader's workers (make e2e-torch: cases_torch.py lists it)."""
	import cases_torch	# not at the top: cases_torch imports this module

	cases_torch.torch_missing()
	js = work.path("report.json")
	argv = [TRACER, "--json", js, "--follow", "-c",
		"%s %s" % (PY, os.path.join(PYVICTIMS, "torch_loader.py"))]
	p = work.start(argv, env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, cases_torch.deadline(), "memleakbpf --follow -c torch_loader.py")
	return check_workers(work, rc, load_report(js))


def check_workers(work, rc, rep):
	"""Each WORKER line of the truth: its process holds exactly that at its line."""
	errs = check_sum(rep)
	ps = {p["pid"]: p for p in rep.get("processes") or []}
	workers = [dict(kv.split("=", 1) for kv in l.split()[1:])
		   for l in work.read("truth.txt").splitlines() if l.startswith("WORKER ")]
	if not workers:
		raise lib.CaseFailed("the victim wrote no WORKER lines")
	for w in workers:
		p = ps.get(int(w["pid"]))
		if not p:
			errs.append("worker %s is not in processes[]" % w["pid"])
			continue
		at = (w["function"], int(w["line"]))
		got = [rep["stacks"][pos] for pos in p["stacks"] if python_site(rep, pos) == at]
		figures = (sum(s["bytes"] for s in got), sum(s["allocs"] for s in got))
		if figures != (int(w["bytes"]), int(w["allocs"])):
			errs.append("worker %s holds %r at %s:%d, expected %s, %s" % (
				w["pid"], figures, at[0], at[1], w["bytes"], w["allocs"]))
	target = [p for p in ps.values() if p["target"]]
	at = (workers[0]["function"], int(workers[0]["line"]))
	if target and any(python_site(rep, pos) == at for pos in target[0]["stacks"]):
		errs.append("the parent holds blocks of its workers' line")
	common_checks(work, rc, 0, errs)
	return errs


def case_follow_prefork(work):
	js = work.path("report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	v = work.start([victim("v_fork"), "prefork"], env=tracer_env(work), stdin=subprocess.PIPE,
		       stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	pid = int(out.expect("READY pid=", deadline).split("=", 1)[1])
	t = start_tracing(work, ["--json", js, "--follow", "-p", str(pid)], deadline)
	go_until(v, out, "LEAKED", deadline)
	finish_victim(v, deadline)
	rc = wait_exit(t, deadline, "memleakbpf -p --follow")
	rep = load_report(js)
	errs = check_sum(rep)
	ps = {p["pid"]: p for p in rep.get("processes") or []}
	kids = children_of(work)
	if len(ps) != 4:
		errs.append("%d processes, expected the master and 3 workers" % len(ps))
	for i, kid in enumerate(kids):
		if kid not in ps:
			errs.append("worker %d (pid %d) is not in processes[]" % (i, kid))
			continue
		errs += check_child(rep, ps[kid], 1000 * (i + 1), i + 1)
		if ps[kid]["attached"] != (i < 2):
			errs.append("worker %d: attached %r" % (i, ps[kid]["attached"]))
	if pid in ps and totals_of(ps[pid]) != (3000, 1):
		errs.append("the master holds %r, expected its one block after the attach (3000, 1)" %
			    (totals_of(ps[pid]),))
	if "following 2 processes pid %d started before the attach" % pid not in \
			work.read("tracer.stderr"):
		errs.append("no line saying the 2 running workers are followed")
	common_checks(work, rc, 0, errs)
	return errs


def case_follow_running_exec(work):
	"""-p --follow of a shell whose running child exec'd v_dlopen and loaded a plugin."""
	js = work.path("report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	# "; true": the shell forks the victim instead of exec'ing it.
	v = work.start(["/bin/sh", "-c", "%s wait; true" % victim("v_dlopen")], env=tracer_env(work),
		       stdin=subprocess.PIPE, stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	kid = int(out.expect("READY pid=", deadline).split("=", 1)[1])
	t = start_tracing(work, ["--json", js, "--follow", "-p", str(v.pid)], deadline)
	go_until(v, out, "LEAKED", deadline)
	finish_victim(v, deadline)
	rc = wait_exit(t, deadline, "memleakbpf -p --follow")
	rep = load_report(js)
	ps = [p for p in rep.get("processes") or [] if p["pid"] == kid]
	if len(ps) != 1:
		return ["the shell's child (pid %d) is not in processes[] once" % kid]
	errs = check_sum(rep) + check_plugins(rep, ps[0], read_truth(work))
	common_checks(work, rc, 0, errs)
	return errs

def case_follow_tracer_killed(work):
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	t = work.start([TRACER, "--follow", "-c", "%s prefork" % victim("v_fork")],
		       env=tracer_env(work), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
		       tag="tracer")
	out = LineReader(t.stdout)
	pid = int(out.expect("READY pid=", deadline).split("=", 1)[1])
	work.pids.append((pid, "v_fork"))
	held = lambda: [c for c in lib.children(pid) if lib.proc_state(c) == "T"]
	# LEAKED: the held worker ran and ended, and the victim went on.
	return kill_while_stopped(work, t, out, pid, b"go\n", held,
				  "the third worker to be held at its fork", "LEAKED",
				  "was held at its fork: resumed it", lambda: deadline)


CASES = [
	# (name, kind, needs extra files, function)
	("children_not_traced", TRACE, [], case_children_not_traced),
	("follow_workers", TRACE, [], case_follow_workers),
	("follow_many", TRACE, [], case_follow_many),
	("follow_burst", TRACE, [], lambda work: case_follow_many(work, "burst", 300)),
	("follow_vfork", TRACE, [], case_follow_vfork),
	("follow_exec_child", TRACE, [], case_follow_exec_child),
	("follow_exec_nofp", TRACE, [], case_follow_exec_nofp),
	("follow_exec_fd_limit", TRACE, [], case_follow_exec_fd_limit),
	("follow_exec_release", TRACE, [], case_follow_exec_release),
	("follow_exec_memcheck", TRACE, [], case_follow_exec_memcheck),
	("follow_exec_dlopen", TRACE, [], case_follow_exec_dlopen),
	("follow_fork_dlopen", TRACE, [], fork_dlopen_case("")),
	("follow_fork_dlopen_nofp", TRACE, [], fork_dlopen_case("nofp/")),
	("follow_pprof", TRACE, [GO], case_follow_pprof),
	("follow_spawn_exec", TRACE, [], case_follow_spawn_exec),
	("follow_shell_script", TRACE, [], case_follow_shell_script),
	("follow_prefork", TRACE, [], case_follow_prefork),
	("follow_running_exec", TRACE, [], case_follow_running_exec),
	("follow_daemon", TRACE, [], case_follow_daemon),
	("follow_tracer_killed", TRACE, [], case_follow_tracer_killed),
	("follow_python_pool", TRACE, [PY], case_follow_python_pool),
	("follow_exec_python", TRACE, [PY], case_follow_exec_python),
	("follow_exec_python_finalize", TRACE, [PY], case_follow_exec_python_finalize),
	("follow_exec_python_pool", TRACE, [PY], case_follow_exec_python_pool),
]
