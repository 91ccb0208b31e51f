// SPDX-License-Identifier: GPL-2.0
/*
 * v_containers: leaks made through the standard containers, as a speech
 * server built on Kaldi or OpenFST makes them. Every allocation is made by
 * libstdc++'s code inlined from its headers (std::__new_allocator::allocate,
 * basic_string's constructor) or by libstdc++.so itself (_M_create), so the
 * innermost frames of every stack are the library's; the line to fix is the
 * victim's own, in site_load_model and site_remember. A report that sites
 * these leaks in new_allocator.h or basic_string.h names one site for every
 * container of one element type, from whatever line.
 *
 * Three sites, each a line of the victim's that calls a container:
 *  - site_reserve: the two tables' own storage, reserved up front so that
 *    no later push reallocates it (its truth stays one block each);
 *  - site_load_model: emplace_back(n) of a std::vector<double>, its storage
 *    of n doubles (the leak of "models");
 *  - site_remember: emplace_back(len, c) of a std::string, its storage of
 *    len + 1 bytes (the leak of "names"; len is past the small-string
 *    buffer, so every string has a block of its own).
 * Every block is outstanding at exit: the tables are never freed, on
 * purpose (the leak). A churn of containers made and destroyed runs beside
 * them and leaves nothing. Lines in the TRUTH output are the victim's
 * (line=), the frame the report must site each leak at.
 *
 * Truth: 3 TRUTH lines (site_reserve's four blocks from four lines in one);
 * heap 1,299,448 bytes in 404 blocks: 200 models of 800 doubles, 200 names
 * of 40 + 1 bytes, the two tables (24 bytes each) and their reserved
 * storage (200 * 24 and 200 * 32 bytes).
 *
 * valgrind 3.19 (--leak-check=full --show-leak-kinds=all), once:
 *   definitely, indirectly, possibly lost: 0 bytes in 0 blocks;
 *   still reachable: 1,299,448 bytes in 404 blocks (the tables hang from
 *   two globals), the sum of the TRUTH lines. The report also has
 *   libstdc++'s 72,704-byte emergency pool, allocated before main, which
 *   valgrind frees before its check (--run-cxx-freeres).
 */
#include <string>
#include <vector>
#include "truth.h"

#define MODELS 200
#define MODEL_DOUBLES 800
#define NAME_LEN 40

static std::vector<std::vector<double>> *models;
static std::vector<std::string> *names;

extern "C" {

SITE void site_reserve(void)
{
	models = new std::vector<std::vector<double>>(); TR_ALLOC(models, sizeof(*models), "new");
	models->reserve(MODELS); TR_ALLOC(models->data(), MODELS * sizeof(std::vector<double>), "new");
	names = new std::vector<std::string>(); TR_ALLOC(names, sizeof(*names), "new");
	names->reserve(MODELS); TR_ALLOC(names->data(), MODELS * sizeof(std::string), "new");
}

SITE void site_load_model(size_t n)
{
	models->emplace_back(n, 0.5); TR_ALLOC(models->back().data(), n * sizeof(double), "new");
}

SITE void site_remember(size_t len, char c)
{
	names->emplace_back(len, c); TR_ALLOC(names->back().data(), len + 1, "new");
}

/* Containers made and destroyed: churn, nothing outstanding. */
SITE void site_churn(int rounds)
{
	for (int i = 0; i < rounds; i++) {
		std::vector<double> v(MODEL_DOUBLES + i, 1.0);
		std::string s(NAME_LEN + i, 'y');

		ESCAPE(v.data());
		ESCAPE(s.data());
	}
}

} /* extern "C" */

int main(void)
{
	TR_ENTER();
	site_reserve();
	for (int i = 0; i < MODELS; i++) {
		site_load_model(MODEL_DOUBLES);
		site_remember(NAME_LEN, 'a' + i % 26);
		site_churn(10);
	}
	ESCAPE(models);
	ESCAPE(names);
	tr_report();
	TR_LEAVE();
	return 0;
}
