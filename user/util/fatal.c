// SPDX-License-Identifier: GPL-2.0
/*
 * One line for a death by signal (fatal.h). The handler runs in a state
 * where only async-signal-safe calls are sound: the line is put together
 * by hand (no stdio) and written with write(2).
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "fatal.h"

#define ALT_STACK_BYTES (64 << 10)

/* The signals whose default action ends us, and that nothing of ours expects. */
static const int fatal_signals[] = {
	SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP, SIGQUIT, SIGHUP,
	SIGXCPU, SIGXFSZ, SIGALRM, SIGVTALRM, SIGPROF, SIGSTKFLT, SIGPWR, SIGUSR1, SIGUSR2,
};

struct line {
	char *buf;
	size_t len, at;
};

static void put(struct line *l, const char *s)
{
	while (*s && l->at + 1 < l->len)
		l->buf[l->at++] = *s++;
	l->buf[l->at] = '\0';
}

static void put_num(struct line *l, uint64_t v, unsigned base)
{
	char digits[24];
	int n = 0;

	do
		digits[n++] = "0123456789abcdef"[v % base];
	while ((v /= base) && n < (int)sizeof(digits) - 1);
	if (base == 16)
		put(l, "0x");
	while (n > 0 && l->at + 1 < l->len)
		l->buf[l->at++] = digits[--n];
	l->buf[l->at] = '\0';
}

/* A fault of the code (as opposed to a signal sent): it has an address. */
static bool is_fault(int sig, int code)
{
	return code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
			    sig == SIGTRAP);
}

size_t fatal__line(char *buf, size_t len, int sig, int code, const void *addr, int sender,
		   int tid)
{
	struct line l = { buf, len, 0 };
	const char *name = sigabbrev_np(sig), *what = sigdescr_np(sig);

	if (!len)
		return 0;
	buf[0] = '\0';
	put(&l, "memleakbpf: killed by SIG");
	put(&l, name ? name : "?");
	put(&l, " (");
	put(&l, what ? what : "unknown signal");
	put(&l, ")");
	if (is_fault(sig, code)) {
		put(&l, " at ");
		put_num(&l, (uintptr_t)addr, 16);
	} else if (code <= 0 && sender == (int)getpid()) {
		put(&l, ", raised by memleakbpf itself");
	} else if (code <= 0) {
		put(&l, ", sent by pid ");
		put_num(&l, (uint64_t)sender, 10);
	}
	put(&l, " in thread ");
	put_num(&l, (uint64_t)tid, 10);
	put(&l, ": the tracer ends here, without its final report");
	if (is_fault(sig, code) || (code <= 0 && sender == (int)getpid()))
		put(&l, " (a bug in memleakbpf: please report it)");
	put(&l, "\n");
	return l.at;
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	char buf[320];
	size_t n = fatal__line(buf, sizeof(buf), sig, si->si_code, si->si_addr, si->si_pid,
			       (int)syscall(SYS_gettid));

	(void)!write(STDERR_FILENO, buf, n);
	/*
	 * SA_RESETHAND made the action the default again: the signal, raised
	 * anew, ends us as it would have (a fault would strike again anyway).
	 */
	raise(sig);
}

void fatal__setup(void)
{
	static char alt[ALT_STACK_BYTES];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
	struct sigaction sa = { .sa_sigaction = on_fatal,
				.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK };

	/* A stack overflow of the main thread still gets its line (the others', the kernel's log). */
	sigaltstack(&ss, NULL);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction old;

		/* One ignored (nohup's SIGHUP) stays so, one handled (a sanitizer's) keeps its handler. */
		if (!sigaction(fatal_signals[i], NULL, &old) && old.sa_handler != SIG_DFL)
			continue;
		sigaction(fatal_signals[i], &sa, NULL);
	}
}

void fatal__thread_signals(sigset_t *set)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS };

	sigfillset(set);
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		sigdelset(set, faults[i]);
}
