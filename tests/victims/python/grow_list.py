# SPDX-License-Identifier: GPL-2.0
"""A list that grows by one large bytearray per iteration (a leak)."""

import sys

import pytruth

BATCH = 100000
ROUNDS = 40
KEEP = []


def load_batch(i):
	return bytearray(BATCH + i)  # @batch


def train(rounds):
	for i in range(rounds):
		KEEP.append(load_batch(i))  # @call


def run(truth):
	truth.calibrate(lambda: load_batch(0), "batch", load_batch.__code__,
			pytruth.bytearray_block(bytearray(BATCH)))
	train(ROUNDS)
	truth.expect("batch", load_batch, sum(pytruth.bytearray_block(b) for b in KEEP),
		     len(KEEP), ["train", "run", "main", "<module>"])


if __name__ == "__main__":
	pytruth.main(__file__, run)
