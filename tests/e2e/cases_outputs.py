# SPDX-License-Identifier: GPL-2.0
"""The outputs for other tools, each checked with its real reader.

google-pprof (Debian's google-perftools) reads --pprof files and
--snapshot-dir snapshots and must show every victim site's exact bytes;
--base between two snapshots must show exactly what leaked in between; Go's
pprof reads the same files. The --flamegraph SVG must parse as XML, name
every site wide enough to see and draw it as wide as its bytes, and merge
the narrower; flamegraph.pl renders --folded; --folded-weight allocs counts
blocks. The --html page must embed JSON that parses, refer to nothing
outside itself, and, rendered by headless Chromium, show the verdict, the
sites, the frames of an opened stack and a search's matches, in a
screenshot that is not blank. --help and the man page name every option
opts.c and report/writers.h define.
v_phases (tests/victims/v_phases.c) leaks in three phases p1..p3 and never
frees a leaked block, so the truth after phase k is its p1..pk TRUTH lines.
v_sites (tests/victims/v_sites.c) leaks through 16 stacks of one line beside
a cache bigger than each: the report must lead with the one site they make,
its figures exact; its 1,024 tiny stacks of one site must be left out of
the files but 5, and said so, and --all-stacks must write them all.
redis-server's title, padded over its arguments' room, is named without
the padding in the header, the JSON and the pprof.
"""

import gzip
import os
import re
import shutil
import signal
import subprocess
import time

import lib
from lib import (CaseFailed, ERROR, LineReader, PPROF, ROOT, SVG, Skip, TRACE, TRACER, VICTIM_FN,
	check_report, command_case, common_checks, error_case, finish_victim, folded_lines, go_until,
	load_report, log, read_truth, start_tracing, svg_refers_outside, tracer_env, victim, wait_exit,
	wait_for)


PPROF_ARGS = ["--text", "--show_bytes", "--nodecount=1000000", "--nodefraction=0",
	      "--edgefraction=0"]

# "  flat flat% sum%  cum cum% function [file:line]"
PPROF_ROW = re.compile(r"^\s*(-?\d+)\s+-?[\d.]+%\s+-?[\d.]+%\s+(-?\d+)\s+-?[\d.]+%\s+(\S.*)$")
SNAPSHOT_LINE = re.compile(r"^memleakbpf: snapshot (\S+\.heap) (\S+\.folded)$")
SVG_PLOT_WIDTH = 1180.0		# 1200 minus two 10-pixel margins
NARROW = re.compile(r"^\[\d+ narrow frames\]$")	# frames too narrow to draw, merged
FLAMEGRAPH_PL = shutil.which("flamegraph.pl") or "flamegraph.pl (not on PATH)"
CHROMIUM = "/usr/bin/chromium"	# Debian's, a test dependency (scripts/deps.sh)
HTML_DATA = re.compile(r'<script type="application/json" id="data">(.*?)</script>', re.S)
HTML_MAX = 5 << 20		# the bound, the torch job's page included
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
				   stderr=subprocess.PIPE, timeout=lib.STEP_TIMEOUT)
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
NOWHERE = "/nonexistent-memleakbpf-pprof-binaries"


def go_pprof(work, args, tag, binary_path=NOWHERE):
	"""go tool pprof ARGS: its standard output; it may look for binaries only in binary_path."""
	argv = [GO, "tool", "pprof"] + args
	env = dict(os.environ, HOME=work.dir, GOCACHE=work.path("gocache"),
		   GOPATH=work.path("gopath"), PPROF_BINARY_PATH=binary_path,
		   PPROF_TMPDIR=work.path("pprof-tmp"))
	log("  run: " + " ".join(argv))
	try:
		r = subprocess.run(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
				   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=lib.STEP_TIMEOUT)
	except subprocess.TimeoutExpired:
		raise CaseFailed("go tool pprof timed out (%s)" % tag)
	out = r.stdout.decode("utf-8", "replace")
	with open(work.path(tag + ".txt"), "w") as f:
		f.write(" ".join(argv) + "\n" + out + r.stderr.decode("utf-8", "replace"))
	if r.returncode:
		raise CaseFailed("go tool pprof exited %d (see %s.txt)" % (r.returncode, tag))
	return out


def go_pprof_flat(work, binary, profile, index, tag):
	"""go tool pprof -text: {function: flat bytes} for sample index (inuse_space, ...)."""
	out = go_pprof(work, ["-text", "-sample_index=" + index, "-unit=B", "-nodefraction=0",
			      "-nodecount=1000000", binary, profile], tag)
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
	"""command_case for these cases: the check knows the victim's name."""
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
		# Frames narrower than 0.1 px are merged with their neighbours, or
		# left out when even together they are: a site may lose to the
		# merged boxes what they hold, and one narrower than that all.
		merged = sum(f["bytes"] for f in frames if NARROW.match(f["name"]))
		want = site_bytes(truth)
		skip = {k for k, v in want.items() if v - merged <= got.get(k, 0) < v or
			(not got.get(k) and v * SVG_PLOT_WIDTH / total < 0.1)}
		errs += compare_sites({k: v for k, v in got.items() if k not in skip},
				      {k: v for k, v in want.items() if k not in skip}, "flame graph bytes")
		if svg_refers_outside(root):
			errs.append("the SVG refers to something outside itself")
		return errs[:20]
	return check


def chromium(work, args, tag):
	"""Run headless Chromium to completion: its stdout."""
	argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir=" + work.path("chromium-" + tag), "--virtual-time-budget=5000"] + args
	r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
	with open(work.path(tag + ".stderr"), "wb") as f:
		f.write(r.stderr)
	if r.returncode:
		raise CaseFailed("chromium %s exited %d" % (tag, r.returncode))
	return r.stdout.decode("utf-8", "replace")


def png_colours(path):
	"""How many distinct colours the PNG's first 200 rows hold (8-bit RGB or RGBA, no interlace)."""
	import struct
	import zlib
	with open(path, "rb") as f:
		data = f.read()
	if data[:8] != b"\x89PNG\r\n\x1a\n":
		raise CaseFailed("%s is not a PNG" % path)
	at, idat, w = 8, b"", 0
	while at < len(data):
		n, kind = struct.unpack(">I4s", data[at:at + 8])
		body = data[at + 8:at + 8 + n]
		if kind == b"IHDR":
			w, _, depth, ctype = struct.unpack(">IIBB", body[:10])
			if depth != 8 or ctype not in (2, 6):
				return 256	# another layout: its size alone was checked
			bpp = 3 if ctype == 2 else 4
		elif kind == b"IDAT":
			idat += body
		at += 12 + n
	raw, stride, seen, prev = zlib.decompress(idat), w * bpp, set(), bytearray(w * bpp)
	for y in range(min(200, len(raw) // (stride + 1))):
		row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
		ftype = raw[y * (stride + 1)]
		for i in range(stride):	# undo the row's filter
			a = row[i - bpp] if i >= bpp else 0
			b, c = prev[i], prev[i - bpp] if i >= bpp else 0
			if ftype == 1:
				row[i] = (row[i] + a) & 255
			elif ftype == 2:
				row[i] = (row[i] + b) & 255
			elif ftype == 3:
				row[i] = (row[i] + (a + b) // 2) & 255
			elif ftype == 4:
				p = a + b - c
				pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
				row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
		seen.update(bytes(row[i:i + 3]) for i in range(0, stride, bpp))
		prev = row
	return len(seen)


def check_html(name, sites, frames, search, shown=()):
	"""--html NAME: its JSON parses, nothing outside it; Chromium shows the verdict, sites,
	frames, and each text of shown."""
	def check(work, truth):
		import json
		path = work.path(name)
		try:
			with open(path, encoding="utf-8") as f:
				page = f.read()
		except (OSError, UnicodeDecodeError) as e:
			return ["%s: not readable as UTF-8: %s" % (name, e)]
		errs = []
		log("%s: %d bytes" % (name, len(page.encode())))
		if len(page.encode()) > HTML_MAX:
			errs.append("%s is %d bytes, over %d" % (name, len(page.encode()), HTML_MAX))
		m = HTML_DATA.search(page)
		try:
			data = json.loads(m.group(1)) if m else None
		except ValueError as e:
			data = None
			errs.append("the page's data is not JSON: %s" % e)
		if m is None:
			errs.append("no data block in the page")
		if re.search(r'(src|href)\s*=\s*"(?!#)|url\(|@import', page):
			errs.append("the page refers to something outside itself")
		if data is not None and not data["sites"]:
			errs.append("the page's data has no site")
		if not os.path.exists(CHROMIUM):
			log("skip the browser checks: no %s (scripts/deps.sh installs it)" % CHROMIUM)
			return errs
		url = "file://" + path + "#open=all&search=" + search
		dom = chromium(work, ["--dump-dom", url], "dom")
		with open(work.path("dom.html"), "w") as f:
			f.write(dom)
		if not re.search(r'id="verdict"[^>]*>Verdict: ', dom):
			errs.append("the rendered page shows no verdict")
		table = dom[dom.find('class="sites"'):]
		for want in sites:
			if '<code class="fn-name">%s' % want not in table:
				errs.append("the sites table does not show %s" % want)
		stacks = "".join(re.findall(r'<div class="stack">.*?</ol>', dom, re.S))
		for want in frames:
			if want not in stacks:
				errs.append("no opened stack shows %r" % want)
		if 'class="own"' not in stacks:
			errs.append("no frame of an opened stack is marked as your code")
		found = re.search(r'id="flame-status"[^>]*data-matches="(\d+)"', dom)
		if not found or int(found.group(1)) < 1:
			errs.append("the flame graph's search for %s found nothing" % search)
		for want in shown:
			if want not in dom:
				errs.append("the rendered page does not show %r" % want)
		if dom.count('class="fr ') < 3:
			errs.append("the flame graph drew %d frames" % dom.count('class="fr '))
		png = work.path("page.png")
		chromium(work, ["--window-size=1366,1800", "--screenshot=" + png, "file://" + path], "png")
		size = os.path.getsize(png) if os.path.exists(png) else 0
		colours = png_colours(png) if size else 0
		log("screenshot: %d bytes, %d colours in its first 200 rows" % (size, colours))
		if size < 20000 or colours < 8:
			errs.append("the screenshot looks blank: %d bytes, %d colours" % (size, colours))
		return errs[:20]
	return check


def case_html_python(work):
	"""--html on a Python leak: the Python sites, their frames as Python, in Chromium."""
	from cases_python import PY, PYVICTIMS, py_env
	page = work.path("py.html")
	cmd = "%s %s --os-exit" % (PY, os.path.join(PYVICTIMS, "grow_list.py"))
	p = work.start([TRACER, "--html", page, "-c", cmd], env=py_env(work),
		       stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c python")
	errs = check_html("py.html", ["load_batch (grow_list.py:14)"],
			  ["train (grow_list.py:19)", "grow_list.py:14", "Python"], "load_batch")(work, None)
	common_checks(work, rc, 0, errs)
	return errs


def case_html_sample(work):
	"""--html under --sample: the figures marked as estimates, as the text marks them."""
	env = dict(tracer_env(work), MEMLEAKBPF_SAMPLE_SEED="1")
	p = work.start([TRACER, "--sample", "64K", "--html", work.path("report.html"), "-c",
			victim("v_sample")], env=env, stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf --sample -c v_sample")
	errs = check_html("report.html", ["site_big"], ["v_sample.c:"], "site_big",
			  ["Sampled (--sample, -s)", "~32.0 MiB"])(work, None)
	common_checks(work, rc, 0, errs)
	return errs


def case_snapshot_html(work):
	"""--snapshot-html: each snapshot's page beside its profile and folded stacks, the
	last one drawn by Chromium with the victim's sites."""
	snaps = work.path("snaps")
	os.makedirs(snaps)
	errs = command_case("{V}/v_phases auto 1500", "v_phases", "v_phases.c",
			    extra_args=["--snapshot-dir", snaps, "--snapshot-html", "0.4"])(work)
	names = sorted(os.listdir(snaps))
	profiles = [n[:-len(".pb.gz")] for n in names if n.endswith(".pb.gz")]
	pages = [n[:-len(".html")] for n in names if n.endswith(".html")]
	if not profiles or pages != profiles:
		return errs + ["snapshot pages %s, expected one beside each profile %s" % (pages, profiles)]
	return errs + check_html(os.path.join("snaps", pages[-1] + ".html"), ["site_every"],
				 ["v_phases.c:"], "site_every")(work, None)


def case_html_follow(work):
	"""--html --follow: a view per process beside the sites they share (v_fork's 3 workers)."""
	p = work.start([TRACER, "--follow", "--html", work.path("report.html"), "-c",
			"%s workers 3" % victim("v_fork")], env=tracer_env(work),
		       stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf --follow -c v_fork")
	errs = check_html("report.html", ["site_child_leak"], ["v_fork.c:"], "site_child_leak",
			  ["Processes (--follow)", "(the target)", "site_parent_before"])(work, None)
	if len(re.findall(r"<h3>pid \d+ \(parent \d+\)", work.read("dom.html"))) != 3:
		errs.append("the page does not show the 3 workers")
	common_checks(work, rc, 0, errs)
	return errs


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
			   timeout=lib.STEP_TIMEOUT)
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

	SIGUSR1's snapshots are named apart from the periodic ones and numbered on
	their own. A file already in the directory takes usr1 number 0001: the
	snapshots must be usr1-0002..usr1-0004 (one per SIGUSR1) and 0001 (the
	final report, the first periodic one), and it must be left alone."""
	binary = victim("v_phases")
	snaps = work.path("snaps")
	os.makedirs(snaps)
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	v = work.start([binary], env=tracer_env(work), stdin=subprocess.PIPE,
		       stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	squatter = os.path.join(snaps, "memleak.%d.usr1-0001.folded" % pid)
	with open(squatter, "w") as f:
		f.write("not ours\n")
	t = start_tracing(work, ["--json", work.path("report.json"), "--snapshot-dir", snaps,
				 "--pprof-format", "gperftools", "-p", str(pid), "3600"], step())
	taken = []
	for k in range(1, len(PHASES) + 1):
		go_until(v, out, "PHASE %d" % k, step())
		t.send_signal(signal.SIGUSR1)
		taken.append(wait_snapshot_line(work, k, step(), t).groups())
	finish_victim(v, deadline)
	rc = wait_exit(t, deadline, "memleakbpf -p after its target exited")

	errs = []
	truth = read_truth(work)
	want_names = [("memleak.%d.usr1-%04d.heap" % (pid, n), "memleak.%d.usr1-%04d.folded" % (pid, n))
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
		errs.append("number usr1-0001 was taken by a file, yet the tracer wrote there")
	final = os.path.join(snaps, "memleak.%d.0001.heap" % pid)
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
			    extra_args=["--snapshot-dir", snaps, "--pprof-format", "gperftools", "0.4"])(work)
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


# ---------------------------------------------------------------- sites

SITES_FILE_STACKS = 5		# what the files keep of a site's stacks (analyze/sites.h)


def final_text(work):
	text = work.read("tracer.stdout")
	i = text.rfind("memleakbpf: Final report:")
	if i < 0:
		raise CaseFailed("no final text report on stdout")
	return text[i:]


def check_sites_leak(work, truth):
	"""v_sites: its 16 leaking stacks are one site, first by bytes and the one
	growing site; the thousand tiny stacks one site whose stacks the files
	mostly leave out, and say so; the flame graph merges what is too narrow."""
	rep = load_report(work.path("report.json"))
	notes = lib.truth_notes(work)
	want = {t["site"]: t for t in truth}
	sites = rep.get("sites") or []
	errs = []
	names = [lib.fn_name(x.get("frame") or {}) for x in sites]
	if names[:3] != ["site_leak", "site_cache", "site_tiny"]:
		return ["sites %s, expected site_leak, site_cache, site_tiny first" % names[:5]]
	leak, cache, tiny = sites[:3]
	paths, stacks = int(notes["leak_paths"]), int(notes["tiny_stacks"])
	if (leak["bytes"], leak["stack_count"], leak["growing_stacks"], leak["leak_rank"]) != (
			want["site_leak"]["bytes"], paths, paths, 1):
		errs.append("site_leak: %d bytes from %d stacks, %d growing, rank %r; truth %d from %d,"
			    " all growing, rank 1" % (leak["bytes"], leak["stack_count"],
			    leak["growing_stacks"], leak["leak_rank"], want["site_leak"]["bytes"], paths))
	if [x for x in sites if x.get("leak_rank")] != [leak]:
		errs.append("more growing sites than site_leak")
	if cache["stack_count"] != 1 or rep["stacks"][0]["site"] != 1 or \
	   any(x["bytes"] >= cache["bytes"] for x in rep["stacks"] if x["site"] == 0):
		errs.append("site_leak's stacks are not each smaller than site_cache's")
	lo = tiny["left_out"]
	if (tiny["stack_count"], len(tiny["stacks"]), lo["stacks"], lo["bytes"]) != (
			stacks, SITES_FILE_STACKS, stacks - SITES_FILE_STACKS,
			(stacks - SITES_FILE_STACKS) * want["site_tiny"]["bytes"] // stacks):
		errs.append("site_tiny: %d stacks, %d written, left out %r" % (
			tiny["stack_count"], len(tiny["stacks"]), lo))
	return errs + check_sites_text(work, truth, paths) + check_sites_folded(work, rep) + \
		check_svg("leaks.svg")(work, truth) + check_narrow_merged(work)


def check_sites_text(work, truth, paths):
	"""The final text leads with the leak's site, once, in both lists."""
	text = final_text(work)
	leak = [t for t in truth if t["site"] == "site_leak"][0]
	at = "at site_leak (tests/victims/v_sites.c:%d) [v_sites]" % leak["line"]
	errs = []
	if "\nVerdict: leak: 1 site grows steadily (%d stacks)" % paths not in text:
		errs.append("final text: no verdict of one growing site of %d stacks" % paths)
	m = re.search(r"\nGrowing: 1 site, the most leak-like first:\n\n  1\. [^\n]* from %d of its %d "
		      r"stacks, now [^\n]*, %s\n" % (paths, paths, re.escape(at)), text)
	if not m:
		errs.append("final text: Growing does not start with site_leak's %d stacks" % paths)
	if not re.search(r"\nSite 1: [^\n]* \(%s bytes\) in %s allocations from %d stacks \(the 1st "
			 r"under Growing\), %s\n" % ("{:,}".format(leak["bytes"]),
			 "{:,}".format(leak["allocs"]), paths, re.escape(at)), text):
		errs.append("final text: Site 1 is not site_leak with its exact figures")
	if "  and %d more stacks: " % (paths - 3) not in text:
		errs.append("final text: site_leak does not say how many stacks it does not show")
	return errs


def check_sites_folded(work, rep):
	"""The folded lines add up to the total, the stacks left out one line of their own."""
	lines = folded_lines(work.read("report.folded"))
	lo = rep["left_out"]
	marker = "[%d smaller stacks left out: --all-stacks writes them]" % lo["stacks"]
	errs = []
	if sum(n for _, n in lines) != rep["totals"]["outstanding_bytes"]:
		errs.append("folded lines hold %d bytes, the report %d" % (
			sum(n for _, n in lines), rep["totals"]["outstanding_bytes"]))
	if ([marker], lo["bytes"]) not in lines:
		errs.append("no folded line %r %d" % (marker, lo["bytes"]))
	return errs


def check_narrow_merged(work):
	"""site_tiny's deeper paths are narrower than 0.1 px: merged, and said so."""
	_, frames = svg_frames(work.path("leaks.svg"))
	text = work.read("leaks.svg")
	errs = []
	if not any(NARROW.match(f["name"]) for f in frames):
		errs.append("the flame graph merged no narrow frames")
	if not re.search(r">\d+ frames narrower than 0\.1 px: merged into grey boxes, or left out<",
			 text):
		errs.append("the flame graph does not say how many frames it merged")
	return errs


def check_sites_all_stacks(work, truth):
	"""--all-stacks: every stack written, nothing left out, in JSON and folded."""
	rep = load_report(work.path("report.json"))
	notes = lib.truth_notes(work)
	want = 1 + int(notes["leak_paths"]) + int(notes["tiny_stacks"])
	errs = []
	if len(rep["stacks"]) != want or rep["left_out"]["stacks"]:
		errs.append("%d stacks written, %d left out; expected %d and none" % (
			len(rep["stacks"]), rep["left_out"]["stacks"], want))
	lines = folded_lines(work.read("report.folded"))
	if len(lines) != want or any(f[0].startswith("[") for f, _ in lines):
		errs.append("%d folded lines, expected %d and no marker" % (len(lines), want))
	return errs


def long_options():
	"""The long options opts.c defines, and the output files' of report/writers.h."""
	with open(os.path.join(ROOT, "user", "cli", "opts.c")) as f:
		names = re.findall(r'^\s*\{ "([a-z-]+)", (?:required|no)_argument', f.read(), re.M)
	with open(os.path.join(ROOT, "user", "report", "writers.h")) as f:
		return names + re.findall(r'^\s*X\([A-Z_]+, "([a-z-]+)",', f.read(), re.M)


def case_help_lists_every_option(work):
	p = work.start([TRACER, "--help"], stdin=subprocess.DEVNULL, tag="tracer")
	wait_exit(p, time.monotonic() + lib.ERROR_TIMEOUT, "memleakbpf --help")
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
			   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=lib.STEP_TIMEOUT)
	if r.returncode or r.stderr.strip():
		errs.append("groff -ww: %s" % r.stderr.decode("utf-8", "replace").strip()[:300])
	return errs


REDIS = shutil.which("redis-server") or "redis-server (not on PATH)"


def redis_title(pid):
	"""redis-server's process title once it has set it over its arguments, else None."""
	try:
		with open("/proc/%d/cmdline" % pid, "rb") as f:
			raw = f.read()
	except OSError:
		return None
	if b"--port" in raw:
		return None	# its arguments still
	return raw.replace(b"\0", b" ").decode().rstrip()


def case_padded_title(work):
	"""redis-server pads its title with the rest of its arguments' room: the
	header, the JSON and the pprof name it without the padding."""
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	r = work.start([REDIS, "--port", "0", "--unixsocket", work.path("redis.sock"), "--save", ""],
		       stdin=subprocess.DEVNULL, tag="redis")
	title = wait_for(lambda: redis_title(r.pid), min(deadline, time.monotonic() + lib.STEP_TIMEOUT),
			 "redis-server's process title", alive=r)
	js, pb = work.path("report.json"), work.path("report.pb.gz")
	t = work.start([TRACER, "--json", js, "--pprof", pb, "-p", str(r.pid), "0.5", "1"],
		       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(t, deadline, "memleakbpf -p redis-server 0.5 1")
	errs = [] if rc == 0 else ["exit status %s, expected 0" % rc]
	header = [l for l in work.read("tracer.stdout").splitlines() if "Final report: pid" in l]
	if not header or "(%s)," % title not in header[0]:
		errs.append("header %r does not name (%s)" % (header[:1], title))
	command = (load_report(js).get("target") or {}).get("command")
	if command != title:
		errs.append("JSON target.command %r, expected %r" % (command, title))
	with gzip.open(pb) as f:
		raw = f.read()
	if title.encode() not in raw or (title + " ").encode() in raw:
		errs.append("the pprof does not name %r without padding" % title)
	return errs


CASES = [
	("padded_title", TRACE, [REDIS], case_padded_title),
	("pprof_c", TRACE, [PPROF],
	 output_case("{V}/v_basic", "v_basic", "v_basic.c", ["--pprof", "{W}/final.heap", "--pprof-format", "gperftools"],
		     check_pprof_file("final.heap"))),
	("pprof_alloc_space", TRACE, [PPROF],
	 output_case("{V}/v_phases auto 0", "v_phases", "v_phases.c",
		     ["--pprof", "{W}/final.heap", "--pprof-format", "gperftools"],
		     check_pprof_file("final.heap", alloc=phases_alloc))),
	("pprof_cxx", TRACE, [PPROF],
	 output_case("{V}/v_cxx", "v_cxx", "v_cxx.cc", ["--pprof", "{W}/final.heap", "--pprof-format", "gperftools"],
		     check_pprof_file("final.heap"))),
	("pprof_go", TRACE, [GO],
	 output_case("{V}/v_phases auto 0", "v_phases", "v_phases.c",
		     ["--pprof", "{W}/final.heap", "--pprof-format", "gperftools"], check_go_pprof("final.heap"))),
	("snapshot_sigusr1", TRACE, [PPROF], case_snapshot_sigusr1),
	("snapshot_interval", TRACE, [PPROF], case_snapshot_interval),
	("flamegraph_c", TRACE, [],
	 output_case("{V}/v_basic", "v_basic", "v_basic.c", ["--flamegraph", "{W}/leaks.svg"],
		     check_svg("leaks.svg"))),
	("flamegraph_cxx", TRACE, [],
	 output_case("{V}/v_cxx", "v_cxx", "v_cxx.cc", ["--flamegraph", "{W}/leaks.svg"],
		     check_svg("leaks.svg"))),
	("flamegraph_pl", TRACE, [FLAMEGRAPH_PL], case_flamegraph_pl),
	# The page in a real browser: skipped, with the reason, without Chromium.
	("html_cxx", TRACE, [CHROMIUM],
	 output_case("{V}/v_cxx", "v_cxx", "v_cxx.cc", ["--html", "{W}/report.html"],
		     check_html("report.html", ["site_new_obj", "site_new_ints"],
				["site_new_obj", "v_cxx.cc:", "main"], "site_new_obj"))),
	("html_python", TRACE, [CHROMIUM], case_html_python),
	("html_reach", TRACE, [CHROMIUM],
	 output_case("{V}/v_reach", "v_reach", "v_reach.c", ["--reach", "--html", "{W}/report.html"],
		     check_html("report.html", ["site_global", "site_node"], ["v_reach.c:"], "site_node",
				["Reachability (--reach)", "definitely lost", "still reachable",
				 "Lost (reach)"]))),
	("html_follow", TRACE, [CHROMIUM], case_html_follow),
	("html_sample", TRACE, [CHROMIUM], case_html_sample),
	("snapshot_html", TRACE, [CHROMIUM], case_snapshot_html),
	("folded_weight_allocs", TRACE, [],
	 output_case("{V}/v_basic", "v_basic", "v_basic.c",
		     ["--folded", "{W}/allocs.folded", "--folded-weight", "allocs"],
		     check_folded_allocs("allocs.folded"))),
	# One leak through 16 stacks: one site, first, with every figure exact.
	# 6 s: where a report at 0.5 s intervals takes 0.8 s (a guest whose
	# mappings are dear), 3 s left too few reports after start-up to judge.
	("sites_one_leak", TRACE, [],
	 output_case("{V}/v_sites 6000", "v_sites", "v_sites.c",
		     ["--folded", "{W}/report.folded", "--flamegraph", "{W}/leaks.svg", "0.5"],
		     check_sites_leak)),
	("sites_all_stacks", TRACE, [],
	 output_case("{V}/v_sites 500", "v_sites", "v_sites.c",
		     ["--all-stacks", "--folded", "{W}/report.folded"], check_sites_all_stacks)),
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
	("err_html_dir_missing", ERROR, [],
	 error_case(lambda: ["--html", "/nonexistent-memleakbpf-e2e/x.html", "-c", "true"])),
	("err_html_same_file", ERROR, [],
	 error_case(lambda: ["--html", "/tmp/memleakbpf-e2e-same", "--json", "/tmp/memleakbpf-e2e-same",
			     "-c", "true"])),
	("err_folded_weight", ERROR, [],
	 error_case(lambda: ["--folded", "/tmp/x.folded", "--folded-weight", "blocks", "-c", "true"])),
]
