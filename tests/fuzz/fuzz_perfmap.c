// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: /tmp/perf-PID.map text (user/perfmap.c). */
#include "fuzz.h"
#include "symbolize/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct perfmap *pm = NULL;

	if (!perfmap__parse(text, &pm)) {
		/* Every address of the input's bytes, and every entry's ends. */
		for (size_t i = 0; i + 8 <= size; i += 4) {
			const struct perfmap_entry *e;
			uint64_t addr;

			memcpy(&addr, data + i, 8);
			e = perfmap__find(pm, addr);
			FUZZ_CHECK(!e || (addr >= e->start && addr - e->start < e->size));
			FUZZ_CHECK(!e || (e->name && *e->name && !strchr(e->name, '\n')));
		}
		perfmap__nr(pm);
		perfmap__free(pm);
	}
	free(text);
	return 0;
}
