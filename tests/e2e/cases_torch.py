# SPDX-License-Identifier: GPL-2.0
"""A real PyTorch training job: its start-up is not a leak, its leak is.

tests/victims/python/torch_train.py under Debian's /usr/bin/python3 and
python3-torch, traced with the default options but a report every second
(the loop lasts seconds; trends need points). Under -c the whole job is
traced, from the interpreter's first instruction through `import torch`,
which runs a few hundred thousand distinct stacks and grows the heap for
tens of seconds, to the end of the loop:

  torch_fixed_c   the job with `loss.item()`: no report, of the import or
                  the loop, says leak; the last judges the loop (start-up
                  over) and no stack grows
  torch_leak_c    the job with `total_loss += loss`, stopped (SIGTERM) once
                  a report made during its loop says leak: no report says
                  leak before the loop; the final one does, its growing
                  stacks all the loop's, under step() and train(), the most
                  leak-like at one of the loop's allocating lines
  torch_leak_sample_c  torch_leak_c under --sample 512K (seed 1): the leak
                  found from the estimates, at the loop's lines, start-up
                  and growth judged by site (docs/SAMPLING.md, "Trends and
                  verdicts"): named some 3 s after start-up ends
  torch_leak_p    the same leak under -p, attached once torch is imported,
                  the loop let go once every unwind table is loaded (-v says
                  when), so that no stack is cut short at one still loading;
                  its job runs its steps: each growing stack holds whole
                  steps (the truth: one block per step per allocation there)

None may drop anything (a full stack map, a stack or Python frames not
read). --os-exit ends the jobs that run to their end with os._exit(0) right
after the loop, so that the final report still sees what the loop holds. Skipped, with the
reason, where `import torch` fails under /usr/bin/python3.
"""

import os
import re
import signal
import subprocess
import time

import lib
from lib import (CaseFailed, LineReader, Skip, TRACE, TRACER, common_checks, dropped_errs,
	frameless_errs, load_report, start_tracing, wait_exit, wait_for)
from cases_follow import case_torch_loader_follow
from cases_outputs import check_html
from cases_python import PY, PYVICTIMS, py_env


VICTIM = "torch_train.py"
# The loop's length, traced here: 17 to 40 s under -c, 25 s under -p. A
# report takes 2 to 4 s to build with the 200,000 stacks import torch leaves,
# so that is 5 to 10 of them, a trend after start-up; 300,000 blocks leaked.
STEPS = 10000
LEAK_STEPS = 1000000	# the leaking job under -c: more than it runs before it is stopped
INTERVAL = "1"
TIMEOUT_CASES = 4	# lib.CASE_TIMEOUTs for a case: a whole job takes 40 to 90 s traced here
LOOP = ("step", "train")		# the loop's functions in torch_train.py
LOOP_MARKS = ("forward", "loss", "leak")	# its allocating lines (# @NAME)
LEAK_VERDICTS = ("leak", "leak_and_fragmentation")
FINAL_MARK = "memleakbpf: Final report:"
TABLES_READY = "memleakbpf: unwind tables ready "	# -v, under -p

_torch_error = []


def torch_missing():
	"""Why `import torch` fails under /usr/bin/python3 ("" when it works); tried once."""
	if not _torch_error:
		try:
			r = subprocess.run([PY, "-c", "import torch"], stdout=subprocess.PIPE,
					   stderr=subprocess.STDOUT, timeout=120)
			out = r.stdout.decode("utf-8", "replace").strip().splitlines()
			_torch_error.append("" if r.returncode == 0 else
					    "import torch fails under %s (python3-torch: scripts/deps.sh): %s"
					    % (PY, out[-1] if out else "exit status %d" % r.returncode))
		except (OSError, subprocess.TimeoutExpired) as e:
			_torch_error.append("import torch under %s: %s" % (PY, e))
	if _torch_error[0]:
		raise Skip(_torch_error[0])


def loop_marks():
	"""{line: name} of the loop's "# @NAME" markers (one may go on: "# @leak: why")."""
	found = {}
	with open(os.path.join(PYVICTIMS, VICTIM)) as f:
		for n, line in enumerate(f, 1):
			m = re.search(r"# @(\w+)", line)
			if m and m.group(1) in LOOP_MARKS:
				found[n] = m.group(1)
	if sorted(found.values()) != sorted(LOOP_MARKS):
		raise CaseFailed("%s has markers %s, expected @%s" % (
			VICTIM, sorted(found.values()), ", @".join(LOOP_MARKS)))
	return found


def deadline():
	return time.monotonic() + TIMEOUT_CASES * lib.CASE_TIMEOUT


def job(*args):
	return "%s %s --steps %d --os-exit %s" % (PY, os.path.join(PYVICTIMS, VICTIM), STEPS,
						  " ".join(args))


def loop_frame(stack):
	"""The innermost Python frame of the loop (step or train of torch_train.py), or None."""
	for f in stack.get("frames") or []:
		if f.get("language") == "python" and f.get("function") in LOOP and \
		   os.path.basename(f.get("file") or "") == VICTIM:
			return f
	return None


def where(stack):
	py = [f for f in stack.get("frames") or [] if f.get("language") == "python"]
	return " <- ".join("%s:%s" % (f.get("function"), f.get("line")) for f in py[:4]) or \
		"no Python frame (%d frames)" % len(stack.get("frames") or [])


def final_text(work):
	text = work.read("tracer.stdout")
	i = text.rfind(FINAL_MARK)
	if i < 0:
		raise CaseFailed("no final text report on stdout")
	return text[i:]


def common_errs(rep):
	"""What every torch case wants: no drop at all, the interpreter walked."""
	errs = dropped_errs(rep.get("totals") or {}, also=lambda k: k.startswith("py_"))
	if not str((rep.get("python") or {}).get("version", "")).startswith("3."):
		errs.append("python is %r: the interpreter was not walked" % rep.get("python"))
	return errs + frameless_errs(rep)


def growing(rep):
	return [s for s in rep.get("stacks") or [] if s.get("trend") == "growing"]


def check_no_leak(rep, text):
	"""No leak verdict and no growing stack; the loop judged, start-up over."""
	m = rep.get("memory") or {}
	errs = []
	if m.get("verdict") in LEAK_VERDICTS or m.get("growing_stacks"):
		errs.append("memory: verdict %r with %r growing stacks; expected no leak" % (
			m.get("verdict"), m.get("growing_stacks")))
	for s in growing(rep)[:3]:
		errs.append("a growing stack: %d bytes at %s" % (s["bytes"], where(s)))
	startup = m.get("startup") or {}
	if m.get("verdict") not in ("no_leak", "fragmentation") or startup.get("ongoing"):
		errs.append("memory: verdict %r, start-up %r; expected the loop judged (no_leak or "
			    "fragmentation, start-up over)" % (m.get("verdict"), startup))
	if not re.search(r"\nVerdict: (no leak seen: no stack grows steadily since start-up ended "
			 r"at [\d.]+ s|fragmentation, not a leak)", text):
		errs.append("final text: no 'no leak seen ... since start-up ended' nor fragmentation verdict")
	return errs


def check_leak(rep, text, steps=None, imported=True):
	"""A leak verdict; every growing stack the loop's, the most leak-like site's first
	stack at one of its allocating lines; with steps, each holding whole steps.

	The JSON writes the growing stacks of every growing site, at most 5 a site
	(docs/ANALYSIS.md, Sites): the sites count them all, and rank them."""
	m = rep.get("memory") or {}
	marks = loop_marks()
	grow = growing(rep)
	sites = sorted((s for s in rep.get("sites") or [] if s.get("leak_rank")),
		       key=lambda s: s["leak_rank"])
	counted = sum(s.get("growing_stacks") or 0 for s in rep.get("sites") or [])
	if m.get("verdict") not in LEAK_VERDICTS or not grow or not sites:
		return ["memory: verdict %r, %d growing stacks in %d sites; expected a leak" % (
			m.get("verdict"), len(grow), len(sites))]
	errs = []
	if m.get("growing_stacks") != counted or len(grow) > counted or sites[0]["leak_rank"] != 1:
		errs.append("memory.growing_stacks %r, the sites' %d, %d written, the first site ranked %r"
			    % (m.get("growing_stacks"), counted, len(grow), sites[0]["leak_rank"]))
	for s in [s for s in grow if not loop_frame(s)][:3]:
		errs.append("a growing stack outside the loop: %d bytes at %s" % (s["bytes"], where(s)))
	errs += check_user_sites(rep, sites[0], marks, imported)
	first = rep["stacks"][sites[0]["stacks"][0]] if sites[0].get("stacks") else {}
	f = loop_frame(first)
	if first.get("trend") != "growing" or not f or f.get("line") not in marks:
		errs.append("the most leak-like site's first stack is %s at %s, not growing at a line of %s"
			    % (first.get("trend"), where(first), ", ".join(
				    "@%s (%d)" % (v, k) for k, v in sorted(marks.items()))))
	if steps:
		errs += whole_steps(grow, steps)
	want = r"\nVerdict: (leak|leak and fragmentation): %d sites? grows? steadily \(%d stacks?\)" % (
		len(sites), counted)
	if not re.search(want, text):
		errs.append("final text: no %r" % want)
	if not re.search(r"\nGrowing: [^\n]*\n\n  1\. [^\n]*\n(      [^\n]*\n)*?      #\d+ (step|train) "
			 r"\([^)]*/%s:\d+\) \[python\]\n" % re.escape(VICTIM), text):
		errs.append("final text: the first growing site's stack does not show step or train of %s"
			    % VICTIM)
	return errs


def import_line():
	with open(os.path.join(PYVICTIMS, VICTIM)) as f:
		for n, line in enumerate(f, 1):
			if line.rstrip().endswith("# @import"):
				return n
	raise CaseFailed("%s has no # @import marker" % VICTIM)


def check_user_sites(rep, first, marks, imported):
	"""Sites at the script's lines (docs/ANALYSIS.md, Sites): the most leak-like at a loop line,
	not torch's Linear.forward; `import torch` (when traced) at its line, an import."""
	errs = []
	f = first.get("frame") or {}
	if os.path.basename(f.get("file") or "") != VICTIM or f.get("line") not in marks or \
	   not first.get("own"):
		errs.append("the most leak-like site is at %s (%s:%s, own %r), not a loop line of %s" % (
			f.get("function"), f.get("file"), f.get("line"), first.get("own"), VICTIM))
	imp = [s for s in rep.get("sites") or [] if (s.get("frame") or {}).get("line") == import_line()
	       and os.path.basename((s.get("frame") or {}).get("file") or "") == VICTIM]
	if imported and (len(imp) != 1 or not imp[0].get("import")):
		errs.append("import torch: %d sites at %s:%d, import %r" % (
			len(imp), VICTIM, import_line(), [s.get("import") for s in imp]))
	for s in rep.get("sites") or []:
		file = (s.get("frame") or {}).get("file") or ""
		if s.get("own") and ("-packages/" in file or file.startswith("/usr/lib/python3")):
			errs.append("a site in a library marked own: %s" % file)
			break
	return errs


def whole_steps(grow, steps):
	"""Each step leaks one block per allocation at each leaking stack: a growing
	stack holds a whole number of steps, of steps - 1 at @leak (the first step
	adds the loss to the integer 0, through another path)."""
	marks = loop_marks()
	errs = []
	for s in grow:
		f = loop_frame(s)
		n = steps - 1 if f and marks.get(f.get("line")) == "leak" else steps
		if f and (not s["allocs"] or s["allocs"] % n):
			errs.append("a growing stack at %s holds %d blocks: not a whole number of %d steps"
				    % (where(s), s["allocs"], n))
	return errs[:3]


def verdicts(text):
	"""The verdict lines of every report, in order."""
	return re.findall(r"^Verdict: [^\n]*", text, re.M)


def job_ran(work, errs):
	if "torch_train: %d steps in " % STEPS not in work.read("tracer.stdout"):
		errs.insert(0, "the job did not finish its %d steps (no 'torch_train:' line)" % STEPS)


def command_case(command, check):
	"""memleakbpf --json J -c COMMAND 1, to the command's end."""
	def run(work):
		torch_missing()
		js = work.path("report.json")
		p = work.start([TRACER, "--json", js, "-c", command, INTERVAL], env=py_env(work),
			       stdin=subprocess.DEVNULL, tag="tracer")
		rc = wait_exit(p, deadline(), "memleakbpf -c " + command)
		rep = load_report(js)
		errs = common_errs(rep) + check(work, rep, final_text(work))
		common_checks(work, rc, 0, errs)
		return errs
	return run


def fixed_check(work, rep, text):
	"""No report says leak; one made during the loop already has start-up behind it."""
	errs = check_no_leak(rep, text)
	out = work.read("tracer.stdout")
	said = [v for v in verdicts(out) if v.startswith("Verdict: leak")]
	if said:
		errs.append("%d reports said leak, the first: %r" % (len(said), said[0]))
	start, end = out.find("torch_train: training "), out.find("torch_train: %d steps in " % STEPS)
	over = re.compile(r"Verdict: (no leak seen|fragmentation|start-up, not judged yet: it ended)")
	if start < 0 or end < 0 or not any(over.match(v) for v in verdicts(out[start:end])):
		errs.append("no report during the loop has start-up behind it: %s" % (
			sorted(set(v[:60] for v in verdicts(out[start:end]))) if start < end else "no loop"))
	job_ran(work, errs)
	return errs


def leak_said(out):
	"""A report printed after the loop began says leak."""
	loop = out.find("torch_train: training ")
	return loop >= 0 and any(v.startswith("Verdict: leak") for v in verdicts(out[loop:]))


def leak_stopped(work, sample=None):
	"""-c the leaking job, stopped (SIGTERM) once a report made during its loop says leak.

	The --html page of its final report stays under 5 MB and renders. With
	sample (--sample's BYTES, a fixed seed): the same leak found by the
	estimates, at the same lines; no page.
	It is stopped while it leaks, as one stops a job whose memory keeps growing:
	however many reports the machine's load let into the loop, the final
	report still sees the loop's stacks rising. No report before the loop may
	say leak."""
	torch_missing()
	js = work.path("report.json")
	end = deadline()
	cmd = "%s %s --leak --steps %d" % (PY, os.path.join(PYVICTIMS, VICTIM), LEAK_STEPS)
	env = py_env(work)
	if sample:
		env["MEMLEAKBPF_SAMPLE_SEED"] = "1"
	out = ["--sample", sample] if sample else ["--html", work.path("report.html")]
	p = work.start([TRACER, "--json", js] + out + ["-c", cmd, INTERVAL], env=env,
		       stdin=subprocess.DEVNULL, tag="tracer")
	wait_for(lambda: leak_said(work.read("tracer.stdout")), end,
		 "a leak verdict from a report made during the loop", alive=p)
	p.send_signal(signal.SIGTERM)
	rc = wait_exit(p, end, "memleakbpf -c, after SIGTERM")
	rep = load_report(js)
	text = final_text(work)
	errs = common_errs(rep) + check_leak(rep, text)
	out = work.read("tracer.stdout")
	said = [v for v in verdicts(out[:out.find("torch_train: training ")])
		if v.startswith("Verdict: leak")]
	if said:
		errs.append("before the loop: %s" % said[0])
	if not re.search(r"\nVerdict: [^\n]* since start-up ended at [\d.]+ s", text):
		errs.append("final text: the verdict does not say when start-up ended")
	if sample and (rep.get("sampling") or {}).get("mean") != int(sample[:-1]) << 10:
		errs.append("sampling %r: not --sample %s" % (rep.get("sampling"), sample))
	# The page of the biggest report we make: under 5 MB, drawn by Chromium.
	if not sample:
		errs += check_html("report.html", [], ["forward"], "forward")(work, None)
	common_checks(work, rc, 128 + signal.SIGTERM, errs)
	return errs


def leak_attach(work):
	"""-p on the leaking job once torch is imported: READY, attach, tables, go, its end."""
	torch_missing()
	js = work.path("report.json")
	end = deadline()
	v = work.start([PY, os.path.join(PYVICTIMS, VICTIM), "--leak", "--wait", "--os-exit",
			"--steps", str(STEPS)], env=py_env(work), stdin=subprocess.PIPE,
		       stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	pid = int(out.expect("READY pid=", end).split("=", 1)[1])
	t = start_tracing(work, ["-v", "--json", js, "-p", str(pid), INTERVAL], end)
	wait_for(lambda: TABLES_READY in work.read("tracer.stderr"), end, repr(TABLES_READY), alive=t)
	v.stdin.write(b"go\n")
	v.stdin.close()
	done = out.expect("torch_train: %d steps in " % STEPS, end)
	if wait_exit(v, end, VICTIM):
		raise CaseFailed("%s exited %s" % (VICTIM, v.returncode))
	rc = wait_exit(t, end, "memleakbpf -p after its target exited")
	rep = load_report(js)
	errs = common_errs(rep) + check_leak(rep, final_text(work), STEPS, imported=False)
	common_checks(work, rc, 0, errs)
	return errs


CASES = [
	("torch_fixed_c", TRACE, [PY], command_case(job(), fixed_check)),
	("torch_leak_c", TRACE, [PY], leak_stopped),
	("torch_leak_p", TRACE, [PY], leak_attach),
	# --sample 512K, as one would leave it on a training job: the same leak, the same lines.
	("torch_leak_sample_c", TRACE, [PY], lambda work: leak_stopped(work, "512K")),
	# --follow: a DataLoader's workers, each exact at its __getitem__ line.
	("torch_loader_follow", TRACE, [PY], case_torch_loader_follow),
]
