# SPDX-License-Identifier: GPL-2.0
"""Fragmented pymalloc arenas: 400,000 small tuples and strings, 90% of them
freed, so that every arena keeps a few objects alive and stays mapped.

Its truth is the interpreter's own account of its arenas, at the very end:
sys._debugmallocstats() into $VICTIM_TRUTH (else stderr), after the line
"LEFT <bytes of the objects kept>", which memleakbpf must show as the used
part of arenas that are mostly free.
"""

import os
import sys

N = 400000


def fill(n):
	return [(i, "row-%d" % i) for i in range(n)]


def main():
	rows = fill(N)
	kept = rows[::10]
	del rows
	path = os.environ.get("VICTIM_TRUTH")
	out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if path else 2
	os.write(out, b"LEFT %d\n" % sum(sys.getsizeof(t) + sys.getsizeof(t[1]) for t in kept))
	saved = os.dup(2)
	os.dup2(out, 2)
	sys._debugmallocstats()
	os.dup2(saved, 2)
	return kept


if __name__ == "__main__":
	KEEP = main()
