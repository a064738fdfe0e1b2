#!/usr/bin/env bash
# Builds the whole project again with AddressSanitizer + UndefinedBehaviorSanitizer and runs every
# test there (except this one, the MPI tests, the runner builds and label accuracy, which fails by
# design: see docs/validation.md). Any sanitizer report fails the
# run: the sanitized build aborts on the first error (-fno-sanitize-recover=all). It is compiled
# at -O1 (AddressSanitizer's advice for usable speed; asserts stay on): at -O0 its test_allocfail
# ran past 900 s on a 2-core machine at load 5, which a run under load must not depend on.
# usage: sanitize.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 dir=$2
cmake -S "$src" -B "$dir" -DCS_SANITIZE=ON -DCS_WERROR=ON -DCS_SANITIZER_TEST=OFF \
      -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-O1 -g" \
      >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" -j2 >"$dir.build.log" 2>&1 || { tail -50 "$dir.build.log"; exit 1; }
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$dir" && ctest --output-on-failure -LE 'mpi|sanitize|accuracy|build'
