# SPDX-License-Identifier: GPL-2.0
"""One Python stack over many native ones (tests/e2e/cases_python.py,
py_pair_natives_c).

  nested_natives.py [DEPTH] [LOADS]

json.loads (the C scanner) of arrays nested DEPTH deep, each level holding
a string of TEXT characters (over pymalloc's 512 bytes: a malloc each): the
scanner recurses in C, so each level's string is allocated under a native
stack of its own, while the Python stack (json's raw_decode, decode, loads,
this file's line) is the same for all. LOADS such documents are kept.
Prints "NESTED depth=D loads=L text=T" when done.
"""

import json
import sys

TEXT = 3333
KEPT = []


def document(depth, k):
	"""'["s", ["s", [...]]]', nested depth deep; each string unique."""
	out = ""
	for d in range(depth, 0, -1):
		s = "%0*d" % (TEXT, k * 1000 + d)
		out = '["%s"%s]' % (s, ", " + out if out else "")
	return out


def main(depth, loads):
	for k in range(loads):
		KEPT.append(json.loads(document(depth, k)))  # @parse
	print("NESTED depth=%d loads=%d text=%d" % (depth, loads, TEXT))


if __name__ == "__main__":
	main(int(sys.argv[1]) if len(sys.argv) > 1 else 40, int(sys.argv[2]) if len(sys.argv) > 2 else 3)
