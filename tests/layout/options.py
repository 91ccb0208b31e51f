# SPDX-License-Identifier: GPL-2.0
"""The option tables of the docs against --help, for check.py.

--help is opts.c's usage_text, read from the source. docs/OPTIONS.md's
table must list exactly the options --help lists, each with the argument
--help gives it and, where --help says "(default N)", that default; the
README and the other guides may run memleakbpf only with options --help
has.
"""
import os
import re

# "  -p, --pid PID   text" or "      --json FILE   text": the option, its argument.
HELP_LINE = re.compile(r'^  (?:-(\w), )?(?:    )?--([a-z][a-z-]*)(?: ([A-Z]+))?(?:\s+(.*))?$')
# A table row's first cell: "`-p`, `--pid PID`" or "`--json FILE`".
ROW = re.compile(r'^\| (?:`-(\w)`, )?`--([a-z][a-z-]*)(?: ([A-Z]+))?` \|(.*)\|(.*)\|\s*$')
# An option a guide names: `--json`, `--json FILE`, "--reach" in prose.
NAMED = re.compile(r'(?<![\w-])--([a-z][a-z-]+[a-z])\b')


def usage(root):
	"""The text of --help, from opts_usage.h."""
	with open(os.path.join(root, "user", "cli", "opts_usage.h")) as f:
		src = f.read()
	body = re.search(r'static const char usage_text\[\] =\n(.*?);\n', src, re.S).group(1)
	return "".join(bytes(s, "utf-8").decode("unicode_escape") for s in re.findall(r'"((?:\\.|[^"\\])*)"', body))


def help_options(text):
	"""--help's options: long name -> (short letter or None, argument or None, default or None)."""
	opts = {}
	for line in text.splitlines():
		m = HELP_LINE.match(line)
		if m:
			short, name, arg, rest = m.groups()
			d = re.search(r'\(default (\d+)\)', rest or "")
			opts[name] = (short, arg, d.group(1) if d else None)
	return opts


def table_options(path):
	opts = {}
	with open(path) as f:
		for line in f:
			m = ROW.match(line)
			if m:
				short, name, arg, _, default = m.groups()
				opts[name] = (short, arg, default.strip())
	return opts


def check(root):
	broken = []
	helped = help_options(usage(root))
	path = os.path.join(root, "docs", "OPTIONS.md")
	table = table_options(path)
	if len(helped) < 10:
		broken.append("found only %d options in --help" % len(helped))
	for name, (short, arg, default) in sorted(helped.items()):
		if name not in table:
			broken.append("docs/OPTIONS.md's table lacks --%s" % name)
			continue
		t_short, t_arg, t_default = table[name]
		if (t_short, t_arg) != (short, arg):
			broken.append("docs/OPTIONS.md has %s, --help %s" % (
				spell(t_short, name, t_arg), spell(short, name, arg)))
		if default and default not in t_default.replace(",", ""):
			broken.append("docs/OPTIONS.md: --%s's default is %s, --help says %s" % (
				name, t_default or "not given", default))
	for name in sorted(set(table) - set(helped)):
		broken.append("docs/OPTIONS.md's table lists --%s, which --help does not" % name)
	guides = ["README.md"] + ["docs/" + f for f in sorted(os.listdir(os.path.join(root, "docs")))
				  if f.endswith(".md") and f not in ("PERFORMANCE.md", "RELIABILITY.md")]
	for guide in guides:
		with open(os.path.join(root, guide)) as f:
			for n, line in enumerate(f, 1):
				for name in NAMED.findall(ours(line)):
					if name not in helped:
						broken.append("%s:%d names --%s, which --help does not list" % (
							guide, n, name))
	return broken


def spell(short, name, arg):
	return "%s--%s%s" % ("-%s, " % short if short else "", name, " " + arg if arg else "")


def ours(line):
	"""What follows "memleakbpf" on a line that runs it, but -c's quoted command: ours."""
	at = line.find("memleakbpf ")
	return re.sub(r"'[^']*'", "", line[at:]) if at >= 0 else ""
