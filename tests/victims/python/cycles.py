# SPDX-License-Identifier: GPL-2.0
"""Objects kept alive by reference cycles while the collector is disabled
(the classic pandas/woodwork case): unreachable, never freed."""

import gc
import sys

import pytruth

PAYLOAD = 65536
PAIRS = 25


class Node:
	def __init__(self, n):
		self.payload = bytearray(n)  # @payload
		self.peer = None


def make_pair(n):
	a = Node(n)  # @node
	b = Node(n)
	a.peer, b.peer = b, a


def ingest(pairs):
	for _ in range(pairs):
		make_pair(PAYLOAD)


def run(truth):
	gc.disable()
	truth.calibrate(lambda: Node(PAYLOAD), "payload", Node.__init__.__code__,
			pytruth.bytearray_block(bytearray(PAYLOAD)))
	ingest(PAIRS)
	block = pytruth.bytearray_block(bytearray(PAYLOAD))
	truth.expect("payload", Node.__init__, 2 * PAIRS * block, 2 * PAIRS,
		     ["make_pair", "ingest", "run", "main", "<module>"])
	# The instances themselves are small: only PYTHONMALLOC=malloc shows them,
	# at a's line (b's is the next one).
	truth.expect("node", make_pair, 0, 0, ["ingest", "run", "main", "<module>"], small=PAIRS)


if __name__ == "__main__":
	pytruth.main(__file__, run)
