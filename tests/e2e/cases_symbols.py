# SPDX-License-Identifier: GPL-2.0
"""Symbols: every frame a victim names, exactly.

Each frame is checked exactly (function, file, line, inlined, module, and
the offset where there is no name), in the JSON, in the text report and in
the folded stacks, and the bytes of each such stack against the truth:
inlined calls (v_inline), dlopen'd plugins, one dlclose'd before the report
(v_dlopen; again from a thread once main has ended with pthread_exit, its
leader a zombie: v_dlopen leader_gone), debug info split off and found by debuglink or by build id under
--debug-dir (v_debug_*), a stripped binary as module+offset (offsets from
objdump on the unstripped v_debug), PIE and non-PIE, a target gone within
milliseconds (v_quick), a binary deleted while traced with -p (a copy of
v_wait), C++ names (v_cxxsym) and JIT code named by /tmp/perf-PID.map
(v_jit, under -c, -p and in a container of its own). attach_lazy_tables:
a plugin mapped before -p attaches, no allocator's, gets its unwind table
after the tracing line, and once -v says every table is in, its stacks are
whole (v_dlopen wait).
Expected lines: "truth" is the TRUTH line's (the allocation call), "@name"
the line of the victim's "@name" comment, "=text" the first line holding text.
"""

import os
import re
import shutil
import signal
import subprocess
import time

import lib
from lib import (CaseFailed, ERROR, LineReader, PLUGINS, ROOT, TRACE, TRACER, UNSHARE, Work,
	TRACING_LINE, check_sites, common_checks, dropped_errs, finish_victim, folded_lines, frame_str,
	go_until, load_report, read_truth, start_tracing, tracer_env, victim, wait_exit, wait_for)


DEBUG_ROOT = os.path.join(ROOT, ".output", "debug-root")
OBJDUMP = shutil.which("objdump") or "objdump (binutils: not on PATH)"
FRAME_KEYS = {"address", "function", "symbol", "module", "offset", "file", "line", "inlined", "language"}
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


def sym_check(rep, truth, specs, modules, stdout, folded, exclude_phase=None, nspid=None):
	"""Exact frames per spec in the JSON, the text and the folded stacks; bytes per truth.
	nspid: the target's pid in its own namespace (its perf map's name), if not its pid."""
	errs = []
	if rep.get("version") != 1:
		errs.append("version is %r, not 1" % rep.get("version"))
	stacks = rep.get("stacks") or []
	totals = rep.get("totals") or {}
	errs += check_sites(rep)
	errs += dropped_errs(totals)
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
	rc = wait_exit(t, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf " + " ".join(argv))
	return rc, load_report(js)


def sym_case(vname, specs, args=(), want_rc=0, extra=None, modules=(), vargs=""):
	"""-c a symbols victim (with vargs); extra(work, rep, truth) adds checks."""
	def run(work):
		binary = victim(vname)
		argv = [a.replace("{DR}", DEBUG_ROOT) for a in args] + [
			"-c", binary + (" " + vargs if vargs else "")]
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


def dlopen_specs(b, caller=("main", "@main_kept", "@main_closed")):
	"""The plugins' sites, under caller (function, its kept and closed calls' markers)."""
	kept, closed = os.path.join(PLUGINS, "libp_kept.so"), os.path.join(PLUGINS, "libp_closed.so")
	fn, at_kept, at_closed = caller
	return [
		S("site_plugin_kept", "malloc", [
			F("site_plugin_kept", "tests/victims/plugins/p_kept.c", "truth", False, kept),
			F("via_plugin_kept", DLO, "@kept_call", False, b),
			F(fn, DLO, at_kept, False, b)]),
		S("site_plugin_closed", "calloc", [
			F("site_plugin_closed", "tests/victims/plugins/p_closed.c", "truth", False, closed),
			F("via_plugin_closed", DLO, "@closed_call", False, b),
			F(fn, DLO, at_closed, False, b)]),
	]


def dlopen_thread_specs(b):
	"""v_dlopen leader_gone: the plugins' sites under run_plugins, main ended."""
	return dlopen_specs(b, ("run_plugins", "@thread_kept", "@thread_closed"))


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


def check_dlopen_stops(work, rep, truth):
	"""
	v_dlopen stops at its exec, when its libraries are mapped, at each of its
	two dlopens' RT_CONSISTENT, and at its dlclose's RT_DELETE and
	RT_CONSISTENT: 6 stops. Not at the dynamic linker's RT_ADD events (the
	start-up's and each dlopen's), where nothing new runs: 9 with them.
	"""
	errs = check_unmapped(work, rep, truth)
	m = re.search(r"target held at most .*?, (\d+) stops,", work.read("tracer.stderr"))
	if not m:
		errs.append("-v said nothing of the stops")
	elif int(m.group(1)) != 6:
		errs.append("%s stops, expected 6 (none at RT_ADD)" % m.group(1))
	return errs


def check_leader_gone(work, rep, truth):
	"""
	The plugins were loaded once main had ended with pthread_exit: its
	/proc/PID/stat said 'Z' and its maps were empty, while the process ran on.
	Each dlopen's stop was made (no stop found the target "gone" and left it
	stopped for good, as before: the case then timed out) and the plugins'
	frames named through a live thread's /proc files.
	"""
	errs = check_unmapped(work, rep, truth)
	if "# leader: gone" not in work.read("truth.txt"):
		errs.append("main had not ended when the plugins were loaded: the case proves nothing")
	if "did not stop for the tracer" in work.read("tracer.stderr"):
		errs.append("a stop was not seen: %s" % work.read("tracer.stderr").strip()[:200])
	return errs


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
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	v = work.start([binary], env=tracer_env(work), stdin=subprocess.PIPE,
		       stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	os.unlink(binary)
	with open("/proc/%d/maps" % pid) as f:
		if "v_wait (deleted)" not in f.read():
			raise CaseFailed("the deleted binary is not shown (deleted) in the maps")
	js, fd = work.path("report.json"), work.path("report.folded")
	t = start_tracing(work, ["--json", js, "--folded", fd, "-T", "1000", "-p", str(pid)], step())
	go_until(v, out, "LEAKED", step())
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


TABLES_READY = "memleakbpf: unwind tables ready "


def loaded_after_tracing(stderr, name):
	"""Was name's unwind table loaded (-v's line) after the tracing line?"""
	lines = stderr.splitlines()
	tracing = [i for i, l in enumerate(lines) if l.startswith(TRACING_LINE)]
	loaded = [i for i, l in enumerate(lines) if l.startswith("memleakbpf: unwind table %s:" % name)]
	return bool(tracing and loaded and loaded[0] > tracing[0])


def case_attach_lazy_tables(work):
	"""v_dlopen wait under -p -v: libp_kept.so's table comes after the tracing
	line; allocations through it once every table is in have whole stacks."""
	binary = victim("v_dlopen")
	kept = os.path.join(PLUGINS, "libp_kept.so")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	v = work.start([binary, "wait"], env=tracer_env(work), stdin=subprocess.PIPE,
		       stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	js, fd = work.path("report.json"), work.path("report.folded")
	t = start_tracing(work, ["-v", "--json", js, "--folded", fd, "-T", "1000", "-p", str(pid)],
			  step())
	wait_for(lambda: TABLES_READY in work.read("tracer.stderr"), step(), repr(TABLES_READY),
		 alive=t)
	errs = []
	if not loaded_after_tracing(work.read("tracer.stderr"), "libp_kept.so"):
		errs.append("libp_kept.so's unwind table was not loaded after the tracing line")
	go_until(v, out, "LEAKED", step())
	finish_victim(v, deadline)
	rc = wait_exit(t, deadline, "memleakbpf -p after its target exited")
	specs = [s for s in dlopen_specs(binary) if s.site == "site_plugin_kept"]
	errs += sym_check(load_report(js), read_truth(work), specs,
			  {os.path.realpath(binary), os.path.realpath(kept)},
			  work.read("tracer.stdout"), work.read("report.folded"))
	common_checks(work, rc, 0, errs)
	return errs


def case_jit_p(work):
	"""v_jit wait under -p, the report made while it runs: its map through /proc/PID/root."""
	binary = victim("v_jit")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	v = work.start([binary, "wait"], env=tracer_env(work), stdin=subprocess.PIPE,
		       stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	js, fd = work.path("report.json"), work.path("report.folded")
	t = start_tracing(work, ["--json", js, "--folded", fd, "-T", "1000", "-p", str(pid)], step())
	go_until(v, out, "LEAKED", step())
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


# Runs "$2 wait" with a /tmp of its own, the truth written through fd 3 (the
# file "$1" is opened before /tmp is hidden). When the victims live under
# /tmp (a CI clone there), their directory is bound back in at the same path.
PRIVATE_TMP_SCRIPT = (
	'exec 3>"$1"; d=$(dirname "$2"); '
	'case "$d" in /tmp/*) mount -t tmpfs tmpfs /mnt && mkdir /mnt/keep && '
	'mount --bind "$d" /mnt/keep || exit 1;; esac; '
	'mount -t tmpfs tmpfs /tmp || exit 1; '
	'case "$d" in /tmp/*) mkdir -p "$d" && mount --bind /mnt/keep "$d" || exit 1;; esac; '
	'VICTIM_TRUTH=/proc/self/fd/3 exec "$2" wait')


def start_private_tmp(work, binary):
	"""binary wait in pid and mount namespaces of its own, with a /tmp of its own
	(PRIVATE_TMP_SCRIPT): the unshare process, stdin and stdout piped. The truth
	file is opened before /tmp is hidden, and written through the fd."""
	return work.start([UNSHARE, "--mount", "--pid", "--fork", "--mount-proc", "--propagation",
			   "private", "sh", "-c", PRIVATE_TMP_SCRIPT, "sh", work.path("truth.txt"),
			   binary], env=tracer_env(work), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
			  tag="victim")


def case_jit_container(work):
	"""v_jit in pid and mount namespaces of its own, with its own /tmp: its map is
	/tmp/perf-1.map there, found through /proc/PID/root and its NSpid."""
	binary = victim("v_jit")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	v = start_private_tmp(work, binary)
	out = LineReader(v.stdout)
	nspid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	with open("/proc/%d/task/%d/children" % (v.pid, v.pid)) as f:
		pid = int(f.read().split()[0])
	js, fd = work.path("report.json"), work.path("report.folded")
	t = start_tracing(work, ["--json", js, "--folded", fd, "-T", "1000", "-p", str(pid)], step())
	go_until(v, out, "LEAKED", step())
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
	rc = wait_exit(p, time.monotonic() + lib.ERROR_TIMEOUT, "memleakbpf --debug-dir missing")
	lines = work.read("tracer.stderr").splitlines()
	errs = [] if rc == 2 else ["exit status %s, expected 2" % rc]
	if len(lines) != 1 or not lines[0].startswith("memleakbpf: --debug-dir "):
		errs.append("stderr %r, expected one line about --debug-dir" % lines[:4])
	if os.path.exists(marker):
		errs.append("the command ran")
	return errs


CASES = [
	("sym_inline", TRACE, [], sym_case("v_inline", inline_specs)),
	("sym_dlopen", TRACE, [],
	 sym_case("v_dlopen", dlopen_specs, extra=check_unmapped,
		  modules=[os.path.join(PLUGINS, "libp_kept.so"),
			   os.path.join(PLUGINS, "libp_closed.so")])),
	("sym_dlopen_stops", TRACE, [],
	 sym_case("v_dlopen", dlopen_specs, ["-v"], extra=check_dlopen_stops,
		  modules=[os.path.join(PLUGINS, "libp_kept.so"),
			   os.path.join(PLUGINS, "libp_closed.so")])),
	("sym_dlopen_leader_gone", TRACE, [],
	 sym_case("v_dlopen", dlopen_thread_specs, extra=check_leader_gone, vargs="leader_gone",
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
	("attach_lazy_tables", TRACE, [], case_attach_lazy_tables),
	("sym_cxx", TRACE, [], sym_case("v_cxxsym", cxx_specs)),
	("sym_jit_c", TRACE, [], sym_case("v_jit", jit_specs)),
	("sym_jit_p", TRACE, [], case_jit_p),
	("sym_jit_container", TRACE, [UNSHARE], case_jit_container),
	("err_debug_dir_missing", ERROR, [], case_debug_dir_error),
]
