# SPDX-License-Identifier: GPL-2.0
"""The end-to-end tests' shared harness: run.py and every cases_*.py use it.

Paths and timeouts; Work (one case's files and processes) and the waits
(wait_exit, wait_for, LineReader); the victims' TRUTH lines and check_report,
which compares a --json report with them; the usual kinds of case
(command_case: -c a victim to completion; error_case: a bad command line);
skip_reason and build_victims for run.py and scripts/stress.py, soak.py.

The timeouts (CASE_TIMEOUT, STEP_TIMEOUT, ERROR_TIMEOUT) and VERBOSE are
read as lib.NAME, never imported by name: run.py --timeout and -v, and
scripts/stress.py, change them at run time. (So no local is named lib.)
"""

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
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
MUST_BE_ZERO = re.compile(r"map_full|ring_full|stacks_merged|stack_error|missed_return|state_error|"
			  r"unwind_pending|stacks_preempted|stacks_lost|py_codes_unnamed")

VERBOSE = False

# Places and tools that more than one area's cases use.
PLUGINS = os.path.join(VICTIMS, "plugins")
PPROF = "/usr/bin/google-pprof"
UNSHARE = shutil.which("unshare") or "unshare (util-linux: not on PATH)"
SVG = "{http://www.w3.org/2000/svg}"


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
		for pid, name in self.pids:
			kill_if(pid, name)


def kill_if(pid, name):
	"""SIGKILL a process we did not start but caused (a -c target), if it is still that."""
	if comm(pid) != name:
		return
	try:
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


def start_tracing(work, args, until):
	"""memleakbpf with args (stdin closed), once it says it is tracing (by the
	deadline until): the tracer's process."""
	t = work.start([TRACER] + args, env=tracer_env(work), stdin=subprocess.DEVNULL,
		       tag="tracer")
	wait_for(lambda: tracing_line_count(work.read("tracer.stderr")), until, repr(TRACING_LINE),
		 alive=t)
	return t


def go_until(v, out, line, until):
	"""Tell a waiting victim to go on; its next line starting with line."""
	v.stdin.write(b"go\n")
	v.stdin.flush()
	return out.expect(line, until)


def find_line(text, prefix):
	for line in text.splitlines():
		if line.startswith(prefix):
			return line
	return None


def proc_state(pid):
	"""The state letter of /proc/PID/stat, or None when it is gone."""
	try:
		with open("/proc/%d/stat" % pid) as f:
			s = f.read()
	except OSError:
		return None
	return s[s.rindex(")") + 2]


def gone(pid):
	return proc_state(pid) in (None, "Z", "X")


def children(pid):
	try:
		with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
			return [int(x) for x in f.read().split()]
	except OSError:
		return []


def comm(pid):
	try:
		with open("/proc/%d/comm" % pid) as f:
			return f.read().strip()
	except OSError:
		return None


def open_bytes(path):
	try:
		with open(path, "rb") as f:
			return f.read()
	except OSError:
		return b""


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


def truth_notes(work):
	"""The victim's "# key: value" notes."""
	notes = {}
	for line in work.read("truth.txt").splitlines():
		if line.startswith("# ") and ": " in line:
			k, v = line[2:].split(": ", 1)
			notes[k] = v
	return notes


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


# One function under two names (glibc's memalign and aligned_alloc, tcmalloc's
# new and new[]) is told apart by the name the caller imported through the
# PLT. A static binary calls the one function directly: there the tracer
# reports the name it lists first (docs/TRACING.md, "What is traced").
STATIC_ALIASES = {"memalign": "aligned_alloc"}


def aliases_for(binary):
	return STATIC_ALIASES if "static" in os.path.basename(binary) else {}


def dropped_errs(totals, also=lambda name: False):
	"""A line for each drop counter in totals that should be 0 and is not: those
	MUST_BE_ZERO matches, and those also(name) picks."""
	return ["dropped.%s = %s" % (k, v) for k, v in sorted((totals.get("dropped") or {}).items())
		if (MUST_BE_ZERO.search(k) or also(k)) and v]


def frameless_errs(rep):
	"""A line for a site of stacks whose frames could not be read ("[stack
	unavailable]"): a loss no drop counter shows (a fold once let go of the
	pairs a sweep had just let go of)."""
	return ["%d stacks without frames ([stack unavailable]): %d bytes in %d blocks" % (
		s.get("stack_count", 0), s["bytes"], s["allocs"])
		for s in rep.get("sites") or [] if s.get("frame") is None]


def figures(items):
	"""(bytes, allocs) summed over JSON objects that have them."""
	return (sum(x.get("bytes", 0) for x in items), sum(x.get("allocs", 0) for x in items))


def descending(values):
	return values == sorted(values, reverse=True)


def check_sites(rep):
	"""The sites of a JSON report (docs/OUTPUTS.md, "JSON report"): each the exact sum of
	its stacks, those written and those left out; with the stacks left out,
	the stacks written add up to the totals; sites and stacks by bytes (the
	sites made while the program ran, then its initializers', then the
	runtime's own, by kind)."""
	sites, stacks, out = rep.get("sites"), rep.get("stacks"), rep.get("left_out")
	if not isinstance(sites, list) or not isinstance(stacks, list) or not isinstance(out, dict):
		return ["no sites or stacks array, or no left_out object"]
	totals = rep.get("totals") or {}
	want = (totals.get("outstanding_bytes"), totals.get("outstanding_allocs"))
	errs = []
	if out.get("option") != "--all-stacks":
		errs.append("left_out.option %r" % out.get("option"))
	# --sort count (bcc's): the sites by their blocks; the stacks stay by bytes.
	key = "allocs" if rep.get("sort") == "count" else "bytes"
	if not descending([x.get("bytes", 0) for x in stacks]):
		errs.append("stacks not sorted by bytes, descending")
	# Those made while the program ran, then its initializers' (start-up), then the
	# runtime's own sites, a run of each kind (docs/OUTPUTS.md).
	ran = [x for x in sites if not x.get("runtime") and not x.get("initializer")]
	init = [x for x in sites if not x.get("runtime") and x.get("initializer")]
	own = ran + init
	runs = [[x for x in sites if x.get("runtime") == k] for k in
		dict.fromkeys(x["runtime"] for x in sites if x.get("runtime"))]
	if own + [x for run in runs for x in run] != sites:
		errs.append("sites not in order: the run's, the initializers', the runtime's by kind")
	if not all(descending([x.get(key, 0) for x in part]) for part in [ran, init] + runs):
		errs.append("sites not sorted by %s, descending" % key)
	got = figures(stacks)
	if (got[0] + out.get("bytes", 0), got[1] + out.get("allocs", 0)) != want:
		errs.append("totals outstanding %s bytes / %s allocs; stacks %d / %d and left out %s / %s" % (
			want + got + (out.get("bytes"), out.get("allocs"))))
	if figures(sites) != want:
		errs.append("totals outstanding %s / %s, sites sum to %d / %d" % (want + figures(sites)))
	listed = set()
	for j, site in enumerate(sites):
		mine = [stacks[i] for i in site.get("stacks", []) if 0 <= i < len(stacks)]
		listed.update(site.get("stacks", []))
		lo = site.get("left_out") or {}
		f = figures(mine)
		if (f[0] + lo.get("bytes", 0), f[1] + lo.get("allocs", 0)) != figures([site]) or \
		   len(mine) + lo.get("stacks", 0) != site.get("stack_count") or \
		   any(s.get("site") != j for s in mine):
			errs.append("site %d: %d / %d in %d stacks and %r left out, not its %s / %s in %s" % (
				j, f[0], f[1], len(mine), lo, site.get("bytes"), site.get("allocs"),
				site.get("stack_count")))
	if listed != set(range(len(stacks))):
		errs.append("stacks in no site's list, or in several: %s" % sorted(
			set(range(len(stacks))) ^ listed)[:10])
	if sum((s.get("left_out") or {}).get("stacks", 0) for s in sites) != out.get("stacks"):
		errs.append("the sites' left_out do not add up to left_out")
	return errs[:10]


def site_of(rep, fn):
	"""The JSON site whose frame is function fn, or None."""
	for site in rep.get("sites") or []:
		if fn_name(site.get("frame") or {}) == fn:
			return site
	return None


def check_report(rep, truth, binary, source, pid=None, exclude_phase=None, aliases=None):
	"""All mismatches between a JSON report and the victim's truth, as strings.
	A victim site whose stacks were not all written is checked by its site's
	figures: the sum over its APIs."""
	errs = []
	if aliases is None:
		aliases = aliases_for(binary)
	if rep.get("version") != 1:
		errs.append("version is %r, not 1" % rep.get("version"))
	target = rep.get("target") or {}
	if pid is not None and target.get("pid") != pid:
		errs.append("target.pid %r, expected %d" % (target.get("pid"), pid))
	totals = rep.get("totals") or {}
	stacks = rep.get("stacks")
	if not isinstance(stacks, list):
		return errs + ["no stacks array"]
	errs += check_sites(rep)
	errs += dropped_errs(totals)
	cut = {fn_name(s.get("frame") or {}) for s in rep.get("sites") or []
	       if (s.get("left_out") or {}).get("stacks")}

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

	for fn in sorted({k[0] for k in expected} & cut):
		site = site_of(rep, fn)
		want = (sum(e["bytes"] for k, e in expected.items() if k[0] == fn),
			sum(e["allocs"] for k, e in expected.items() if k[0] == fn))
		if figures([site]) != want:
			errs.append("site %s: %d bytes in %d, truth %d in %d" % ((fn,) + figures([site]) + want))
	for key, e in sorted(expected.items()):
		g = got.get(key)
		if key[0] in cut:
			continue
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
		if key not in expected and key[0] not in cut:
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


def folded_lines(text):
	"""[(frames root first, the api last, count)]."""
	out = []
	for line in text.splitlines():
		stack, _, n = line.rpartition(" ")
		out.append((stack.split(";"), int(n)))
	return out


def svg_refers_outside(root):
	"""An SVG element (root of a parsed tree) has a link: our SVGs must stand alone."""
	return any(e.get("href") or e.get("{http://www.w3.org/1999/xlink}href") for e in root.iter())


REPORT_HEADER = re.compile(r"^\[[\d:?]+\] memleakbpf: (Final report: )?pid \d+", re.M)


def report_count(work):
	return len(REPORT_HEADER.findall(work.read("tracer.stdout")))


# ---------------------------------------------------------------- case kinds

TRACE, ERROR = "trace", "error"


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
		     aliases=None):
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
		 aliases=None):
	def run(work):
		cmd = command.replace("{V}", VICTIMS).replace("{TC}", TCMALLOC).replace("{JE}", JEMALLOC)
		cmd = cmd.replace("{W}", work.dir)
		return run_command_case(work, cmd, victim(vname), source, want_rc,
					[a.replace("{W}", work.dir) for a in extra_args], check,
					aliases)
	return run


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


# ---------------------------------------------------------------- the runner

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
