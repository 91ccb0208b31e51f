// SPDX-License-Identifier: GPL-2.0
/*
 * bpf/sample.h, the integer arithmetic BPF samples and weighs blocks with:
 * against the formulas in double, and the sampler it drives simulated here
 * (the same draws, the same countdown as bpf/memleak.bpf.c) against a
 * known truth.
 */
#include <math.h>
#include <linux/types.h>
#include "memleak.h"
#include "sample.h"
#include "unit.h"

static double rel(double got, double want)
{
	return fabs(got - want) / want;
}

TEST(sample_log2_and_exp_are_close)
{
	for (__u64 v = 1; v < (1ULL << 33); v = v * 3 + 1) {
		double got = (double)sample_log2(v) / 4294967296.0;

		ASSERT(fabs(got - log2((double)v)) < 1e-8);
	}
	for (double x = 0.001; x < 60; x *= 1.37) {
		double got = (double)sample_exp_neg((__u64)(x * 4294967296.0)) / 18446744073709551616.0;

		ASSERT(fabs(got - exp(-x)) <= exp(-x) * 2e-8 + 1e-18);
	}
	return true;
}

TEST(sample_weights_are_one_over_p)
{
	static const __u64 means[] = { 64, 4096, 65536, 524288, 1ULL << 30 };

	for (size_t m = 0; m < sizeof(means) / sizeof(means[0]); m++) {
		for (__u64 s = 1; s < (1ULL << 40); s = s * 5 / 4 + 1) {
			struct sample_weight w;
			double p = -expm1(-(double)s / (double)means[m]);

			sample_bytes_weight(&w, s, means[m]);
			double var = (1 / p) * (1 / p - 1) * s * s;

			/* Bytes within 3e-6 (exp(-x) to 2^-26) or a byte; blocks truncated to 2^-16. */
			ASSERT(rel((double)w.bytes, s / p) < 3e-6 || fabs(w.bytes - s / p) < 1);
			ASSERT(fabs((double)w.blocks / MEMLEAK_WEIGHT_ONE - 1 / p) <
			       3e-6 / p + 2.0 / MEMLEAK_WEIGHT_ONE);
			/* The variance: wb - s is off by up to a byte, and its units are 2^16. */
			ASSERT(fabs((double)w.var * 65536.0 - var) < 1e-4 * var + 2 * 65536.0 + 2.0 * s);
		}
	}
	return true;
}

TEST(sample_count_weight_is_n)
{
	struct sample_weight w;

	sample_count_weight(&w, 48, 100 * MEMLEAK_WEIGHT_ONE);
	ASSERT_EQ_U64(w.bytes, 4800);
	ASSERT_EQ_U64(w.blocks, 100 * MEMLEAK_WEIGHT_ONE);
	ASSERT_EQ_U64(w.var, 4800ULL * 4752 >> MEMLEAK_VAR_SHIFT);
	return true;
}

/*
 * The countdown of bpf/memleak.bpf.c (sample_decide), simulated: a run of
 * allocations of one size, its estimate of their bytes, and the variance
 * the sampled blocks say it has.
 */
struct sim {
	__u64 rng, left, mean;
	double est, var;
	__u64 samples;
};

static void sim_alloc(struct sim *s, __u64 size)
{
	__u64 need = size << MEMLEAK_SAMPLE_FRAC;
	struct sample_weight w;

	if (need < s->left) {
		s->left -= need;
		return;
	}
	s->left = sample_exp_draw(s->mean, sample_xorshift(&s->rng));
	sample_bytes_weight(&w, size, s->mean);
	s->est += (double)w.bytes;
	s->var += (double)w.var * (1 << MEMLEAK_VAR_SHIFT);
	s->samples++;
}

/*
 * Many independent runs of 20,000 48-byte blocks (the truth 960,000 bytes)
 * at a mean of 64 KiB: the mean of their estimates within 4 standard
 * errors of the truth, and the variance they print close to their spread.
 */
TEST(sample_countdown_is_unbiased)
{
	const int runs = 400, n = 20000;
	const __u64 size = 48, mean = 65536;
	double truth = (double)n * size, sum = 0, sum2 = 0, var = 0;

	for (int r = 0; r < runs; r++) {
		struct sim s = { .rng = sample_seed_of(12345, r), .mean = mean };

		s.left = sample_exp_draw(mean, sample_xorshift(&s.rng));
		for (int i = 0; i < n; i++)
			sim_alloc(&s, size);
		sum += s.est;
		sum2 += s.est * s.est;
		var += s.var;
	}
	double avg = sum / runs, spread = sum2 / runs - avg * avg;

	ASSERT(fabs(avg - truth) < 4 * sqrt(spread / runs));
	/* The variance estimate against the spread seen: within a quarter. */
	ASSERT(rel(var / runs, spread) < 0.25);
	return true;
}

/* Blocks far above the mean are always taken, at their own size. */
TEST(sample_big_blocks_are_exact)
{
	struct sim s = { .rng = 7, .mean = 524288 };
	struct sample_weight w;

	s.left = sample_exp_draw(s.mean, sample_xorshift(&s.rng));
	for (int i = 0; i < 100; i++)
		sim_alloc(&s, 64ULL << 20);
	ASSERT_EQ_U64(s.samples, 100);
	sample_bytes_weight(&w, 64ULL << 20, s.mean);
	ASSERT_EQ_U64(w.bytes, 64ULL << 20);
	ASSERT_EQ_U64(w.var, 0);
	return true;
}
