# SPDX-License-Identifier: GPL-2.0
"""Code objects freed, and new ones made at their addresses, each allocating.

  code_reuse.py [N]

Compiles N small modules one after another, each defining gen_K in a file
named gen_K.py, whose line 2 keeps a bytearray of BASE + 64*K bytes; runs
it, then drops the module, its function and their code objects, so that
the next one's code objects can take their memory (pymalloc hands a freed
block of the same size back first). Every block must be reported at its
own gen_K, line 2: a tracer that knows a frame's code by its address,
or by its address and its line table's (which are freed and reused
together here), names most of them after an earlier gen. Prints
"REUSED R" (how many gen functions' code objects took an address an
earlier one had), which tells whether the run could show that mistake.
"""

import sys

BASE = 20000
KEEP = []


def one(k):
	src = "def gen_%d(keep):\n    keep.append(bytearray(%d))\n" % (k, BASE + 64 * k)
	code = compile(src, "gen_%d.py" % k, "exec")
	ns = {}
	exec(code, ns)
	fn = ns["gen_%d" % k]
	fn(KEEP)
	ns.clear()	# fn.__globals__ is ns: a cycle the collector would take its time with
	return id(fn.__code__)


def main(n):
	seen, reused = set(), 0
	for k in range(n):
		addr = one(k)
		reused += addr in seen
		seen.add(addr)
	print("REUSED %d" % reused, flush=True)


if __name__ == "__main__":
	main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
