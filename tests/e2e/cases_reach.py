# SPDX-License-Identifier: GPL-2.0
"""Reachability (--reach, SIGUSR2): memcheck's four kinds without valgrind.

v_reach at its exit: every site's blocks in the kind its note says, to the
byte, and nothing else lost; the same against valgrind memcheck itself, per
allocating function; real programs against memcheck (skipped without
valgrind), traced in the environment valgrind gives them (valgrind_env); and
under -p a scan on SIGUSR2, the target held for it only.
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import time

import cases_basics
import lib
from lib import (CaseFailed, Skip, TRACE, TRACER, command_case, finish_victim, load_report,
	read_truth, tracer_env, truth_notes, victim, wait_exit, wait_for)

KINDS = ("definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable")
VG_KINDS = {"definitely lost": "definitely_lost", "indirectly lost": "indirectly_lost",
	    "possibly lost": "possibly_lost", "still reachable": "still_reachable"}
# The allocation functions, and their inlined wrappers, are not the caller.
ALLOC_FNS = {"malloc", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign",
	     "aligned_alloc", "valloc", "pvalloc", "operator new", "operator new[]"}


def by_kind_site(rep):
	"""(the first frame after the allocation function, kind) -> bytes, from our JSON."""
	out = {}
	for st in rep["stacks"]:
		if not st.get("reach"):
			continue
		key = first_caller([lib.fn_name(f) for f in st["frames"]])
		for k in KINDS:
			b = st["reach"][k]["bytes"]
			if b:
				out[(key, k)] = out.get((key, k), 0) + b
	return out


def first_caller(fns):
	"""The first function that is not an allocation function; "?" when unnamed."""
	for fn in fns:
		fn = re.sub(r"\.(part|isra|constprop|cold|localalias)(\.\d+)?$", "", fn or "")
		if not fn or fn == "???":
			return "?"
		if fn.split("(")[0] not in ALLOC_FNS:
			return fn.lstrip("_")	# __strdup is strdup to valgrind
	return "?"


def check_victim(work, truth):
	"""Each site's bytes in the kind the victim's note names, and no other lost block."""
	rep = load_report(work.path("report.json"))
	want_kind = dict(kv.split("=") for kv in truth_notes(work)["reach"].split())
	got = by_kind_site(rep)
	errs = []
	want = {}
	for t in truth:
		want[(t["site"], want_kind[t["site"]])] = t["bytes"]
	for key, b in sorted(want.items()):
		if got.get(key) != b:
			errs.append("%s %s: %s bytes, want %d" % (key[0], key[1], got.get(key), b))
	for key, b in sorted(got.items()):
		if key[0].startswith("site_") and key not in want:
			errs.append("%s: %d bytes %s, want none" % (key[0], b, key[1]))
	r = rep.get("reach") or {}
	if r.get("at") != "exit" or r.get("threads") != 2:
		errs.append("reach: at %r with %r threads, want at the exit with 2" %
			    (r.get("at"), r.get("threads")))
	for k in ("definitely_lost", "indirectly_lost"):
		total = sum(b for (s, kind), b in want.items() if kind == k)
		if r.get("totals", {}).get(k, {}).get("bytes") != total:
			errs.append("reach totals %s: %s, want %d (the victim's only)" %
				    (k, r.get("totals", {}).get(k), total))
	return errs


# ---------------------------------------------------------------- memcheck

RECORD = re.compile(r"==\d+== ([\d,]+)(?: \([\d,]+ direct, [\d,]+ indirect\))? bytes in [\d,]+ "
		    r"blocks are (definitely lost|indirectly lost|possibly lost|still reachable) "
		    r"in loss record")
FRAME = re.compile(r"==\d+==    (?:at|by) 0x[0-9A-Fa-f]+: (.+?)(?: \(|$)")


def memcheck(argv, env, timeout):
	"""valgrind's loss records: (first caller, kind) -> bytes."""
	if not shutil.which("valgrind"):
		raise Skip("valgrind is not installed")
	# What memleakbpf sees: libc's own blocks not freed for valgrind at the
	# end (freeres), interior pointers not taken for start ones (heuristics).
	p = subprocess.run(["valgrind", "--leak-check=full", "--show-leak-kinds=all",
			    "--leak-check-heuristics=none", "--run-libc-freeres=no",
			    "--run-cxx-freeres=no", "--num-callers=40"] + argv,
			   env=env, cwd=lib.ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
			   stderr=subprocess.PIPE, timeout=timeout)
	out, rec, fns = {}, None, []
	for line in p.stderr.decode(errors="replace").splitlines() + ["==0== "]:
		m = RECORD.match(line)
		f = FRAME.match(line)
		if f and rec:
			fns.append(f.group(1))
			continue
		if rec:
			key = (first_caller(fns), VG_KINDS[rec[1]])
			out[key] = out.get(key, 0) + rec[0]
			rec, fns = None, []
		if m:
			# With the indirect bytes, a definite record's bytes are its own.
			b = re.search(r"\(([\d,]+) direct", line)
			rec = (int((b.group(1) if b else m.group(1)).replace(",", "")), m.group(2))
	return out


# LD_PRELOAD names valgrind's preload libraries, which cannot be loaded
# without valgrind; this name, of the same length, holds its value instead.
PRELOAD_STANDIN = "VG_PRELOAD"
_VG_ENV = []	# [(an environment, the one memcheck's program saw for it)]


def valgrind_env(env):
	"""
	env as memcheck's program sees it, to give the program memleakbpf traces.
	valgrind adds variables (Debian's wrapper GLIBCPP_FORCE_NEW,
	GLIBCXX_FORCE_NEW and LD_LIBRARY_PATH=/usr/lib/debug, valgrind itself
	LD_PRELOAD of its preload libraries), and a program that copies its
	environment to the heap (gawk's ENVIRON, Python's os.environ) then has
	other blocks, another heap layout, and other stale words that look like
	pointers: in gawk's case, blocks possibly lost under valgrind and still
	reachable without its variables. They are read from one `valgrind
	--tool=memcheck env -0` run, cached (run again for an environment in
	which valgrind would change other values). LD_PRELOAD's value goes to
	PRELOAD_STANDIN: the same name and value lengths, so the program's copies
	have the same sizes. valgrind's wrapper (a dash script) also reorders the
	variables: ours keep their order, the added ones last (the order changed
	none of gawk's or Python's figures, with addresses not randomized).
	"""
	if not shutil.which("valgrind"):
		raise Skip("valgrind is not installed")
	if _VG_ENV:
		given, seen = _VG_ENV[0]
		if any(env.get(k) != given.get(k) for k in changed(given, seen)):
			_VG_ENV.clear()
	if not _VG_ENV:
		p = subprocess.run(["valgrind", "-q", "--tool=memcheck", "env", "-0"], env=env,
				   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
				   stderr=subprocess.PIPE, timeout=lib.STEP_TIMEOUT)
		if p.returncode:
			raise CaseFailed("valgrind env: exit status %d: %s" %
					 (p.returncode, p.stderr.decode(errors="replace").strip()))
		seen = dict(v.split("=", 1) for v in p.stdout.decode().split("\0") if "=" in v)
		_VG_ENV.append((dict(env), seen))
	given, seen = _VG_ENV[0]
	out = dict(env)
	for k in changed(given, seen):
		out.pop(k, None)
		if k in seen:
			out[PRELOAD_STANDIN if k == "LD_PRELOAD" else k] = seen[k]
	return out


def changed(given, seen):
	"""The variables valgrind adds, removes or changes, in the order its program sees them."""
	return [k for k in seen if given.get(k) != seen[k]] + [k for k in given if k not in seen]


def per_caller(d):
	"""caller -> {kind: bytes}."""
	out = {}
	for (caller, kind), b in d.items():
		out.setdefault(caller, {})[kind] = b
	return out


def moved(a, b):
	"""Bytes in another kind in a than in b (both with the same total)."""
	return sum(abs(a.get(k, 0) - b.get(k, 0)) for k in KINDS) // 2


# Callers whose block is reached only through a pointer into it that the
# program rounds up from what malloc returned: it points at the block's start
# (still reachable) or inside it (possibly lost) depending on where malloc
# placed the block, which differs under valgrind's allocator. Both tools are
# right about their own run; only that swap is accepted for these, with the
# same bytes in all.
PLACEMENT = {
	# glibc's _dl_find_object data: the segment starts at the first 128-byte
	# boundary inside the block (elf/dl-find_object.c); ld.so keeps only that.
	# Named as first_caller names it: without its leading underscores.
	"dlfo_mappings_segment_allocate",
}


def placement_swap(caller, a, b):
	"""a and b differ only by still reachable <-> possibly lost, for a PLACEMENT caller."""
	swap = ("still_reachable", "possibly_lost")
	return caller in PLACEMENT and set(a) | set(b) <= set(swap) and \
		sum(a.values()) == sum(b.values())


def compare(ours, theirs, slack=0.0):
	"""
	Per allocating function: the same kinds as memcheck; and where both saw
	the same bytes allocated there (a program can allocate otherwise under
	valgrind: its environment, its timing), the same bytes of each kind.
	slack: the share of all those bytes that may be in a more reachable kind
	than memcheck's (possibly lost where it says still reachable), never a
	less reachable one, and never a lost one: memcheck ignores words never
	written (undefined), a scan without valgrind takes them as they are,
	and a stale address in one can only make a block look reached.
	"""
	errs = []
	mine, vg = per_caller(ours), per_caller(theirs)
	total = shifted = 0
	for caller in sorted(set(mine) | set(vg)):
		a, b = mine.get(caller, {}), vg.get(caller, {})
		if sum(a.values()) != sum(b.values()):
			lib.log("  %s: %d bytes, memcheck %d: not compared" %
				(caller, sum(a.values()), sum(b.values())))
			if a and b and set(a) != set(b) and not slack:
				errs.append("%s: kinds %s, memcheck %s" % (caller, sorted(a), sorted(b)))
			continue
		total += sum(a.values())
		if a == b:
			continue
		if placement_swap(caller, a, b):
			lib.log("  %s: %s, memcheck %s: where malloc placed it" % (caller, a, b))
			continue
		lost = ("definitely_lost", "indirectly_lost")
		if not slack or a.get("still_reachable", 0) < b.get("still_reachable", 0) or \
		   any(a.get(k, 0) != b.get(k, 0) for k in lost):
			errs.append("%s: %s, memcheck %s" % (caller, a, b))
			continue
		shifted += moved(a, b)
		lib.log("  %s: %d of %d bytes more reachable than memcheck says" %
			(caller, moved(a, b), sum(a.values())))
	if shifted > slack * total:
		errs.append("%d of %d bytes more reachable than memcheck says: more than %.0f%%" %
			    (shifted, total, slack * 100))
	return errs


def reach_run(work, argv, env):
	"""--reach on argv, its addresses laid out as valgrind lays them (setarch -R:
	the personality the tracer's command inherits), so a stale word read is the
	same in each run."""
	js = work.path("report.json")
	p = work.start(["setarch", "-R", TRACER, "--reach", "--all-stacks", "--json", js, "-c",
			shlex.join(argv)],
		       env=env,
		       stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf --reach")
	if not os.path.exists(js):
		raise CaseFailed("no JSON report written (exit status %s)" % rc)
	rep = load_report(js)
	if not rep.get("reach"):
		raise CaseFailed("no reachability in the report")
	return rep


def victim_memcheck(name):
	"""A victim: per allocating function and kind, the bytes memcheck finds."""
	def run(work):
		env = tracer_env(work)
		theirs = memcheck([victim(name)], env, lib.CASE_TIMEOUT)
		ours = by_kind_site(reach_run(work, [victim(name)], valgrind_env(env)))
		return compare(ours, theirs)
	return run


def program_case(argv_fn, env_extra=None, slack=0.0):
	"""A real program under memcheck and under memleakbpf --reach, compared."""
	def run(work):
		argv = argv_fn(work)
		if not shutil.which(argv[0]):
			raise Skip("%s is not installed" % argv[0])
		env = dict(tracer_env(work), **(env_extra or {}))
		theirs = memcheck(argv, env, lib.CASE_TIMEOUT)
		ours = by_kind_site(reach_run(work, argv, valgrind_env(env)))
		errs = compare(ours, theirs, slack)
		if errs:
			lib.log("ours %r\nmemcheck %r" % (ours, theirs))
		return errs
	return run


def jq_argv(work):
	with open(os.path.join(work.dir, "in.json"), "w") as f:
		f.write('{"a": [1, 2, {"b": "c"}], "d": "e"}\n' * 50)
	return ["jq", "-c", ".a[2].b", os.path.join(work.dir, "in.json")]


def sqlite_argv(work):
	with open(os.path.join(work.dir, "s.sql"), "w") as f:
		f.write("create table t(a, b);\n"
			"insert into t values (1, 'x'), (2, 'y');\n"
			"select a, b from t order by a;\n")
	return ["sqlite3", ":memory:", ".read %s" % os.path.join(work.dir, "s.sql")]


# os._exit: memcheck checks at _exit, and so does --reach (a Python that
# exits normally is scanned when its shutdown begins, the final report's moment).
# PYTHONHASHSEED=0 here and addresses not randomized in reach_run, as under
# valgrind: otherwise the stale words a scan finds change from run to run.
# Drawn hashes put 10.0-10.6% of the bytes in a more reachable kind than
# memcheck's in 3 runs of 9, CI's among them (0.05% in the others); the seed
# alone, 1.7-8.1% in 15 runs; both fixed, 8.1% in each of 8 runs, within the
# 10% slack.
PY_SCRIPT = ("import json, os\nkeep = [json.dumps({'a': [i]}) for i in range(100)]\n"
	     "lost = [[i] for i in range(10)]\nos._exit(0)\n")


def gawk_argv(work):
	return ["gawk", "BEGIN { for (i = 0; i < 100; i++) a[i] = i \"x\"; print length(a) }"]


# ---------------------------------------------------------------- -p, SIGUSR2

def case_signal(work):
	"""
	-p: SIGUSR2 scans now, says how long the target was held, lets it go on,
	and a report shows the post blocks definitely lost.
	"""
	def on_leaked(v, t, deadline):
		pid = v.pid
		t.send_signal(signal.SIGUSR2)
		wait_for(lambda: "Reachability at a scan" in work.read("tracer.stdout"),
			 min(deadline, time.monotonic() + lib.STEP_TIMEOUT), "the SIGUSR2 report", t)
		if not re.search(r"reachability of pid %d: held [\d.]+ ms \(the scan [\d.]+ ms\)" %
				 pid, work.read("tracer.stderr")):
			raise CaseFailed("no line saying how long pid %d was held" % pid)
		if lib.proc_state(pid) in ("t", "T"):
			raise CaseFailed("pid %d is still stopped after the scan" % pid)
		m = re.search(r"definitely lost: ([\d,]+) bytes", work.read("tracer.stdout"))
		post = sum(x["bytes"] for x in read_truth(work) if x["phase"] == "post")
		if not m or int(m.group(1).replace(",", "")) != post:
			raise CaseFailed("definitely lost %s, want the post blocks' %d bytes" %
					 (m and m.group(1), post))
		finish_victim(v, deadline)
		return wait_exit(t, deadline, "memleakbpf -p after its target exited")
	return cases_basics.attach_case(work, on_leaked)


CASES = [
	# (name, kind, needs extra files, function)
	("reach_victim", TRACE, [],
	 command_case("{V}/v_reach", "v_reach", "v_reach.c", extra_args=["--reach"],
		      check=check_victim)),
	("reach_victim_memcheck", TRACE, [], victim_memcheck("v_reach")),
	# Threads that exited: glibc keeps their stacks, their descriptors hold their DTVs.
	("reach_thread_exit_memcheck", TRACE, [], victim_memcheck("v_thread_exit")),
	("reach_signal", TRACE, [], case_signal),
	("reach_jq_memcheck", TRACE, [], program_case(jq_argv)),
	("reach_sqlite3_memcheck", TRACE, [], program_case(sqlite_argv)),
	("reach_gawk_memcheck", TRACE, [], program_case(gawk_argv)),
	("reach_python_memcheck", TRACE, [],
	 program_case(lambda w: ["/usr/bin/python3", "-c", PY_SCRIPT],
		      {"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0"},
		      slack=0.1)),
]
