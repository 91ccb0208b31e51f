// SPDX-License-Identifier: GPL-2.0
/*
 * v_clones_cxx: C++ functions that g++ -O2 clones (v_clones.c's C++ kin):
 * ns::fill's constant argument folded in (_ZN2nsL4fillEmi.constprop.0) and
 * ns::grab's one field passed alone (.isra). The tracer must name each by
 * its demangled source name, "ns::fill(unsigned long, int)", never with
 * "[clone .constprop.0]". The TRUTH site names are given explicitly.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: 2 TRUTH lines; heap 410 bytes in 4 blocks.
 */
#include <cstddef>
#include "truth.h"

#define TR_ALLOC_AS(p, size, api, site) tr_alloc_at((p), (size), (site), (api), __LINE__)

namespace ns {

struct request {
	int kind;
	size_t size;
	char pad[64];
};

static __attribute__((noinline)) void *grab(const request *r)
{
	void *p = malloc(r->size); TR_ALLOC_AS(p, r->size, "malloc", "site_grab"); ESCAPE(p);
	return p;
}

static __attribute__((noinline)) void *fill(size_t n, int c)
{
	char *p = static_cast<char *>(malloc(n)); TR_ALLOC_AS(p, n, "malloc", "site_fill");
	ESCAPE(p);
	for (size_t i = 0; i < n; i++)
		p[i] = static_cast<char>(c);
	return p;
}

} /* namespace ns */

int main()
{
	ns::request r = { 1, 100, {} };

	TR_ENTER();
	ESCAPE(ns::grab(&r));
	r.size = 200;
	ESCAPE(ns::grab(&r));
	ESCAPE(ns::fill(50, 3));
	ESCAPE(ns::fill(60, 3));
	tr_report();
	return 0;
}
