/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arithmetic of --sample and -s, shared by the BPF programs and user
 * space: BPF draws and weighs a block with it at its allocation, and takes
 * back exactly the same figures at its free by computing them again from
 * its size; user space (a followed image's exec, the unit tests) gets the
 * same integers. Integers only, no helper calls: BPF has no floating point
 * and no 128-bit multiply. Included after memleak.h.
 *
 * Byte sampling (--sample B): each thread counts down the bytes to its next
 * sample point, drawn from an exponential distribution of mean B, as
 * tcmalloc and Go do. The points form a Poisson process over the bytes a
 * thread allocates, so a block of s bytes holds one with probability
 * p = 1 - exp(-s/B), whatever came before (the process is memoryless: after
 * a sampled block the distance to the next point is drawn afresh). Its
 * weight is 1/p: it stands for 1/p blocks and s/p bytes (Horvitz-Thompson),
 * an unbiased estimate. For s << B that is B + s/2 bytes; for s >> B, s.
 *
 * Counting (-s N, bcc's): each allocation with probability T/2^32, T about
 * 2^32/N, weight 2^32/T.
 *
 * Weighted block counts are kept in units of 1/MEMLEAK_WEIGHT_ONE; each
 * sampled block also adds w(w-1)s^2 (in units of 2^MEMLEAK_VAR_SHIFT
 * bytes^2): summed over the sampled blocks still live, the unbiased
 * estimate of the variance of their estimated bytes.
 */
#ifndef MEMLEAK_SAMPLE_H
#define MEMLEAK_SAMPLE_H

enum memleak_sample_mode {
	SAMPLE_NONE,		/* exact: every block traced */
	SAMPLE_BYTES,		/* --sample B: Poisson by bytes, mean B */
	SAMPLE_COUNT,		/* -s N: each allocation with probability 1/N */
};

#define MEMLEAK_WEIGHT_SHIFT 16
#define MEMLEAK_WEIGHT_ONE (1ULL << MEMLEAK_WEIGHT_SHIFT)
#define MEMLEAK_VAR_SHIFT 16
#define MEMLEAK_SAMPLE_MAX_MEAN (1ULL << 30)	/* --sample at most 1 GiB */
#define MEMLEAK_SAMPLE_MAX_N (1ULL << 20)	/* -s at most 1048576 */
/* Countdowns are kept in 1/65536 bytes: the exponential's draws are not rounded to bytes. */
#define MEMLEAK_SAMPLE_FRAC 16

/* What one sampled block adds to its site (and takes back when freed). */
struct sample_weight {
	__u64 bytes;		/* s/p, rounded down */
	__u64 blocks;		/* 1/p in units of 1/MEMLEAK_WEIGHT_ONE */
	__u64 var;		/* w(w-1)s^2 in units of 2^MEMLEAK_VAR_SHIFT bytes^2 */
};

/* (a * b) >> sh for 0 < sh < 64, from the 128-bit product (sh 0: a * b). */
static __always_inline __u64 sample_mulshr(__u64 a, __u64 b, unsigned sh)
{
	__u64 al = a & 0xffffffffULL, ah = a >> 32, bl = b & 0xffffffffULL, bh = b >> 32;
	__u64 ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	__u64 mid = (ll >> 32) + (lh & 0xffffffffULL) + (hl & 0xffffffffULL);
	__u64 lo = (mid << 32) | (ll & 0xffffffffULL);
	__u64 hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);

	if (!sh)
		return lo;
	return (hi << (64 - sh)) | (lo >> sh);
}

/* xorshift64*: a thread's draws under MEMLEAK_SAMPLE_SEED, reproducible. */
static __always_inline __u32 sample_xorshift(__u64 *state)
{
	__u64 x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return (__u32)((x * 0x2545f4914f6cdd1dULL) >> 32);
}

/* A thread's first state: never 0, which xorshift would keep. */
static __always_inline __u64 sample_seed_of(__u64 seed, __u64 thread)
{
	__u64 h = (seed ^ (thread * 0x9e3779b97f4a7c15ULL)) + 0x632be59bd9b4e019ULL;

	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h ?: 1;
}

/*
 * log2(v) for 1 <= v < 2^33, in units of 2^-32: the integer part by halving,
 * the fraction bit by bit by squaring (branch-free, so that the verifier
 * sees one path), truncated: within 2^-31 of the truth.
 */
static __always_inline __u64 sample_log2(__u64 v)
{
	__u64 k = 0, m, frac = 0, bit;

	for (int step = 32; step; step >>= 1) {
		bit = (v >> (k + step)) ? step : 0;
		k += bit;
	}
	/* v / 2^k in [1, 2) as a fraction of 2^31. */
	m = k > 31 ? v >> (k - 31) : v << (31 - k);
	for (int i = 1; i <= 32; i++) {
		m = (m * m) >> 31;	/* m < 2^32: no overflow */
		bit = m >> 32;		/* the square reached 2 */
		m >>= bit;
		frac |= bit << (32 - i);
	}
	return (k << 32) | frac;
}

#define SAMPLE_LN2_Q32 2977044472ULL		/* ln 2 * 2^32 */
#define SAMPLE_LOG2E_Q32 6196328019ULL	/* log2 e * 2^32 */

/*
 * An exponential draw of mean `mean` bytes, in units of 2^-MEMLEAK_SAMPLE_FRAC
 * bytes, from a uniform u: -mean * ln((u + 1) / 2^32), at most 22.2 means.
 */
static __always_inline __u64 sample_exp_draw(__u64 mean, __u32 u)
{
	__u64 neg_log2 = (32ULL << 32) - sample_log2((__u64)u + 1);	/* -log2 U, Q32 */
	__u64 neg_ln = sample_mulshr(neg_log2, SAMPLE_LN2_Q32, 32);	/* -ln U, Q32 */

	return sample_mulshr(mean << MEMLEAK_SAMPLE_FRAC, neg_ln, 32);
}

/* 2^-(2^-i) in units of 2^-32, i = 1..32: the factors of sample_exp2_neg. */
static const __u64 sample_exp2_factors[32] = {
	3037000500ULL, 3611622603ULL, 3938502376ULL, 4112874773ULL, 4202935003ULL,
	4248701965ULL, 4271771996ULL, 4283353945ULL, 4289156690ULL, 4292061010ULL,
	4293513907ULL, 4294240540ULL, 4294603903ULL, 4294785595ULL, 4294876445ULL,
	4294921870ULL, 4294944583ULL, 4294955939ULL, 4294961618ULL, 4294964457ULL,
	4294965876ULL, 4294966586ULL, 4294966941ULL, 4294967119ULL, 4294967207ULL,
	4294967252ULL, 4294967274ULL, 4294967285ULL, 4294967290ULL, 4294967293ULL,
	4294967295ULL, 4294967295ULL,
};

/*
 * exp(-x) for x in units of 2^-32, 0 < x < 64: in units of 2^-64 (to keep its
 * precision when small), within 2^-26 relative.
 */
static __always_inline __u64 sample_exp_neg(__u64 x)
{
	__u64 y = sample_mulshr(x, SAMPLE_LOG2E_Q32, 32);	/* x log2 e */
	__u64 r = 1ULL << 32, k = y >> 32, bit, f;

	for (int i = 1; i <= 32; i++) {
		bit = (y >> (32 - i)) & 1;
		f = sample_exp2_factors[(i - 1) & 31];
		/* r * 2^-(2^-i) when the bit is set, else r: branch-free. */
		r = sample_mulshr(r, (1ULL << 32) - bit * ((1ULL << 32) - f), 32);
	}
	/* r is 2^-frac(y) in units of 2^-32, below 1 when y is not whole. */
	if (k >= 96)
		return 0;
	if (k > 32)
		return r >> (k - 32);
	return r >= (1ULL << 32) ? ~0ULL : r << (32 - k);
}

static __always_inline void sample_weight_var(struct sample_weight *w, __u64 size)
{
	/* wb (wb - s) >> shift, from the 128-bit product: w(w-1)s^2 with wb = ws. */
	w->var = sample_mulshr(w->bytes, w->bytes - size, MEMLEAK_VAR_SHIFT);
}

/*
 * The weight of a block of size bytes sampled by bytes with mean `mean`:
 * p = 1 - exp(-x), x = size/mean. Small x by the series of 1/p,
 * 1/x + 1/2 + x/12 (the next term, x^3/720, is below 2^-26 of it there);
 * larger x by exp(-x) in fixed point; above x = 44, p is 1 to 2^-63.
 */
static __always_inline void sample_bytes_weight(struct sample_weight *w, __u64 size, __u64 mean)
{
	__u64 x, e, d, u;

	if (!size)
		size = 1;	/* never sampled by bytes; a division by 0 in user space */
	if (size < mean >> 6) {
		/* s/p = mean + s/2 + s^2/(12 mean); 1/p = mean/s + 1/2 + s/(12 mean). */
		w->bytes = mean + (6 * mean * size + size * size + 6 * mean) / (12 * mean);
		w->blocks = (mean << MEMLEAK_WEIGHT_SHIFT) / size + MEMLEAK_WEIGHT_ONE / 2 +
			    (size << MEMLEAK_WEIGHT_SHIFT) / (12 * mean);
	} else if (size / mean >= 44) {
		w->bytes = size;
		w->blocks = MEMLEAK_WEIGHT_ONE;
	} else {
		x = ((size / mean) << 32) + ((size % mean) << 32) / mean;
		e = sample_exp_neg(x);	/* below 0.985 here */
		d = (1ULL << 32) - (e >> 32);	/* p, in units of 2^-32 */
		/* u = e / p = 1/p - 1, in units of 2^-48 (below 2^54 here): tiny u kept too. */
		u = (e / d) << 16 | ((e % d) << 16) / d;
		w->bytes = size + sample_mulshr(size, u, 48);
		w->blocks = MEMLEAK_WEIGHT_ONE + (u >> (48 - MEMLEAK_WEIGHT_SHIFT));
	}
	sample_weight_var(w, size);
}

/* -s N: every block weighs the same, per_block (2^48 / T) units. */
static __always_inline void sample_count_weight(struct sample_weight *w, __u64 size,
						__u64 per_block)
{
	w->bytes = sample_mulshr(size, per_block, MEMLEAK_WEIGHT_SHIFT);
	w->blocks = per_block;
	sample_weight_var(w, size);
}

#endif
