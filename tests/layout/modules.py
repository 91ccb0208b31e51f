# SPDX-License-Identifier: GPL-2.0
"""Walls between modules, for check.py.

A module is a .c file with its .h (and its X_internal.h, the folder's
private half of X.h); a header without a .c is a module of its own.

- No module includes, directly or through others, a header of a module
  that includes its own.
- No module calls, directly or through others, a function of a module
  that calls its own: helpers sit below the code that uses them, a folder's
  face (probes.c, symbolize.c) above the files it drives.
- A function a .c file exports carries its file's name as its prefix
  (probes_attach.c: probes_attach__link_child), but an opaque handle's
  functions its name (HANDLES: STYLE.md's module__verb on a handle).
- A path a comment names under user/ or bpf/ exists.
- Only probe/bpfmaps (and, for -k's object, probe/kmem_maps: MAP_OWNERS)
  calls libbpf's map functions or touches a skeleton's maps, .bss or .data
  (MAP_EXCEPTIONS: where else, and why).
"""
import os
import re

# Files whose exports are named after the handle they work on, not the file.
HANDLES = {
	"symbolize/symbolize.c": ("symbolizer",),
	"util/elfsym.c": ("elf_file", "elf"),
	"util/procmaps.c": ("maps", "map_entry"),
	"util/protobuf.c": ("pb",),
	"allocator/allocator.c": ("lookup_object", "lookup_order"),
	"model/stackcache.c": ("stack_blob", "stack_ref"),
	"model/retired_fold.c": ("retired",),
}

# The one owner of each BPF object's maps and .bss/.data: memleak.bpf.c's, -k's kmem.bpf.c's.
MAP_OWNERS = ("probe/bpfmaps", "probe/kmem_maps")
# Outside it: a file -> the functions allowed (None: all of them), and why.
MAP_EXCEPTIONS = {
	# The skeleton's load path: the maps sized and their memory costed before it loads.
	"probe/probes.c": ("prealloc_stack_maps", "size_maps", "probes__maps_cost"),
}
MAP_TOUCH = re.compile(r'\bbpf_map_\w+\s*\(|\bbpf_map__\w+\s*\(|\bbpf_object__for_each_map\b|'
		       r'\bskel\s*->\s*(?:bss|data|maps)\b|->\s*(?:bss|data)\s*->')
# The function a line at the left margin starts, for MAP_EXCEPTIONS.
FUNCTION = re.compile(r'^[A-Za-z_][^\n;=]*?\b([a-z_][a-z0-9_]*)\(', re.M)
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
# A function defined at the left margin, not static: an export.
DEFINE = re.compile(r'^(?!static\b)[A-Za-z_][^\n;(=]*?\b([a-z_][a-z0-9_]*)\([^;{]*?\)\s*\{', re.M)
CALL = re.compile(r'\b([a-z_][a-z0-9_]*)\b')
PATH = re.compile(r'(?<![\w/.-])((?:user|bpf)/[\w/.-]*?\.(?:c|h))\b')


def bare(text):
	"""C text without its comments and string literals."""
	text = re.sub(r'/\*.*?\*/', lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
	text = re.sub(r'//[^\n]*', "", text)
	return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def module_of(rel):
	name = rel[:-2]
	return name[:-len("_internal")] if name.endswith("_internal") and rel.endswith(".h") else name


def read(user):
	"""user/'s sources: path under user/ -> text."""
	files = {}
	for d, _, names in os.walk(user):
		for f in names:
			if f.endswith((".c", ".h")):
				p = os.path.join(d, f)
				with open(p) as fh:
					files[os.path.relpath(p, user)] = fh.read()
	return files


def reach(graph, start):
	"""The nodes graph leads to from start (graph: node -> its successors)."""
	seen, todo = set(), [start]
	while todo:
		for n in graph.get(todo.pop(), ()):
			if n not in seen:
				seen.add(n)
				todo.append(n)
	return seen


def cycles(graph, what):
	"""One line per edge a -> b of graph whose b leads back to a."""
	broken = []
	for a in sorted(graph):
		for b in sorted(graph[a]):
			if a in reach(graph, b):
				broken.append("%s %s %s (%s), and %s back" % (
					a, what, b, ", ".join(sorted(graph[a][b])[:3]), b))
	return broken


def includes(files):
	graph = {}
	for rel, text in files.items():
		for name in INCLUDE.findall(text):
			for cand in (os.path.normpath(os.path.join(os.path.dirname(rel), name)), name):
				if cand in files and module_of(cand) != module_of(rel):
					graph.setdefault(module_of(rel), {}).setdefault(
						module_of(cand), set()).add(cand)
					break
	return cycles(graph, "includes")


def exports(files):
	"""Function name -> the module whose .c defines it."""
	return {m.group(1): module_of(rel) for rel, text in files.items() if rel.endswith(".c")
		for m in DEFINE.finditer(bare(text))}


def calls(files):
	defined, graph = exports(files), {}
	for rel, text in files.items():
		if not rel.endswith(".c"):
			continue
		for name in set(CALL.findall(bare(text))):
			dst = defined.get(name)
			if dst and dst != module_of(rel):
				graph.setdefault(module_of(rel), {}).setdefault(dst, set()).add(name)
	return cycles(graph, "calls")


def prefixes(files):
	broken = []
	for rel, text in sorted(files.items()):
		if not rel.endswith(".c"):
			continue
		own = (os.path.basename(rel)[:-2],) + HANDLES.get(rel, ())
		for m in DEFINE.finditer(bare(text)):
			name = m.group(1)
			if name == "main":
				continue
			if "__" not in name or name.split("__")[0] not in own:
				broken.append("%s defines %s: its prefix is not %s" % (rel, name, " or ".join(
					p + "__" for p in own)))
	return broken


def map_owner(files):
	"""Each touch of a BPF map or the skeleton's .bss/.data outside MAP_OWNERS."""
	broken = []
	for rel, text in sorted(files.items()):
		if module_of(rel) in MAP_OWNERS:
			continue
		body, allowed = bare(text), MAP_EXCEPTIONS.get(rel, ())
		starts = [(m.start(), m.group(1)) for m in FUNCTION.finditer(body)]
		for m in MAP_TOUCH.finditer(body):
			fn = ([name for at, name in starts if at < m.start()] or ["(top)"])[-1]
			if allowed is None or fn in allowed:
				continue
			broken.append("%s:%d (%s) touches BPF maps: %s; only %s do" % (
				rel, body.count("\n", 0, m.start()) + 1, fn, m.group(0).strip(),
				" and ".join(o + ".c" for o in MAP_OWNERS)))
	return broken


def stale_paths(root, dirs):
	broken = []
	for top in dirs:
		for d, _, names in os.walk(os.path.join(root, top)):
			for f in sorted(names):
				if not f.endswith((".c", ".h")):
					continue
				p = os.path.join(d, f)
				with open(p) as fh:
					for n, line in enumerate(fh, 1):
						for path in PATH.findall(line):
							if "#include" not in line and not os.path.exists(
									os.path.join(root, path)):
								broken.append("%s:%d names %s, which is not there" % (
									os.path.relpath(p, root), n, path))
	return broken
