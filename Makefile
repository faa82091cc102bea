# dist-train top-level Makefile (GNU make). `make` on a fresh clone runs
# autoreconf + configure itself; re-run ./configure to change options.
#
#   make                 library, SPANK plugin, tools
#   make check           unit tests (GoogleTest)
#   make check-sanitize  unit tests under ASan+UBSan (build-asan/)
#   make install         honours prefix= (configure or make) and DESTDIR=
#   make format          clang-format every C++ file
#   make bench           topology load / plan benchmarks with ratios
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
WARNINGS := -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wformat=2
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif
HARDEN := $(HWLOC_CFLAGS) $(YAMLCPP_CFLAGS) $(OPENSSL_CFLAGS) -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIC
CXXFLAGS ?= -g
ALL_CXXFLAGS := -std=c++17 $(OPT) $(CXXFLAGS) $(WARNINGS) $(HARDEN) -Iinclude -Ilib \
    $(SLURM_CPPFLAGS) -DDT_VERSION='"$(PACKAGE_VERSION)"' -MMD -MP
LINK_HARDEN := -Wl,-z,relro,-z,now,-z,noexecstack

LIB_SRCS := $(filter-out %_test.cc,$(wildcard lib/*.cc))

# NCCL/CUDA: auto-detected by configure; not in sanitizer builds (the CUDA
# runtime and ASan do not mix). CUDA headers are system headers for -Werror.
ifeq ($(HAVE_NCCL)$(SANITIZE),yes)
NCCL_FLAGS := -DDT_HAVE_NCCL $(patsubst -I%,-isystem %,$(CUDA_CPPFLAGS) $(NCCL_CPPFLAGS))
# Loaded with dlopen at the first device buffer (lib/nccl_backend.cc): keep
# only the search path (-rpath) of the GPU libraries, link none of them.
GPU_LIBS := $(filter-out -l%,$(CUDA_LIBS) $(NCCL_LIBS)) -ldl
GPU_TEST_LIBS := $(CUDA_LIBS)  # the GPU test allocates device memory itself
endif
SPANK_SRCS := $(filter-out %_test.cc,$(wildcard spank/*.cc))
TEST_SRCS := $(wildcard lib/*_test.cc spank/*_test.cc)
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
    $(BUILD)/tools/dt-requeue
EXAMPLES := $(BUILD)/examples/train_linear
TEMPLATE_DIR = $(datarootdir)/dist-train/templates

all: $(LIB_A) $(LIB_SO) $(PLUGIN) $(TOOLS) $(EXAMPLES)

$(BUILD)/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) -c $< -o $@

# The reduction loops: vectorized (GCC vectorizes only trivially at -O2).
$(BUILD)/lib/reduce.o: ALL_CXXFLAGS += -O3

$(LIB_A): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(LIB_SO): $(LIB_OBJS)
	$(CXX) -shared -Wl,-soname,$(SONAME) $(LINK_HARDEN) $(SAN_LDFLAGS) -o $@ $^ $(SLURM_LIBS) $(HWLOC_LIBS) $(YAMLCPP_LIBS) $(OPENSSL_LIBS) $(GPU_LIBS)
	ln -sf $(SONAME) $(BUILD)/libdist-train.so

# The plugin resolves slurm_* / spank_* from the process that loads it
# (srun, sbatch, slurmstepd); the version script exports only the SPANK
# entry points so none of our or libstdc++'s symbols leak into slurmstepd.
$(PLUGIN): $(SPANK_OBJS) $(LIB_A) spank/spank_dist_train.lds
	@mkdir -p $(dir $@)
	$(CXX) -shared $(LINK_HARDEN) -Wl,--version-script=spank/spank_dist_train.lds \
	    -o $@.tmp $(SPANK_OBJS) $(LIB_A) $(HWLOC_LIBS)
	mv -f $@.tmp $@

$(BUILD)/tools/dt-topo: $(BUILD)/tools/dt_topo.o $(LIB_A)
	$(CXX) $(SAN_LDFLAGS) $(LINK_HARDEN) -o $@ $^ $(SLURM_LIBS) $(HWLOC_LIBS) $(YAMLCPP_LIBS) $(OPENSSL_LIBS) $(GPU_LIBS)

RUNTIME_LIBS = $(SLURM_LIBS) $(HWLOC_LIBS) $(YAMLCPP_LIBS) $(OPENSSL_LIBS) $(GPU_LIBS)
$(BUILD)/tools/dt-run: $(BUILD)/tools/dt_run.o $(LIB_A)
	$(CXX) $(SAN_LDFLAGS) $(LINK_HARDEN) -o $@ $^ $(RUNTIME_LIBS)
$(BUILD)/tools/dt-requeue: $(BUILD)/tools/dt_requeue.o $(LIB_A)
	$(CXX) $(SAN_LDFLAGS) $(LINK_HARDEN) -o $@ $^ $(RUNTIME_LIBS)
$(BUILD)/tools/dt-bench: $(BUILD)/tools/dt_bench.o $(LIB_A)
	$(CXX) $(SAN_LDFLAGS) $(LINK_HARDEN) -o $@ $^ $(RUNTIME_LIBS)
$(BUILD)/examples/train_linear: $(BUILD)/examples/train_linear.o $(LIB_A)
	$(CXX) $(SAN_LDFLAGS) $(LINK_HARDEN) -o $@ $^ $(RUNTIME_LIBS)

$(BUILD)/tools/gen-sbatch: $(BUILD)/tools/gen_sbatch.o $(LIB_A)
	$(CXX) $(SAN_LDFLAGS) $(LINK_HARDEN) -o $@ $^ $(SLURM_LIBS) $(YAMLCPP_LIBS)
$(BUILD)/tools/gen_sbatch.o: ALL_CXXFLAGS += -DDT_TEMPLATE_DIR='"$(TEMPLATE_DIR)"'

$(UNIT): $(TEST_OBJS) $(LIB_A)
ifneq ($(HAVE_GTEST),yes)
	@echo "GoogleTest not found at configure time: install libgtest-dev and re-run ./configure" >&2; exit 1
endif
	@mkdir -p $(dir $@)
	$(CXX) $(SAN_LDFLAGS) -o $@ $(TEST_OBJS) $(LIB_A) $(GTEST_LIBS) $(SLURM_LIBS) $(HWLOC_LIBS) $(YAMLCPP_LIBS) $(OPENSSL_LIBS) $(GPU_LIBS) $(GPU_TEST_LIBS) -lpthread

$(BUILD)/lib/nccl_backend.o $(BUILD)/lib/nccl_backend_test.o: ALL_CXXFLAGS += $(NCCL_FLAGS)
$(TEST_OBJS): ALL_CXXFLAGS += $(GTEST_CFLAGS) -DDT_SOURCE_DIR='"$(CURDIR)"'

check: $(UNIT)
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	UBSAN_OPTIONS=print_stacktrace=1 $(UNIT) $(GTEST_ARGS)

BENCH := $(BUILD)/bench/topology_bench
$(BENCH): $(BUILD)/bench/topology_bench.o $(LIB_A)
	$(CXX) -o $@ $^ -lbenchmark -lpthread $(SLURM_LIBS) $(HWLOC_LIBS)
$(BUILD)/bench/topology_bench.o: ALL_CXXFLAGS += -DDT_SOURCE_DIR='"$(CURDIR)"'

# Benchmarks (not part of check): ratios against peers measured in one run.
bench: $(BENCH)
	$(BENCH) --benchmark_format=json --benchmark_min_time=0.2 > $(BUILD)/bench/topology.json
	python3 bench/report.py < $(BUILD)/bench/topology.json

check-sanitize:
	$(MAKE) BUILD=build-asan SANITIZE=1 WERROR=$(WERROR) check

# ---- install -------------------------------------------------------------
INSTALL ?= install
PLUGSTACK_SNIPPET := $(BUILD)/dist-train.conf

$(PLUGSTACK_SNIPPET): config.mk
	@mkdir -p $(dir $@)
	echo "required $(SLURM_PLUGINDIR)/spank_dist_train.so" > $@

# Generated here (not by configure) so that `make install prefix=...` is
# honoured too.
$(BUILD)/dist-train.pc: dist-train.pc.in config.mk FORCE
	@mkdir -p $(dir $@)
	sed -e 's|@prefix@|$(prefix)|; s|@exec_prefix@|$(exec_prefix)|; s|@libdir@|$(libdir)|' \
	    -e 's|@includedir@|$(includedir)|; s|@PACKAGE_VERSION@|$(PACKAGE_VERSION)|' \
	    -e 's|@SLURM_LIBS@|$(SLURM_LIBS)|' $< > $@

install: all $(PLUGSTACK_SNIPPET) $(BUILD)/dist-train.pc
	$(INSTALL) -d $(DESTDIR)$(SLURM_PLUGINDIR) $(DESTDIR)$(libdir)/pkgconfig \
	    $(DESTDIR)$(includedir)/dist_train $(DESTDIR)$(SLURM_SYSCONFDIR)/plugstack.conf.d \
	    $(DESTDIR)$(bindir) $(DESTDIR)$(docdir)
	$(INSTALL) -m 0755 $(PLUGIN) $(DESTDIR)$(SLURM_PLUGINDIR)/spank_dist_train.so.new
	mv -f $(DESTDIR)$(SLURM_PLUGINDIR)/spank_dist_train.so.new $(DESTDIR)$(SLURM_PLUGINDIR)/spank_dist_train.so
	$(INSTALL) -m 0644 $(PLUGSTACK_SNIPPET) $(DESTDIR)$(SLURM_SYSCONFDIR)/plugstack.conf.d/dist-train.conf
	$(INSTALL) -m 0644 include/dist_train/*.h $(DESTDIR)$(includedir)/dist_train/
	$(INSTALL) -m 0644 $(LIB_A) $(DESTDIR)$(libdir)/
	$(INSTALL) -m 0755 $(LIB_SO) $(DESTDIR)$(libdir)/
	ln -sf $(SONAME) $(DESTDIR)$(libdir)/libdist-train.so
	$(INSTALL) -m 0644 $(BUILD)/dist-train.pc $(DESTDIR)$(libdir)/pkgconfig/
	$(INSTALL) -m 0644 docs/*.md $(DESTDIR)$(docdir)/
	$(INSTALL) -m 0755 $(TOOLS) $(DESTDIR)$(bindir)/
	$(INSTALL) -d $(DESTDIR)$(TEMPLATE_DIR)
	$(INSTALL) -m 0644 templates/*.sbatch $(DESTDIR)$(TEMPLATE_DIR)/

CXX_SOURCES = $(wildcard include/*/*.h lib/*.h lib/*.cc spank/*.h spank/*.cc tools/*.cc bench/*.cc examples/*.cc)
# Every Debian 12 package the project needs (build, tests, local cluster).
deps:
	scripts/install-deps

format:
	clang-format -i $(CXX_SOURCES)
check-format:
	clang-format --dry-run --Werror $(CXX_SOURCES)

clean:
	rm -rf build build-asan

distclean: clean
	rm -rf config.mk config.status config.log configure aclocal.m4 autom4te.cache

FORCE:
.PHONY: FORCE bench deps all check check-sanitize install format check-format clean distclean

-include $(LIB_OBJS:.o=.d) $(SPANK_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(TOOL_SRCS:%.cc=$(BUILD)/%.d)
