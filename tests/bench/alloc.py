# SPDX-License-Identifier: GPL-2.0
"""Python workload of `make bench`, run with PYTHONMALLOC=malloc so that every
object goes through malloc/free: builds and drops dicts, lists, strings and
tuples, deterministically (no hashing of str with a random seed matters:
PYTHONHASHSEED is set by the harness). argv[1]: rounds."""

import sys


def churn(rounds):
	total = 0
	for r in range(rounds):
		rows = []
		for i in range(200):
			d = {"id": i, "name": "item-%d-%d" % (r, i), "tags": [str(i), str(r)]}
			rows.append(d)
		index = {row["name"]: row for row in rows}
		total += sum(len(row["tags"]) for row in index.values())
		words = " ".join(row["name"] for row in rows).split()
		total += len(set(words))
	return total


if __name__ == "__main__":
	print(churn(int(sys.argv[1]) if len(sys.argv) > 1 else 100))
