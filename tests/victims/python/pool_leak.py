# SPDX-License-Identifier: GPL-2.0
"""A multiprocessing pool (the fork start method) whose workers leak.

Each task keeps one bytearray of 100,000 + i bytes in its worker, at the
line marked @leak; the parent keeps nothing. The truth, one line per worker
that ran tasks:

    WORKER pid=N function=work line=L bytes=B allocs=A

bytes: the malloc blocks of its bytearrays (sys.getsizeof, header left
out), exactly. Written to $VICTIM_TRUTH (else stdout).
"""

import multiprocessing
import os

import pytruth

TASKS = 12
KEEP = []


def work(i):
	b = bytearray(100000 + i)  # @leak
	KEEP.append(b)
	return os.getpid(), pytruth.bytearray_block(b)


def main():
	truth = pytruth.Truth(__file__)
	workers = {}
	with multiprocessing.get_context("fork").Pool(2) as pool:
		for pid, size in pool.imap_unordered(work, range(TASKS)):
			w = workers.setdefault(pid, [0, 0])
			w[0] += size
			w[1] += 1
		pool.close()
		pool.join()
	truth.out = ["WORKER pid=%d function=work line=%d bytes=%d allocs=%d" % (
		pid, truth.line("leak"), b, a) for pid, (b, a) in sorted(workers.items())]
	truth.write()


if __name__ == "__main__":
	main()
