# SPDX-License-Identifier: GPL-2.0
"""A leak of small objects beside a churn of them, under pymalloc.

Every tick, keep() keeps 200 small tuples and strings (about 24 KiB: a
1 MiB arena filled every 0.4 s) and churn() makes and drops a list of 3,000
small tuples. pymalloc serves both from its arenas, and a new arena is
charged to whichever line needed it: often the churn's, whose objects are
all freed by the next tick, while the leak's fill it. The report's verdict
must say that the arenas' lines are not the leak's (--python-malloc
malloc puts each object at its own line).
  arena_leak.py [SECONDS]   runs SECONDS (default 3), then exits 0.
"""

import sys
import time

kept = []


def keep(i):
	kept.extend((n, "key-%d" % n) for n in range(i * 200, i * 200 + 200))


def churn():
	rows = [(j, j * 2) for j in range(3000)]
	return len(rows)


def main(seconds):
	end, i = time.monotonic() + seconds, 0
	while time.monotonic() < end:
		keep(i)
		churn()
		i += 1
		time.sleep(0.01)
	print("kept %d objects" % len(kept))


if __name__ == "__main__":
	main(float(sys.argv[1]) if len(sys.argv) > 1 else 3)
