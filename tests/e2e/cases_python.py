# SPDX-License-Identifier: GPL-2.0
"""Python targets: the interpreter's frames, named where they allocate.

Debian's /usr/bin/python3 runs the victims of tests/victims/python/
(pytruth.py there describes their TRUTH lines), under -c and -p, with
pymalloc and with PYTHONMALLOC=malloc. Each site's innermost Python frame
must be the victim's function at the marked line of its file, its callers
the victim's call path, and the blocks of over 512 bytes it holds exactly
the truth; small objects count only with malloc. The interpreters of pyenv,
when present, run one victim each; one older than 3.11 is refused politely.
"""

import os
import re
import subprocess
import time

import lib
from lib import (CaseFailed, ERROR, LineReader, PPROF, ROOT, SVG, TRACE, TRACER, check_sites,
	common_checks, dropped_errs, error_case, folded_lines, frameless_errs, go_until, load_report,
	start_tracing, tracer_env, wait_exit, wait_for)


PY = "/usr/bin/python3"
PYVICTIMS = os.path.join(ROOT, "tests", "victims", "python")
PYENV = os.path.expanduser("~/.pyenv/versions")
PY_LARGE = 512		# pymalloc's largest block: larger ones come from malloc
PY_HEAP_APIS = ("malloc", "calloc", "realloc")	# not the arenas' mmap


def pyenv_python(version):
	"""pyenv's python of that major.minor, or a path that does not exist."""
	try:
		found = sorted(v for v in os.listdir(PYENV) if v.startswith(version + "."))
	except OSError:
		found = []
	return os.path.join(PYENV, found[-1], "bin", "python3") if found else \
		"%s/%s.x (pyenv: not installed)" % (PYENV, version)


def py_marker(victim, name):
	"""The line of a victim's "# @name" marker."""
	with open(os.path.join(PYVICTIMS, victim)) as f:
		for n, line in enumerate(f, 1):
			if line.rstrip().endswith("# @" + name):
				return n
	raise CaseFailed("%s has no marker @%s" % (victim, name))


def py_truth(work):
	truth = []
	for raw in work.read("truth.txt").splitlines():
		if raw.startswith("TRUTH "):
			kv = dict(f.split("=", 1) for f in raw.split()[1:])
			for k in ("line", "bytes", "allocs", "small"):
				if k in kv:
					kv[k] = int(kv[k])
			kv["callers"] = kv["callers"].split(",") if kv.get("callers") else []
			truth.append(kv)
	if not truth:
		raise CaseFailed("the victim wrote no truth to %s (did it run?)" % work.path("truth.txt"))
	return truth


def py_site(stack):
	"""(index, frame) of the innermost Python frame, or (None, None)."""
	for i, f in enumerate(stack.get("frames") or []):
		if f.get("language") == "python":
			return i, f
	return None, None


def check_py_frames(rep):
	errs = []
	for s in rep.get("stacks") or []:
		for f in s.get("frames") or []:
			lang = f.get("language")
			if lang not in ("native", "python"):
				return ["a frame's language is %r" % lang]
			if lang == "python" and f.get("function") and not (f.get("file") and f.get("module")):
				return ["a Python frame without file or module: %r" % f]
	return errs


def py_site_stacks(rep, t):
	"""The stacks whose innermost Python frame is t's site."""
	out = []
	for s in rep.get("stacks") or []:
		i, f = py_site(s)
		if f and (f.get("file"), f.get("line"), f.get("function")) == (t["file"], t["line"],
									      t["function"]):
			out.append((i, s))
	return out


def check_py_site(t, stacks, malloc, text):
	errs = []
	where = "%s (%s:%d %s)" % (t["site"], os.path.basename(t["file"]), t["line"], t["function"])
	large = [(i, s) for i, s in stacks if s["api"] in PY_HEAP_APIS and s["allocs"] and
		 s["bytes"] > PY_LARGE * s["allocs"]]
	got = (sum(s["bytes"] for _, s in large), sum(s["allocs"] for _, s in large))
	if got != (t["bytes"], t["allocs"]):
		errs.append("%s: %d bytes in %d large blocks, truth %d in %d" % (
			where, got[0], got[1], t["bytes"], t["allocs"]))
	# The path to the site, on every stack that makes up the truth.
	for i, s in large if t["bytes"] else stacks:
		py = [f.get("function") for f in s["frames"][i + 1:] if f.get("language") == "python"]
		if py[:len(t["callers"])] != t["callers"]:
			errs.append("%s: callers %s, expected %s" % (where, ",".join(map(str, py)),
								      ",".join(t["callers"])))
			break
		if any(f.get("language") == "python" for f in s["frames"][:i]):
			errs.append("%s: a Python frame inside the site" % where)
			break
	if t["bytes"] and "[python]" not in text:
		errs.append("the text report shows no Python frame")
	if t["bytes"]:
		want = "%s (%s:%d) [python]" % (t["function"], t["file"], t["line"])
		if want not in text:
			errs.append("the text report has no frame %r" % want)
	if "small" in t and malloc:
		small = sum(s["allocs"] for _, s in stacks if s["api"] in PY_HEAP_APIS and
			    s["bytes"] <= PY_LARGE * s["allocs"])
		if small < t["small"]:
			errs.append("%s: %d small blocks with PYTHONMALLOC=malloc, at least %d expected" % (
				where, small, t["small"]))
	return errs


def check_py_sites(rep, truth):
	"""Each truth's site: one JSON site, at its line, holding every stack whose
	innermost Python frame is that line (docs/ANALYSIS.md, "Sites")."""
	errs = check_sites(rep)
	sites = rep.get("sites") or []
	for t in truth:
		where = (t["file"], t["line"], t["function"])
		at = [j for j, x in enumerate(sites) if x.get("frame") and (x["frame"].get("file"),
			x["frame"].get("line"), x["frame"].get("function")) == where]
		stacks = py_site_stacks(rep, t)
		if len(at) != (1 if stacks else 0):
			errs.append("%s:%d: %d sites for %d stacks" % (t["file"], t["line"], len(at),
								       len(stacks)))
		if len(at) != 1:
			continue
		if any(s.get("site") != at[0] for _, s in stacks):
			errs.append("%s:%d: a stack at that line is in another site" % (t["file"], t["line"]))
		if sites[at[0]]["stack_count"] != len(stacks):
			errs.append("%s:%d: its site has %d stacks, %d have that innermost line" % (
				t["file"], t["line"], sites[at[0]]["stack_count"], len(stacks)))
	return errs


SHUTDOWN_NOTE = "Shown at the start of the interpreter's shutdown (Py_FinalizeEx)"
AT_EXIT_NEVER_FREED = r"still outstanding at exit[^\n]*: never freed"


def check_shutdown(py, text, shutdown):
	"""The report says it shows the program as its shutdown began, iff it did
	(a victim that ends with os._exit never shuts down)."""
	errs = []
	if py.get("shutdown") is not shutdown:
		errs.append("python.shutdown is %r, expected %r" % (py.get("shutdown"), shutdown))
	if (SHUTDOWN_NOTE in text) != shutdown:
		errs.append("the text report %s the shutdown note" % ("lacks" if shutdown else "has"))
	# The shutdown frees most of what was outstanding as it began: "never freed" is false then.
	if shutdown and re.search(AT_EXIT_NEVER_FREED, text):
		errs.append("the verdict says 'never freed' of what the shutdown frees")
	return errs


def check_py_report(work, rep, truth, malloc, version="3.11", shutdown=True):
	errs = check_py_sites(rep, truth)
	if rep.get("version") != 1:
		errs.append("version is %r, not 1" % rep.get("version"))
	py = rep.get("python") or {}
	if not str(py.get("version", "")).startswith(version + "."):
		errs.append("python.version %r, expected %s.x" % (py.get("version"), version))
	if py.get("malloc") != ("malloc" if malloc else "pymalloc"):
		errs.append("python.malloc %r" % py.get("malloc"))
	totals = rep.get("totals") or {}
	errs += dropped_errs(totals, also=lambda k: k.startswith("py_")) + frameless_errs(rep)
	errs += check_py_frames(rep)
	text = work.read("tracer.stdout")
	if "Python %s" % py.get("version") not in text:
		errs.append("the text report does not name the interpreter")
	errs += check_shutdown(py, text, shutdown)
	for t in truth:
		errs += check_py_site(t, py_site_stacks(rep, t), malloc, text)
	return errs


def py_env(work):
	"""tracer_env without our PYTHONMALLOC: the case chooses the allocator."""
	env = tracer_env(work)
	env.pop("PYTHONMALLOC", None)
	return env


def py_command_case(victim, args=(), malloc=False, python=PY, version="3.11", tracer_args=()):
	"""memleakbpf -c 'python victim.py', to completion."""
	def run(work):
		js = work.path("report.json")
		cmd = "%s %s %s" % (python, os.path.join(PYVICTIMS, victim), " ".join(args))
		argv = [TRACER, "--json", js, "--all-stacks", "-T", "10000"] + list(tracer_args) + (
			["--python-malloc", "malloc"] if malloc else []) + ["-c", cmd.strip()]
		env = py_env(work)
		p = work.start(argv, env=env, stdin=subprocess.DEVNULL, tag="tracer")
		rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c python")
		errs = check_py_report(work, load_report(js), py_truth(work), malloc, version,
				       "--os-exit" not in args)
		common_checks(work, rc, 0, errs)
		return errs
	return run


def py_attach_case(victim, malloc=False, args=()):
	"""A running interpreter under -p: READY, attach, go, LEAKED, exit."""
	def run(work):
		js = work.path("report.json")
		deadline = time.monotonic() + lib.CASE_TIMEOUT
		env = py_env(work)
		if malloc:
			env["PYTHONMALLOC"] = "malloc"
		v = work.start([PY, os.path.join(PYVICTIMS, victim), "--wait"] + list(args), env=env,
			       stdin=subprocess.PIPE, stdout=subprocess.PIPE, tag="victim")
		out = LineReader(v.stdout)
		pid = int(out.expect("READY pid=", min(deadline, time.monotonic() + lib.STEP_TIMEOUT))
			  .split("=", 1)[1])
		t = start_tracing(work, ["--json", js, "--all-stacks", "-T", "10000", "-p", str(pid)],
				  min(deadline, time.monotonic() + lib.STEP_TIMEOUT))
		go_until(v, out, "LEAKED", min(deadline, time.monotonic() + lib.STEP_TIMEOUT))
		v.stdin.write(b"exit\n")
		v.stdin.close()
		if wait_exit(v, deadline, victim):
			raise CaseFailed("%s exited %s" % (victim, v.returncode))
		rc = wait_exit(t, deadline, "memleakbpf -p after its target exited")
		errs = check_py_report(work, load_report(js), py_truth(work), malloc,
				       shutdown="--os-exit" not in args)
		rep = load_report(js)
		if (rep.get("target") or {}).get("pid") != pid:
			errs.append("target.pid is not %d" % pid)
		common_checks(work, rc, 0, errs)
		return errs
	return run


def check_py_outputs(work, truth):
	"""Folded, SVG and heap profile of grow_list: the Python frames where each can hold them."""
	errs = []
	t = truth[0]
	label = "%s (%s:%d)" % (t["function"], os.path.basename(t["file"]), t["line"])
	folded = [(fr, n) for fr, n in folded_lines(work.read("report.folded"))]
	caller = "train (grow_list.py:%d)" % py_marker("grow_list.py", "call")
	held = sum(n for fr, n in folded if label in fr and caller in fr and
		   fr[-1] in PY_HEAP_APIS and fr.index(caller) == fr.index(label) - 1)
	if held < t["bytes"]:
		errs.append("folded stacks through %r under train hold %d bytes, truth at least %d" % (
			label, held, t["bytes"]))
	import xml.etree.ElementTree as ET
	try:
		root = ET.parse(work.path("report.svg")).getroot()
	except (ET.ParseError, OSError) as e:
		return errs + ["SVG does not parse: %s" % e]
	titles = [g.find(SVG + "title").text for g in root.iter(SVG + "g") if g.get("class") == "f"]
	if not any(x.startswith("%s\nat %s:%d" % (label, t["file"], t["line"])) for x in titles):
		errs.append("no SVG frame %s at %s:%d" % (label, t["file"], t["line"]))
	if "Python" not in work.read("report.svg"):
		errs.append("the SVG legend has no Python")
	heap = work.read("report.heap")
	if not heap.startswith("heap profile:"):
		errs.append("no heap profile")
	return errs


def py_outputs_case(work):
	js = work.path("report.json")
	argv = [TRACER, "--json", js, "--all-stacks", "--folded", work.path("report.folded"), "--flamegraph",
		work.path("report.svg"), "--pprof", work.path("report.heap"), "--pprof-format", "gperftools", "-c",
		"%s %s" % (PY, os.path.join(PYVICTIMS, "grow_list.py"))]
	env = py_env(work)
	p = work.start(argv, env=env, stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c python")
	truth = py_truth(work)
	errs = check_py_report(work, load_report(js), truth, False)
	errs += check_py_outputs(work, truth)
	common_checks(work, rc, 0, errs)
	return errs


def mallocstats(text):
	"""sys._debugmallocstats()'s figures: {"arenas allocated current": 63, ...}."""
	out = {}
	for line in text.splitlines():
		if line.startswith("# ") and "=" in line:
			k, v = line[2:].split("=", 1)
			out[k.strip()] = int(v.strip().replace(",", ""))
	return out


def py_arenas_case(work):
	"""arenas.py frees 90% of 400,000 small objects: pymalloc's arenas, read at
	Py_FinalizeEx, against the interpreter's own account of them just before
	(sys._debugmallocstats: the same arenas; the bytes in allocated blocks
	within 0.5%, what the end of main frees), and the verdict: fragmentation."""
	js = work.path("report.json")
	p = work.start([TRACER, "--json", js, "-c", "%s %s" % (PY, os.path.join(PYVICTIMS, "arenas.py"))],
		       env=py_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c python arenas.py")
	rep, text, errs = load_report(js), work.read("tracer.stdout"), []
	truth = work.read("truth.txt")
	stats = mallocstats(truth)
	left = int(truth.split("LEFT ", 1)[1].split()[0]) if "LEFT " in truth else 0
	a = (rep.get("python") or {}).get("arenas") or {}
	if not stats.get("arenas allocated current") or not left:
		raise CaseFailed("arenas.py wrote no malloc stats to its truth")
	if a.get("arenas") != stats["arenas allocated current"]:
		errs.append("python.arenas.arenas %r, the interpreter says %d" % (
			a.get("arenas"), stats["arenas allocated current"]))
	want = stats["bytes in allocated blocks"]
	if not (left <= (a.get("used_bytes") or 0) and abs(a["used_bytes"] - want) <= want // 200):
		errs.append("python.arenas.used_bytes %r, the interpreter says %d (kept %d)" % (
			a.get("used_bytes"), want, left))
	if a.get("bytes") != (a.get("arenas") or 0) << 20 or a.get("skipped"):
		errs.append("python.arenas: %r" % a)
	mem = rep.get("memory") or {}
	if mem.get("verdict") != "fragmentation" or mem.get("pymalloc") is not True:
		errs.append("memory.verdict %r, pymalloc %r: expected fragmentation, true" % (
			mem.get("verdict"), mem.get("pymalloc")))
	if "Verdict: fragmentation" not in text or "pymalloc's arenas hold" not in text:
		errs.append("the text's verdict does not blame pymalloc's arenas")
	common_checks(work, rc, 0, errs)
	return errs


ARENA_CAVEAT = "of it pymalloc's arenas +"


def py_arena_leak_case(work):
	"""arena_leak.py leaks small objects beside a churn of them, under pymalloc:
	the arenas grow, charged to whichever line needed one (its churn's,
	often). The verdict names the leak and says that the arenas' lines are
	not known to be the leak's, with the option that sites each object.
	6 s, not its default 3: enough reports after start-up where each takes
	0.8 s at 0.5 s intervals."""
	p = work.start([TRACER, "-c", "%s %s 6" % (PY, os.path.join(PYVICTIMS, "arena_leak.py")), "0.5"],
		       env=py_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c python arena_leak.py")
	text = work.read("tracer.stdout")
	final = text[text.rfind("Final report"):]
	verdict = final[final.find("Verdict: "):final.find("\n\n", final.find("Verdict: "))]
	errs = []
	if not verdict.startswith("Verdict: leak:") or "(mmaps +" not in verdict:
		errs.append("the final verdict names no leak of mmaps (arenas): %r" % verdict[:200])
	elif ARENA_CAVEAT not in verdict or "--python-malloc malloc" not in verdict:
		errs.append("the verdict blames the arenas' lines without saying that any line's "
			    "objects fill them: %r" % verdict[:300])
	common_checks(work, rc, 0, errs)
	return errs


def objects_truth(work):
	line = [l for l in work.read("truth.txt").splitlines() if l.startswith("OBJECTS ")]
	if not line:
		raise CaseFailed("small_leak.py wrote no OBJECTS line")
	kv = dict(f.split("=", 1) for f in line[0].split()[1:])
	return {k: (int(v) if v.isdigit() else v) for k, v in kv.items()}


def py_objects_run(work, python, args="", on_start=None, tracer_args=(), env=None):
	"""The tracer on small_leak.py; on_start(tracer) while it runs, if given."""
	js = work.path("report.json")
	p = work.start([TRACER, "--py-objects", "--json", js, "--all-stacks"] + list(tracer_args) +
		       ["-c", "%s %s %s" % (python, os.path.join(PYVICTIMS, "small_leak.py"), args)],
		       env=dict(py_env(work), **(env or {})), stdin=subprocess.DEVNULL, tag="tracer")
	if on_start:
		on_start(p)
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf --py-objects")
	return rc, load_report(js)


def at_line(rep, t, line, keep=lambda s: True):
	"""Outstanding (bytes, blocks) of the stacks whose innermost Python frame is that line
	(those keep(stack) picks)."""
	got = [s for s in rep.get("stacks") or [] if keep(s) and (lambda f: f and (f.get("file"),
		f.get("line"), f.get("function")) == (t["file"], line, t["function"]))(py_site(s)[1])]
	return sum(s["bytes"] for s in got), sum(s["allocs"] for s in got)


def py_objects_case(work):
	"""--py-objects on an interpreter whose objects all go through PyObject_Malloc
	(pyenv's 3.11, built without LTO and PGO), default pymalloc, no restart: the
	20,000 small objects of small_leak.py at the line that keeps them, exactly,
	and none at the line that makes and drops as many."""
	rc, rep = py_objects_run(work, pyenv_python("3.11"))
	t, errs = objects_truth(work), []
	py = rep.get("python") or {}
	if py.get("objects") is not True or py.get("malloc") != "pymalloc":
		errs.append("python.objects %r, malloc %r" % (py.get("objects"), py.get("malloc")))
	got = at_line(rep, t, t["leak_line"])
	if got != (t["bytes"], t["allocs"]):
		errs.append("line %d holds %d bytes in %d blocks, truth %d in %d" % (
			t["leak_line"], got[0], got[1], t["bytes"], t["allocs"]))
	churn = at_line(rep, t, t["churn_line"])
	if churn[1] > 1:
		errs.append("the churning line %d holds %d blocks" % (t["churn_line"], churn[1]))
	errs += dropped_errs(rep.get("totals") or {}, also=lambda k: k.startswith("py_"))
	# Under -c every block is seen allocated: a free of one never tracked is a miscount.
	if (rep.get("totals") or {}).get("untracked_frees"):
		errs.append("%d frees of blocks never tracked" % rep["totals"]["untracked_frees"])
	common_checks(work, rc, 0, errs)
	return errs


SAMPLE_ROUNDS = 40000	# 1.9 MB of 48-byte objects kept: some 29 samples at 64K


def py_objects_sample_case(work):
	"""--py-objects under --sample 64K (seed 1): the objects small_leak.py keeps, each a
	PyObject_Malloc call sampled out or in at its entry, estimated at their line within
	3 standard deviations of the truth (the variance the tracer keeps, summed over the
	line's stacks); the line that drops as many holds at most one sampled object."""
	rc, rep = py_objects_run(work, pyenv_python("3.11"), str(SAMPLE_ROUNDS),
				 tracer_args=["--sample", "64K"], env={"MEMLEAKBPF_SAMPLE_SEED": "1"})
	t, errs = objects_truth(work), []
	mine = lambda s: True
	stacks = [s for s in rep.get("stacks") or [] if (lambda f: f and (
		f.get("file"), f.get("line"), f.get("function")) == (t["file"], t["leak_line"],
								    t["function"]))(py_site(s)[1])]
	est = sum(s["bytes"] for s in stacks)
	sd = sum(((s["bytes_interval"][1] - s["bytes"]) / 1.959963984540054) ** 2 for s in stacks) ** 0.5
	lib.log("  line %d: estimate %d bytes, sd %.0f, %d samples; truth %d" % (
		t["leak_line"], est, sd, sum(s["samples"] for s in stacks), t["bytes"]))
	if (rep.get("sampling") or {}).get("mean") != 65536:
		errs.append("sampling %r: not --sample 64K" % rep.get("sampling"))
	if not stacks or abs(est - t["bytes"]) > 3 * sd + 1:
		errs.append("line %d: estimate %d bytes (sd %.0f) from %d stacks, truth %d" % (
			t["leak_line"], est, sd, len(stacks), t["bytes"]))
	churn = [s for s in rep.get("stacks") or [] if mine(s) and (lambda f: f and f.get("line") ==
		 t["churn_line"] and f.get("file") == t["file"])(py_site(s)[1])]
	if sum(s["samples"] for s in churn) > 1:
		errs.append("the churning line %d holds %d samples" % (
			t["churn_line"], sum(s["samples"] for s in churn)))
	errs += dropped_errs(rep.get("totals") or {}, also=lambda k: k.startswith("py_"))
	common_checks(work, rc, 0, errs)
	return errs


EXIT_ROUNDS = 300000	# objects small_leak.py keeps, for its shutdown to free
EXIT_MAX_S = 3.0	# untraced, its shutdown takes 0.1 s; with the probes kept through it, 10 s here


def exit_time(work, tracer):
	"""time.time() when the command the tracer names in its tracing line has
	exited (gone, or a zombie its tracer has not reaped yet)."""
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	pid = wait_for(lambda: re.search(r"tracing pid (\d+)", work.read("tracer.stderr")), deadline,
		       "the tracing line", alive=tracer).group(1)

	def gone():
		try:
			with open("/proc/%s/stat" % pid) as f:
				return f.read().rsplit(")", 1)[1].split()[0] in "ZX"
		except OSError:
			return True
	wait_for(gone, deadline, "pid %s's exit" % pid)
	return time.time()


def py_objects_exit_case(work):
	"""--py-objects: the probes go at Python's shutdown (Py_FinalizeEx), where
	BPF stops counting: the 300,000 objects it frees do not each trap, and the
	final report still holds them all, at their line."""
	exited = []
	rc, rep = py_objects_run(work, pyenv_python("3.11"), str(EXIT_ROUNDS),
				 lambda p: exited.append(exit_time(work, p)))
	exit_s = exited[0] - os.path.getmtime(work.path("truth.txt"))
	t, errs = objects_truth(work), []
	if exit_s > EXIT_MAX_S:
		errs.append("%.1f s from the victim's truth to its exit, over %.1f" % (
			exit_s, EXIT_MAX_S))
	# The objects kept, by their size: the line's argument tuple for Item()
	# stays in CPython's free list, never freed, a block of 56 bytes there too.
	size = t["bytes"] // t["allocs"]
	got = at_line(rep, t, t["leak_line"], lambda s: s["bytes"] == s["allocs"] * size)
	if got != (t["bytes"], t["allocs"]):
		errs.append("line %d holds %d bytes in %d blocks of %d, truth %d in %d" % (
			t["leak_line"], got[0], got[1], size, t["bytes"], t["allocs"]))
	common_checks(work, rc, 0, errs)
	return errs


SUGGEST_MALLOC = "--python-malloc malloc would make each a block of its own"


def py_objects_refused_case(python, suggest):
	"""--py-objects on Debian's python3.11 (LTO and PGO: pymalloc compiled into
	its callers): one line says why, and the run goes on with the arenas. The
	line suggests --python-malloc malloc where that works: not when the
	interpreter ignores PYTHONMALLOC (-E)."""
	return lambda work: py_objects_refused(work, python, suggest)


def py_objects_refused(work, python, suggest):
	rc, rep = py_objects_run(work, python)
	errs = []
	said = [l for l in work.read("tracer.stderr").splitlines() if l.startswith("memleakbpf: --py-objects: ")]
	if len(said) != 1 or "not a plain call through its allocator table" not in said[0]:
		errs.append("stderr says %r about --py-objects" % said)
	elif (SUGGEST_MALLOC in said[0]) != suggest:
		errs.append("the refusal %s %r: %r" % ("lacks" if suggest else "has", SUGGEST_MALLOC,
							 said[0]))
	if (rep.get("python") or {}).get("objects") is not False:
		errs.append("python.objects is %r" % (rep.get("python") or {}).get("objects"))
	common_checks(work, rc, 0, errs)
	return errs

CODE_REUSE_N = 200
CODE_REUSE_BASE = 20000	# code_reuse.py's BASE: gen_K keeps BASE + 64*K bytes


def code_reuse_errs(rep, reused):
	"""Each gen_K of code_reuse.py: one block, at gen_K.py line 2, of its own size."""
	if reused < CODE_REUSE_N // 2:
		return ["the victim reused %d code object addresses of %d: the case shows nothing" % (
			reused, CODE_REUSE_N)]
	got = {}
	for s in rep.get("stacks") or []:
		_, f = py_site(s)
		if f and s["api"] in PY_HEAP_APIS and s["bytes"] > 16384:
			k = f.get("function", "?")
			if (f.get("file"), f.get("line")) != ("%s.py" % k, 2):
				return ["a block named at %s:%s %s" % (f.get("file"), f.get("line"), k)]
			b, a = got.get(k, (0, 0))
			got[k] = (b + s["bytes"], a + s["allocs"])
	extra = got.get("gen_0", (0, 0))[0] - CODE_REUSE_BASE
	errs = []
	for k in range(CODE_REUSE_N):
		want = (CODE_REUSE_BASE + 64 * k + extra, 1)
		if got.get("gen_%d" % k) != want:
			errs.append("gen_%d: %r (bytes, allocs), expected %r" % (k, got.get("gen_%d" % k), want))
	if len(got) != CODE_REUSE_N:
		errs.append("%d functions hold blocks, %d expected" % (len(got), CODE_REUSE_N))
	return errs[:5]


def py_code_reuse_case(work):
	"""Code objects freed and their addresses given to new ones, each
	allocating: every block named after its own function (the line tables
	BPF keeps are voided as code objects are freed)."""
	js = work.path("report.json")
	cmd = "%s %s %d" % (PY, os.path.join(PYVICTIMS, "code_reuse.py"), CODE_REUSE_N)
	argv = [TRACER, "-v", "--json", js, "--all-stacks", "-T", "10000", "-c", cmd]
	p = work.start(argv, env=py_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c python")
	m = re.search(r"^REUSED (\d+)$", work.read("tracer.stdout"), re.M)
	errs = code_reuse_errs(load_report(js), int(m.group(1)) if m else 0)
	if "code objects' line tables kept in BPF" not in work.read("tracer.stderr"):
		errs.append("-v does not say that code_dealloc is probed")
	common_checks(work, rc, 0, errs)
	return errs


SAME_LEAF_ROUNDS = 2000
SAME_LEAF_SIZES = {"via_a": 3000, "via_b": 5000}	# same_leaf.py's SIZE_A, SIZE_B


def py_same_leaf_case(work):
	"""same_leaf.py: one leaf called by two callers in turn, from frames at the
	same addresses, at the same instructions; only the callers' frame heads
	differ. Each caller's blocks under its own stacks, all of them: a thread's
	last Python stack (bpf/python_last.bpf.h) stands for a walk only when
	every head reads the same, not the first one."""
	js = work.path("report.json")
	cmd = "%s %s %d" % (PY, os.path.join(PYVICTIMS, "same_leaf.py"), SAME_LEAF_ROUNDS)
	argv = [TRACER, "--json", js, "--all-stacks", "-T", "10000", "-c", cmd]
	p = work.start(argv, env=py_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c python")
	errs = [] if "SAME_LEAF rounds=" in work.read("tracer.stdout") else ["the victim did not finish"]
	got = {}
	for s in load_report(js).get("stacks") or []:
		i, f = py_site(s)
		if not f or f.get("function") != "leaf" or s["api"] not in PY_HEAP_APIS:
			continue
		if s["bytes"] <= PY_LARGE * s["allocs"]:
			continue
		py = [x.get("function") for x in s["frames"][i + 1:] if x.get("language") == "python"]
		b, a = got.get(py[0] if py else None, (0, 0))
		got[py[0] if py else None] = (b + s["bytes"], a + s["allocs"])
	for caller, size in SAME_LEAF_SIZES.items():
		b, a = got.pop(caller, (0, 0))
		# bytearray(n) asks for n + 1 bytes; whatever it adds, one size per block.
		if a != SAME_LEAF_ROUNDS or not size * a <= b <= (size + 16) * a:
			errs.append("leaf under %s: %d bytes in %d blocks, expected %d blocks of %d+ bytes" % (
				caller, b, a, SAME_LEAF_ROUNDS, size))
	if got:
		errs.append("leaf's blocks under other callers: %r" % got)
	common_checks(work, rc, 0, errs)
	return errs


def py_stack_ring_full_case(work):
	"""code_reuse.py's 200 functions, each a Python stack of its own, through
	a stack ring of one page (--new-stack-buffer 4K): Python stacks and pairs
	that find it full are counted (py_stack_ring_full) and their allocations
	keep their native stacks, never another function's frames: each block
	named at a gen_K is gen_K's own, one block of its own size, and the drop
	line names --new-stack-buffer."""
	js = work.path("report.json")
	cmd = "%s %s %d" % (PY, os.path.join(PYVICTIMS, "code_reuse.py"), CODE_REUSE_N)
	argv = [TRACER, "--json", js, "--all-stacks", "-T", "10000", "--new-stack-buffer", "4K",
		"-c", cmd]
	p = work.start(argv, env=py_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c python")
	rep = load_report(js)
	lost = rep["totals"]["dropped"].get("py_stack_ring_full", 0)
	errs = [] if lost else ["no Python stack lost through a ring of one page: the case tests nothing"]
	extra = set()
	for s in rep.get("stacks") or []:
		_, f = py_site(s)
		k = (f or {}).get("function", "")
		if not f or s["api"] not in PY_HEAP_APIS or s["bytes"] <= 16384 or not k.startswith("gen_"):
			continue
		if (f.get("file"), f.get("line"), s["allocs"]) != ("%s.py" % k, 2, 1):
			errs.append("%s: %d blocks named at %s:%s" % (k, s["allocs"], f.get("file"), f.get("line")))
		extra.add(s["bytes"] - CODE_REUSE_BASE - 64 * int(k[4:]))
	if len(extra) > 1:
		errs.append("gen_K's blocks are not each BASE + 64*K (+ one overhead): %r" % sorted(extra))
	if not re.search(r"^Dropped: [\d,]+ allocations? without Python frames: .*\(raise --new-stack-buffer\)$",
			 work.read("tracer.stdout"), re.M):
		errs.append("no drop line for Python frames naming --new-stack-buffer")
	common_checks(work, rc, 0, errs)
	return errs[:5]


MODULE_ONCE_SIZE = 300000	# module_once.py's SIZE: bytearray(n) asks for n + 1


def module_once_run(work, tag, tracer_args):
	"""module_once.py under -c: its report, its text, and the body's block's
	innermost Python frame (None: no such block)."""
	js = work.path("%s.json" % tag)
	cmd = "%s %s" % (PY, os.path.join(PYVICTIMS, "module_once.py"))
	argv = [TRACER, "--json", js, "--all-stacks", "-T", "10000"] + tracer_args + ["-c", cmd]
	p = work.start(argv, env=py_env(work), stdin=subprocess.DEVNULL, tag=tag)
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c python")
	rep, out = load_report(js), work.read("%s.stdout" % tag)
	body = [s for s in rep.get("stacks") or [] if s["api"] in PY_HEAP_APIS and s["allocs"] == 1 and
		MODULE_ONCE_SIZE < s["bytes"] <= MODULE_ONCE_SIZE + 16]
	frame = next((f for f in body[0]["frames"] if f.get("language") == "python"), None) if body else None
	errs = [] if rc == 0 else ["%s: exit status %s" % (tag, rc)]
	if "BODY GONE yes" not in out:
		errs.append("%s: the body's code object was still mapped after it ran: the case shows nothing" % tag)
	if not frame:
		errs.append("%s: no block of %d bytes with Python frames" % (tag, MODULE_ONCE_SIZE + 1))
	return rep, out, frame, errs


def py_code_ring_full_case(work):
	"""module_once.py: a module's body, run once, allocating, then freed and
	unmapped, its line table longer than BPF's copy of one. Through the
	default ring BPF's copy names its frame (<module>, module_once_body.py)
	and nothing is dropped; through a ring of one page (--py-code-buffer 4K),
	which that copy (4.5 KiB) can never pass, the frame stays unnamed, and
	that is counted (py_codes_unnamed) and shown with the option that fixes
	it."""
	rep, _, frame, errs = module_once_run(work, "tracer", [])
	if frame and (frame.get("function"), frame.get("file")) != ("<module>", "module_once_body.py"):
		errs.append("default ring: the body's frame is %r, not <module> in module_once_body.py" % frame)
	errs += dropped_errs(rep["totals"])
	rep, out, frame, more = module_once_run(work, "small", ["--py-code-buffer", "4K"])
	errs += more
	if frame and (frame.get("function") or frame.get("file")):
		errs.append("4K ring: the body's frame is named %r: its copy passed a ring too small for it" % frame)
	if rep["totals"]["dropped"].get("py_codes_unnamed", 0) < 1:
		errs.append("4K ring: dropped.py_codes_unnamed = %r, expected 1 or more" %
			    rep["totals"]["dropped"].get("py_codes_unnamed"))
	if not re.search(r"^Dropped: [\d,]+ Python code objects? unnamed, .*\(raise --py-code-buffer\)$", out, re.M):
		errs.append("4K ring: no drop line for unnamed code objects naming --py-code-buffer")
	return errs[:5]


NESTED_DEPTH, NESTED_LOADS = 40, 3	# nested_natives.py's arguments


def py_pair_natives_case(work):
	"""nested_natives.py: json's C scanner one native frame deeper at each
	level, so DEPTH native stacks under one Python stack, each allocating
	once per document. Every string under its own (native, Python) pair,
	with the victim's line among its Python frames: whatever BPF keeps to
	skip a pair's look-up must tell pairs apart by both stacks, not by the
	Python one alone (a thread's last pairs, tried and not kept, failed it
	so: docs/PERFORMANCE.md)."""
	js = work.path("report.json")
	cmd = "%s %s %d %d" % (PY, os.path.join(PYVICTIMS, "nested_natives.py"), NESTED_DEPTH,
			       NESTED_LOADS)
	argv = [TRACER, "--json", js, "--all-stacks", "-T", "10000", "-c", cmd]
	p = work.start(argv, env=py_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c python")
	m = re.search(r"^NESTED depth=\d+ loads=\d+ text=(\d+)$", work.read("tracer.stdout"), re.M)
	if not m:
		return ["the victim did not finish"]
	text, line = int(m.group(1)), py_marker("nested_natives.py", "parse")
	under, natives, elsewhere = 0, set(), 0
	for s in load_report(js).get("stacks") or []:
		# A str of text ASCII characters: text + 1 bytes and the object's head.
		if s["api"] not in PY_HEAP_APIS or not text < s["bytes"] / max(s["allocs"], 1) <= text + 64:
			continue
		py = [(f.get("file") or "", f.get("line")) for f in s["frames"] if f.get("language") == "python"]
		if ("nested_natives.py", line) in [(os.path.basename(f), l) for f, l in py]:
			under += s["allocs"]
			natives.add(tuple(f.get("address") or f.get("function") for f in s["frames"]
					  if f.get("language") != "python"))
		else:
			elsewhere += s["allocs"]
	errs = []
	if under != NESTED_DEPTH * NESTED_LOADS or elsewhere:
		errs.append("%d strings under nested_natives.py:%d and %d elsewhere, expected %d and 0" % (
			under, line, elsewhere, NESTED_DEPTH * NESTED_LOADS))
	if len(natives) < NESTED_DEPTH:
		errs.append("%d native stacks under the one Python stack, expected %d" % (
			len(natives), NESTED_DEPTH))
	common_checks(work, rc, 0, errs)
	return errs


def py_unsupported_case(work):
	"""A Python older than 3.11: one line says so, and the stacks stay native."""
	python = pyenv_python("3.10")
	js = work.path("report.json")
	p = work.start([TRACER, "--json", js, "-c", "%s %s" % (
		python, os.path.join(PYVICTIMS, "grow_list.py"))], env=tracer_env(work),
		stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c python3.10")
	errs = []
	if "Python frames need 3.11, 3.12 or 3.13" not in work.read("tracer.stderr"):
		errs.append("no message about the unsupported version on stderr")
	rep = load_report(js)
	if rep.get("python") is not None:
		errs.append("python is %r for an unsupported interpreter" % rep.get("python"))
	if any(f.get("language") != "native" for s in rep.get("stacks") or [] for f in s["frames"]):
		errs.append("Python frames from an unsupported interpreter")
	if not rep.get("stacks"):
		errs.append("no stacks at all")
	common_checks(work, rc, 0, errs)
	return errs


CASES = [
	("py_grow_c", TRACE, [PY], py_command_case("grow_list.py", ["--os-exit"])),
	("py_grow_c_malloc", TRACE, [PY], py_command_case("grow_list.py", malloc=True)),
	("py_cycles_c", TRACE, [PY], py_command_case("cycles.py")),
	("py_cycles_c_malloc", TRACE, [PY], py_command_case("cycles.py", malloc=True)),
	("py_dict_c", TRACE, [PY], py_command_case("dict_cache.py")),
	("py_dict_c_malloc", TRACE, [PY], py_command_case("dict_cache.py", ["--os-exit"], True)),
	("py_churn_c", TRACE, [PY], py_command_case("churn.py")),
	("py_stack_ring_full", TRACE, [PY], py_stack_ring_full_case),
	("py_code_ring_full", TRACE, [PY], py_code_ring_full_case),
	("py_churn_c_malloc", TRACE, [PY], py_command_case("churn.py", malloc=True)),
	("py_threads_c", TRACE, [PY], py_command_case("threads.py")),
	# With malloc every object is a block: some 30,000 (native, Python) stacks
	# over the run, whose sites are never reclaimed yet, so the default table
	# is near half full and a long probe chain now and then drops one site
	# (counted, as sites_map_full). Room for what this victim does:
	("py_threads_c_malloc", TRACE, [PY],
	 py_command_case("threads.py", malloc=True, tracer_args=("--stack-storage-size", "131072"))),
	("py_grow_p", TRACE, [PY], py_attach_case("grow_list.py")),
	("py_cycles_p_malloc", TRACE, [PY], py_attach_case("cycles.py", malloc=True)),
	("py_dict_p", TRACE, [PY], py_attach_case("dict_cache.py", args=["--os-exit"])),
	("py_outputs", TRACE, [PY, PPROF], py_outputs_case),
	("py_arena_leak_c", TRACE, [PY], py_arena_leak_case),
	("py_arenas_c", TRACE, [PY], py_arenas_case),
	("py_code_reuse_c", TRACE, [PY], py_code_reuse_case),
	("py_same_leaf_c", TRACE, [PY], py_same_leaf_case),
	("py_pair_natives_c", TRACE, [PY], py_pair_natives_case),
	("py_objects_c", TRACE, [pyenv_python("3.11")], py_objects_case),
	("py_objects_exit", TRACE, [pyenv_python("3.11")], py_objects_exit_case),
	("py_objects_sample_c", TRACE, [pyenv_python("3.11")], py_objects_sample_case),
	("py_objects_refused", TRACE, [PY], py_objects_refused_case(PY, True)),
	("py_objects_refused_env", TRACE, [PY], py_objects_refused_case(PY + " -E", False)),
	("py_pyenv_3_11", TRACE, [pyenv_python("3.11")],
	 py_command_case("grow_list.py", python=pyenv_python("3.11"))),
	("py_pyenv_3_12", TRACE, [pyenv_python("3.12")],
	 py_command_case("cycles.py", malloc=True, python=pyenv_python("3.12"), version="3.12")),
	("py_pyenv_3_12_threads", TRACE, [pyenv_python("3.12")],
	 py_command_case("threads.py", python=pyenv_python("3.12"), version="3.12")),
	("py_pyenv_3_13", TRACE, [pyenv_python("3.13")],
	 py_command_case("dict_cache.py", python=pyenv_python("3.13"), version="3.13")),
	("py_unsupported", TRACE, [pyenv_python("3.10")], py_unsupported_case),
	("err_python_malloc_p", ERROR, [], error_case(lambda: ["--python-malloc", "malloc", "-p", "1"])),
	("err_python_malloc_value", ERROR, [],
	 error_case(lambda: ["--python-malloc", "tcmalloc", "-c", "true"])),
]
