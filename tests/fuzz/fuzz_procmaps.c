// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: /proc/PID/maps text (user/procmaps.c). */
#include "fuzz.h"
#include "util/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct maps *maps = NULL;

	if (!maps__parse(text, &maps)) {
		for (size_t i = 0; i < maps->nr; i++) {
			const struct map_entry *e = &maps->entries[i];

			FUZZ_CHECK(e->path && e->start <= e->end);
			/* A path holds no newline: it ends the line. */
			FUZZ_CHECK(!strchr(e->path, '\n'));
			map_entry__is_file(e);
			maps__find(maps, e->start);
			maps__find(maps, e->end ? e->end - 1 : 0);
		}
		/* Whatever maps__find returns contains the address. */
		for (size_t i = 0; i + 8 <= size; i += 8) {
			uint64_t addr;
			const struct map_entry *e;

			memcpy(&addr, data + i, 8);
			e = maps__find(maps, addr);
			FUZZ_CHECK(!e || (addr >= e->start && addr < e->end));
		}
		maps__free(maps);
	}
	free(text);
	return 0;
}
