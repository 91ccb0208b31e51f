# SPDX-License-Identifier: GPL-2.0
"""A small CPU training job with PyTorch, as users write them.

  torch_train.py [--steps N] [--leak] [--sleep S]

An MLP learns a noisy linear map by SGD. With --leak the running loss is
summed as a tensor (`total_loss += loss`), the classic PyTorch leak: every
step's autograd graph stays reachable from it, so memory grows by a few KiB
a step, allocated under the forward pass's lines. Without it the loss is
taken as a float (`loss.item()`) and the job runs in constant memory after
its start-up (import, model, first steps). --sleep waits before and after
the loop, so that a tracer can attach (-p) and see it finish.
"""

import argparse
import sys
import time

import torch


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
	return float(total_loss)


def main():
	ap = argparse.ArgumentParser()
	ap.add_argument("--steps", type=int, default=1000)
	ap.add_argument("--leak", action="store_true")
	ap.add_argument("--sleep", type=float, default=0.0)
	args = ap.parse_args()
	time.sleep(args.sleep)
	t = time.monotonic()
	total = train(args.steps, args.leak)
	print("torch_train: %d steps in %.2f s, mean loss %.4f" %
	      (args.steps, time.monotonic() - t, total / max(args.steps, 1)), flush=True)
	time.sleep(args.sleep)
	return 0


if __name__ == "__main__":
	sys.exit(main())
