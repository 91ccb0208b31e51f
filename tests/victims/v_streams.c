// SPDX-License-Identifier: GPL-2.0
/*
 * v_streams DIR N: opens N files in DIR with fopen, writes a line to each
 * and flushes it, and never closes them: every stream keeps its FILE (made
 * by fopen) and its buffer (made by libc at the first write, under
 * _IO_file_doallocate) until exit. The buffers are libc's code's blocks
 * but the program's streams: a leak of the program's (fopen without
 * fclose), not libc's own standard streams' buffers. Then puts writes
 * stdout's line: stdout's buffer, libc's own.
 *
 * Truth: no TRUTH line (libc allocates both blocks of a stream); the notes
 * "# streams: N" and "# stream_site: site_open_stream".
 */
#include "truth.h"

SITE FILE *site_open_stream(const char *dir, int i)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/stream%d.txt", dir, i);
	f = fopen(path, "w");
	if (!f)
		return NULL;
	fprintf(f, "stream %d\n", i);	/* its buffer, at this first write */
	fflush(f);
	ESCAPE(f);
	return f;	/* never closed */
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 0;
	int opened = 0;

	if (argc < 3 || n <= 0) {
		fprintf(stderr, "usage: v_streams DIR N\n");
		return 2;
	}
	for (int i = 0; i < n; i++)
		opened += site_open_stream(argv[1], i) != NULL;
	puts("v_streams: done");	/* stdout's buffer: libc's own */
	tr_note_u64("streams", (unsigned long long)opened);
	tr_note("stream_site", "site_open_stream");
	tr_report();
	return 0;
}
