// SPDX-License-Identifier: GPL-2.0
/*
 * v_cxxsym: C++ names the tracer must demangle exactly: a method of a class
 * in a namespace, a function template and a class template's method (two
 * instantiations each), and a lambda. The TRUTH site names are given
 * explicitly (__func__ would say "operator()" for the lambda, and the same
 * name for both instantiations); tests/e2e/run.py knows the demangled
 * function each one must be reported as.
 * Comments "@name" mark the call lines tests/e2e/run.py expects.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: 6 TRUTH lines; heap 1,020 bytes in 7 blocks.
 */
#include <cstddef>
#include "truth.h"

#define TR_ALLOC_AS(p, size, api, site) tr_alloc_at((p), (size), (site), (api), __LINE__)

namespace store {

struct Item {
	long key, value;
};

class Cache {
public:
	SITE void *site_put(size_t n);
};

void *Cache::site_put(size_t n)
{
	void *p = operator new(n); TR_ALLOC_AS(p, n, "new", "site_put"); ESCAPE(p);
	return p;
}

template <typename T> class Pool {
public:
	SITE T *site_grow(size_t n)
	{
		T *p = new T[n]; TR_ALLOC_AS(p, n * sizeof(T), "new[]", site_name()); ESCAPE(p);
		return p;
	}
	static const char *site_name();
};

template <> const char *Pool<Item>::site_name() { return "site_grow_item"; }
template <> const char *Pool<char>::site_name() { return "site_grow_char"; }

} /* namespace store */

template <typename T> SITE T *site_make(size_t n, const char *site)
{
	T *p = static_cast<T *>(malloc(n * sizeof(T))); TR_ALLOC_AS(p, n * sizeof(T), "malloc", site); ESCAPE(p);
	return p;
}

VIA void via_lambda(size_t n)
{
	TR_ENTER();
	auto leak = [](size_t k) __attribute__((noinline, noipa)) {
		void *p = calloc(k, 4); TR_ALLOC_AS(p, k * 4, "calloc", "site_lambda"); ESCAPE(p);
	};
	leak(n);	/* @lambda_call */
	TR_LEAVE();
}

int main()
{
	store::Cache cache;
	store::Pool<store::Item> items;
	store::Pool<char> chars;

	TR_ENTER();
	for (int i = 0; i < 2; i++)
		cache.site_put(100);	/* @main_put */
	items.site_grow(4);	/* @main_grow_item */
	chars.site_grow(300);	/* @main_grow_char */
	site_make<int>(50, "site_make_int");	/* @main_make_int */
	site_make<store::Item>(3, "site_make_item");	/* @main_make_item */
	via_lambda(52);		/* @main_lambda */
	tr_report();
	TR_LEAVE();
	return 0;
}
