# SPDX-License-Identifier: GPL-2.0
"""A small CPU training job with PyTorch, as users write them.

  torch_train.py [--steps N] [--leak] [--sleep S] [--wait] [--os-exit]

An MLP learns a noisy linear map by SGD. With --leak the running loss is
summed as a tensor (`total_loss += loss`), the classic PyTorch leak: every
step's autograd graph stays reachable from it, so memory grows by a few KiB
a step, allocated under the forward pass's lines. Without it the loss is
taken as a float (`loss.item()`) and the job runs in constant memory after
its start-up (import, model, first steps). --sleep waits before and after
the loop, so that a tracer can attach (-p) and see it finish. --wait says
"READY pid=N" once torch is imported and waits for a line on stdin before
the loop (memleakbpf -p attaches meanwhile). --os-exit ends the job with
os._exit(0) right after the loop, as a job killed while it leaks: the
running loss, and with --leak every step's graph, are still held then
(returning from main would free them). It says "torch_train: training N
steps" as the loop begins.
"""

import argparse
import os
import sys
import time

import torch  # @import


def make_data(n, d_in, d_out):
	g = torch.Generator().manual_seed(1)
	w = torch.randn(d_in, d_out, generator=g)
	x = torch.randn(n, d_in, generator=g)
	y = x @ w + 0.1 * torch.randn(n, d_out, generator=g)
	return x, y


def make_model(d_in, d_out):
	torch.manual_seed(0)
	return torch.nn.Sequential(
		torch.nn.Linear(d_in, 64), torch.nn.ReLU(), torch.nn.Linear(64, d_out))


def step(model, opt, xb, yb):
	opt.zero_grad()
	out = model(xb)  # @forward
	loss = torch.nn.functional.mse_loss(out, yb)  # @loss
	loss.backward()
	opt.step()
	return loss


def train(steps, leak):
	torch.set_num_threads(1)
	x, y = make_data(512, 32, 4)
	model = make_model(32, 4)
	opt = torch.optim.SGD(model.parameters(), lr=0.01)
	total_loss = 0
	for i in range(steps):
		lo = (i * 32) % 512
		loss = step(model, opt, x[lo:lo + 32], y[lo:lo + 32])
		if leak:
			total_loss += loss  # @leak: keeps every step's graph
		else:
			total_loss += loss.item()
	return total_loss


def main():
	ap = argparse.ArgumentParser()
	ap.add_argument("--steps", type=int, default=1000)
	ap.add_argument("--leak", action="store_true")
	ap.add_argument("--sleep", type=float, default=0.0)
	ap.add_argument("--wait", action="store_true")
	ap.add_argument("--os-exit", action="store_true")
	args = ap.parse_args()
	if args.wait:
		print("READY pid=%d" % os.getpid(), flush=True)
		sys.stdin.readline()
	time.sleep(args.sleep)
	print("torch_train: training %d steps" % args.steps, flush=True)
	t = time.monotonic()
	total = train(args.steps, args.leak)
	print("torch_train: %d steps in %.2f s, mean loss %.4f" %
	      (args.steps, time.monotonic() - t, float(total) / max(args.steps, 1)), flush=True)
	if args.os_exit:
		os._exit(0)
	time.sleep(args.sleep)
	return 0


if __name__ == "__main__":
	sys.exit(main())
