/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny unit-test harness. TEST(name) defines a test that returns bool and
 * registers itself; ASSERT* print the failing expression and return false.
 */
#ifndef UNIT_H
#define UNIT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct unit_test {
	const char *name;
	const char *file;
	bool (*fn)(void);
	struct unit_test *next;
};

void unit__register(struct unit_test *t);

/*
 * What a test's code says on stderr, kept from the output and returned for
 * the test to check: unit__capture_stderr, then unit__stderr_text, which
 * puts stderr back and the text (NUL-terminated, cut to len) in buf.
 */
struct unit_stderr {
	int saved, fd;
};
bool unit__capture_stderr(struct unit_stderr *c);
void unit__stderr_text(struct unit_stderr *c, char *buf, size_t len);

#define TEST(name)                                                             \
	static bool test_##name(void);                                         \
	static struct unit_test unit_##name = { #name, __FILE__, test_##name, NULL }; \
	__attribute__((constructor)) static void register_##name(void)         \
	{                                                                      \
		unit__register(&unit_##name);                                  \
	}                                                                      \
	static bool test_##name(void)

#define ASSERT(cond)                                                           \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "  %s:%d: ASSERT(%s)\n", __FILE__,     \
				__LINE__, #cond);                              \
			return false;                                          \
		}                                                              \
	} while (0)

#define ASSERT_EQ_U64(a, b)                                                    \
	do {                                                                   \
		uint64_t a_ = (a), b_ = (b);                                   \
		if (a_ != b_) {                                                \
			fprintf(stderr, "  %s:%d: %s == %" PRIu64 ", want %s == %" PRIu64 "\n", \
				__FILE__, __LINE__, #a, a_, #b, b_);           \
			return false;                                          \
		}                                                              \
	} while (0)

#define ASSERT_EQ_STR(a, b)                                                    \
	do {                                                                   \
		const char *a_ = (a), *b_ = (b);                               \
		if (!a_ || !b_ || strcmp(a_, b_)) {                            \
			fprintf(stderr, "  %s:%d: %s == \"%s\", want \"%s\"\n", \
				__FILE__, __LINE__, #a, a_ ? a_ : "(null)",    \
				b_ ? b_ : "(null)");                           \
			return false;                                          \
		}                                                              \
	} while (0)

#endif
