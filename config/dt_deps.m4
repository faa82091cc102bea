dnl Dependency checks for dist-train. Required deps fail configure with the
dnl Debian package to install; optional ones are auto-detected and become
dnl fatal only when explicitly requested (--with-cuda, --with-nccl).

dnl DT_CHECK_SLURM: <slurm/spank.h> and libslurm (required), plugin dir.
AC_DEFUN([DT_CHECK_SLURM], [
  AC_ARG_WITH([slurm], [AS_HELP_STRING([--with-slurm=DIR],
      [Slurm installation prefix (default: /usr)])],
      [], [with_slurm=/usr])
  SLURM_CPPFLAGS=""
  AS_IF([test "x$with_slurm" != "x/usr"],
        [SLURM_CPPFLAGS="-I$with_slurm/include"])
  save_CPPFLAGS=$CPPFLAGS
  CPPFLAGS="$CPPFLAGS $SLURM_CPPFLAGS"
  AC_CHECK_HEADER([slurm/spank.h], [],
      [AC_MSG_ERROR([slurm/spank.h not found: install libslurm-dev or pass --with-slurm=DIR])])
  CPPFLAGS=$save_CPPFLAGS
  dnl Debian ships no slurm.pc: find libslurm by hand.
  SLURM_LIBS=""
  for d in "$with_slurm/lib/$($CXX -print-multiarch 2>/dev/null)" "$with_slurm/lib64" "$with_slurm/lib"; do
    AS_IF([test -z "$SLURM_LIBS" && test -e "$d/libslurm.so"], [SLURM_LIBS="-L$d -lslurm"; slurm_libdir=$d])
  done
  AS_IF([test -z "$SLURM_LIBS"],
        [AC_MSG_ERROR([libslurm.so not found under $with_slurm: install libslurm-dev])])
  AC_ARG_WITH([slurm-plugindir], [AS_HELP_STRING([--with-slurm-plugindir=DIR],
      [where Slurm loads plugins from (default: detected)])],
      [SLURM_PLUGINDIR=$withval], [SLURM_PLUGINDIR=""])
  AS_IF([test -z "$SLURM_PLUGINDIR"], [
    for d in "$slurm_libdir/slurm-wlm" "$slurm_libdir/slurm"; do
      AS_IF([test -z "$SLURM_PLUGINDIR" && test -d "$d"], [SLURM_PLUGINDIR=$d])
    done])
  AS_IF([test -z "$SLURM_PLUGINDIR"], [SLURM_PLUGINDIR="$slurm_libdir/slurm"])
  AC_ARG_WITH([slurm-sysconfdir], [AS_HELP_STRING([--with-slurm-sysconfdir=DIR],
      [Slurm's configuration dir; the plugstack snippet goes to DIR/plugstack.conf.d (default: /etc/slurm)])],
      [SLURM_SYSCONFDIR=$withval], [SLURM_SYSCONFDIR=/etc/slurm])
  AC_SUBST([SLURM_SYSCONFDIR])
  AC_MSG_CHECKING([Slurm version])
  dnl The headers define only SLURM_VERSION_NUMBER (0xMMmmpp, e.g. 0x180b05
  dnl = 24.11.5): decode it.
  slurm_vnum=$(sed -n 's/^#define SLURM_VERSION_NUMBER *//p' "$with_slurm/include/slurm/slurm_version.h" 2>/dev/null)
  AS_IF([test -z "$slurm_vnum"],
        [AC_MSG_ERROR([no SLURM_VERSION_NUMBER in $with_slurm/include/slurm/slurm_version.h])])
  SLURM_VERSION=$(printf '%d.%02d.%d' $(( slurm_vnum >> 16 )) $(( (slurm_vnum >> 8) & 255 )) $(( slurm_vnum & 255 )))
  SLURM_RELEASE=${SLURM_VERSION%.*}
  AC_MSG_RESULT([$SLURM_VERSION])
  AC_SUBST([SLURM_RELEASE])
  AC_SUBST([SLURM_CPPFLAGS]) AC_SUBST([SLURM_LIBS]) AC_SUBST([SLURM_PLUGINDIR])
  AC_SUBST([SLURM_VERSION])
])

dnl DT_CHECK_REQUIRED_PKG(VAR, MODULE, HEADER, DEBIAN-PACKAGE)
AC_DEFUN([DT_CHECK_REQUIRED_PKG], [
  PKG_CHECK_MODULES([$1], [$2], [],
      [AC_MSG_ERROR([$2 not found ($3): install $4])])
  dt_have_$1=yes
])

dnl DT_CHECK_GTEST: optional; without it `make check` explains what to install.
AC_DEFUN([DT_CHECK_GTEST], [
  PKG_CHECK_MODULES([GTEST], [gtest_main], [HAVE_GTEST=yes], [HAVE_GTEST=no])
  AC_SUBST([HAVE_GTEST])
])

dnl DT_CHECK_CUDA: --with-cuda[=DIR]; auto-detects /usr/local/cuda.
AC_DEFUN([DT_CHECK_CUDA], [
  AC_ARG_WITH([cuda], [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
      [CUDA toolkit (default: auto-detect /usr/local/cuda); fatal if given and missing])],
      [], [with_cuda=check])
  HAVE_CUDA=no CUDA_CPPFLAGS="" CUDA_LIBS=""
  AS_CASE([$with_cuda],
    [no], [],
    [yes|check], [cuda_dir=/usr/local/cuda],
    [cuda_dir=$with_cuda])
  AS_IF([test "x$with_cuda" != xno], [
    AC_MSG_CHECKING([for CUDA runtime in $cuda_dir])
    for d in lib64 lib targets/x86_64-linux/lib; do
      AS_IF([test "$HAVE_CUDA" = no && test -f "$cuda_dir/include/cuda_runtime.h" &&
             test -e "$cuda_dir/$d/libcudart.so"], [
        HAVE_CUDA=yes CUDA_DIR=$cuda_dir
        CUDA_CPPFLAGS="-I$cuda_dir/include"
        CUDA_LIBS="-L$cuda_dir/$d -Wl,-rpath,$cuda_dir/$d -lcudart"])
    done
    AC_MSG_RESULT([$HAVE_CUDA])
    AS_IF([test "$HAVE_CUDA" = no && test "x$with_cuda" != xcheck],
          [AC_MSG_ERROR([--with-cuda=$with_cuda given but no CUDA runtime found in $cuda_dir])])])
  AC_SUBST([HAVE_CUDA]) AC_SUBST([CUDA_CPPFLAGS]) AC_SUBST([CUDA_LIBS])
])

dnl DT_CHECK_NCCL: --with-nccl[=DIR]; auto-detected next to CUDA or in /usr.
AC_DEFUN([DT_CHECK_NCCL], [
  AC_ARG_WITH([nccl], [AS_HELP_STRING([--with-nccl@<:@=DIR@:>@],
      [NCCL (default: auto-detect with CUDA); fatal if given and missing])],
      [], [with_nccl=check])
  HAVE_NCCL=no NCCL_CPPFLAGS="" NCCL_LIBS=""
  AS_IF([test "x$with_nccl" != xno && test "$HAVE_CUDA" = yes], [
    AS_CASE([$with_nccl], [yes|check], [nccl_dirs="$CUDA_DIR /usr"], [nccl_dirs=$with_nccl])
    AC_MSG_CHECKING([for NCCL])
    for root in $nccl_dirs; do
      for d in lib64 lib "lib/$($CXX -print-multiarch 2>/dev/null)" targets/x86_64-linux/lib; do
        AS_IF([test "$HAVE_NCCL" = no && test -f "$root/include/nccl.h" &&
               test -e "$root/$d/libnccl.so"], [
          HAVE_NCCL=yes NCCL_CPPFLAGS="-I$root/include"
          NCCL_LIBS="-L$root/$d -Wl,-rpath,$root/$d -lnccl"])
      done
    done
    AC_MSG_RESULT([$HAVE_NCCL])])
  AS_IF([test "$HAVE_NCCL" = no && test "x$with_nccl" != xcheck && test "x$with_nccl" != xno],
        [AC_MSG_ERROR([--with-nccl=$with_nccl given but NCCL (with CUDA) was not found])])
  AC_SUBST([HAVE_NCCL]) AC_SUBST([NCCL_CPPFLAGS]) AC_SUBST([NCCL_LIBS])
])

dnl DT_SUMMARY: what was found, at the end of configure.
AC_DEFUN([DT_SUMMARY], [
  cat <<DT_EOF

dist-train $PACKAGE_VERSION configured
  prefix           : $prefix
  Slurm            : $SLURM_VERSION ($SLURM_LIBS)
  Slurm plugin dir : $SLURM_PLUGINDIR
  plugstack.conf.d : $SLURM_SYSCONFDIR/plugstack.conf.d
  hwloc            : $(pkg-config --modversion hwloc)
  yaml-cpp         : $(pkg-config --modversion yaml-cpp)
  OpenSSL          : $(pkg-config --modversion libcrypto)
  GoogleTest       : $HAVE_GTEST
  Google Benchmark : $HAVE_BENCHMARK (make bench)
  CXXFLAGS         : $CXXFLAGS
  CPPFLAGS         : $CPPFLAGS
  LDFLAGS          : $LDFLAGS
  CUDA             : $HAVE_CUDA $CUDA_CPPFLAGS
  NCCL             : $HAVE_NCCL $NCCL_LIBS

DT_EOF
])

dnl DT_CHECK_HEADER_ONLY(HEADER, DEBIAN-PACKAGE): a required header-only
dnl library (CLI11, nlohmann-json).
AC_DEFUN([DT_CHECK_HEADER_ONLY], [
  AC_CHECK_HEADER([$1], [],
      [AC_MSG_ERROR([$1 not found: install $2])])
])

dnl DT_CHECK_BENCHMARK: Google Benchmark, optional (make bench).
AC_DEFUN([DT_CHECK_BENCHMARK], [
  HAVE_BENCHMARK=no
  BENCHMARK_LIBS=""
  AC_CHECK_HEADER([benchmark/benchmark.h], [
    save_LIBS=$LIBS
    LIBS="-lbenchmark -lpthread $LIBS"
    AC_MSG_CHECKING([for libbenchmark])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <benchmark/benchmark.h>]],
                                    [[benchmark::Initialize(nullptr, nullptr);]])],
        [HAVE_BENCHMARK=yes; BENCHMARK_LIBS="-lbenchmark -lpthread"])
    AC_MSG_RESULT([$HAVE_BENCHMARK])
    LIBS=$save_LIBS])
  AC_SUBST([HAVE_BENCHMARK]) AC_SUBST([BENCHMARK_LIBS])
])
