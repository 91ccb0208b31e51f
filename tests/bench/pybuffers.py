# SPDX-License-Identifier: GPL-2.0
"""Python workload of `make bench` (Python's allocator): a working set of
large buffers, as a data loader keeps, replaced one by one: most bytes in
blocks over 512 bytes, which pymalloc leaves to malloc. argv[1]: steps."""

import sys


def run(steps):
	window = [bytearray(1024) for _ in range(256)]
	total = 0
	for i in range(steps):
		size = 1024 + (i * 7919) % 65536
		window[i % len(window)] = bytearray(size)
		total += len(bytes(window[(i * 31) % len(window)][:64]))
	return total


if __name__ == "__main__":
	print(run(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
