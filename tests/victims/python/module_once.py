# SPDX-License-Identifier: GPL-2.0
"""A module's body, run once and freed at once, allocating as it runs.

  module_once.py [LINES]

Compiles a module of LINES lines (default 30000) in a file named
module_once_body.py, whose last line keeps a bytearray of SIZE bytes;
runs it once, as an import runs a module's body, then drops its code
object. The code object and its line table (120 and 150 KiB) lie at the
top of the heap, which glibc gives back when they are freed: nobody can
read them afterwards. The line table is longer than BPF's copy of one
(4 KiB), so that copy takes the largest record. A tracer that did not
get BPF's copy cannot name the frame. Prints "BODY GONE yes" once the
code object's memory is no longer mapped ("no": the case shows nothing).
"""

import sys

SIZE = 300000
KEEP = []


def mapped(addr):
	with open("/proc/self/maps") as f:
		for line in f:
			lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
			if lo <= addr < hi:
				return True
	return False


def main(lines):
	src = "x = 1\n" * lines + "KEEP.append(bytearray(%d))\n" % SIZE
	code = compile(src, "module_once_body.py", "exec")
	addr = id(code)
	exec(code, {"KEEP": KEEP})
	del code
	print("BODY GONE %s" % ("no" if mapped(addr) else "yes"), flush=True)


if __name__ == "__main__":
	main(int(sys.argv[1]) if len(sys.argv) > 1 else 30000)
