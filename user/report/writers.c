// SPDX-License-Identifier: GPL-2.0
/* The output files' registry (writers.h). */
#include "model/report.h"
#include "report_folded.h"
#include "report_gperftools.h"
#include "report_html.h"
#include "report_json.h"
#include "report_pprof.h"
#include "report_svg.h"
#include "report_timeline.h"
#include "writers.h"

#define WRITERS_ROW(out, opt, fn, need, at) \
	[REPORT_OUT_##out] = { .option = opt, .write = fn, .needs = need, .when = at },
const struct writer writers[REPORT_OUT__COUNT] = { REPORT_WRITERS(WRITERS_ROW) };
#undef WRITERS_ROW

writer_fn writers__profile(bool gperftools)
{
	return gperftools ? report_gperftools__write : report_pprof__write;
}

const char *writers__profile_ext(bool gperftools)
{
	return gperftools ? "heap" : "pb.gz";
}

writer_fn writers__of(enum report_output out, bool gperftools)
{
	return writers[out].write ?: writers__profile(gperftools);
}

bool writers__need(const char *const paths[REPORT_OUT__COUNT], unsigned needs)
{
	for (int i = 0; i < REPORT_OUT__COUNT; i++)
		if (paths[i] && writers[i].needs & needs)
			return true;
	return false;
}
