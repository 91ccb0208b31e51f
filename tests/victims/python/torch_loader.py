# SPDX-License-Identifier: GPL-2.0
"""A PyTorch DataLoader whose workers leak (num_workers=2, fork).

Each __getitem__ keeps a bytearray of 200,000 + i bytes in the worker that
runs it, at the line marked @leak, and returns the worker's pid and the
block's size with the sample; the parent keeps nothing of it. The truth,
one line per worker:

    WORKER pid=N function=DS.__getitem__ line=L bytes=B allocs=A

Written to $VICTIM_TRUTH (else stdout).
"""

import os
import sys

import torch
from torch.utils.data import DataLoader, Dataset

import pytruth

ITEMS = 16
KEEP = []


class DS(Dataset):
	def __len__(self):
		return ITEMS

	def __getitem__(self, i):
		b = bytearray(200000 + i)  # @leak
		KEEP.append(b)
		return torch.tensor([os.getpid(), pytruth.bytearray_block(b)])


def main():
	truth = pytruth.Truth(__file__)
	workers = {}
	for batch in DataLoader(DS(), batch_size=4, num_workers=2):
		for pid, size in batch.tolist():
			w = workers.setdefault(pid, [0, 0])
			w[0] += size
			w[1] += 1
	truth.out = ["WORKER pid=%d function=DS.__getitem__ line=%d bytes=%d allocs=%d" % (
		pid, truth.line("leak"), b, a) for pid, (b, a) in sorted(workers.items())]
	truth.write()
	sys.stdout.flush()
	os._exit(0)


if __name__ == "__main__":
	main()
