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
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
TRACER = os.environ.get("MEMLEAKBPF") or os.path.join(ROOT, "memleakbpf")
VICTIMS = os.path.join(ROOT, ".output", "victims")
BTF = "/sys/kernel/btf/vmlinux"
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
TRACING_LINE = "memleakbpf: tracing"

CASE_TIMEOUT = 60.0	# a whole tracing case
ERROR_TIMEOUT = 10.0	# an error case ("within a few seconds")
STEP_TIMEOUT = 30.0	# one wait inside a case (attach, trigger, ...)

# Functions the victims define: allocation sites, intermediate callers, main.
VICTIM_FN = re.compile(r"^(site_|via_|thr_)\w+$|^main$")
# Drop counters that must stay 0 on these small victims.
MUST_BE_ZERO = re.compile(r"map_full|stack_error|missed_return|state_error")

VERBOSE = False


class CaseFailed(Exception):
	pass


class Skip(Exception):
	pass


def victim(name):
	return os.path.join(VICTIMS, name)


def log(msg):
	if VERBOSE:
		sys.stderr.write(msg.rstrip("\n") + "\n")


# ---------------------------------------------------------------- processes

class Work:
	"""Files and processes of one case; kills whatever is left on close."""

	def __init__(self, base, name):
		self.dir = os.path.join(base, name)
		os.makedirs(self.dir)
		self.procs = []
		self.pids = []	# processes we did not start but must not leave behind

	def path(self, name):
		return os.path.join(self.dir, name)

	def start(self, argv, env=None, stdin=None, stdout=None, stderr=None, tag="proc"):
		"""Start argv in its own session; stdout/stderr default to files."""
		out = stdout if stdout is not None else open(self.path(tag + ".stdout"), "wb")
		err = stderr if stderr is not None else open(self.path(tag + ".stderr"), "wb")
		log("  start %s: %s" % (tag, " ".join(argv)))
		p = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=stdin, stdout=out,
				     stderr=err, start_new_session=True)
		self.procs.append(p)
		return p

	def read(self, name):
		try:
			with open(self.path(name), "rb") as f:
				return f.read().decode("utf-8", "replace")
		except FileNotFoundError:
			return ""

	def close(self):
		for p in self.procs:
			if p.poll() is None:
				kill_group(p.pid)
				try:
					p.wait(5)
				except subprocess.TimeoutExpired:
					pass
			for f in (p.stdin, p.stdout):
				if f:
					try:
						f.close()
					except OSError:
						pass
		for pid, comm in self.pids:
			kill_if(pid, comm)


def kill_if(pid, comm):
	"""SIGKILL a process we did not start but caused (a -c target), if it is still that."""
	try:
		with open("/proc/%d/comm" % pid) as f:
			if f.read().strip() != comm:
				return
		os.kill(pid, signal.SIGKILL)
	except OSError:
		pass


def kill_group(pid):
	for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
		try:
			target()
		except OSError:
			pass


def wait_exit(p, deadline, what):
	"""Exit status of p, or CaseFailed (after killing it) past the deadline."""
	try:
		return p.wait(max(0.1, deadline - time.monotonic()))
	except subprocess.TimeoutExpired:
		kill_group(p.pid)
		p.wait(5)
		raise CaseFailed("timeout: %s still running, killed" % what)


def wait_for(cond, deadline, what, alive=None):
	"""Poll cond() until true; fail at the deadline or if `alive` has exited."""
	while True:
		v = cond()
		if v:
			return v
		if alive is not None and alive.poll() is not None:
			v = cond()
			if v:
				return v
			raise CaseFailed("%s: exited (status %s) before %s" % (
				alive.args[0] if isinstance(alive.args, list) else alive.args,
				alive.returncode, what))
		if time.monotonic() > deadline:
			raise CaseFailed("timeout waiting for %s" % what)
		time.sleep(0.05)


class LineReader:
	"""Lines from a pipe, with a deadline (select + os.read, never blocks past it)."""

	def __init__(self, f):
		self.fd = f.fileno()
		self.buf = b""

	def line(self, deadline, what):
		while b"\n" not in self.buf:
			left = deadline - time.monotonic()
			if left <= 0:
				raise CaseFailed("timeout waiting for %s" % what)
			r, _, _ = select.select([self.fd], [], [], left)
			if not r:
				continue
			chunk = os.read(self.fd, 4096)
			if not chunk:
				raise CaseFailed("EOF waiting for %s (got %r)" % (what, self.buf))
			self.buf += chunk
		line, self.buf = self.buf.split(b"\n", 1)
		return line.decode("utf-8", "replace")

	def expect(self, prefix, deadline):
		while True:
			line = self.line(deadline, repr(prefix))
			if line.startswith(prefix):
				return line


def tracing_line_count(text):
	return sum(1 for line in text.splitlines() if line.startswith(TRACING_LINE))


def find_line(text, prefix):
	for line in text.splitlines():
		if line.startswith(prefix):
			return line
	return None


# ---------------------------------------------------------------- truth & report

def parse_truth(text):
	"""TRUTH lines -> list of dicts (site, api, bytes, allocs, line, callers, phase)."""
	truth = []
	for raw in text.splitlines():
		if not raw.startswith("TRUTH "):
			continue
		kv = dict(f.split("=", 1) for f in raw.split()[1:] if "=" in f)
		truth.append({
			"site": kv["site"], "api": kv["api"],
			"bytes": int(kv["bytes"]), "allocs": int(kv["allocs"]),
			"line": int(kv["line"]) if "line" in kv else None,
			"callers": kv["callers"].split(",") if "callers" in kv else None,
			"phase": kv.get("phase"),
		})
	return truth


def fn_name(frame):
	"""A frame's function, without a C++ parameter list."""
	fn = frame.get("function") or ""
	return fn.split("(", 1)[0]


def frame_str(frames, n=6):
	out = []
	for f in frames[:n]:
		s = fn_name(f) or f.get("address", "?")
		if f.get("line"):
			s += ":%s" % f["line"]
		if f.get("inlined"):
			s += "(inl)"
		out.append(s)
	return " <- ".join(out) + (" ..." if len(frames) > n else "")


def load_report(path):
	try:
		with open(path) as f:
			return json.load(f)
	except FileNotFoundError:
		raise CaseFailed("no JSON report at %s" % path)
	except ValueError as e:
		raise CaseFailed("JSON report does not parse: %s" % e)


# One function under two names cannot be told apart by a probe on it: the
# tracer reports the name it lists first (README, "What is traced").
GLIBC_ALIASES = {"memalign": "aligned_alloc"}
TCMALLOC_ALIASES = {"memalign": "aligned_alloc", "new[]": "new"}


def check_report(rep, truth, binary, source, pid=None, exclude_phase=None, aliases=GLIBC_ALIASES):
	"""All mismatches between a JSON report and the victim's truth, as strings."""
	errs = []
	if rep.get("version") != 1:
		errs.append("version is %r, not 1" % rep.get("version"))
	target = rep.get("target") or {}
	if pid is not None and target.get("pid") != pid:
		errs.append("target.pid %r, expected %d" % (target.get("pid"), pid))
	totals = rep.get("totals") or {}
	stacks = rep.get("stacks")
	if not isinstance(stacks, list):
		return errs + ["no stacks array"]

	b = [s.get("bytes", 0) for s in stacks]
	if b != sorted(b, reverse=True):
		errs.append("stacks not sorted by bytes, descending")
	sb, sa = sum(b), sum(s.get("allocs", 0) for s in stacks)
	if (totals.get("outstanding_bytes"), totals.get("outstanding_allocs")) != (sb, sa):
		errs.append("totals outstanding %s bytes / %s allocs, stacks sum to %d / %d" % (
			totals.get("outstanding_bytes"), totals.get("outstanding_allocs"), sb, sa))
	for k, v in sorted((totals.get("dropped") or {}).items()):
		if MUST_BE_ZERO.search(k) and v:
			errs.append("dropped.%s = %s" % (k, v))

	expected = {}
	for t in truth:
		if exclude_phase and t["phase"] == exclude_phase:
			continue
		key = (t["site"], aliases.get(t["api"], t["api"]))
		e = expected.setdefault(key, dict(t, bytes=0, allocs=0))
		e["bytes"] += t["bytes"]
		e["allocs"] += t["allocs"]

	got = {}
	for s in stacks:
		frames = s.get("frames") or []
		if not frames:
			continue
		fn = fn_name(frames[0])
		if not VICTIM_FN.match(fn):
			continue
		g = got.setdefault((fn, s.get("api")), {"bytes": 0, "allocs": 0, "stacks": []})
		g["bytes"] += s.get("bytes", 0)
		g["allocs"] += s.get("allocs", 0)
		g["stacks"].append(s)

	for key, e in sorted(expected.items()):
		g = got.get(key)
		if not g:
			other = [a for (f, a) in got if f == key[0]]
			errs.append("%s/%s: missing (truth %d bytes in %d)%s" % (
				key[0], key[1], e["bytes"], e["allocs"],
				" but reported as api %s" % ",".join(map(str, other)) if other else ""))
			continue
		if (g["bytes"], g["allocs"]) != (e["bytes"], e["allocs"]):
			errs.append("%s/%s: %d bytes in %d, truth %d bytes in %d" % (
				key[0], key[1], g["bytes"], g["allocs"], e["bytes"], e["allocs"]))
		for s in g["stacks"]:
			errs += check_frames(key, s["frames"], e, binary, source)
	for key, g in sorted(got.items()):
		if key not in expected:
			errs.append("%s/%s: %d bytes in %d outstanding, truth: none (%s)" % (
				key[0], key[1], g["bytes"], g["allocs"], frame_str(g["stacks"][0]["frames"])))
	return errs


def check_frames(key, frames, e, binary, source):
	errs = []
	where = "%s/%s" % key
	f0 = frames[0]
	module = f0.get("module") or ""
	if os.path.realpath(module) != os.path.realpath(binary):
		errs.append("%s: frames[0].module %r, expected %s" % (where, module, binary))
	if f0.get("inlined"):
		errs.append("%s: frames[0] marked inlined" % where)
	if e.get("line"):
		if f0.get("line") != e["line"] or not str(f0.get("file") or "").endswith(source):
			errs.append("%s: frames[0] at %s:%s, expected %s:%d" % (
				where, f0.get("file"), f0.get("line"), source, e["line"]))
	if e.get("callers"):
		want = e["callers"]
		have = [fn_name(f) for f in frames[1:1 + len(want)]]
		if have != want:
			errs.append("%s: callers %s, expected %s" % (where, ",".join(have), ",".join(want)))
	return errs


# ---------------------------------------------------------------- case kinds

def tracer_env(work):
	"""Our environment, plus where the victim writes its truth."""
	env = dict(os.environ)
	env["VICTIM_TRUTH"] = work.path("truth.txt")
	env.pop("LD_PRELOAD", None)
	return env


def common_checks(work, rc, want_rc, errs):
	stderr = work.read("tracer.stderr")
	n = tracing_line_count(stderr)
	if n != 1:
		errs.insert(0, "%d %r lines on stderr, expected 1" % (n, TRACING_LINE))
	if rc != want_rc:
		errs.insert(0, "exit status %s, expected %s" % (rc, want_rc))


def read_truth(work):
	text = work.read("truth.txt")
	truth = parse_truth(text)
	if not truth:
		raise CaseFailed("the victim wrote no truth to %s (did it run?)" % work.path("truth.txt"))
	return truth


def run_command_case(work, command, binary, source, want_rc=0, extra_args=(), check=None,
		     aliases=GLIBC_ALIASES):
	"""memleakbpf --json J -c COMMAND, to completion."""
	js = work.path("report.json")
	argv = [TRACER, "--json", js] + list(extra_args) + ["-c", command]
	deadline = time.monotonic() + CASE_TIMEOUT
	p = work.start(argv, env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, deadline, "memleakbpf -c")
	errs = []
	truth = read_truth(work)
	if os.path.exists(js):
		errs += check_report(load_report(js), truth, binary, source, aliases=aliases)
	else:
		errs.append("no JSON report written")
	if check:
		errs += check(work, truth)
	common_checks(work, rc, want_rc, errs)
	return errs


def attach_case(work, on_leaked):
	"""v_wait under -p: READY, attach, trigger, LEAKED, then on_leaked(...)."""
	binary = victim("v_wait")
	js = work.path("report.json")
	deadline = time.monotonic() + CASE_TIMEOUT
	v = work.start([binary], env=tracer_env(work), stdin=subprocess.PIPE,
		       stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	ready = out.expect("READY pid=", min(deadline, time.monotonic() + STEP_TIMEOUT))
	pid = int(ready.split("=", 1)[1])
	if pid != v.pid:
		raise CaseFailed("victim says pid %d, started as %d" % (pid, v.pid))

	t = work.start([TRACER, "--json", js, "-p", str(pid)], env=tracer_env(work),
		       stdin=subprocess.DEVNULL, tag="tracer")
	wait_for(lambda: tracing_line_count(work.read("tracer.stderr")),
		 min(deadline, time.monotonic() + STEP_TIMEOUT), repr(TRACING_LINE), alive=t)
	v.stdin.write(b"go\n")
	v.stdin.flush()
	out.expect("LEAKED", min(deadline, time.monotonic() + STEP_TIMEOUT))
	rc = on_leaked(v, t, deadline)

	errs = []
	truth = read_truth(work)
	if os.path.exists(js):
		errs += check_report(load_report(js), truth, binary, "v_wait.c",
				     pid=pid, exclude_phase="pre")
	else:
		errs.append("no JSON report written")
	common_checks(work, rc, 0, errs)
	return errs


def finish_victim(v, deadline):
	"""Let v_wait exit (second line), and check it exits 0."""
	try:
		v.stdin.write(b"exit\n")
		v.stdin.close()
	except OSError:
		pass
	vrc = wait_exit(v, deadline, "v_wait")
	if vrc != 0:
		raise CaseFailed("v_wait exited %s, expected 0" % vrc)


def case_attach(work):
	def on_leaked(v, t, deadline):
		finish_victim(v, deadline)
		return wait_exit(t, deadline, "memleakbpf -p after its target exited")
	return attach_case(work, on_leaked)


def case_attach_sigint(work):
	def on_leaked(v, t, deadline):
		t.send_signal(signal.SIGINT)
		rc = wait_exit(t, deadline, "memleakbpf -p after SIGINT")
		if v.poll() is not None:
			raise CaseFailed("the target died with the tracer (status %s)" % v.returncode)
		finish_victim(v, deadline)
		return rc
	return attach_case(work, on_leaked)


def signal_c_case(sig):
	return lambda work: stop_command_case(work, sig)


def stop_command_case(work, sig):
	"""-c v_wait, `sig` to the tracer while the target still runs: both phases count."""
	binary = victim("v_wait")
	js = work.path("report.json")
	deadline = time.monotonic() + CASE_TIMEOUT
	t = work.start([TRACER, "--json", js, "-c", binary], env=tracer_env(work),
		       stdin=subprocess.PIPE, tag="tracer")
	step = lambda: min(deadline, time.monotonic() + STEP_TIMEOUT)
	wait_for(lambda: tracing_line_count(work.read("tracer.stderr")), step(),
		 repr(TRACING_LINE), alive=t)
	ready = wait_for(lambda: find_line(work.read("tracer.stdout"), "READY pid="), step(),
			 "READY from v_wait (through the tracer's stdin/stdout)", alive=t)
	pid = int(ready.split("=", 1)[1])
	work.pids.append((pid, "v_wait"))
	t.stdin.write(b"go\n")
	t.stdin.flush()
	wait_for(lambda: find_line(work.read("tracer.stdout"), "LEAKED"), step(), "LEAKED", alive=t)
	t.send_signal(sig)
	rc = wait_exit(t, deadline, "memleakbpf -c after %s" % signal.Signals(sig).name)
	try:
		t.stdin.close()	# v_wait's second wait ends at EOF, if it is still there
	except OSError:
		pass

	errs = []
	truth = read_truth(work)
	if os.path.exists(js):
		errs += check_report(load_report(js), truth, binary, "v_wait.c", pid=pid)
	else:
		errs.append("no JSON report written")
	# The contract: the signal reaches the command too, the final report is
	# written, and -c exits with the command's status (128 + signal here).
	common_checks(work, rc, 128 + sig, errs)
	return errs


def check_folded(work, truth):
	"""--folded: `frame;frame;... N` lines, every truth site named somewhere."""
	text = work.read("report.folded")
	errs = []
	if not text.strip():
		return ["folded report empty or missing"]
	for line in text.splitlines():
		if not re.match(r"^\S.* \d+$", line):
			errs.append("folded line not 'stack count': %r" % line[:120])
			break
	for t in truth:
		if t["site"] not in text:
			errs.append("folded report does not name %s" % t["site"])
	return errs


def uses_allocator(lib):
	"""The victim's "# malloc:" / "# operator new:" note names lib: LD_PRELOAD worked."""
	def check(work, truth):
		notes = [l.split(":", 1)[1].strip() for l in work.read("truth.txt").splitlines()
			 if l.startswith(("# malloc:", "# operator new:"))]
		if not notes:
			return ["the victim did not say which allocator it used"]
		if any(os.path.realpath(n) != os.path.realpath(lib) for n in notes):
			return ["the victim ran with %s, not %s" % (", ".join(notes), lib)]
		return []
	return check


def command_case(command, vname, source, want_rc=0, extra_args=(), check=None,
		 aliases=GLIBC_ALIASES):
	def run(work):
		cmd = command.replace("{V}", VICTIMS).replace("{TC}", TCMALLOC).replace("{JE}", JEMALLOC)
		cmd = cmd.replace("{W}", work.dir)
		return run_command_case(work, cmd, victim(vname), source, want_rc,
					[a.replace("{W}", work.dir) for a in extra_args], check,
					aliases)
	return run


# ---------------------------------------------------------------- error cases

def free_pid():
	pid_max = int(open("/proc/sys/kernel/pid_max").read())
	for pid in range(pid_max - 1, 1, -1):
		if not os.path.exists("/proc/%d" % pid):
			return pid
	raise Skip("no free pid")


def error_case(args_fn):
	def run(work):
		args = args_fn()
		p = work.start([TRACER] + args, stdin=subprocess.DEVNULL, tag="tracer")
		rc = wait_exit(p, time.monotonic() + ERROR_TIMEOUT, "memleakbpf " + " ".join(args))
		lines = work.read("tracer.stderr").splitlines()
		errs = []
		if rc == 0 or rc < 0:
			errs.append("exit status %s, expected an error (> 0)" % rc)
		if len(lines) != 1 or not lines[0].startswith("memleakbpf: "):
			errs.append("stderr %r, expected one line starting with 'memleakbpf: '" % lines[:4])
		return errs
	return run


def case_help(work):
	p = work.start([TRACER, "--help"], stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + ERROR_TIMEOUT, "memleakbpf --help")
	errs = []
	if rc != 0:
		errs.append("exit status %s, expected 0" % rc)
	if "-p" not in work.read("tracer.stdout"):
		errs.append("no usage on stdout")
	return errs


# ---------------------------------------------------------------- the cases

TRACE, ERROR = "trace", "error"

CASES = [
	# (name, kind, needs extra files, function)
	("apis", TRACE, [], command_case("{V}/v_apis", "v_apis", "v_apis.c")),
	("basic", TRACE, [], command_case("{V}/v_basic", "v_basic", "v_basic.c")),
	("threads", TRACE, [], command_case("{V}/v_threads", "v_threads", "v_threads.c")),
	("cxx", TRACE, [], command_case("{V}/v_cxx", "v_cxx", "v_cxx.cc")),
	("static", TRACE, [], command_case("{V}/v_static", "v_static", "v_static.c")),
	("tcmalloc", TRACE, [TCMALLOC],
	 command_case("env LD_PRELOAD={TC} {V}/v_basic", "v_basic", "v_basic.c",
		      check=uses_allocator(TCMALLOC))),
	("jemalloc", TRACE, [JEMALLOC],
	 command_case("env LD_PRELOAD={JE} {V}/v_basic", "v_basic", "v_basic.c",
		      check=uses_allocator(JEMALLOC))),
	("cxx_tcmalloc", TRACE, [TCMALLOC],
	 command_case("env LD_PRELOAD={TC} {V}/v_cxx", "v_cxx", "v_cxx.cc",
		      check=uses_allocator(TCMALLOC), aliases=TCMALLOC_ALIASES)),
	("cxx_jemalloc", TRACE, [JEMALLOC],
	 command_case("env LD_PRELOAD={JE} {V}/v_cxx", "v_cxx", "v_cxx.cc",
		      check=uses_allocator(JEMALLOC))),
	("exit_now", TRACE, [], command_case("{V}/v_exit", "v_exit", "v_exit.c", 7)),
	("exit_return", TRACE, [],
	 command_case("{V}/v_exit return", "v_exit", "v_exit.c", 5)),
	# Shell syntax: run through /bin/sh -c. dash forks for every command but an
	# `exec`: shell_exec traces the victim in the shell's own process, the
	# others in the first child the shell starts, which tracing follows.
	("shell_exec", TRACE, [],
	 command_case("exec {V}/v_exit return >/dev/null 2>&1", "v_exit", "v_exit.c", 5)),
	("shell_pipe", TRACE, [],
	 command_case("{V}/v_basic | cat >/dev/null", "v_basic", "v_basic.c", 0)),
	("shell_redirect", TRACE, [],
	 command_case("{V}/v_exit return >/dev/null 2>&1", "v_exit", "v_exit.c", 5)),
	("nested_sh", TRACE, [],
	 command_case("sh -c '{V}/v_exit return'", "v_exit", "v_exit.c", 5)),
	("folded", TRACE, [],
	 command_case("{V}/v_exit", "v_exit", "v_exit.c", 7,
		      ["--folded", "{W}/report.folded"], check_folded)),
	("attach", TRACE, [], case_attach),
	("attach_sigint", TRACE, [], case_attach_sigint),
	("sigint_c", TRACE, [], signal_c_case(signal.SIGINT)),
	("sigterm_c", TRACE, [], signal_c_case(signal.SIGTERM)),

	("help", ERROR, [], case_help),
	("err_no_target", ERROR, [], error_case(lambda: [])),
	("err_pid_and_command", ERROR, [], error_case(lambda: ["-p", "1", "-c", "true"])),
	("err_unknown_option", ERROR, [], error_case(lambda: ["--no-such-option", "-c", "true"])),
	("err_pid_not_number", ERROR, [], error_case(lambda: ["-p", "12x"])),
	("err_pid_missing", ERROR, [], error_case(lambda: ["-p", str(free_pid())])),
	("err_command_not_found", ERROR, [],
	 error_case(lambda: ["-c", "memleakbpf-e2e-no-such-command"])),
	("err_json_dir_missing", ERROR, [],
	 error_case(lambda: ["--json", "/nonexistent-memleakbpf-e2e/report.json", "-c", "true"])),
]


# ================================================================ outputs (issue 5)
#
# The outputs for other tools, each checked with its real reader:
# google-pprof (Debian's google-perftools) reads --pprof files and --snapshot-dir
# snapshots and must show every victim site's exact bytes; --base between two
# snapshots must show exactly what leaked in between; the --flamegraph SVG
# must parse as XML, name every site and draw it as wide as its bytes.
# v_phases (tests/victims/v_phases.c) leaks in three phases p1..p3 and never
# frees a leaked block, so the truth after phase k is its p1..pk TRUTH lines.
# Everything in this section is used only by the cases appended to CASES at
# its end.

PPROF = "/usr/bin/google-pprof"
PPROF_ARGS = ["--text", "--show_bytes", "--nodecount=1000000", "--nodefraction=0",
	      "--edgefraction=0"]
# "  flat flat% sum%  cum cum% function [file:line]"
PPROF_ROW = re.compile(r"^\s*(-?\d+)\s+-?[\d.]+%\s+-?[\d.]+%\s+(-?\d+)\s+-?[\d.]+%\s+(\S.*)$")
SNAPSHOT_LINE = re.compile(r"^memleakbpf: snapshot (\S+\.heap) (\S+\.folded)$")
SVG = "{http://www.w3.org/2000/svg}"
SVG_PLOT_WIDTH = 1180.0		# 1200 minus two 10-pixel margins
FLAMEGRAPH_PL = shutil.which("flamegraph.pl") or "flamegraph.pl (not on PATH)"
PHASES = ("p1", "p2", "p3")
CHURN_PER_PHASE = 12800		# v_phases' site_churn, allocated and freed per phase


def site_bytes(truth, phases=None, field="bytes"):
	"""{site: bytes} over all APIs, only the given phases when phases is not None."""
	out = {}
	for t in truth:
		if phases is None or t["phase"] in phases:
			out[t["site"]] = out.get(t["site"], 0) + t[field]
	return out


def compare_sites(got, want, what):
	"""Mismatches between {site: n} maps; functions that are not victim sites are ignored."""
	errs = []
	for site in sorted(set(want) | set(got)):
		if not VICTIM_FN.match(site) or site == "main" or site.startswith(("via_", "thr_")):
			continue
		if got.get(site, 0) != want.get(site, 0):
			errs.append("%s: %s is %d, truth %d" % (what, site, got.get(site, 0), want.get(site, 0)))
	return errs


def pprof_flat(work, binary, profile, *opts, tag="pprof"):
	"""Run google-pprof --text on profile: ({function: flat bytes}, total bytes)."""
	argv = [PPROF] + PPROF_ARGS + list(opts) + [binary, profile]
	log("  run: " + " ".join(argv))
	try:
		r = subprocess.run(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
				   stderr=subprocess.PIPE, timeout=STEP_TIMEOUT)
	except subprocess.TimeoutExpired:
		raise CaseFailed("google-pprof timed out on %s" % profile)
	out = r.stdout.decode("utf-8", "replace")
	with open(work.path(tag + ".txt"), "w") as f:
		f.write(" ".join(argv) + "\n" + out + r.stderr.decode("utf-8", "replace"))
	if r.returncode:
		raise CaseFailed("google-pprof exited %d on %s (see %s.txt)" % (r.returncode, profile, tag))
	flat, total = {}, None
	for line in out.splitlines():
		if line.startswith("Total: "):
			total = int(line.split()[1])
		m = PPROF_ROW.match(line)
		if m:
			fn = m.group(3).split("(", 1)[0].split()[0]
			flat[fn] = flat.get(fn, 0) + int(m.group(1))
	if total is None:
		raise CaseFailed("google-pprof printed no Total line for %s (see %s.txt)" % (profile, tag))
	return flat, total


def folded_sites(text, weight_of=int):
	"""{site: count} from folded lines: the frame under the allocation function."""
	out = {}
	for line in text.splitlines():
		stack, _, n = line.rpartition(" ")
		frames = stack.split(";")
		if len(frames) >= 2:
			out[frames[-2]] = out.get(frames[-2], 0) + weight_of(n)
	return out


def check_pprof_file(name, phases=None, alloc=None):
	"""--pprof NAME: google-pprof shows the truth's bytes per site (alloc: alloc_space too)."""
	def check(work, truth):
		binary = victim(work.victim)
		profile = work.path(name)
		if not os.path.exists(profile):
			return ["no heap profile written at %s" % profile]
		flat, _ = pprof_flat(work, binary, profile, "--inuse_space", tag="inuse")
		errs = compare_sites(flat, site_bytes(truth, phases), "google-pprof --inuse_space")
		if alloc:
			flat, _ = pprof_flat(work, binary, profile, "--alloc_space", tag="alloc")
			errs += compare_sites(flat, alloc(truth), "google-pprof --alloc_space")
		return errs
	return check


GO = shutil.which("go") or "go (golang-go, for Go's pprof: not on PATH)"
GO_ROW = re.compile(r"^\s*(-?\d+)B\s+-?[\d.]+%\s+-?[\d.]+%\s+(-?\d+)B\s+-?[\d.]+%\s+(\S.*)$")


def go_pprof_flat(work, binary, profile, index, tag):
	"""go tool pprof -text: {function: flat bytes} for sample index (inuse_space, ...)."""
	argv = [GO, "tool", "pprof", "-text", "-sample_index=" + index, "-unit=B", "-nodefraction=0",
		"-nodecount=1000000", binary, profile]
	env = dict(os.environ, HOME=work.dir, GOCACHE=work.path("gocache"))
	try:
		r = subprocess.run(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
				   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=STEP_TIMEOUT)
	except subprocess.TimeoutExpired:
		raise CaseFailed("go tool pprof timed out on %s" % profile)
	out = r.stdout.decode("utf-8", "replace")
	with open(work.path(tag + ".txt"), "w") as f:
		f.write(" ".join(argv) + "\n" + out + r.stderr.decode("utf-8", "replace"))
	if r.returncode:
		raise CaseFailed("go tool pprof exited %d on %s (see %s.txt)" % (r.returncode, profile, tag))
	flat = {}
	for line in out.splitlines():
		m = GO_ROW.match(line)
		if m:
			fn = m.group(3).split("(", 1)[0].split()[0]
			flat[fn] = flat.get(fn, 0) + int(m.group(1))
	return flat


def check_go_pprof(name):
	"""--pprof NAME read by Go's pprof: in-use and allocated bytes per site."""
	def check(work, truth):
		binary, profile = victim(work.victim), work.path(name)
		if not os.path.exists(profile):
			return ["no heap profile written at %s" % profile]
		errs = compare_sites(go_pprof_flat(work, binary, profile, "inuse_space", "go_inuse"),
				     site_bytes(truth), "go tool pprof inuse_space")
		return errs + compare_sites(go_pprof_flat(work, binary, profile, "alloc_space", "go_alloc"),
					    phases_alloc(truth), "go tool pprof alloc_space")
	return check


def phases_alloc(truth):
	"""v_phases' allocated bytes per site: its leaks, and site_churn's freed blocks."""
	want = site_bytes(truth)
	want["site_churn"] = CHURN_PER_PHASE * len(PHASES)
	return want


def output_case(command, vname, source, extra_args, check):
	"""command_case for this section: the check knows the victim's name."""
	def run(work):
		work.victim = vname
		return command_case(command, vname, source, extra_args=extra_args, check=check)(work)
	return run


def svg_frames(path):
	"""(root frame, [(name, bytes, width, x, first title line...)]) of a --flamegraph file."""
	import xml.etree.ElementTree as ET
	try:
		root = ET.parse(path).getroot()
	except (ET.ParseError, FileNotFoundError) as e:
		raise CaseFailed("%s: not a readable SVG: %s" % (path, e))
	frames = []
	for g in root.iter(SVG + "g"):
		if g.get("class") != "f":
			continue
		rect = g.find(SVG + "rect")
		frames.append({"name": g.find(SVG + "title").text.split("\n")[0],
			       "x": int(g.get("data-x")), "bytes": int(g.get("data-w")),
			       "depth": int(g.get("data-d")), "px": float(rect.get("x")),
			       "width": float(rect.get("width"))})
	return root, frames


def check_svg(name):
	"""--flamegraph NAME: XML, every site named, widths proportional to bytes."""
	def check(work, truth):
		root, frames = svg_frames(work.path(name))
		errs = []
		if root.tag != SVG + "svg":
			errs.append("root element %s, not svg" % root.tag)
		tops = [f for f in frames if f["depth"] == 0]
		if len(tops) != 1:
			return errs + ["%d root frames, expected 1" % len(tops)]
		total = tops[0]["bytes"]
		for f in frames:
			want_w = f["bytes"] * SVG_PLOT_WIDTH / total
			want_x = 10 + f["x"] * SVG_PLOT_WIDTH / total
			if abs(f["width"] - want_w) > 0.001 or abs(f["px"] - want_x) > 0.001:
				errs.append("frame %s: %d bytes drawn %.3f wide at %.3f, expected %.3f at %.3f"
					    % (f["name"], f["bytes"], f["width"], f["px"], want_w, want_x))
		got = {}
		for f in frames:
			got[f["name"]] = got.get(f["name"], 0) + f["bytes"]
		errs += compare_sites(got, site_bytes(truth), "flame graph bytes")
		if any(e.get("href") or e.get("{http://www.w3.org/1999/xlink}href") for e in root.iter()):
			errs.append("the SVG refers to something outside itself")
		return errs[:20]
	return check


def check_folded_allocs(name):
	def check(work, truth):
		return compare_sites(folded_sites(work.read(name)), site_bytes(truth, field="allocs"),
				     "--folded-weight allocs")
	return check


def case_flamegraph_pl(work):
	"""flamegraph.pl renders our --folded output without an error."""
	errs = command_case("{V}/v_basic", "v_basic", "v_basic.c",
			    extra_args=["--folded", "{W}/report.folded"])(work)
	r = subprocess.run([FLAMEGRAPH_PL, "--countname=bytes", work.path("report.folded")],
			   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
			   timeout=STEP_TIMEOUT)
	if r.returncode or r.stderr.strip():
		errs.append("flamegraph.pl exited %d: %s" % (r.returncode, r.stderr[:200]))
	elif b"<svg" not in r.stdout:
		errs.append("flamegraph.pl wrote no SVG")
	return errs


def wait_snapshot_line(work, n, deadline, alive):
	"""The n-th 'memleakbpf: snapshot HEAP FOLDED' line on the tracer's stderr."""
	def nth():
		lines = [m for m in (SNAPSHOT_LINE.match(l) for l in
				     work.read("tracer.stderr").splitlines()) if m]
		return lines[n - 1] if len(lines) >= n else None
	return wait_for(nth, deadline, "snapshot line %d on stderr" % n, alive=alive)


def case_snapshot_sigusr1(work):
	"""-p v_phases with --snapshot-dir: SIGUSR1 after each phase; diffs with --base.

	A file already in the directory takes number 0001: the snapshots must be
	0002..0004 (one per SIGUSR1) and 0005 (the final report), and it must be
	left alone."""
	binary = victim("v_phases")
	snaps = work.path("snaps")
	os.makedirs(snaps)
	deadline = time.monotonic() + CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + STEP_TIMEOUT)
	v = work.start([binary], env=tracer_env(work), stdin=subprocess.PIPE,
		       stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	squatter = os.path.join(snaps, "memleak.%d.0001.folded" % pid)
	with open(squatter, "w") as f:
		f.write("not ours\n")
	t = work.start([TRACER, "--json", work.path("report.json"), "--snapshot-dir", snaps,
			"-p", str(pid), "3600"], env=tracer_env(work), stdin=subprocess.DEVNULL,
		       tag="tracer")
	wait_for(lambda: tracing_line_count(work.read("tracer.stderr")), step(),
		 repr(TRACING_LINE), alive=t)
	taken = []
	for k in range(1, len(PHASES) + 1):
		v.stdin.write(b"go\n")
		v.stdin.flush()
		out.expect("PHASE %d" % k, step())
		t.send_signal(signal.SIGUSR1)
		taken.append(wait_snapshot_line(work, k, step(), t).groups())
	finish_victim(v, deadline)
	rc = wait_exit(t, deadline, "memleakbpf -p after its target exited")

	errs = []
	truth = read_truth(work)
	want_names = [("memleak.%d.%04d.heap" % (pid, n), "memleak.%d.%04d.folded" % (pid, n))
		      for n in (2, 3, 4)]
	if [(os.path.basename(h), os.path.basename(f)) for h, f in taken] != want_names:
		errs.append("snapshot paths %s, expected %s in %s" % (taken, want_names, snaps))
		return errs
	for k, (heap, folded) in enumerate(taken, 1):
		phases = PHASES[:k]
		flat, _ = pprof_flat(work, binary, heap, "--inuse_space", tag="snap%d" % k)
		errs += compare_sites(flat, site_bytes(truth, phases), "snapshot %d (google-pprof)" % k)
		errs += compare_sites(folded_sites(open(folded).read()), site_bytes(truth, phases),
				      "snapshot %d (.folded)" % k)
	flat, total = pprof_flat(work, binary, taken[2][0], "--inuse_space",
				 "--base=" + taken[0][0], tag="base")
	grown = site_bytes(truth, PHASES[1:])
	errs += compare_sites(flat, grown, "--base snapshot 1 -> 3")
	if total != sum(grown.values()):
		errs.append("--base snapshot 1 -> 3: Total %d bytes, truth %d" % (total, sum(grown.values())))
	if open(squatter).read() != "not ours\n" or os.path.exists(squatter[:-len("folded")] + "heap"):
		errs.append("number 0001 was taken by a file, yet the tracer wrote there")
	final = os.path.join(snaps, "memleak.%d.0005.heap" % pid)
	if not os.path.exists(final):
		errs.append("no final snapshot %s" % final)
	if os.path.exists(work.path("report.json")):
		errs += check_report(load_report(work.path("report.json")), truth, binary, "v_phases.c",
				     pid=pid)
	common_checks(work, rc, 0, errs)
	return errs


def snapshot_state(folded_text, truth):
	"""How many phases a snapshot's .folded shows complete, or None if it matches none."""
	got = folded_sites(folded_text)
	for k in range(len(PHASES) + 1):
		if not compare_sites(got, site_bytes(truth, PHASES[:k]), ""):
			return k
	return None


def case_snapshot_interval(work):
	"""-c 'v_phases auto 1500', a snapshot every 0.4 s: numbered, complete, exact.

	Phases last well under a millisecond, at 1.5, 3 and 4.5 s, and the
	snapshots are at least 0.1 s away from them (1.2, 1.6, 2.8, 3.2, ...), so
	every snapshot shows some number of complete phases, and --base from one
	showing p1 to one showing p1..p3 is exactly the p2 and p3 leaks."""
	snaps = work.path("snaps")
	os.makedirs(snaps)
	errs = command_case("{V}/v_phases auto 1500", "v_phases", "v_phases.c",
			    extra_args=["--snapshot-dir", snaps, "0.4"])(work)
	truth = read_truth(work)
	names = sorted(os.listdir(snaps))
	heaps = [n for n in names if n.endswith(".heap")]
	pid = heaps[0].split(".")[1] if heaps else "?"
	want = ["memleak.%s.%04d.%s" % (pid, n, ext) for n in range(1, len(heaps) + 1)
		for ext in ("folded", "heap")]
	if names != want or len(heaps) < 6:
		return errs + ["snapshot files %s, expected pairs numbered from 0001 (6 or more)" % names]
	states = []
	for h in heaps:
		s = snapshot_state(open(os.path.join(snaps, h[:-4] + "folded")).read(), truth)
		if s is None:
			errs.append("%s matches the truth after no phase" % h)
		states.append(s)
	if states != sorted(s for s in states if s is not None) or not {1, 3} <= set(states):
		return errs + ["snapshot states %s: expected non-decreasing, with 1 and 3" % states]
	first, last = heaps[states.index(1)], heaps[len(states) - 1 - states[::-1].index(3)]
	flat, total = pprof_flat(work, victim("v_phases"), os.path.join(snaps, last), "--inuse_space",
				 "--base=" + os.path.join(snaps, first), tag="base")
	grown = site_bytes(truth, PHASES[1:])
	errs += compare_sites(flat, grown, "--base %s -> %s" % (first, last))
	if total != sum(grown.values()):
		errs.append("--base %s -> %s: Total %d, truth %d" % (first, last, total, sum(grown.values())))
	return errs


def long_options():
	"""The long options opts.c defines."""
	with open(os.path.join(ROOT, "user", "opts.c")) as f:
		return re.findall(r'^\s*\{ "([a-z-]+)", (?:required|no)_argument', f.read(), re.M)


def case_help_lists_every_option(work):
	p = work.start([TRACER, "--help"], stdin=subprocess.DEVNULL, tag="tracer")
	wait_exit(p, time.monotonic() + ERROR_TIMEOUT, "memleakbpf --help")
	text = work.read("tracer.stdout")
	names = long_options()
	errs = ["--help does not list --%s" % n for n in names if "--" + n + " " not in text and
		"--" + n + "\n" not in text]
	return errs + ([] if len(names) > 10 else ["found only %d options in opts.c" % len(names)])


def case_man_page(work):
	"""docs/memleakbpf.8 names every option and renders without a groff warning."""
	page = os.path.join(ROOT, "docs", "memleakbpf.8")
	with open(page) as f:
		src = f.read()
	errs = ["the man page does not document --%s" % n for n in long_options()
		if ("--" + n).replace("-", "\\-") not in src]
	groff = shutil.which("groff")
	if not groff:
		if errs:
			return errs
		raise Skip("no groff to render the man page (options checked)")
	r = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", page], stdin=subprocess.DEVNULL,
			   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=STEP_TIMEOUT)
	if r.returncode or r.stderr.strip():
		errs.append("groff -ww: %s" % r.stderr.decode("utf-8", "replace").strip()[:300])
	return errs


CASES += [
	("pprof_c", TRACE, [PPROF],
	 output_case("{V}/v_basic", "v_basic", "v_basic.c", ["--pprof", "{W}/final.heap"],
		     check_pprof_file("final.heap"))),
	("pprof_alloc_space", TRACE, [PPROF],
	 output_case("{V}/v_phases auto 0", "v_phases", "v_phases.c",
		     ["--pprof", "{W}/final.heap"], check_pprof_file("final.heap", alloc=phases_alloc))),
	("pprof_cxx", TRACE, [PPROF],
	 output_case("{V}/v_cxx", "v_cxx", "v_cxx.cc", ["--pprof", "{W}/final.heap"],
		     check_pprof_file("final.heap"))),
	("pprof_go", TRACE, [GO],
	 output_case("{V}/v_phases auto 0", "v_phases", "v_phases.c",
		     ["--pprof", "{W}/final.heap"], check_go_pprof("final.heap"))),
	("snapshot_sigusr1", TRACE, [PPROF], case_snapshot_sigusr1),
	("snapshot_interval", TRACE, [PPROF], case_snapshot_interval),
	("flamegraph_c", TRACE, [],
	 output_case("{V}/v_basic", "v_basic", "v_basic.c", ["--flamegraph", "{W}/leaks.svg"],
		     check_svg("leaks.svg"))),
	("flamegraph_cxx", TRACE, [],
	 output_case("{V}/v_cxx", "v_cxx", "v_cxx.cc", ["--flamegraph", "{W}/leaks.svg"],
		     check_svg("leaks.svg"))),
	("flamegraph_pl", TRACE, [FLAMEGRAPH_PL], case_flamegraph_pl),
	("folded_weight_allocs", TRACE, [],
	 output_case("{V}/v_basic", "v_basic", "v_basic.c",
		     ["--folded", "{W}/allocs.folded", "--folded-weight", "allocs"],
		     check_folded_allocs("allocs.folded"))),
	("help_lists_every_option", ERROR, [], case_help_lists_every_option),
	("man_page", ERROR, [], case_man_page),
	("err_snapshot_dir_missing", ERROR, [],
	 error_case(lambda: ["--snapshot-dir", "/nonexistent-memleakbpf-e2e", "-c", "true"])),
	("err_snapshot_dir_is_file", ERROR, [],
	 error_case(lambda: ["--snapshot-dir", "/etc/passwd", "-c", "true"])),
	("err_pprof_dir_missing", ERROR, [],
	 error_case(lambda: ["--pprof", "/nonexistent-memleakbpf-e2e/x.heap", "-c", "true"])),
	("err_flamegraph_dir_missing", ERROR, [],
	 error_case(lambda: ["--flamegraph", "/nonexistent-memleakbpf-e2e/x.svg", "-c", "true"])),
	("err_folded_weight", ERROR, [],
	 error_case(lambda: ["--folded", "/tmp/x.folded", "--folded-weight", "blocks", "-c", "true"])),
]

# ================================================================ end of outputs (issue 5)

# ================================================================ probe placement (issue 6)
#
# Entry-only probes (free, munmap, operator delete) may sit past the entry, on
# the first instruction the kernel emulates (user/placement.c). These cases
# prove that placement equivalent to the entry on each allocator: the victim
# runs twice, with the default placement (and -v, which names where each
# probe went) and with MEMLEAKBPF_PROBE_AT_ENTRY=1, and both reports must
# match the truth and each other exactly: totals, every stack's figures and
# frames. The default run must also really have moved the named functions.

PROBE_AT = re.compile(r"^memleakbpf:\s+(\S+): probe at \+(\d+) \((.*)\)$")


def placement_run(work, subs, name, command, at_entry):
	"""One traced run in work/name; returns (sub-work, exit status, report or None)."""
	sub = Work(work.dir, name)
	subs.append(sub)
	env = tracer_env(sub)
	env.pop("MEMLEAKBPF_PROBE_AT_ENTRY", None)
	if at_entry:
		env["MEMLEAKBPF_PROBE_AT_ENTRY"] = "1"
	js = sub.path("report.json")
	p = sub.start([TRACER, "-v", "--json", js, "-c", command], env=env,
		      stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + CASE_TIMEOUT, "memleakbpf -c (%s)" % name)
	return sub, rc, load_report(js) if os.path.exists(js) else None


def stack_key(s):
	"""A stack as (api, frames), frames by module and file offset: the same in two runs."""
	return (s.get("api"), tuple((os.path.basename(f.get("module") or ""), f.get("offset"))
				    for f in s.get("frames") or []))


def same_reports(a, b):
	"""Differences between the moved and the entry placement's reports."""
	errs = []
	ta, tb = a.get("totals") or {}, b.get("totals") or {}
	for k in ("outstanding_bytes", "outstanding_allocs", "allocs", "frees", "dropped"):
		if ta.get(k) != tb.get(k):
			errs.append("totals.%s: %r moved, %r at the entry" % (k, ta.get(k), tb.get(k)))
	fields = ("bytes", "allocs", "total_bytes", "total_allocs")
	sa = sorted((stack_key(s), tuple(s.get(f) for f in fields)) for s in a.get("stacks") or [])
	sb = sorted((stack_key(s), tuple(s.get(f) for f in fields)) for s in b.get("stacks") or [])
	if sa != sb:
		only = [x for x in sa if x not in sb][:1] + [x for x in sb if x not in sa][:1]
		errs.append("stacks differ: %d moved, %d at the entry; first difference %r" % (
			len(sa), len(sb), only))
	return errs


def placements(work):
	"""{symbol: (offset, why)} from a -v run's stderr."""
	out = {}
	for line in work.read("tracer.stderr").splitlines():
		m = PROBE_AT.match(line)
		if m:
			out[m.group(1)] = (int(m.group(2)), m.group(3))
	return out


def placement_case(command, vname, source, moved, aliases=GLIBC_ALIASES, check=None):
	def run(work):
		cmd = command.replace("{V}", VICTIMS).replace("{TC}", TCMALLOC).replace("{JE}", JEMALLOC)
		subs = []
		try:
			return compare_placements(work, subs, cmd, victim(vname), source, moved,
						  aliases, check)
		finally:
			for sub in subs:
				sub.close()
	return run


def compare_placements(work, subs, cmd, binary, source, moved, aliases, check):
	errs, reports = [], {}
	for name, at_entry in (("moved", False), ("entry", True)):
		sub, rc, rep = placement_run(work, subs, name, cmd, at_entry)
		truth = read_truth(sub)
		sub_errs = []
		if rep is None:
			sub_errs.append("no JSON report written")
		else:
			sub_errs += check_report(rep, truth, binary, source, aliases=aliases)
		if check:
			sub_errs += check(sub, truth)
		common_checks(sub, rc, 0, sub_errs)
		errs += ["%s: %s" % (name, e) for e in sub_errs]
		reports[name] = (sub, rep)
	(moved_work, a), (entry_work, b) = reports["moved"], reports["entry"]
	if a is not None and b is not None:
		errs += same_reports(a, b)
	at = placements(moved_work)
	for fn in moved:
		if fn not in at:
			errs.append("moved: -v names no placement for %s" % fn)
		elif at[fn][0] == 0:
			errs.append("moved: %s stayed at its entry (%s)" % (fn, at[fn][1]))
	for fn, (off, why) in sorted(placements(entry_work).items()):
		if off:
			errs.append("entry: %s probed at +%d despite MEMLEAKBPF_PROBE_AT_ENTRY" % (fn, off))
	return errs


CASES += [
	("placement_glibc", TRACE, [],
	 placement_case("{V}/v_apis", "v_apis", "v_apis.c", ["free"])),
	("placement_glibc_cxx", TRACE, [],
	 placement_case("{V}/v_cxx", "v_cxx", "v_cxx.cc", ["free", "_ZdlPv"])),
	("placement_tcmalloc", TRACE, [TCMALLOC],
	 placement_case("env LD_PRELOAD={TC} {V}/v_basic", "v_basic", "v_basic.c", ["free"],
			check=uses_allocator(TCMALLOC))),
	("placement_tcmalloc_cxx", TRACE, [TCMALLOC],
	 placement_case("env LD_PRELOAD={TC} {V}/v_cxx", "v_cxx", "v_cxx.cc", ["free"],
			aliases=TCMALLOC_ALIASES, check=uses_allocator(TCMALLOC))),
	("placement_jemalloc", TRACE, [JEMALLOC],
	 placement_case("env LD_PRELOAD={JE} {V}/v_basic", "v_basic", "v_basic.c", ["free"],
			check=uses_allocator(JEMALLOC))),
	("placement_jemalloc_cxx", TRACE, [JEMALLOC],
	 placement_case("env LD_PRELOAD={JE} {V}/v_cxx", "v_cxx", "v_cxx.cc", ["free"],
			check=uses_allocator(JEMALLOC))),
]

# ================================================================ end of probe placement (issue 6)


# ================================================================ symbols (issue 3)
#
# Every frame a victim names is checked exactly (function, file, line,
# inlined, module, and the offset where there is no name), in the JSON, in
# the text report and in the folded stacks, and the bytes of each such stack
# against the truth: inlined calls (v_inline), dlopen'd plugins, one
# dlclose'd before the report (v_dlopen), debug info split off and found by
# debuglink or by build id under --debug-dir (v_debug_*), a stripped binary as
# module+offset (offsets from objdump on the unstripped v_debug), PIE and
# non-PIE, a target gone within milliseconds (v_quick), a binary deleted
# while traced with -p (a copy of v_wait), C++ names (v_cxxsym) and JIT code
# named by /tmp/perf-PID.map (v_jit, under -c and -p).
# Expected lines: "truth" is the TRUTH line's (the allocation call), "@name"
# the line of the victim's "@name" comment, "=text" the first line holding text.
# Everything in this section is used only by the cases appended to CASES at
# its end.

PLUGINS = os.path.join(VICTIMS, "plugins")
DEBUG_ROOT = os.path.join(ROOT, ".output", "debug-root")
OBJDUMP = shutil.which("objdump") or "objdump (binutils: not on PATH)"
UNSHARE = shutil.which("unshare") or "unshare (util-linux: not on PATH)"
FRAME_KEYS = {"address", "function", "module", "offset", "file", "line", "inlined"}
PERF_MAP = "{PERF_MAP}"		# a frame's module: the target's /tmp/perf-PID.map
# "  2.2 KiB (2,304 bytes) in 1 allocation from malloc", "  100 bytes in 1 allocation from new[]"
TEXT_STACK = re.compile(r"^  (?:([\d,]+) bytes?|\S+ \S+ \(([\d,]+) bytes\)) in [\d,]+ "
			r"allocations? from (\S+)$")


class F:
	"""One expected frame. line: int, "truth", "@marker", "=text" or None;
	offset: an int or a set of them (frames without a name), "address" (bias 0)."""

	def __init__(self, function, source=None, line=None, inlined=False, module=None,
		     offset=None):
		self.function, self.source, self.line = function, source, line
		self.inlined, self.module, self.offset = inlined, module, offset


class S:
	"""The stacks of one truth (site, api): their leading frames, exactly."""

	def __init__(self, site, api, frames):
		self.site, self.api, self.frames = site, api, frames


def source_line(source, spec, truth_line):
	if spec == "truth":
		return truth_line
	if isinstance(spec, int) or spec is None:
		return spec
	text = spec[1:] + " */" if spec.startswith("@") else spec[1:]
	with open(os.path.join(ROOT, source)) as f:
		for n, line in enumerate(f, 1):
			if (spec.startswith("@") and ("@" + text) in line) or \
			   (spec.startswith("=") and text in line):
				return n
	raise CaseFailed("%s: no line for %s" % (source, spec))


def call_returns(binary, fn, callee):
	"""The return addresses of every call fn makes to callee, per objdump (file offsets)."""
	out = subprocess.run([OBJDUMP, "-d", "--no-show-raw-insn", binary], stdout=subprocess.PIPE,
			     stderr=subprocess.DEVNULL, check=True).stdout.decode()
	rets, inside, take = set(), False, False
	for line in out.splitlines():
		if not line.startswith(" "):
			inside = line.endswith("<%s>:" % fn) or (inside and not line.strip())
			continue
		m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
		if not inside or not m:
			continue
		if take:
			rets.add(int(m.group(1), 16))
			take = False
		take = m.group(2).startswith("call") and ("<%s>" % callee) in m.group(2)
	if not rets:
		raise CaseFailed("objdump finds no call from %s to %s in %s" % (fn, callee, binary))
	return rets


class Want:
	"""A spec made concrete for one run: lines resolved, the perf map's name known."""

	def __init__(self, f, truth_line, pid):
		self.function, self.inlined = f.function, f.inlined
		self.file = f.source
		self.line = source_line(f.source, f.line, truth_line) if f.source else None
		self.module = f.module.replace(PERF_MAP, "/tmp/perf-%d.map" % pid) if f.module else None
		self.offset = f.offset

	def matches(self, frame):
		if frame.get("function") != self.function or bool(frame.get("inlined")) != self.inlined:
			return False
		if frame.get("file") != self.file or frame.get("line") != self.line:
			return False
		if os.path.realpath(frame.get("module") or "/") != os.path.realpath(self.module or "/"):
			return False
		off = int(frame.get("offset") or "0", 16)
		if self.offset == "address":
			return off == int(frame.get("address"), 16)
		if isinstance(self.offset, set):
			return off in self.offset
		return self.offset is None or off == self.offset

	def label(self, frame):
		"""As the folded stacks and the text report name a frame."""
		if self.function:
			return self.function
		return "%s+%s" % (os.path.basename(self.module), frame.get("offset"))

	def text(self, i, frame):
		"""The text report's line for this frame as #i (module once per address)."""
		s = "      #%d %s" % (i, self.label(frame))
		if self.file:
			s += " (%s:%d%s)" % (self.file, self.line, ", inlined" if self.inlined else "")
		if self.function and not self.inlined:
			s += " [%s]" % os.path.basename(self.module)
		return s

	def __str__(self):
		where = "%s:%s" % (self.file, self.line) if self.file else "offset %s" % (
			self.offset if not isinstance(self.offset, int) else hex(self.offset))
		return "%s (%s%s) [%s]" % (self.function, where, ", inlined" if self.inlined else "",
					  os.path.basename(self.module or "?"))


def frame_label(frame):
	if frame.get("function"):
		return frame["function"]
	if frame.get("module"):
		return "%s+%s" % (os.path.basename(frame["module"]), frame.get("offset"))
	return frame.get("address")


def text_stacks(stdout):
	"""The final text report's stacks: [(api, bytes, [frame lines])]."""
	lines = stdout.splitlines()
	start = max((i for i, l in enumerate(lines) if "memleakbpf: Final report:" in l), default=None)
	if start is None:
		raise CaseFailed("no final text report on stdout")
	stacks = []
	for line in lines[start:]:
		m = TEXT_STACK.match(line)
		if m:
			stacks.append((m.group(3), int((m.group(1) or m.group(2)).replace(",", "")), []))
		elif line.startswith("      #") and stacks:
			stacks[-1][2].append(line)
	return stacks


def folded_lines(text):
	"""[(frames root first, the api last, count)]."""
	out = []
	for line in text.splitlines():
		stack, _, n = line.rpartition(" ")
		out.append((stack.split(";"), int(n)))
	return out


def sym_check(rep, truth, specs, modules, stdout, folded, exclude_phase=None, nspid=None):
	"""Exact frames per spec in the JSON, the text and the folded stacks; bytes per truth.
	nspid: the target's pid in its own namespace (its perf map's name), if not its pid."""
	errs = []
	if rep.get("version") != 1:
		errs.append("version is %r, not 1" % rep.get("version"))
	stacks = rep.get("stacks") or []
	totals = rep.get("totals") or {}
	if (totals.get("outstanding_bytes"), totals.get("outstanding_allocs")) != (
			sum(s["bytes"] for s in stacks), sum(s["allocs"] for s in stacks)):
		errs.append("totals do not add up to the stacks")
	for k, v in sorted((totals.get("dropped") or {}).items()):
		if MUST_BE_ZERO.search(k) and v:
			errs.append("dropped.%s = %s" % (k, v))
	for s in stacks:
		for f in s.get("frames") or []:
			if set(f) != FRAME_KEYS:
				errs.append("a frame's fields are %s, not %s" % (sorted(f), sorted(FRAME_KEYS)))
				break
	want_bytes = {}
	for t in truth:
		if exclude_phase is None or t["phase"] != exclude_phase:
			key = (t["site"], t["api"])
			b, a, _ = want_bytes.get(key, (0, 0, None))
			want_bytes[key] = (b + t["bytes"], a + t["allocs"], t["line"])
	pid = nspid or (rep.get("target") or {}).get("pid") or 0
	text = text_stacks(stdout)
	fold = folded_lines(folded)
	claimed = set()
	for spec in specs:
		key = (spec.site, spec.api)
		if key not in want_bytes:
			errs.append("%s/%s: not in the truth" % key)
			continue
		tb, ta, tline = want_bytes[key]
		want = [Want(f, tline, pid) for f in spec.frames]
		errs += check_spec(key, want, spec.api, tb, ta, stacks, text, fold, claimed)
	for i, s in enumerate(stacks):
		f0 = (s.get("frames") or [{}])[0]
		if i not in claimed and os.path.realpath(f0.get("module") or "/") in modules:
			errs.append("unexpected stack %s/%s: %d bytes at %s" % (
				frame_label(f0), s.get("api"), s["bytes"], frame_str(s["frames"])))
	return errs


def check_spec(key, want, api, tb, ta, stacks, text, fold, claimed):
	errs, n = [], len(want)
	where = "%s/%s" % key
	got_b = got_a = 0
	lines, suffixes = set(), set()
	for i, s in enumerate(stacks):
		frames = s.get("frames") or []
		if s.get("api") != api or len(frames) < n:
			continue
		if all(w.matches(f) for w, f in zip(want, frames)):
			claimed.add(i)
			got_b += s["bytes"]
			got_a += s["allocs"]
			lines.add(tuple(w.text(j, f) for j, (w, f) in enumerate(zip(want, frames))))
			suffixes.add(tuple(reversed([w.label(f) for w, f in zip(want, frames)])) + (api,))
		elif frame_label(frames[0]) == want[0].label(frames[0]):
			errs.append("%s: frames %s, expected %s" % (
				where, frame_str(frames, n), " <- ".join(map(str, want))))
	if (got_b, got_a) != (tb, ta):
		errs.append("%s: %d bytes in %d with the expected frames (%s), truth %d in %d" % (
			where, got_b, got_a, " <- ".join(map(str, want)), tb, ta))
		return errs
	# The text report: the same frame lines, and the same bytes under them.
	tbytes = sum(b for a, b, fl in text if a == api and tuple(fl[:n]) in lines)
	if tbytes != tb:
		errs.append("%s: the text report has %d bytes under %s; truth %d" % (
			where, tbytes, " / ".join(" | ".join(l) for l in sorted(lines)), tb))
	# The folded stacks: root first, the api as the leaf.
	fbytes = sum(c for fr, c in fold if tuple(fr[-(n + 1):]) in suffixes)
	if fbytes != tb:
		errs.append("%s: folded stacks ending %s hold %d bytes, truth %d" % (
			where, " or ".join(";".join(x) for x in sorted(suffixes)), fbytes, tb))
	return errs


def sym_trace(work, argv, env=None):
	"""memleakbpf --json --folded -T 1000 ARGV to completion; (exit status, report)."""
	js, fd = work.path("report.json"), work.path("report.folded")
	t = work.start([TRACER, "--json", js, "--folded", fd, "-T", "1000"] + argv,
		       env=env or tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(t, time.monotonic() + CASE_TIMEOUT, "memleakbpf " + " ".join(argv))
	return rc, load_report(js)


def sym_case(vname, specs, args=(), want_rc=0, extra=None, modules=()):
	"""-c a victim of this section; extra(work, rep, truth) adds checks."""
	def run(work):
		binary = victim(vname)
		argv = [a.replace("{DR}", DEBUG_ROOT) for a in args] + ["-c", binary]
		try:
			rc, rep = sym_trace(work, argv)
			truth = read_truth(work)
			mods = {os.path.realpath(m) for m in (binary,) + tuple(modules)}
			errs = sym_check(rep, truth, specs(binary), mods, work.read("tracer.stdout"),
					 work.read("report.folded"))
			errs += extra(work, rep, truth) if extra else []
		finally:
			remove_perf_map(work)
		common_checks(work, rc, want_rc, errs)
		return errs
	return run


def remove_perf_map(work):
	"""v_jit leaves /tmp/perf-PID.map behind under -c, as JIT runtimes do."""
	try:
		pid = load_report(work.path("report.json"))["target"]["pid"]
		os.unlink("/tmp/perf-%d.map" % pid)
	except (CaseFailed, KeyError, TypeError, OSError):
		pass


INL = "tests/victims/v_inline.c"
DLO = "tests/victims/v_dlopen.c"
DBG = "tests/victims/v_debug.c"
NOPIE = "tests/victims/v_nopie.c"
QUICK = "tests/victims/v_quick.c"
CXX = "tests/victims/v_cxxsym.cc"
JIT = "tests/victims/v_jit.c"
WAIT = "tests/victims/v_wait.c"


def inline_specs(b):
	return [
		S("site_inl_direct", "malloc", [
			F("site_inl_direct", INL, "truth", True, b),
			F("via_inl_host", INL, "@host_calls_direct", False, b),
			F("main", INL, "@main_calls_host", False, b)]),
		S("site_inl_nested", "calloc", [
			F("site_inl_nested", INL, "truth", True, b),
			F("via_inl_mid", INL, "@mid_calls_nested", True, b),
			F("via_inl_host", INL, "@host_calls_mid", False, b),
			F("main", INL, "@main_calls_host", False, b)]),
	]


def dlopen_specs(b):
	kept, closed = os.path.join(PLUGINS, "libp_kept.so"), os.path.join(PLUGINS, "libp_closed.so")
	return [
		S("site_plugin_kept", "malloc", [
			F("site_plugin_kept", "tests/victims/plugins/p_kept.c", "truth", False, kept),
			F("via_plugin_kept", DLO, "@kept_call", False, b),
			F("main", DLO, "@main_kept", False, b)]),
		S("site_plugin_closed", "calloc", [
			F("site_plugin_closed", "tests/victims/plugins/p_closed.c", "truth", False, closed),
			F("via_plugin_closed", DLO, "@closed_call", False, b),
			F("main", DLO, "@main_closed", False, b)]),
	]


def debug_specs(b):
	return [
		S("site_dbg_malloc", "malloc", [
			F("site_dbg_malloc", DBG, "truth", False, b),
			F("via_dbg", DBG, "@via_calls_malloc", False, b),
			F("main", DBG, "@main_calls_via", False, b)]),
		S("site_dbg_calloc", "calloc", [
			F("site_dbg_calloc", DBG, "truth", False, b),
			F("main", DBG, "@main_calls_calloc", False, b)]),
	]


def stripped_specs(b):
	"""No names: the return addresses objdump finds in the unstripped build."""
	full = victim("v_debug")

	def at(fn, callee):
		return F(None, None, None, False, b, call_returns(full, fn, callee))
	return [
		S("site_dbg_malloc", "malloc", [at("site_dbg_malloc", "malloc@plt"),
						at("via_dbg", "site_dbg_malloc"), at("main", "via_dbg")]),
		S("site_dbg_calloc", "calloc", [at("site_dbg_calloc", "calloc@plt"),
						at("main", "site_dbg_calloc")]),
	]


def nopie_specs(b):
	return [
		S("site_nopie_malloc", "malloc", [
			F("site_nopie_malloc", NOPIE, "truth", False, b, "address"),
			F("via_nopie", NOPIE, "@via_calls_malloc", False, b, "address"),
			F("main", NOPIE, "@main_calls_via", False, b, "address")]),
		S("site_nopie_realloc", "realloc", [
			F("site_nopie_realloc", NOPIE, "truth", False, b, "address"),
			F("main", NOPIE, "@main_calls_realloc", False, b, "address")]),
	]


def quick_specs(b):
	return [
		S("site_quick_malloc", "malloc", [
			F("site_quick_malloc", QUICK, "truth", False, b),
			F("via_quick", QUICK, "@via_calls_malloc", False, b),
			F("main", QUICK, "@main_calls_via", False, b)]),
		S("site_quick_inline", "malloc", [
			F("site_quick_inline", QUICK, "truth", True, b),
			F("via_quick", QUICK, "@via_calls_inline", False, b),
			F("main", QUICK, "@main_calls_via", False, b)]),
	]


def cxx_specs(b):
	def site(name, api, fn, caller):
		return S(name, api, [F(fn, CXX, "truth", False, b), F("main", CXX, caller, False, b)])
	return [
		site("site_put", "new", "store::Cache::site_put(unsigned long)", "@main_put"),
		site("site_grow_item", "new[]", "store::Pool<store::Item>::site_grow(unsigned long)",
		     "@main_grow_item"),
		site("site_grow_char", "new[]", "store::Pool<char>::site_grow(unsigned long)",
		     "@main_grow_char"),
		site("site_make_int", "malloc", "int* site_make<int>(unsigned long, char const*)",
		     "@main_make_int"),
		site("site_make_item", "malloc",
		     "store::Item* site_make<store::Item>(unsigned long, char const*)",
		     "@main_make_item"),
		S("site_lambda", "calloc", [
			F("via_lambda(unsigned long)::{lambda(unsigned long)#1}::operator()"
			  "(unsigned long) const", CXX, "truth", False, b),
			F("via_lambda(unsigned long)", CXX, "@lambda_call", False, b),
			F("main", CXX, "@main_lambda", False, b)]),
	]


def jit_specs(b):
	return [
		S("site_jit_stub", "malloc", [
			F("jit::site_stub demo.js:3", None, None, False, PERF_MAP, "address"),
			F("via_jit", JIT, "@stub_call", False, b),
			F("main", JIT, "@main_jit", False, b)]),
		S("site_jit_page", "mmap", [
			F("site_jit_page", JIT, "truth", False, b),
			F("make_stub", JIT, "@make_calls_page", False, b),
			F("main", JIT, "@main_jit", False, b)]),
	]


def check_unmapped(work, rep, truth):
	"""libp_closed.so really was unmapped before the victim wrote its truth."""
	if "# closed: unmapped" not in work.read("truth.txt"):
		return ["libp_closed.so was still mapped at the end: the case proves nothing"]
	return []


def check_quick(work, rep, truth):
	"""Gone within 10 ms of main, and every frame of its stacks named, libc's too."""
	errs = []
	m = re.search(r"^# main_us: (\d+)$", work.read("truth.txt"), re.M)
	if not m or int(m.group(1)) >= 10000:
		errs.append("v_quick ran %s us from main to _exit, not under 10,000" % (
			m.group(1) if m else "?"))
	for s in rep["stacks"]:
		names = [f.get("function") for f in s["frames"]]
		if s["frames"] and s["frames"][0].get("module", "").endswith("/v_quick") and \
		   (None in names or "__libc_start_call_main" not in names):
			errs.append("v_quick stack not fully named: %s" % frame_str(s["frames"], 10))
	return errs


def unnamed_without_debug_dir(work, rep, truth):
	"""v_debug_id: the build-id directory is what names it (run again without)."""
	sub = Work(work.dir, "without")
	try:
		rc, bare = sym_trace(sub, ["-c", victim("v_debug_id")], env=tracer_env(sub))
	finally:
		sub.close()
	named = [f for s in bare["stacks"] for f in s["frames"]
		 if (f.get("module") or "").endswith("/v_debug_id") and f.get("function")]
	if rc or named:
		return ["without --debug-dir: exit %s, named frames %s" % (rc, frame_str(named))]
	return []


def case_deleted_p(work):
	"""A copy of v_wait, deleted once started, traced with -p: read through map_files."""
	binary = work.path("v_wait")
	shutil.copy2(victim("v_wait"), binary)
	deadline = time.monotonic() + CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + STEP_TIMEOUT)
	v = work.start([binary], env=tracer_env(work), stdin=subprocess.PIPE,
		       stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	os.unlink(binary)
	with open("/proc/%d/maps" % pid) as f:
		if "v_wait (deleted)" not in f.read():
			raise CaseFailed("the deleted binary is not shown (deleted) in the maps")
	js, fd = work.path("report.json"), work.path("report.folded")
	t = work.start([TRACER, "--json", js, "--folded", fd, "-T", "1000", "-p", str(pid)],
		       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	wait_for(lambda: tracing_line_count(work.read("tracer.stderr")), step(), repr(TRACING_LINE),
		 alive=t)
	v.stdin.write(b"go\n")
	v.stdin.flush()
	out.expect("LEAKED", step())
	finish_victim(v, deadline)
	rc = wait_exit(t, deadline, "memleakbpf -p after its deleted target exited")
	# site_post_calloc is called from two lines of main: its own frame only.
	specs = [S(site, api, [F(site, WAIT, "truth", False, binary)] +
		   ([F("main", WAIT, "=%s;" % call, False, binary)] if call else []))
		 for site, api, call in (("site_post_malloc", "malloc", "site_post_malloc(123)"),
					 ("site_post_calloc", "calloc", None),
					 ("site_post_realloc", "realloc",
					  "site_post_realloc(moved, 5000)"))]
	errs = sym_check(load_report(js), read_truth(work), specs, {os.path.realpath(binary)},
			 work.read("tracer.stdout"), work.read("report.folded"), exclude_phase="pre")
	common_checks(work, rc, 0, errs)
	return errs


def case_jit_p(work):
	"""v_jit wait under -p, the report made while it runs: its map through /proc/PID/root."""
	binary = victim("v_jit")
	deadline = time.monotonic() + CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + STEP_TIMEOUT)
	v = work.start([binary, "wait"], env=tracer_env(work), stdin=subprocess.PIPE,
		       stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	js, fd = work.path("report.json"), work.path("report.folded")
	t = work.start([TRACER, "--json", js, "--folded", fd, "-T", "1000", "-p", str(pid)],
		       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	wait_for(lambda: tracing_line_count(work.read("tracer.stderr")), step(), repr(TRACING_LINE),
		 alive=t)
	v.stdin.write(b"go\n")
	v.stdin.flush()
	out.expect("LEAKED", step())
	t.send_signal(signal.SIGINT)
	rc = wait_exit(t, deadline, "memleakbpf -p after SIGINT")
	finish_victim(v, deadline)
	if os.path.exists("/tmp/perf-%d.map" % pid):
		raise CaseFailed("v_jit wait left its perf map behind")
	errs = sym_check(load_report(js), read_truth(work), jit_specs(binary),
			 {os.path.realpath(binary)}, work.read("tracer.stdout"),
			 work.read("report.folded"))
	common_checks(work, rc, 0, errs)
	return errs


def case_jit_container(work):
	"""v_jit in pid and mount namespaces of its own, with its own /tmp: its map is
	/tmp/perf-1.map there, found through /proc/PID/root and its NSpid."""
	binary = victim("v_jit")
	# The truth file is opened before /tmp is hidden, and written through the fd.
	script = 'exec 3>"$1"; mount -t tmpfs tmpfs /tmp && VICTIM_TRUTH=/proc/self/fd/3 exec "$2" wait'
	deadline = time.monotonic() + CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + STEP_TIMEOUT)
	v = work.start([UNSHARE, "--mount", "--pid", "--fork", "--mount-proc", "--propagation",
			"private", "sh", "-c", script, "sh", work.path("truth.txt"), binary],
		       env=tracer_env(work), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
		       tag="victim")
	out = LineReader(v.stdout)
	nspid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	with open("/proc/%d/task/%d/children" % (v.pid, v.pid)) as f:
		pid = int(f.read().split()[0])
	js, fd = work.path("report.json"), work.path("report.folded")
	t = work.start([TRACER, "--json", js, "--folded", fd, "-T", "1000", "-p", str(pid)],
		       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	wait_for(lambda: tracing_line_count(work.read("tracer.stderr")), step(), repr(TRACING_LINE),
		 alive=t)
	v.stdin.write(b"go\n")
	v.stdin.flush()
	out.expect("LEAKED", step())
	t.send_signal(signal.SIGINT)
	rc = wait_exit(t, deadline, "memleakbpf -p after SIGINT")
	finish_victim(v, deadline)
	if nspid == pid:
		raise CaseFailed("v_jit has the same pid in its namespace: the case proves nothing")
	errs = sym_check(load_report(js), read_truth(work), jit_specs(binary),
			 {os.path.realpath(binary)}, work.read("tracer.stdout"),
			 work.read("report.folded"), nspid=nspid)
	common_checks(work, rc, 0, errs)
	return errs


def case_debug_dir_error(work):
	"""An unusable --debug-dir is a usage error, before any target starts."""
	marker = work.path("started")
	p = work.start([TRACER, "--debug-dir", work.path("missing"), "-c", "touch " + marker],
		       stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + ERROR_TIMEOUT, "memleakbpf --debug-dir missing")
	lines = work.read("tracer.stderr").splitlines()
	errs = [] if rc == 2 else ["exit status %s, expected 2" % rc]
	if len(lines) != 1 or not lines[0].startswith("memleakbpf: --debug-dir "):
		errs.append("stderr %r, expected one line about --debug-dir" % lines[:4])
	if os.path.exists(marker):
		errs.append("the command ran")
	return errs


CASES += [
	("sym_inline", TRACE, [], sym_case("v_inline", inline_specs)),
	("sym_dlopen", TRACE, [],
	 sym_case("v_dlopen", dlopen_specs, extra=check_unmapped,
		  modules=[os.path.join(PLUGINS, "libp_kept.so"),
			   os.path.join(PLUGINS, "libp_closed.so")])),
	("sym_debuglink", TRACE, [], sym_case("v_debug_link", debug_specs)),
	("sym_debug_dir_debuglink", TRACE, [],
	 sym_case("v_debug_linkdir", debug_specs, ["--debug-dir", "{DR}"])),
	("sym_debug_dir_build_id", TRACE, [],
	 sym_case("v_debug_id", debug_specs, ["--debug-dir", "/usr/lib/debug", "--debug-dir", "{DR}"],
		  extra=unnamed_without_debug_dir)),
	("sym_stripped", TRACE, [OBJDUMP], sym_case("v_debug_stripped", stripped_specs)),
	("sym_pie", TRACE, [], sym_case("v_debug", debug_specs)),
	("sym_nopie", TRACE, [], sym_case("v_nopie", nopie_specs)),
	("sym_exited_quick", TRACE, [], sym_case("v_quick", quick_specs, want_rc=3,
						  extra=check_quick)),
	("sym_deleted_p", TRACE, [], case_deleted_p),
	("sym_cxx", TRACE, [], sym_case("v_cxxsym", cxx_specs)),
	("sym_jit_c", TRACE, [], sym_case("v_jit", jit_specs)),
	("sym_jit_p", TRACE, [], case_jit_p),
	("sym_jit_container", TRACE, [UNSHARE], case_jit_container),
	("err_debug_dir_missing", ERROR, [], case_debug_dir_error),
]

# ================================================================ end of symbols (issue 3)


def skip_reason(kind, needs):
	if not os.access(TRACER, os.X_OK):
		return "%s not built (make)" % TRACER
	if kind == TRACE:
		if os.geteuid() != 0:
			return "not root"
		if not os.path.exists(BTF):
			return "no %s" % BTF
		for f in needs:
			if not os.path.exists(f):
				return "no %s" % f
	return None


def build_victims():
	"""make victims, quietly; None or the error.

	The Makefile's victim rules know only X.c, not the truth.h they all
	include: a victim older than truth.h is rebuilt with make -B."""
	make = ["make", "-C", ROOT, "--no-print-directory", "-s"]
	header = os.path.join(ROOT, "tests", "victims", "truth.h")
	stale = []
	for src in sorted(os.listdir(os.path.join(ROOT, "tests", "victims"))):
		name, ext = os.path.splitext(src)
		out = os.path.join(VICTIMS, name)
		if ext not in (".c", ".cc") or not os.path.exists(out):
			continue
		with open(os.path.join(ROOT, "tests", "victims", src)) as f:
			if '#include "truth.h"' not in f.read():
				continue
		if os.path.getmtime(out) < os.path.getmtime(header):
			stale.append(os.path.relpath(out, ROOT))
	for argv in ([make + ["-B"] + stale] if stale else []) + [make + ["victims"]]:
		r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
		if r.returncode:
			return "make victims failed: " + r.stdout.decode("utf-8", "replace").strip()[-300:]
	return None


def main(argv):
	global VERBOSE, CASE_TIMEOUT
	keep, names = False, []
	args = list(argv)
	while args:
		a = args.pop(0)
		if a == "-v":
			VERBOSE = True
		elif a == "--keep":
			keep = True
		elif a == "--timeout":
			CASE_TIMEOUT = float(args.pop(0))
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
