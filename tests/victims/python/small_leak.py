# SPDX-License-Identifier: GPL-2.0
"""A leak of small objects under pymalloc: one line keeps an object of 48
bytes each round, another makes one and drops it. The objects are of a
class with __slots__, so no free list hands one line's object to the other
(tuples, lists and dicts are recycled that way), and their fields are
small ints (cached): one allocation each, of sys.getsizeof() bytes.

An argument, if any, is the number of rounds (default 20,000).

Truth, to $VICTIM_TRUTH (else stdout) through pytruth, once it has leaked:

    OBJECTS leak_line=A churn_line=C allocs=N bytes=B file=PATH function=F
"""

import sys

import pytruth

ROUNDS = 20000
KEPT = []


class Item:
	__slots__ = ("a", "b")

	def __init__(self, a, b):
		self.a, self.b = a, b


class Scratch:
	__slots__ = ("a",)

	def __init__(self, a):
		self.a = a


def work(rounds):
	for i in range(rounds):
		x = Item(i & 127, i & 63)  # @leak
		s = Scratch(i & 255)  # @churn
		KEPT.append(x)
		del s


def main():
	rounds = int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS
	work(rounds)
	truth = pytruth.Truth(__file__)
	truth.out.append("OBJECTS leak_line=%d churn_line=%d allocs=%d bytes=%d file=%s function=work" % (
		truth.line("leak"), truth.line("churn"), rounds, rounds * sys.getsizeof(KEPT[0]),
		work.__code__.co_filename))
	truth.write()


if __name__ == "__main__":
	main()
