// SPDX-License-Identifier: GPL-2.0
/* The unwinder's counter in the reports: a drop line in text, a key in JSON. */
#include <stdlib.h>
#include "model/report.h"
#include "helpers.h"
#include "unit.h"
#include "report/report_json.h"
#include "report/report_text.h"

TEST(report_unwind_stops)
{
	struct report r = { .pid = 42, .final = true };
	char *text, *json;

	r.totals.counters[CNT_UNWIND_STOPS] = 3;
	text = unit__render(report_text__write, &r, NULL);
	json = unit__render(report_json__write, &r, NULL);
	ASSERT(text && json);
	ASSERT(strstr(text, "Dropped: 3 allocations with a stack cut short: the unwinder met a "
			    "frame it could not follow\n"));
	ASSERT(strstr(json, "\"unwind_stops\": 3"));
	ASSERT_EQ_STR(report__counter_name(CNT_UNWIND_STOPS), "unwind_stops");
	free(text);
	free(json);
	return true;
}
