#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The source tree's walls (docs/HACKING.md, "Source tree"), checked on every `make test`.

- No folder of user/ includes a header of a folder that includes one of
  its own, directly or through others: dependencies point one way.
- The files directly in user/ (main.c) are the top: no folder includes
  their headers.
- Only probe/ includes libbpf and the skeleton; only symbolize/ includes
  libdwfl (elfutils' libdw); at most three .c files directly in user/; no
  source file in user/ or bpf/ over 700 lines.
- Between modules (a .c with its .h, modules.py): no circle of includes
  or of calls; each export named after its file; no stale path in a
  comment.
- docs/OPTIONS.md's table lists the options --help lists, with their
  arguments and defaults, and the guides run memleakbpf with no other
  (options.py).

Prints one line per broken wall, then "layout: N passed, N failed".
"""
import os
import re
import sys

import modules
import options

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
USER = os.path.join(ROOT, "user")
MAX_LINES = 700
MAX_TOP = 3
INCLUDE = re.compile(r'^#include ([<"])([^>"]+)[>"]', re.M)
WALLS = {"bpf/": "probe", "memleak.skel.h": "probe", "elfutils/": "symbolize"}


def sources():
	for d, _, files in os.walk(USER):
		for f in sorted(files):
			if f.endswith((".c", ".h")):
				yield os.path.join(d, f)


def folder_of(path):
	rel = os.path.relpath(path, USER)
	return rel.split(os.sep)[0] if os.sep in rel else ""


def graph():
	"""Folder -> the folders whose headers it includes; and the library walls broken."""
	edges, broken = {}, []
	for path in sources():
		src = folder_of(path)
		text = open(path).read()
		for kind, name in INCLUDE.findall(text):
			for prefix, owner in WALLS.items():
				if name.startswith(prefix) and src != owner:
					broken.append("%s includes <%s>: only %s/ may" % (
						os.path.relpath(path, ROOT), name, owner))
			if kind != '"':
				continue
			dst = name.split("/")[0] if "/" in name else None
			if dst is None and os.path.exists(os.path.join(USER, name)):
				dst = ""	# a top-level header
			if dst is not None and dst != src:
				edges.setdefault(src, set()).add(dst)
	return edges, broken


def main():
	edges, libs = graph()
	files = modules.read(USER)
	walls = {"one-way folders": [], "the top": [], "libraries": libs, "top files": [], "lines": [],
		 "one-way module includes": modules.includes(files),
		 "one-way module calls": modules.calls(files),
		 "prefixes": modules.prefixes(files),
		 "one owner of the BPF maps": modules.map_owner(files),
		 "paths in comments": modules.stale_paths(ROOT, ("user", "bpf")),
		 "option tables": options.check(ROOT)}
	for src in sorted(edges):
		if src and "" in edges[src]:
			walls["the top"].append("%s/ includes a header of the top (user/*.h)" % src)
		for dst in sorted(edges[src]):
			if dst and src and src in modules.reach(edges, dst):
				walls["one-way folders"].append(
					"%s/ and %s/ include each other's headers (a cycle)" % (src, dst))
	top = [f for f in os.listdir(USER) if f.endswith(".c")]
	if len(top) > MAX_TOP:
		walls["top files"].append("%d .c files directly in user/ (at most %d): %s" % (
			len(top), MAX_TOP, " ".join(sorted(top))))
	for base in (USER, os.path.join(ROOT, "bpf")):
		for d, _, files in os.walk(base):
			for f in files:
				p = os.path.join(d, f)
				if f.endswith((".c", ".h")) and sum(1 for _ in open(p)) > MAX_LINES:
					walls["lines"].append("%s is over %d lines" % (os.path.relpath(p, ROOT), MAX_LINES))
	failed = 0
	for wall, broken in walls.items():
		for b in broken:
			print("FAIL layout (%s): %s" % (wall, b))
		failed += bool(broken)
	print("layout: %d passed, %d failed" % (len(walls) - failed, failed))
	return 1 if failed else 0


if __name__ == "__main__":
	sys.exit(main())
