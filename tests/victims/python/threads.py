# SPDX-License-Identifier: GPL-2.0
"""Threads leaking at sites of their own: every thread's allocations carry
its own Python frames, whichever thread holds the GIL meanwhile."""

import threading

import pytruth

BLOCK = 40000
PER_THREAD = 30
RESULTS = {}


def fetch(name, i):
	return bytearray(BLOCK + i)  # @fetch


def parse(name, i):
	return bytearray(2 * BLOCK + i)  # @parse


def worker(name, step):
	kept = RESULTS.setdefault(name, [])
	for i in range(PER_THREAD):
		kept.append(step(name, i))


def run(truth):
	truth.calibrate(lambda: fetch("calibration", 0), "fetch", fetch.__code__,
			pytruth.bytearray_block(bytearray(BLOCK)))
	threads = [threading.Thread(target=worker, args=("t%d" % n, fetch if n % 2 else parse))
		   for n in range(4)]
	for t in threads:
		t.start()
	for t in threads:
		t.join()
	for name, fn in (("fetch", fetch), ("parse", parse)):
		blocks = [b for t, v in RESULTS.items() for b in v
			  if (int(t[1:]) % 2 == 1) == (fn is fetch)]
		truth.expect(name, fn, sum(pytruth.bytearray_block(b) for b in blocks), len(blocks),
			     ["worker", "Thread.run", "Thread._bootstrap_inner", "Thread._bootstrap"])


if __name__ == "__main__":
	pytruth.main(__file__, run)
