# dist-train top-level Makefile (GNU make). `make` on a fresh clone runs
# autoreconf + configure itself; re-run ./configure to change options.
#
#   make                 library, SPANK plugin, tools
#   make check           unit tests (GoogleTest)
#   make check-python    the Python package's tests against $(BUILD)'s library
#   make check-sanitize  unit tests under ASan+UBSan (build-asan/)
#   make check-tsan      runtime and relay tests under ThreadSanitizer (build-tsan/)
#   make fuzz            each libFuzzer target for FUZZ_SECONDS (build-fuzz/, clang)
#   make install         honours prefix= (configure or make) and DESTDIR=
#   make man             manual pages in $(BUILD)/man (help2man, go-md2man)
#   make deb             Debian packages for this Slurm release (build-deb/)
#   make format          clang-format every C++ file
#   make bench           topology load / plan benchmarks with ratios
#   make bench-python    from Python: dist_train.Communicator vs Gloo all-reduce
#   make deps            install every Debian 12 package needed (root)

BUILD ?= build
SANITIZE ?=
WERROR ?=

all:

include config.mk

config.mk: config.mk.in | configure
	if [ -x config.status ]; then ./config.status; else ./configure; fi
configure: configure.ac $(wildcard config/*.m4)
	autoreconf -fi

OPT ?= -O2
ifeq ($(SANITIZE),1)
OPT := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
SAN_LDFLAGS := -fsanitize=address,undefined
endif
# make fuzz (clang): libFuzzer's coverage + ASan + UBSan; the fuzz targets
# link -fsanitize=fuzzer themselves.
ifeq ($(SANITIZE),fuzzer)
OPT := -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
SAN_LDFLAGS := -fsanitize=address,undefined
endif
# make check-tsan: ThreadSanitizer.
ifeq ($(SANITIZE),thread)
OPT := -O1 -fno-omit-frame-pointer -fsanitize=thread
SAN_LDFLAGS := -fsanitize=thread
endif
WARNINGS := -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wformat=2
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif
HARDEN := $(HWLOC_CFLAGS) $(YAMLCPP_CFLAGS) $(OPENSSL_CFLAGS) -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIC
# CPPFLAGS, CXXFLAGS and LDFLAGS come from configure, or make's environment
# or command line (config.mk); ours go first, so a packager's win.
ALL_CXXFLAGS := -std=c++17 $(OPT) $(CXXFLAGS) $(WARNINGS) $(HARDEN) -Iinclude -Ilib \
    $(SLURM_CPPFLAGS) $(CPPFLAGS) -DDT_VERSION='"$(PACKAGE_VERSION)"' -MMD -MP
LINK_HARDEN := -Wl,-z,relro,-z,now,-z,noexecstack -Wl,--as-needed

LIB_SRCS := $(filter-out %_test.cc,$(wildcard lib/*/*.cc))

# NCCL/CUDA: auto-detected by configure; not in sanitizer builds (the CUDA
# runtime and ASan do not mix). CUDA headers are system headers for -Werror.
ifeq ($(HAVE_NCCL)$(SANITIZE),yes)
NCCL_FLAGS := -DDT_HAVE_NCCL $(patsubst -I%,-isystem %,$(CUDA_CPPFLAGS) $(NCCL_CPPFLAGS))
# Loaded with dlopen at the first device buffer (lib/runtime/nccl_backend.cc): keep
# only the search path (-rpath) of the GPU libraries, link none of them.
GPU_LIBS := $(filter-out -l%,$(CUDA_LIBS) $(NCCL_LIBS)) -ldl
GPU_TEST_LIBS := $(CUDA_LIBS)  # the GPU test allocates device memory itself
endif
SPANK_SRCS := $(filter-out %_test.cc,$(wildcard spank/*.cc))
TEST_SRCS := $(wildcard lib/*/*_test.cc spank/*_test.cc)
TOOL_SRCS := $(wildcard tools/*.cc bench/*.cc examples/*.cc)
LIB_OBJS := $(LIB_SRCS:%.cc=$(BUILD)/%.o)
SPANK_OBJS := $(SPANK_SRCS:%.cc=$(BUILD)/%.o)
TEST_OBJS := $(TEST_SRCS:%.cc=$(BUILD)/%.o)

SONAME := libdist-train.so.0
LIB_A := $(BUILD)/libdist-train.a
LIB_SO := $(BUILD)/$(SONAME)
PLUGIN := $(BUILD)/spank/spank_dist_train.so
UNIT := $(BUILD)/tests/unit_tests
TOOLS := $(BUILD)/tools/dt-topo $(BUILD)/tools/gen-sbatch $(BUILD)/tools/dt-bench $(BUILD)/tools/dt-run \
    $(BUILD)/tools/dt-requeue $(BUILD)/tools/dt-wire $(BUILD)/tools/dt-preflight \
    $(BUILD)/tools/dt-status
EXAMPLES := $(BUILD)/examples/train_linear
TEMPLATE_DIR = $(datarootdir)/dist-train/templates

all: $(LIB_A) $(LIB_SO) $(PLUGIN) $(TOOLS) $(EXAMPLES)

# Only the SPANK plugin (local-cluster compose --slurm builds it per release).
plugin: $(PLUGIN)

$(BUILD)/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) -c $< -o $@
# Flags live in these two: a changed one rebuilds everything.
$(LIB_OBJS) $(SPANK_OBJS) $(TEST_OBJS) $(TOOL_SRCS:%.cc=$(BUILD)/%.o): Makefile config.mk

# The reduction loops: vectorized (GCC vectorizes only trivially at -O2).
$(BUILD)/lib/runtime/reduce.o: ALL_CXXFLAGS += -O3

$(LIB_A): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# The user library: the public API (include/dist_train/, DT_EXPORT) and the
# components it needs, nothing else: a training program gets no hwloc,
# yaml-cpp or internal symbols (tests/install.bats checks nm -D and ldd).
SO_COMPONENTS := base relay contract runtime  # contract parses relay's words
SO_OBJS := $(filter $(patsubst %,$(BUILD)/lib/%/%,$(SO_COMPONENTS)),$(LIB_OBJS))
$(LIB_OBJS): ALL_CXXFLAGS += -fvisibility=hidden -fvisibility-inlines-hidden
$(LIB_SO): $(SO_OBJS) lib/dist_train.lds
	$(CXX) -shared -Wl,-soname,$(SONAME) $(LINK_HARDEN) $(LDFLAGS) $(SAN_LDFLAGS) -Wl,--no-undefined \
	    -Wl,--version-script=lib/dist_train.lds -o $@ $(SO_OBJS) $(SLURM_LIBS) $(OPENSSL_LIBS) $(GPU_LIBS)
	ln -sf $(SONAME) $(BUILD)/libdist-train.so

# The plugin resolves slurm_* / spank_* from the process that loads it
# (srun, sbatch, slurmstepd); the version script exports only the SPANK
# entry points so none of our or libstdc++'s symbols leak into slurmstepd.
# libstdc++ and libgcc are linked in (only what the plugin uses, kept
# local): every step's slurmstepd loads the plugin afresh, and loading
# libstdc++.so into a C process cost ~1 ms of its ~2.5 ms dlopen
# (docs/admin-guide.md, "What a step costs").
PLUGIN_LDFLAGS := -shared $(LINK_HARDEN) $(LDFLAGS) -static-libstdc++ -static-libgcc \
    -Wl,--exclude-libs,ALL -Wl,--version-script=spank/spank_dist_train.lds
$(PLUGIN): $(SPANK_OBJS) $(LIB_A) spank/spank_dist_train.lds
	@mkdir -p $(dir $@)
	$(CXX) $(PLUGIN_LDFLAGS) -o $@.tmp $(SPANK_OBJS) $(LIB_A) $(HWLOC_LIBS)
	mv -f $@.tmp $@

# The plugin as if built for Slurm 21.08: what Slurm does with a plugin of
# another release (tests/e2e/plugstack.bats, docs/admin-guide.md).
OTHER_RELEASE_PLUGIN := $(BUILD)/tests/spank_dist_train_2108.so
$(BUILD)/tests/plugin_2108.o: spank/plugin.cc
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) -DDT_SLURM_VERSION='"21.08.8"' -DDT_PLUGIN_VERSION=0x150808 -c $< -o $@
$(OTHER_RELEASE_PLUGIN): $(filter-out %/plugin.o,$(SPANK_OBJS)) $(BUILD)/tests/plugin_2108.o $(LIB_A)
	$(CXX) $(PLUGIN_LDFLAGS) -o $@ $^ $(HWLOC_LIBS)
other-release-plugin: $(OTHER_RELEASE_PLUGIN)

# Every program: its main object, the library archive, one link rule
# (--as-needed keeps what a program does not use out of its NEEDED list).
# hwloc and yaml-cpp only where used: --as-needed alone is not enough, as
# libyaml-cpp 0.8 (Debian 13) also defines std:: symbols a program uses.
PROGRAM_LIBS = $(SLURM_LIBS) $(OPENSSL_LIBS) $(GPU_LIBS) $(EXTRA_LIBS)
$(BUILD)/tools/gen-sbatch: EXTRA_LIBS = $(YAMLCPP_LIBS)
$(BUILD)/tools/dt-topo $(BUILD)/tools/dt-run $(BUILD)/tools/dt-wire: EXTRA_LIBS = $(HWLOC_LIBS)
$(BUILD)/tools/dt-topo: $(BUILD)/tools/dt_topo.o
$(BUILD)/tools/gen-sbatch: $(BUILD)/tools/gen_sbatch.o
$(BUILD)/tools/dt-run: $(BUILD)/tools/dt_run.o
$(BUILD)/tools/dt-requeue: $(BUILD)/tools/dt_requeue.o
$(BUILD)/tools/dt-wire: $(BUILD)/tools/dt_wire.o
$(BUILD)/tools/dt-bench: $(BUILD)/tools/dt_bench.o
$(BUILD)/tools/dt-preflight: $(BUILD)/tools/dt_preflight.o
$(BUILD)/tools/dt-status: $(BUILD)/tools/dt_status.o
$(BUILD)/examples/train_linear: $(BUILD)/examples/train_linear.o
$(TOOLS) $(EXAMPLES): $(LIB_A)
	$(CXX) $(LINK_HARDEN) $(LDFLAGS) $(SAN_LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_A) $(PROGRAM_LIBS)

$(BUILD)/tools/gen_sbatch.o: ALL_CXXFLAGS += -DDT_TEMPLATE_DIR='"$(TEMPLATE_DIR)"'
# The plugin runs the installed dt-preflight unless preflight_program= says.
$(BUILD)/lib/contract/options.o: ALL_CXXFLAGS += -DDT_PREFLIGHT_PROGRAM='"$(bindir)/dt-preflight"'

# The plugin's logic, tested through a fake SpankHost (spank/fake_spank_host.h):
# all of spank/ but the two files that call Slurm's spank_* functions, which
# exist only inside srun/sbatch/slurmstepd.
SPANK_LOGIC_OBJS := $(filter-out %/plugin.o %/plugin_new.o %/slurm_spank_host.o,$(SPANK_OBJS))
$(UNIT): $(TEST_OBJS) $(SPANK_LOGIC_OBJS) $(LIB_A)
ifneq ($(HAVE_GTEST),yes)
	@echo "GoogleTest not found at configure time: install libgtest-dev and re-run ./configure" >&2; exit 1
endif
	@mkdir -p $(dir $@)
	$(CXX) $(SAN_LDFLAGS) -o $@ $(TEST_OBJS) $(SPANK_LOGIC_OBJS) $(LIB_A) $(GTEST_LIBS) $(SLURM_LIBS) $(HWLOC_LIBS) $(YAMLCPP_LIBS) $(OPENSSL_LIBS) $(GPU_LIBS) $(GPU_TEST_LIBS) -lpthread

$(BUILD)/lib/runtime/nccl_backend.o $(BUILD)/lib/runtime/nccl_backend_test.o: ALL_CXXFLAGS += $(NCCL_FLAGS)
$(TEST_OBJS): ALL_CXXFLAGS += $(GTEST_CFLAGS) -DDT_SOURCE_DIR='"$(CURDIR)"'
$(BUILD)/lib/base/slurm_compat_test.o $(BUILD)/spank/plugin.o: ALL_CXXFLAGS += -DDT_SLURM_VERSION='"$(SLURM_VERSION)"'
$(BUILD)/lib/base/slurm_compat_test.o $(BUILD)/spank/plugin.o: config.mk

# check-build: what check runs, built only (scripts/run-tests builds it at
# low priority beside the cluster tests, then runs it at normal priority).
check-build: $(UNIT)
check: $(UNIT)
	scripts/check-layering lib
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	UBSAN_OPTIONS=print_stacktrace=1 $(UNIT) $(GTEST_ARGS)

BENCH := $(BUILD)/bench/topology_bench
$(BENCH): $(BUILD)/bench/topology_bench.o $(LIB_A)
ifneq ($(HAVE_BENCHMARK),yes)
	@echo "Google Benchmark not found at configure time: install libbenchmark-dev and re-run ./configure" >&2; exit 1
endif
	$(CXX) $(LINK_HARDEN) $(LDFLAGS) -o $@ $^ $(BENCHMARK_LIBS) $(SLURM_LIBS) $(HWLOC_LIBS)
$(BUILD)/bench/topology_bench.o: ALL_CXXFLAGS += -DDT_SOURCE_DIR='"$(CURDIR)"'

# Benchmarks (not part of check): ratios against peers measured in one run.
bench: $(BENCH)
	$(BENCH) --benchmark_format=json --benchmark_min_time=0.2 > $(BUILD)/bench/topology.json
	python3 bench/report.py < $(BUILD)/bench/topology.json

# The Python package (python/dist_train/, docs/python.md) against this
# build's library; the torch tests skip themselves where torch is missing.
PYTHON ?= /usr/bin/python3
check-python: $(LIB_SO)
	DT_LIBRARY=$(abspath $(LIB_SO)) PYTHONPATH=python PYTHONDONTWRITEBYTECODE=1 \
	    $(PYTHON) -m unittest discover -s python/tests -v

# From Python: dist_train.Communicator vs Gloo all-reduce busbw, 4 ranks on
# this machine (docs/runtime.md, Measured). BENCH_ARGS=--sizes 64M ...
bench-python: $(LIB_SO)
	DT_LIBRARY=$(abspath $(LIB_SO)) PYTHONPATH=python $(PYTHON) bench/python_vs_gloo.py $(BENCH_ARGS)

check-sanitize:
	$(MAKE) BUILD=build-asan SANITIZE=1 CXXFLAGS=-g WERROR=$(WERROR) check

# ---- ThreadSanitizer: the runtime and relay tests only ---------------------
# Their own binary, built from the components they link (base, relay,
# contract, runtime, and testing's in-memory ring), so CI pays for no
# other TSan objects.
TSAN_TEST_OBJS := $(filter $(BUILD)/lib/runtime/% $(BUILD)/lib/relay/%,$(TEST_OBJS))
TSAN_LIB_OBJS := $(filter $(patsubst %,$(BUILD)/lib/%/%,$(SO_COMPONENTS) testing),$(LIB_OBJS))
TSAN_UNIT := $(BUILD)/tests/tsan_unit_tests
$(TSAN_UNIT): $(TSAN_TEST_OBJS) $(TSAN_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(SAN_LDFLAGS) -o $@ $^ $(GTEST_LIBS) $(SLURM_LIBS) $(OPENSSL_LIBS) -lpthread
# Sixteen ranks under TSan on two cores is a load test (its 20 s rendezvous
# deadline fails at load 20), not a race test: the 2-6 rank tests run the
# same code. GTEST_ARGS=--gtest_filter=... overrides.
TSAN_GTEST_FILTER ?= -CommunicatorTest.SixteenRanksAllReduceALargeBuffer
tsan-unit: $(TSAN_UNIT)
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 $(TSAN_OPTIONS)" \
	    $(TSAN_UNIT) --gtest_filter='$(TSAN_GTEST_FILTER)' $(GTEST_ARGS)

check-tsan:
	$(MAKE) BUILD=build-tsan SANITIZE=thread CXXFLAGS=-g WERROR=$(WERROR) tsan-unit

# ---- fuzzing: libFuzzer targets fuzz/*_fuzzer.cc (clang) -------------------
# `make fuzz` builds them in build-fuzz/ and runs each for FUZZ_SECONDS
# (two at a time with -j2) from its seeds in fuzz/corpus/NAME/; a crash,
# leak, timeout or out-of-memory fails it, the input kept under
# build-fuzz/fuzz/NAME/crashes/ (fuzz/run says how to replay it).
FUZZ_SECONDS ?= 60
FUZZ_CXX ?= clang++
FUZZ_COMPONENTS := base relay binding contract runtime jobgen
FUZZ_LIB_OBJS := $(filter $(patsubst %,$(BUILD)/lib/%/%,$(FUZZ_COMPONENTS)),$(LIB_OBJS))
FUZZ_LIB := $(BUILD)/fuzz/libdist-train-fuzz.a
FUZZERS := $(patsubst fuzz/%.cc,%,$(wildcard fuzz/*_fuzzer.cc))
FUZZ_BINS := $(FUZZERS:%=$(BUILD)/fuzz/%)
$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(FUZZERS:%=$(BUILD)/fuzz/%.o): ALL_CXXFLAGS += -I. -DDT_SOURCE_DIR='"$(CURDIR)"'
$(FUZZERS:%=$(BUILD)/fuzz/%.o): Makefile config.mk
$(FUZZ_BINS): %: %.o $(FUZZ_LIB)
	$(CXX) -fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ_LIB) $(SLURM_LIBS) $(HWLOC_LIBS) \
	    $(YAMLCPP_LIBS) $(OPENSSL_LIBS)
fuzz-build: $(FUZZ_BINS)
$(FUZZERS:%=fuzz-run-%): fuzz-run-%: $(BUILD)/fuzz/%
	fuzz/run $< $(FUZZ_SECONDS)
fuzz-run: $(FUZZERS:%=fuzz-run-%)

fuzz:
	$(MAKE) BUILD=build-fuzz SANITIZE=fuzzer CXX=$(FUZZ_CXX) CXXFLAGS=-g WERROR=$(WERROR) fuzz-run

# ---- install -------------------------------------------------------------
# installcheck: is the installed plugin built for this node's slurmd?
installcheck:
	$(DESTDIR)$(bindir)/dt-check-install --plugin $(DESTDIR)$(SLURM_PLUGINDIR)/spank_dist_train.so

INSTALL ?= install
# The Python package: pure Python, so no byte-compiling here (Python caches
# itself where it may write). Debian's path for prefix=/usr, else under the
# prefix, which is not on Debian's sys.path (/usr/local/lib/python3.X/
# dist-packages is): set PYTHON_SITEDIR, or PYTHONPATH at run time. The
# installed copy gets _install.py with the library's directory (LIBDIR) so
# it finds the library without LD_LIBRARY_PATH; the source tree never does.
PYTHON_SITEDIR ?= $(if $(filter /usr,$(prefix)),/usr/lib/python3/dist-packages,$(prefix)/lib/python3/dist-packages)
PY_PACKAGE_DIR = $(DESTDIR)$(PYTHON_SITEDIR)/dist_train
PY_SRCS := $(filter-out %/_install.py,$(wildcard python/dist_train/*.py))
PLUGSTACK_SNIPPET := $(BUILD)/dist-train.conf

# required: a plugin that does not load fails every srun and sbatch (the
# packages ship optional: docs/admin-guide.md, "required or optional").
PLUGSTACK_MODE ?= required
$(PLUGSTACK_SNIPPET): config.mk FORCE
	@mkdir -p $(dir $@)
	echo "$(PLUGSTACK_MODE) $(SLURM_PLUGINDIR)/spank_dist_train.so" > $@.tmp
	cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@

# ---- manual pages --------------------------------------------------------
# One source each, so they cannot drift: a tool's --help (help2man runs it
# as PATH finds it, so the usage line names it plainly), and for the plugin
# the admin guide's plugstack.conf section (scripts/plugin-man).
# Without help2man or go-md2man (scripts/install-deps installs both) there
# are no pages, and make install says so.
MAN_TOOLS := $(notdir $(TOOLS)) dt-check-install
MAN_ALL := $(MAN_TOOLS:%=$(BUILD)/man/%.1) $(BUILD)/man/spank-dist-train.8
HAVE_MAN_TOOLS := $(and $(shell command -v help2man),$(shell command -v go-md2man))
MAN_PAGES := $(if $(HAVE_MAN_TOOLS),$(MAN_ALL))
man: $(MAN_PAGES)
ifeq ($(HAVE_MAN_TOOLS),)
	@echo "make man: help2man and go-md2man are needed for the manual pages (scripts/install-deps); none made"
endif
$(BUILD)/man/%.1: $(BUILD)/tools/% | $(BUILD)/tools/dt-check-install
	@mkdir -p $(dir $@)
	PATH=$(abspath $(BUILD)/tools):$$PATH help2man --no-info --no-discard-stderr \
	    --version-string=$(PACKAGE_VERSION) --name="$$(PATH=$(abspath $(BUILD)/tools):$$PATH $* --help | \
	    head -1 | sed 's/^$*: //; s/\.$$//')" -o $@.tmp $*
	mv -f $@.tmp $@
$(BUILD)/tools/dt-check-install: tools/dt-check-install
	@mkdir -p $(dir $@)
	cp -f $< $@
$(BUILD)/man/spank-dist-train.8: scripts/plugin-man docs/admin-guide.md config.mk
	@mkdir -p $(dir $@)
	scripts/plugin-man $(PACKAGE_VERSION) $(SLURM_PLUGINDIR) $(SLURM_SYSCONFDIR) > $@.tmp
	mv -f $@.tmp $@

# ---- Debian packages -----------------------------------------------------
# Built by dpkg-buildpackage from a copy of the tracked tree, against the
# Slurm release of this machine (or of a scripts/slurm-root root), into
# build-deb/<release>/ (scripts/make-deb).
deb:
	scripts/make-deb

# Generated here (not by configure) so that `make install prefix=...` is
# honoured too.
$(BUILD)/dist-train.pc: dist-train.pc.in config.mk FORCE
	@mkdir -p $(dir $@)
	sed -e 's|@prefix@|$(prefix)|; s|@exec_prefix@|$(exec_prefix)|; s|@libdir@|$(libdir)|' \
	    -e 's|@includedir@|$(includedir)|; s|@PACKAGE_VERSION@|$(PACKAGE_VERSION)|' \
	    -e 's|@SLURM_LIBS@|$(SLURM_LIBS)|; s|@OPENSSL_LIBS@|$(OPENSSL_LIBS)|' \
	    -e 's|@HWLOC_LIBS@|$(HWLOC_LIBS)|; s|@YAMLCPP_LIBS@|$(YAMLCPP_LIBS)|' $< > $@

install: all man $(PLUGSTACK_SNIPPET) $(BUILD)/dist-train.pc
	$(INSTALL) -d $(DESTDIR)$(SLURM_PLUGINDIR) $(DESTDIR)$(libdir)/pkgconfig \
	    $(DESTDIR)$(includedir)/dist_train $(DESTDIR)$(SLURM_SYSCONFDIR)/plugstack.conf.d \
	    $(DESTDIR)$(bindir) $(DESTDIR)$(docdir) $(DESTDIR)$(mandir)/man1 $(DESTDIR)$(mandir)/man8
	$(if $(MAN_PAGES),$(INSTALL) -m 0644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(mandir)/man1/)
	$(if $(MAN_PAGES),$(INSTALL) -m 0644 $(filter %.8,$(MAN_PAGES)) $(DESTDIR)$(mandir)/man8/)
	$(INSTALL) -m 0755 $(PLUGIN) $(DESTDIR)$(SLURM_PLUGINDIR)/spank_dist_train.so.new
	mv -f $(DESTDIR)$(SLURM_PLUGINDIR)/spank_dist_train.so.new $(DESTDIR)$(SLURM_PLUGINDIR)/spank_dist_train.so
	$(INSTALL) -m 0644 $(PLUGSTACK_SNIPPET) $(DESTDIR)$(SLURM_SYSCONFDIR)/plugstack.conf.d/dist-train.conf
	$(INSTALL) -m 0644 include/dist_train/*.h $(DESTDIR)$(includedir)/dist_train/
	$(INSTALL) -m 0644 $(LIB_A) $(DESTDIR)$(libdir)/
	$(INSTALL) -m 0755 $(LIB_SO) $(DESTDIR)$(libdir)/
	ln -sf $(SONAME) $(DESTDIR)$(libdir)/libdist-train.so
	$(INSTALL) -m 0644 $(BUILD)/dist-train.pc $(DESTDIR)$(libdir)/pkgconfig/
	$(INSTALL) -m 0644 docs/*.md docs/*.svg $(DESTDIR)$(docdir)/
	$(INSTALL) -m 0755 $(TOOLS) tools/dt-check-install $(DESTDIR)$(bindir)/
	$(INSTALL) -d $(DESTDIR)$(TEMPLATE_DIR)
	$(INSTALL) -m 0644 templates/*.sbatch $(DESTDIR)$(TEMPLATE_DIR)/
	$(INSTALL) -d $(PY_PACKAGE_DIR)
	$(INSTALL) -m 0644 $(PY_SRCS) $(PY_PACKAGE_DIR)/
	printf '# Written by make install: where libdist-train.so.0 was installed.\nLIBDIR = "%s"\n' \
	    '$(libdir)' > $(PY_PACKAGE_DIR)/_install.py

# Removes exactly what install puts in place (the plugstack snippet too, so
# the plugin is no longer loaded; Slurm's own plugstack.conf is untouched).
uninstall:
	rm -f $(DESTDIR)$(SLURM_SYSCONFDIR)/plugstack.conf.d/dist-train.conf
	rm -f $(DESTDIR)$(SLURM_PLUGINDIR)/spank_dist_train.so
	rm -f $(addprefix $(DESTDIR)$(includedir)/dist_train/,$(notdir $(wildcard include/dist_train/*.h)))
	-rmdir $(DESTDIR)$(includedir)/dist_train
	rm -f $(DESTDIR)$(libdir)/libdist-train.a $(DESTDIR)$(libdir)/$(SONAME) \
	    $(DESTDIR)$(libdir)/libdist-train.so $(DESTDIR)$(libdir)/pkgconfig/dist-train.pc
	rm -f $(addprefix $(DESTDIR)$(bindir)/,$(notdir $(TOOLS)) dt-check-install)
	rm -f $(addprefix $(DESTDIR)$(mandir)/,$(patsubst $(BUILD)/man/%.1,man1/%.1,$(patsubst $(BUILD)/man/%.8,man8/%.8,$(MAN_ALL))))
	rm -rf $(DESTDIR)$(TEMPLATE_DIR) $(DESTDIR)$(docdir) $(PY_PACKAGE_DIR)
	-rmdir $(DESTDIR)$(datarootdir)/dist-train

CXX_SOURCES = $(wildcard include/*/*.h lib/*/*.h lib/*/*.cc spank/*.h spank/*.cc tools/*.cc bench/*.cc examples/*.cc \
    fuzz/*.h fuzz/*.cc)
# Every Debian 12 package the project needs (build, tests, local cluster).
deps:
	scripts/install-deps

format:
	clang-format -i $(CXX_SOURCES)
check-format:
	clang-format --dry-run --Werror $(CXX_SOURCES)

clean:
	rm -rf build build-asan build-tsan build-fuzz build-deb

distclean: clean
	rm -rf config.mk config.status config.log configure aclocal.m4 autom4te.cache

FORCE:
.PHONY: FORCE plugin man deb other-release-plugin bench bench-python deps all check check-build check-python check-sanitize install installcheck uninstall format check-format clean distclean
.PHONY: check-tsan tsan-unit fuzz fuzz-build fuzz-run $(FUZZERS:%=fuzz-run-%)

-include $(LIB_OBJS:.o=.d) $(SPANK_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(TOOL_SRCS:%.cc=$(BUILD)/%.d) \
    $(FUZZ_BINS:=.d)
