#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A speech lexicon's shape (Kaldi's L.fst), for OpenFST's fstminimize.

Usage: tests/bench/lexicon.py BASE WORDS

WORDS random words (seed 1), each its own path from the start state with its
id on the first arc: BASE.txt, compiled to BASE.fst and determinized to
BASE.det.fst (fstcompile, fstdeterminize: Debian's libfst-tools). The same
input every time; make bench's openfst and e2e sites_stripped_cxx read it.
"""

import random
import subprocess
import sys


def write(base, words):
	rnd, seen = random.Random(1), set()
	while len(seen) < words:
		seen.add("".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(3, 10))))
	lines, state = [], 1
	for i, w in enumerate(sorted(seen)):
		prev = 0
		for k, ch in enumerate(w):
			lines.append("%d %d %d %d" % (prev, state, ord(ch) - 96, i + 1 if k == 0 else 0))
			prev, state = state, state + 1
		lines.append("%d" % prev)
	with open(base + ".txt", "w") as f:
		f.write("\n".join(lines) + "\n")
	subprocess.run(["fstcompile", base + ".txt", base + ".fst"], check=True, stdin=subprocess.DEVNULL)
	subprocess.run(["fstdeterminize", base + ".fst", base + ".det.fst"], check=True,
		       stdin=subprocess.DEVNULL)


if __name__ == "__main__":
	if len(sys.argv) != 3:
		sys.exit(__doc__.strip().splitlines()[2])
	write(sys.argv[1], int(sys.argv[2]))
