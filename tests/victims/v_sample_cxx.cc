// SPDX-License-Identifier: GPL-2.0
/*
 * v_sample_cxx: operator new / delete and new[] / delete[] under --sample,
 * one thread. Sites are extern "C" (frames[0].function is the plain name):
 *   site_obj    60,000 objects of 64 bytes, kept;
 *   site_temp   60,000 objects of 64 bytes, each deleted at once: nothing kept;
 *   site_array  2,000 arrays of 16 KiB, every other one delete[]'d: 1,000 kept.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout; exit status 0.
 *
 * Truth: site_obj 3,840,000 bytes in 60,000 (new); site_array 16,384,000
 * in 1,000 (new[]).
 */
#include "truth.h"

#define OBJS 60000
#define ARRAYS 2000
#define ARRAY_SIZE 16384

struct Obj {
	long v[8];	/* 64 bytes */
};

static char *arrays[ARRAYS];

extern "C" SITE Obj *site_obj(void)
{
	Obj *p = new Obj(); TR_ALLOC(p, sizeof(Obj), "new"); ESCAPE(p);
	return p;
}

extern "C" SITE void site_temp(void)
{
	Obj *p = new Obj(); TR_ALLOC(p, sizeof(Obj), "new"); ESCAPE(p);
	delete p; tr_free(p);
}

extern "C" SITE char *site_array(void)
{
	char *p = new char[ARRAY_SIZE]; TR_ALLOC(p, ARRAY_SIZE, "new[]"); ESCAPE(p);
	return p;
}

int main()
{
	for (int i = 0; i < OBJS; i++) {
		site_obj();
		site_temp();
	}
	for (int i = 0; i < ARRAYS; i++)
		arrays[i] = site_array();
	for (int i = 0; i < ARRAYS; i += 2) {
		delete[] arrays[i];
		tr_free(arrays[i]);
	}
	tr_report();
	return 0;
}
