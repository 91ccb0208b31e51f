# SPDX-License-Identifier: GPL-2.0
"""A dict cache that grows with every new request and is never trimmed."""

import sys

import pytruth

PAGE = 3000
REQUESTS = 120
CACHE = {}


def render(req):
	return b"x" * (PAGE + req % 7)  # @page


def handle(req):
	key = "page-%d" % req
	if key not in CACHE:
		CACHE[key] = render(req)  # @store
	return CACHE[key]


def serve(requests):
	for req in range(requests):
		handle(req)
		handle(req // 2)	# a hit: nothing new


def run(truth):
	truth.calibrate(lambda: render(0), "page", render.__code__, sys.getsizeof(b"x" * PAGE))
	serve(REQUESTS)
	truth.expect("page", render, sum(sys.getsizeof(v) for v in CACHE.values()), len(CACHE),
		     ["handle", "serve", "run", "main", "<module>"])


if __name__ == "__main__":
	pytruth.main(__file__, run)
