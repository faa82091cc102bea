#!/usr/bin/env bats
# scripts/check-layering: lib/ follows its layers, and a backward include
# is caught, naming the file, the line and what the component may include.

setup() {
  REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  LIB="$BATS_TEST_TMPDIR/lib"
  cp -r "$REPO/lib" "$LIB"
}

@test "the tree follows the layers" {
  run "$REPO/scripts/check-layering" "$REPO/lib"
  [ "$status" -eq 0 ]
  [[ $output == "layering: "*" files in 10 components follow the layers" ]]
}

@test "a backward include (base reaching up into runtime) fails the check" {
  line=$(($(wc -l <"$LIB/base/parse.cc") + 1))
  echo '#include "runtime/wire.h"' >>"$LIB/base/parse.cc"
  run "$REPO/scripts/check-layering" "$LIB"
  [ "$status" -eq 1 ]
  [ "$output" = "$LIB/base/parse.cc:$line: base may not include runtime/wire.h (base may include: base)" ]
}

@test "binding may not include contract, and an include must name its component" {
  sed -i '0,/^#include "base\/parse.h"/s//#include "contract\/options.h"/' "$LIB/binding/binding.cc"
  echo '#include "parse.h"' >>"$LIB/jobgen/sweep.cc"
  run "$REPO/scripts/check-layering" "$LIB"
  [ "$status" -eq 1 ]
  [[ $output == *"binding/binding.cc:"*": binding may not include contract/options.h (binding may include: base binding)"* ]]
  [[ $output == *"jobgen/sweep.cc:"*": #include \"parse.h\" does not name its component"* ]]
}
