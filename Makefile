# SPDX-License-Identifier: GPL-2.0
# memleakbpf: `make` builds ./memleakbpf; see `make help`.

OUTPUT    := .output
ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
CLANG     ?= clang
BPFTOOL   ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
CC        ?= gcc
CXX       ?= g++
PREFIX    ?= /usr/local
DESTDIR   ?=

CFLAGS    ?= -O2 -g
CFLAGS    += -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE -pthread
INCLUDES  := -I$(OUTPUT) -Ibpf -Iuser
LIBS      := -lbpf -ldw -lelf -lz -lstdc++ -lm
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf -Wall

# user/ holds main.c and a folder per stage
# (docs/HACKING.md, "Source tree"). Sources are named by their path under user/, without .c.
USER_SRCS := $(wildcard user/*.c user/*/*.c)
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
# Modules that need neither libbpf nor libdw: they build into the unit tests,
# whose link proves it: whole folders (probe/ needs libbpf, symbolize/ libdw).
PURE_DIRS := util model target allocator unwind python analyze report
PURE      := cli/opts $(patsubst user/%.c,%,$(wildcard $(patsubst %,user/%/*.c,$(PURE_DIRS))))
PURE_OBJS := $(patsubst %,$(OUTPUT)/user/%.o,$(PURE))
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(patsubst tests/unit/%.c,$(OUTPUT)/unit/%.o,$(UNIT_SRCS))

VICTIM_C   := $(wildcard tests/victims/*.c)
VICTIM_CXX := $(wildcard tests/victims/*.cc)
VICTIMS    := $(patsubst tests/victims/%.c,$(OUTPUT)/victims/%,$(VICTIM_C)) \
              $(patsubst tests/victims/%.cc,$(OUTPUT)/victims/%,$(VICTIM_CXX))
VICTIM_FLAGS := -O2 -g -fno-omit-frame-pointer -pthread
# Symbols: dlopen'd plugins, and v_debug with its debug info moved elsewhere.
PLUGINS    := $(patsubst tests/victims/plugins/%.c,$(OUTPUT)/victims/plugins/lib%.so, \
                         $(wildcard tests/victims/plugins/*.c))
NOFP_PLUGINS := $(patsubst $(OUTPUT)/victims/%,$(OUTPUT)/victims/nofp/%,$(PLUGINS))
DEBUG_ROOT := $(OUTPUT)/debug-root
DEBUG_VICTIMS := $(patsubst %,$(OUTPUT)/victims/v_debug_%,link linkdir id stripped)
# The symbolizer's own tests: libdw, but no BPF.
SYM_TEST_OBJS := $(patsubst tests/unit/symbolize/%.c,$(OUTPUT)/unit/symbolize/%.o, \
                            $(wildcard tests/unit/symbolize/*.c))
SYMBOLIZE  := $(filter-out symbolize/report_build,$(patsubst user/%.c,%,$(wildcard user/symbolize/*.c)))
# The pure folders and symbolize/ (test_cfi_libdw compares the CFI parser with libdw).
SYM_OBJS   := $(sort $(PURE_OBJS) $(patsubst %,$(OUTPUT)/user/%.o,$(SYMBOLIZE)))
# The victims again without frame pointers (-O2's default), and for
# v_basic with its CFI only in .debug_frame: CFI unwinding must report the same.
NOFP_FLAGS := -O2 -g -fomit-frame-pointer -pthread
NOFP_VICTIMS := $(patsubst $(OUTPUT)/victims/%,$(OUTPUT)/victims/nofp/%,$(VICTIMS)) \
                $(OUTPUT)/victims/dbgframe/v_basic

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.PHONY: all test unit e2e demo install clean deps victims help bench
all: memleakbpf

help:
	@echo "make            build ./memleakbpf"
	@echo "make test       unit and end-to-end tests (installs missing packages)"
	@echo "make demo       build and trace the bundled leaky example"
	@echo "make bench      overhead against the raw probes and the peers (docs/PERFORMANCE.md)"
	@echo "make fuzz       libFuzzer on the parsers and writers (FUZZ_RUNS, FUZZ_TIME)"
	@echo "make stress     full-size contention, capacity and fault runs (docs/RELIABILITY.md)"
	@echo "make soak       redis under --sample 512K, then a busy victim, 10 minutes each (SOAK_S=seconds)"
	@echo "make install    install to \$$(DESTDIR)\$$(PREFIX)/sbin and share/man/man8 (PREFIX=$(PREFIX))"
	@echo "V=1             show the commands"

deps:
	$(Q)scripts/deps.sh

$(OUTPUT) $(OUTPUT)/user $(OUTPUT)/unit $(OUTPUT)/victims $(OUTPUT)/victims/plugins \
$(OUTPUT)/unit/symbolize $(DEBUG_ROOT):
	$(Q)mkdir -p $@

$(OUTPUT)/memleak.bpf.o: bpf/memleak.bpf.c $(wildcard bpf/*.h) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/memleak.skel.h: $(OUTPUT)/memleak.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name memleak_bpf > $@.tmp && mv $@.tmp $@

# -k: the kernel's allocations, a BPF object of its own (bpf/kmem.bpf.c).
$(OUTPUT)/kmem.bpf.o: bpf/kmem.bpf.c bpf/kmem_types.h bpf/memleak.h bpf/peak.bpf.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/kmem.skel.h: $(OUTPUT)/kmem.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name kmem_bpf > $@.tmp && mv $@.tmp $@

# Every file of probe/ may include the skeletons (probes_internal.h, kmem_internal.h).
$(patsubst user/%.c,$(OUTPUT)/user/%.o,$(wildcard user/probe/*.c)): $(OUTPUT)/memleak.skel.h \
	$(OUTPUT)/kmem.skel.h

# -MMD: each object depends on the headers it includes, listed in its .d.
DEPFLAGS  := -MMD -MP
$(OUTPUT)/user/%.o: user/%.c | $(OUTPUT)/user
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) $(INCLUDES) -c $< -o $@

memleakbpf: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBS) -o $@

$(OUTPUT)/unit/%.o: tests/unit/%.c | $(OUTPUT)/unit
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) $(INCLUDES) -Itests/unit -c $< -o $@

$(OUTPUT)/unit_tests: $(UNIT_OBJS) $(PURE_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -lelf -lz -lm -o $@

$(OUTPUT)/victims/%: tests/victims/%.c tests/victims/truth.h | $(OUTPUT)/victims
	$(call msg,VICTIM,$@)
	$(Q)$(CC) $(VICTIM_FLAGS) $(if $(findstring static,$*),-static) \
		$(if $(findstring nopie,$*),-no-pie) $(if $(findstring prefix,$*),-rdynamic) $< -o $@

$(OUTPUT)/victims/%: tests/victims/%.cc | $(OUTPUT)/victims
	$(call msg,VICTIM,$@)
	$(Q)$(CXX) $(VICTIM_FLAGS) $< -o $@

$(OUTPUT)/victims/plugins/lib%.so: tests/victims/plugins/%.c tests/victims/plugins/plugin.h \
				   | $(OUTPUT)/victims/plugins
	$(call msg,PLUGIN,$@)
	$(Q)$(CC) $(VICTIM_FLAGS) -fPIC -shared $< -o $@

# Stripped copies of v_debug; its debug info beside one, under $(DEBUG_ROOT) for the others.
$(OUTPUT)/victims/v_debug_link: $(OUTPUT)/victims/v_debug
	$(call msg,STRIP,$@)
	$(Q)objcopy --only-keep-debug $< $@.debug
	$(Q)objcopy --strip-all --add-gnu-debuglink=$@.debug $< $@

$(OUTPUT)/victims/v_debug_linkdir: $(OUTPUT)/victims/v_debug | $(DEBUG_ROOT)
	$(call msg,STRIP,$@)
	$(Q)objcopy --only-keep-debug $< $(DEBUG_ROOT)/v_debug_linkdir.debug
	$(Q)objcopy --strip-all --add-gnu-debuglink=$(DEBUG_ROOT)/v_debug_linkdir.debug $< $@

$(OUTPUT)/victims/v_debug_id: $(OUTPUT)/victims/v_debug | $(DEBUG_ROOT)
	$(call msg,STRIP,$@)
	$(Q)id=$$(readelf -n $< | sed -n 's/^ *Build ID: *//p'); \
	d=$(DEBUG_ROOT)/.build-id/$$(echo $$id | cut -c1-2); \
	test -n "$$id" && mkdir -p $$d && \
	objcopy --only-keep-debug $< $$d/$$(echo $$id | cut -c3-).debug
	$(Q)objcopy --strip-all $< $@

$(OUTPUT)/victims/v_debug_stripped: $(OUTPUT)/victims/v_debug
	$(call msg,STRIP,$@)
	$(Q)objcopy --strip-all $< $@

$(OUTPUT)/victims/nofp/%: tests/victims/%.c tests/victims/truth.h
	$(call msg,VICTIM,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(NOFP_FLAGS) $(if $(findstring static,$*),-static) \
		$(if $(findstring nopie,$*),-no-pie) $< -o $@

$(OUTPUT)/victims/nofp/%: tests/victims/%.cc tests/victims/truth.h
	$(call msg,VICTIM,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(NOFP_FLAGS) $< -o $@

$(OUTPUT)/victims/nofp/plugins/lib%.so: tests/victims/plugins/%.c tests/victims/plugins/plugin.h
	$(call msg,PLUGIN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(NOFP_FLAGS) -fPIC -shared $< -o $@

$(OUTPUT)/victims/dbgframe/%: tests/victims/%.c tests/victims/truth.h
	$(call msg,VICTIM,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(NOFP_FLAGS) -fno-asynchronous-unwind-tables $< -o $@

victims: $(VICTIMS) $(PLUGINS) $(DEBUG_VICTIMS) $(NOFP_VICTIMS) $(NOFP_PLUGINS)

$(OUTPUT)/unit/symbolize/%.o: tests/unit/symbolize/%.c | $(OUTPUT)/unit/symbolize
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) $(INCLUDES) -Itests/unit -c $< -o $@

$(OUTPUT)/symbolize_tests: $(OUTPUT)/unit/main.o $(SYM_TEST_OBJS) $(SYM_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -ldw -lelf -lz -lstdc++ -lm -o $@

unit: $(OUTPUT)/unit_tests $(OUTPUT)/symbolize_tests victims
	$(Q)$(OUTPUT)/unit_tests
	$(Q)$(OUTPUT)/symbolize_tests

e2e: memleakbpf victims
	$(Q)/usr/bin/python3 tests/e2e/run.py

# The PyTorch job (tests/e2e/cases_torch.py): out of `make test` until its
# start-up checks, which depend on how many reports the machine's load lets
# into the training loop, have run clean long enough to gate.
e2e-torch: memleakbpf victims
	$(Q)/usr/bin/python3 tests/e2e/run.py 'torch_*'

# The long e2e cases (run.py's LONG, 10 s or more each): `make stress` runs them.
e2e-long: memleakbpf victims
	$(Q)/usr/bin/python3 tests/e2e/run.py --long

# The builds on every core (2: 58 s where one took 95 for unit, and so for
# unit-san), the tests one at a time: the e2e cases time reports and rates.
TEST_JOBS ?= $(shell nproc)

test: deps
	$(Q)/usr/bin/python3 tests/layout/check.py
	$(Q)$(MAKE) --no-print-directory -j$(TEST_JOBS) unit
	$(Q)$(MAKE) --no-print-directory -j$(TEST_JOBS) unit-san
	$(Q)$(MAKE) --no-print-directory e2e

# Benchmarks are not tests: timings only, printed and written to docs/PERFORMANCE.md.
$(OUTPUT)/bench:
	$(Q)mkdir -p $@

$(OUTPUT)/bench/wl: tests/bench/wl.c | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(VICTIM_FLAGS) $< -o $@

$(OUTPUT)/bench/wl_cxx: tests/bench/wl_cxx.cc | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CXX) $(VICTIM_FLAGS) $< -o $@

$(OUTPUT)/bench/stamp.so: tests/bench/stamp.c | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) -O2 -g -Wall -shared -fPIC $< -o $@

# -k's workload: pipes, Unix sockets and tmpfs files made and closed (scripts/bench_kernel.py).
$(OUTPUT)/bench/kwl: tests/bench/kwl.c | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(VICTIM_FLAGS) $< -o $@

# Symbolization alone, on this machine's libraries: no BPF, no target.
# The symbolizer's tests' objects and building the report's frames.
BENCH_SYM_OBJS := $(SYM_OBJS) $(OUTPUT)/user/symbolize/report_build.o
$(OUTPUT)/bench/symbolize: tests/bench/symbolize.c $(BENCH_SYM_OBJS) | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $< $(BENCH_SYM_OBJS) -ldw -lelf -lz -lstdc++ -lm -o $@

# --unwind's cost per frame: pairs made deep in the stack, with and without frame pointers.
$(OUTPUT)/bench/deep: tests/bench/deep.c | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(VICTIM_FLAGS) $< -o $@

$(OUTPUT)/bench/deep-nofp: tests/bench/deep.c | $(OUTPUT)/bench
	$(call msg,BENCH,$@)
	$(Q)$(CC) $(NOFP_FLAGS) $< -o $@

bench: memleakbpf $(OUTPUT)/bench/wl $(OUTPUT)/bench/wl_cxx $(OUTPUT)/bench/stamp.so $(OUTPUT)/bench/symbolize victims \
       $(OUTPUT)/bench/deep $(OUTPUT)/bench/deep-nofp $(OUTPUT)/bench/kwl
	$(Q)/usr/bin/python3 scripts/bench.py
	$(Q)/usr/bin/python3 scripts/bench_symbolize.py
	$(Q)/usr/bin/python3 scripts/bench_redis.py
	$(Q)/usr/bin/python3 scripts/bench_reach.py
	$(Q)/usr/bin/python3 scripts/bench_follow.py
	$(Q)/usr/bin/python3 scripts/bench_kernel.py

demo: deps
	$(Q)$(MAKE) --no-print-directory memleakbpf $(OUTPUT)/victims/demo_leaky
	$(Q)scripts/demo.sh

install: memleakbpf
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX)/sbin/memleakbpf)
	$(Q)install -D -m 0755 memleakbpf $(DESTDIR)$(PREFIX)/sbin/memleakbpf
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX)/share/man/man8/memleakbpf.8)
	$(Q)install -D -m 0644 docs/memleakbpf.8 $(DESTDIR)$(PREFIX)/share/man/man8/memleakbpf.8

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf $(OUTPUT) memleakbpf

# ---------------------------------------------------------------- reliability (issue 7)
# The unit tests once more, under AddressSanitizer and UndefinedBehaviorSanitizer
# (part of `make test`); libFuzzer targets for the parsers and writers (`make
# fuzz`); the long runs (`make stress`, `make soak`). Results: docs/RELIABILITY.md.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_DIR   := $(OUTPUT)/san
SAN_ENV   := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
# libdw keeps caches for the life of the process: leaks are checked in the pure tests only.
SAN_ENV_DW := ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
SAN_UNIT_OBJS := $(patsubst tests/unit/%.c,$(SAN_DIR)/unit/%.o,$(UNIT_SRCS)) \
                 $(patsubst %,$(SAN_DIR)/user/%.o,$(PURE))
SAN_SYM_OBJS  := $(SAN_DIR)/unit/main.o \
                 $(patsubst tests/unit/symbolize/%.c,$(SAN_DIR)/unit/symbolize/%.o, \
                            $(wildcard tests/unit/symbolize/*.c)) \
                 $(patsubst $(OUTPUT)/user/%,$(SAN_DIR)/user/%,$(SYM_OBJS))

$(SAN_DIR)/user/%.o: user/%.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) $(INCLUDES) -c $< -o $@

$(SAN_DIR)/unit/%.o: tests/unit/%.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) $(INCLUDES) -Itests/unit -c $< -o $@

$(SAN_DIR)/unit_tests: $(SAN_UNIT_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $^ -lelf -lz -lm -o $@

$(SAN_DIR)/symbolize_tests: $(SAN_SYM_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $^ -ldw -lelf -lz -lstdc++ -lm -o $@

unit-san: $(SAN_DIR)/unit_tests $(SAN_DIR)/symbolize_tests victims
	$(Q)$(SAN_ENV) $(SAN_DIR)/unit_tests > $(SAN_DIR)/unit_tests.log 2>&1 || \
		{ cat $(SAN_DIR)/unit_tests.log; exit 1; }
	$(Q)tail -1 $(SAN_DIR)/unit_tests.log | sed 's/^/asan+ubsan /'
	$(Q)$(SAN_ENV_DW) $(SAN_DIR)/symbolize_tests > $(SAN_DIR)/symbolize_tests.log 2>&1 || \
		{ cat $(SAN_DIR)/symbolize_tests.log; exit 1; }
	$(Q)tail -1 $(SAN_DIR)/symbolize_tests.log | sed 's/^/asan+ubsan /'

# libFuzzer (clang): every target runs FUZZ_RUNS inputs or FUZZ_TIME seconds,
# whichever ends first, from the small corpus in tests/fuzz/corpus/NAME; new
# inputs go to $(FUZZ_DIR)/work/NAME, crashes to $(FUZZ_DIR)/crash-NAME-*.
FUZZERS   := procmaps elfsym opts perfmap writers cfi
FUZZ_RUNS ?= 1000000
FUZZ_TIME ?= 600
FUZZ_DIR  := $(OUTPUT)/fuzz
FUZZ_FLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -std=gnu11 \
              -D_GNU_SOURCE $(INCLUDES)
# perfmap.c is pure too, in the symbolizer's folder.
FUZZ_OBJS := $(patsubst %,$(FUZZ_DIR)/user/%.o,$(PURE) symbolize/perfmap)

$(FUZZ_DIR)/user/%.o: user/%.c
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_FLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_OBJS)
	$(call msg,FUZZER,$@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) -lelf -lz -lm -o $@

fuzz: $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZERS))
	$(Q)/usr/bin/python3 scripts/fuzz.py --runs $(FUZZ_RUNS) --time $(FUZZ_TIME) $(FUZZERS)

# Not part of `make test`: the full-size runs, a few minutes (stress) and ten (soak).
stress: memleakbpf victims e2e-long
	$(Q)/usr/bin/python3 scripts/stress.py

soak: memleakbpf victims
	$(Q)/usr/bin/python3 scripts/soak_redis.py $(if $(SOAK_S),--seconds $(SOAK_S))
	$(Q)/usr/bin/python3 scripts/soak.py $(if $(SOAK_S),--seconds $(SOAK_S))

.PHONY: unit-san fuzz stress soak e2e-torch e2e-long
.PRECIOUS: $(FUZZ_DIR)/user/%.o $(SAN_DIR)/user/%.o $(SAN_DIR)/unit/%.o

# The headers each object was built with (-MMD).
-include $(shell find $(OUTPUT) -name '*.d' 2>/dev/null)

# report_html.c builds in the page's script and style (.incbin): no -MMD line names them.
HTML_ASSETS := $(wildcard user/report/html/*)
$(OUTPUT)/user/report/report_html.o $(SAN_DIR)/user/report/report_html.o \
$(FUZZ_DIR)/user/report/report_html.o: $(HTML_ASSETS)
