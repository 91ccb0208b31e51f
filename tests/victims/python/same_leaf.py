# SPDX-License-Identifier: GPL-2.0
"""Two callers of one leaf, in turn (tests/e2e/cases_python.py, py_same_leaf_c).

  same_leaf.py [ROUNDS]

via_a and via_b have frames of one size, called from one line of main:
each call of leaf() runs in a frame at the same address, at the same
instruction, under a caller's frame at the same address. Only the caller's
head (its code object, its instruction) tells an allocation of one from
the other's, which a walk that stopped at the first frame head it had
seen before would miss. via_a keeps blocks of SIZE_A bytes, via_b of SIZE_B;
prints "SAME_LEAF rounds=N" when done.
"""

import sys

SIZE_A, SIZE_B = 3000, 5000
KEPT = []


def leaf(n):
	return bytearray(n)  # @leaf


def via_a():
	KEPT.append(leaf(SIZE_A))


def via_b():
	KEPT.append(leaf(SIZE_B))


def main(rounds):
	for i in range(2 * rounds):
		(via_b if i & 1 else via_a)()
	print("SAME_LEAF rounds=%d" % rounds)


if __name__ == "__main__":
	main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
