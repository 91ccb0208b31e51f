# SPDX-License-Identifier: GPL-2.0
"""A leak made through a package and the standard library, at the script's lines.

The package "leakylib" is installed by the test under a site-packages path
($LEAKY_SITE, e.g. WORK/env/lib/python3.11/site-packages): its import
allocates a table, and its make_batch() the buffers this script keeps. The
script also keeps what json.dumps returns, made in json/encoder.py. The
innermost Python frame of every leaked block is the package's or the
standard library's; the line a user fixes is this script's:

 - @import: `import leakylib`, the table its import allocates (start-up),
   one stack of that site exactly: compiling the package (no bytecode
   cached) leaves its code objects at the same line;
 - @call: the buffers make_batch returns, kept by train();
 - @stdlib: the JSON texts kept by train().

Each TRUTH line names the script's line (file, line, function) that the
report must site the blocks at; bytes and allocs count the blocks over 512
bytes, from the interpreter's own sizes.
"""

import json
import os
import sys

import pytruth

sys.path.insert(0, os.environ["LEAKY_SITE"])

import leakylib  # @import

ROUNDS = 30
BATCH = 100000
KEEP = []
TEXTS = []


def train(rounds):
	for i in range(rounds):
		KEEP.append(leakylib.make_batch(BATCH + i))  # @call
		TEXTS.append(json.dumps(["x" * 1000] * (20 + i)))  # @stdlib


def run(truth):
	train(ROUNDS)
	truth.expect("call", train, sum(pytruth.bytearray_block(b) for b in KEEP), len(KEEP),
		     ["run", "main", "<module>"])
	truth.expect("stdlib", train, sum(sys.getsizeof(t) for t in TEXTS), len(TEXTS),
		     ["run", "main", "<module>"])
	truth.out.append("TRUTH site=import file=%s line=%d function=<module> bytes=%d allocs=1 "
			 "callers=" % (__file__, truth.line("import"),
				       pytruth.bytearray_block(leakylib.TABLE)))
	return KEEP, TEXTS


if __name__ == "__main__":
	pytruth.main(__file__, run)
