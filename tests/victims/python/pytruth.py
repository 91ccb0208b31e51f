# SPDX-License-Identifier: GPL-2.0
"""Ground truth of the Python victims (tests/e2e/run.py, section "Python").

A victim marks the line of each allocation site with a comment "# @NAME"
and, once it has leaked, tells what it keeps there:

    TRUTH site=NAME file=PATH line=N function=QUALNAME bytes=B allocs=A
          callers=F1,F2,... [small=S]

(one line). file, line and function are what the innermost Python frame of
the allocation must show: the code object's co_filename and co_qualname,
the marker's line. bytes and allocs count the blocks over 512 bytes that
the site still holds, exactly: they come from the interpreter itself
(sys.getsizeof), and a calibration under tracemalloc, before anything is
leaked, checks that the allocator really gets those sizes. callers are the
Python functions on the way to the site, innermost first. small: how many
blocks of at most 512 bytes the site holds at least, which only
PYTHONMALLOC=malloc makes visible. bytes=0: the site must hold nothing.

Where: the file named by $VICTIM_TRUTH, else stdout. With --wait a victim
says "READY pid=N" and waits for a line on stdin before leaking (memleakbpf
-p attaches meanwhile), then says "LEAKED" and waits for another line
before it ends. --os-exit ends it with os._exit(0), as a program that skips
the interpreter's shutdown.
"""

import os
import sys
import tracemalloc

LARGE = 512	# pymalloc serves up to this; larger blocks come from malloc


class Truth:
	def __init__(self, victim_file):
		self.lines = {}
		with open(victim_file) as f:
			for n, text in enumerate(f, 1):
				if "# @" in text:
					self.lines[text.split("# @", 1)[1].split()[0]] = n
		self.out = []

	def line(self, name):
		return self.lines[name]

	def block_sizes(self, make, name, code):
		"""Sizes of the blocks over LARGE bytes that make() allocates at the
		marker's line, as tracemalloc sees them (the calibration)."""
		tracemalloc.start(1)
		keep = make()
		snap = tracemalloc.take_snapshot()
		tracemalloc.stop()
		sizes = sorted(t.size for t in snap.traces if t.size > LARGE and
			       t.traceback[0].lineno == self.line(name) and
			       t.traceback[0].filename == code.co_filename)
		del keep
		return sizes

	def calibrate(self, make, name, code, want):
		got = self.block_sizes(make, name, code)
		if got != [want]:
			sys.stderr.write("victim: calibration of %s: tracemalloc saw %s, the interpreter "
					 "says %d\n" % (name, got, want))
			sys.exit(3)

	def expect(self, name, fn, nbytes, nallocs, callers, small=None):
		code = fn.__code__
		line = "TRUTH site=%s file=%s line=%d function=%s bytes=%d allocs=%d callers=%s" % (
			name, code.co_filename, self.line(name), getattr(code, "co_qualname", code.co_name),
			nbytes, nallocs,
			",".join(callers))
		if small is not None:
			line += " small=%d" % small
		self.out.append(line)

	def write(self):
		text = "\n".join(self.out) + "\n"
		path = os.environ.get("VICTIM_TRUTH")
		if path:
			with open(path, "w") as f:
				f.write(text)
		else:
			sys.stdout.write(text)


def bytearray_block(b):
	"""The buffer malloc gives a bytearray: its ob_alloc, header left out."""
	return sys.getsizeof(b) - sys.getsizeof(bytearray())


def main(victim_file, run):
	"""Run run(truth) as the victim: -c straight, -p with --wait."""
	wait = "--wait" in sys.argv[1:]
	truth = Truth(victim_file)
	if wait:
		print("READY pid=%d" % os.getpid(), flush=True)
		sys.stdin.readline()
	keep = run(truth)
	truth.write()
	if wait:
		print("LEAKED", flush=True)
		sys.stdin.readline()
	if "--os-exit" in sys.argv[1:]:
		sys.stdout.flush()
		os._exit(0)
	return keep
