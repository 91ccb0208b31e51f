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
