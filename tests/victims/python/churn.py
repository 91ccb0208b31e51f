# SPDX-License-Identifier: GPL-2.0
"""Churn: large buffers and lists of small objects, all freed again."""

import sys

import pytruth

ROUNDS = 200


def step(i):
	buf = bytearray(20000 + i)  # @buffer
	rows = [{"id": j, "name": "row-%d" % j} for j in range(100)]  # @rows
	return len(buf) + len(rows)


def churn(rounds):
	total = 0
	for i in range(rounds):
		total += step(i)
	return total


def run(truth):
	churn(ROUNDS)
	truth.expect("buffer", step, 0, 0, ["churn", "run", "main", "<module>"])
	truth.expect("rows", step, 0, 0, ["churn", "run", "main", "<module>"])


if __name__ == "__main__":
	pytruth.main(__file__, run)
