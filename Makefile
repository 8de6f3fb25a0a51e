# relayc — one plain Makefile.
#   make            build build/relayc
#   make demo       install missing Debian packages, build, run the sample gallery (samples/README.md)
#   make check      install missing packages, build, run every test
#   make asan-check unit, golden, gradcheck, params, robustness, diff, fuzz-passes-ci under ASan + UBSan
#   make fuzz       libFuzzer on the front end (FUZZ_SECONDS=60)
#   make fuzz-passes the passes + interpreter fuzzer under ASan/UBSan (FUZZ_SECONDS=600, FUZZ_SEED=1)
#   make bench      benchmarks under bench/ (not part of check)
#   make bench-passes  the speed of every pass (bench/passes/run.py; part of make bench)
#   make install    install under $(DESTDIR)$(PREFIX) (PREFIX=/usr/local); make uninstall

BUILD   ?= build
ifeq ($(origin CC),default)
CC := gcc
endif
PKGS    := check jansson libffi openblas zlib
OPT     ?= -O2
SAN     ?=
CFLAGS_BASE := -std=c17 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -Wshadow \
               -Wstrict-prototypes -Wmissing-prototypes -g $(OPT) $(SAN) \
               -I. -I$(BUILD)/gen -MMD -MP
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs jansson libffi zlib 2>/dev/null)  # OpenBLAS: dlopen on first use (ops/kernels/k_gemm.c)
CFLAGS  ?=
ALL_CFLAGS = $(CFLAGS_BASE) $(PKG_CFLAGS) $(CFLAGS)
LDLIBS  = $(PKG_LIBS) -lm -lpthread -ldl
LDFLAGS ?=

# Sources: every .c in the module folders; re2c/Bison outputs go to $(BUILD)/gen.
MODULES  := ir lexer parser sema transform eval runtime ops ops/relations ops/kernels ops/gradients ops/foreign ops/macs analysis
LIB_SRC  := $(foreach d,$(MODULES),$(wildcard $(d)/*.c))
GEN_SRC  := $(BUILD)/gen/lexer.c $(BUILD)/gen/relay.tab.c
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/lexer.o $(BUILD)/obj/gen/relay.tab.o
MAIN_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard cli/*.c))
BIN      := $(BUILD)/relayc
LIB      := $(BUILD)/librelayc.a
UNIT_SRC := $(wildcard tests/unit/check_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
UNIT_HELP_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c)))

.PHONY: all deps demo check unit golden pass-sweep pe-reduce functional-deep sweep-all npy-io gradcheck robustness diff lint asan-check valgrind-check fuzz bench bench-passes plugin clean \
        fuzz-passes fuzz-passes-ci \
        install uninstall install-check
all: $(BIN)

# --- dependencies -------------------------------------------------------------
deps:
	@sh tests/install-deps.sh

# --- generated sources -----------------------------------------------------------
$(BUILD)/gen/lexer.c: lexer/lexer.re | $(BUILD)/gen
	re2c -W --no-generation-date --no-version -o $@ $<
$(BUILD)/gen/relay.tab.c $(BUILD)/gen/relay.tab.h: parser/relay.y | $(BUILD)/gen
	bison -Wall --no-lines -o $(BUILD)/gen/relay.tab.c --defines=$(BUILD)/gen/relay.tab.h $<
$(BUILD)/gen:
	@mkdir -p $@

# every object may include the generated parser header
$(LIB_OBJ) $(MAIN_OBJ): | $(BUILD)/gen/relay.tab.h

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Wno-unused-function -Wno-missing-prototypes -c -o $@ $<
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# the --prelude library is compiled into eval/prelude.o with .incbin
$(BUILD)/obj/eval/prelude.o: stdlib/prelude.relay

# Objects are linked directly (the archive is only a convenience for tools):
# kernels are found through weak references, which archives would not resolve.
$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(BIN): $(MAIN_OBJ) $(LIB_OBJ)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(MAIN_OBJ) $(LIB_OBJ) $(LDLIBS)

# --- foreign operators and plugins (issue 6) ---------------------------------------
# Fixed paths under build/ (whatever BUILD is): the golden tests name them.
FFI_LIBS := build/ffi/libffitest.so build/samples/libsample_plugin.so
plugin: build/samples/libsample_plugin.so
build/samples/libsample_plugin.so: samples/plugin/sample_plugin.c include/relayc/plugin.h
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -O2 -Wall -Wextra -fPIC -shared -Iinclude -o $@ $< -lm
# the test library and the test plugins (tests/ffi/build.sh also rebuilds the sample)
build/ffi/libffitest.so: tests/ffi/ffitest.c tests/ffi/test_plugin.c tests/ffi/build.sh \
                         include/relayc/plugin.h | build/samples/libsample_plugin.so
	sh tests/ffi/build.sh build

# --- tests --------------------------------------------------------------------
$(BUILD)/tests/check_%: tests/unit/check_%.c $(LIB_OBJ) $(UNIT_HELP_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(UNIT_HELP_OBJ) $(LIB_OBJ) $(shell pkg-config --libs check) $(LDLIBS)

# the pass + interpreter fuzzer (tests/fuzz/fuzz_passes.c): a standalone driver
FUZZ_PASSES := $(BUILD)/tests/fuzz_passes
$(FUZZ_PASSES): tests/fuzz/fuzz_passes.c tests/fuzz/value_type.c tests/fuzz/value_type.h $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(filter %.c,$^) $(LIB_OBJ) $(LDLIBS)

unit: $(UNIT_BIN)
	@fail=0; for t in $(UNIT_BIN); do CK_FORK=yes CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-60} $$t || fail=1; done; exit $$fail
golden: $(BIN) $(FFI_LIBS)
	@python3 tests/run_golden.py --relayc $(BIN) tests/golden samples
robustness: $(BIN)
	@python3 tests/run_robustness.py --relayc $(BIN)
sweep-all: $(BIN) $(FFI_LIBS)
	@python3 tests/run_sweep_all_passes.py --relayc $(BIN) --every 12
# make check runs the deep functional programs 2,500 deep (10,000: make functional-deep
# FUNCTIONAL_DEPTH=10000, minutes of CPU; run_robustness.py nests 10,000 deep through every pass)
FUNCTIONAL_DEPTH ?= 2500
FUNCTIONAL_PASSES = LambdaLift;Inline;EtaExpand(expand_constructor=True, expand_global_var=True);Defunctionalization;PartialEvaluate;PartialEvaluate,DeadCodeElimination(inline_once=True);ToCPS,UnCPS
pass-sweep: $(BIN) $(FFI_LIBS)
	@python3 tests/run_pass_sweep.py --relayc $(BIN) tests/golden samples
	@python3 tests/run_pass_sweep.py --relayc $(BIN) --with-flag=--prelude --passes '$(FUNCTIONAL_PASSES)' tests/golden samples
pe-reduce: $(BIN)
	@python3 tests/run_pe_reduce.py --relayc $(BIN)
functional-deep: $(BIN)
	@python3 tests/run_functional_deep.py --relayc $(BIN) --depth $(FUNCTIONAL_DEPTH)
npy-io: $(BIN)
	@python3 tests/run_npy_io.py $(BIN)
gradcheck: $(BIN)
	@python3 tests/grad/run_gradcheck.py --relayc $(BIN)
.PHONY: params
params: $(BIN)
	@python3 tests/run_params.py $(BIN)
diff: $(BIN)
	@python3 tests/diff/run_diff.py --relayc $(BIN)
.PHONY: tools
tools: $(BIN)
	@python3 tests/tools/run_diagnostics.py --relayc $(BIN)
	@python3 tests/tools/run_stats.py --relayc $(BIN)
	@python3 tests/tools/run_dot.py --relayc $(BIN)
.PHONY: samples
samples: $(BIN) build/samples/libsample_plugin.so
	@python3 tests/run_samples.py --relayc $(BIN)
# make check: a fixed seed and iteration count (deterministic), ~5 s of CPU (its first stage: 4.9 s, 11.7 s wall at load 11.7, session 17).
# FUZZ_SKIP="--skip SPEC ..." leaves pass specs out (known failures); none now
# (ToMixedPrecision is compared within 1e-2 where float16 holds the values)
FUZZ_SKIP ?=
# 200 inputs of seed 2 (seed 1's input 119, ANF-GNF-ANF on a shared polymorphic @id, is fixed:
# tests/golden/fuzz/gnf_shared_polymorphic_atom.relay; nothing is open: tests/fuzz/README.md "Open")
# and the oracle's own regression inputs (tests/fuzz/oracle/, every pass on each) and
# self-test (its comparisons and float-range probe on fixed cases)
fuzz-passes-ci: $(FUZZ_PASSES)
	@$(FUZZ_PASSES) --seed 2 --iters $${FUZZ_ITERS:-200} --passes 12 $(FUZZ_SKIP) --out $(BUILD)/fuzz-passes tests/golden samples
	@$(FUZZ_PASSES) --repro tests/fuzz/oracle/*.relay
	@$(FUZZ_PASSES) --self-test
lint:
	@mandoc -Tlint -Wwarning man/relayc.1 && echo "man page: lint clean"

check: deps
	@$(MAKE) --no-print-directory all $(UNIT_BIN)
	@$(MAKE) --no-print-directory unit golden pass-sweep pe-reduce functional-deep sweep-all npy-io gradcheck robustness diff lint install-check
	@$(MAKE) --no-print-directory fuzz-passes-ci
	@$(MAKE) --no-print-directory tools params samples

demo: deps
	@$(MAKE) --no-print-directory all build/samples/libsample_plugin.so
	@sh samples/demo.sh $(BIN)

# A sanitizer report exits 99 (not 1, which would pass for "program rejected"). gcc's
# -fsanitize=undefined leaves out float-cast-overflow (a float converted to an integer type out
# of its range is undefined in C; spec/ops.md §2 saturates): it is asked for explicitly.
asan-check: deps
	@ASAN_OPTIONS=$${ASAN_OPTIONS:-exitcode=99} UBSAN_OPTIONS=$${UBSAN_OPTIONS:-exitcode=99:print_stacktrace=1} \
	  $(MAKE) --no-print-directory BUILD=build/asan OPT=-O1 \
	  SAN="-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=undefined,float-cast-overflow" \
	  LDFLAGS="-fsanitize=address,undefined,float-cast-overflow" all unit golden gradcheck params robustness diff fuzz-passes-ci

valgrind-check: all $(FFI_LIBS)
	@python3 tests/run_golden.py --relayc $(BIN) --valgrind tests/golden samples

fuzz:
	@sh tests/fuzz/run.sh $(FUZZ_SECONDS)

# the pass + interpreter fuzzer under ASan/UBSan for FUZZ_SECONDS (default 600),
# deep wrapping (up to 10,000 levels) on; failing inputs in build/fuzz-passes/. Leaks are
# findings (LeakSanitizer at exit, since session 16); a run past 6 GB of resident memory is
# stopped as a crash (one input grew to 19 GB on the shared machine: tests/fuzz/README.md)
FUZZ_SEED ?= 1
fuzz-passes: deps
	@$(MAKE) --no-print-directory BUILD=build/asan OPT=-O1 \
	  SAN="-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=undefined,float-cast-overflow" \
	  LDFLAGS="-fsanitize=address,undefined,float-cast-overflow" build/asan/tests/fuzz_passes
	@ASAN_OPTIONS=$${ASAN_OPTIONS:-exitcode=99:detect_leaks=1:hard_rss_limit_mb=6000} UBSAN_OPTIONS=$${UBSAN_OPTIONS:-exitcode=99:print_stacktrace=1} \
	  build/asan/tests/fuzz_passes --seed $(FUZZ_SEED) --seconds $${FUZZ_SECONDS:-600} --deep $(FUZZ_SKIP) \
	  --out build/fuzz-passes tests/golden samples

bench: all
	@sh bench/run.sh

bench-passes: all
	@sh bench/passes/run.sh

clean:
	rm -rf build

# --- installation (issue 13) ----------------------------------------------------------
# The usual variables: `make install PREFIX=$$HOME/.local`, `make install DESTDIR=/tmp/stage`.
# The binary is self-contained (the prelude is compiled in), so it runs from anywhere.
PREFIX        ?= /usr/local
DESTDIR       ?=
BINDIR        ?= $(PREFIX)/bin
MANDIR        ?= $(PREFIX)/share/man
INCLUDEDIR    ?= $(PREFIX)/include
PKGCONFIGDIR  ?= $(PREFIX)/share/pkgconfig
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
VERSION       := $(shell sed -n 's/^\#define RELAYC_VERSION "\(.*\)"$$/\1/p' cli/main.c)
INSTALLED := $(BINDIR)/relayc $(MANDIR)/man1/relayc.1 $(INCLUDEDIR)/relayc/plugin.h \
             $(PKGCONFIGDIR)/relayc-plugin.pc $(COMPLETIONDIR)/relayc

install: $(BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(INCLUDEDIR)/relayc \
	  $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(COMPLETIONDIR)
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/relayc
	install -m 644 man/relayc.1 $(DESTDIR)$(MANDIR)/man1/relayc.1
	install -m 644 include/relayc/plugin.h $(DESTDIR)$(INCLUDEDIR)/relayc/plugin.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	  dist/relayc-plugin.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/relayc-plugin.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/relayc-plugin.pc
	install -m 644 dist/relayc.bash $(DESTDIR)$(COMPLETIONDIR)/relayc

# Removes exactly what install wrote (and the relayc/ include folder); shared folders stay.
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(INCLUDEDIR)/relayc 2>/dev/null

# install into a temporary DESTDIR, use what was installed, uninstall (part of check)
install-check: $(BIN)
	@MAKE='$(MAKE)' BIN='$(BIN)' sh tests/run_install.sh

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
