# SPDX-License-Identifier: GPL-2.0
"""Allocations under a deep Python stack (docs/PERFORMANCE.md, "Python
frames at a code object's cost").

  pydeep.py DEPTH ROUNDS

ROUNDS times, DEPTH nested calls, then 1,000 small dicts and lists at the
bottom: with PYTHONMALLOC=malloc, three mallocs each, all from DEPTH + 3
Python frames whose code objects stay the same.
"""

import sys


def leaf(n):
	out = []
	for i in range(n):
		out.append({"a": i, "b": [i, i]})
	return out


def nest(depth, n):
	if depth == 0:
		return leaf(n)
	return nest(depth - 1, n)


def main(depth, rounds):
	for _ in range(rounds):
		nest(depth, 1000)


if __name__ == "__main__":
	main(int(sys.argv[1]), int(sys.argv[2]))
