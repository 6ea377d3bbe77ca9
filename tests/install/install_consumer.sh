#!/usr/bin/env bash
# The install test (ctest label `install`): installs the build tree into a temporary prefix,
# builds tests/install/consumer out of tree against it twice (find_package(tessera), then a plain
# compiler command line with `pkg-config --static tessera`) and runs each build on 2 PEs.
#
#   install_consumer.sh <build-dir> <consumer-source-dir> <cmake> <generator> <c++> <launcher...>
# <launcher...> starts 2 PEs of the program appended to it (mpirun -np 2, or tessera-run -np 2;
# the literal word INSTALLED_TESSERA_RUN stands for the installed bin/tessera-run).
set -euo pipefail
build_dir=$1 consumer_src=$2 cmake=$3 generator=$4 cxx=$5
shift 5
launcher=("$@")

work="$(mktemp -d "${TMPDIR:-/tmp}/tessera-install-test.XXXXXX")"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
step() { echo "install test: $*"; }

step "cmake --install $build_dir --prefix $prefix"
"$cmake" --install "$build_dir" --prefix "$prefix" >"$work/install.log" || {
  cat "$work/install.log"
  exit 1
}
for f in include/tessera/tessera.hpp include/tessera/device.hpp include/tessera/device/signal.hpp \
  lib/libtessera.a lib/cmake/tessera/tesseraConfig.cmake \
  lib/cmake/tessera/tesseraConfigVersion.cmake lib/pkgconfig/tessera.pc \
  bin/tessera-run bin/tessera-info; do
  [[ -e "$prefix/$f" ]] || { echo "install test: $f is not installed"; exit 1; }
done
if [[ -e "$prefix/lib/libtessera_shmem.a" ]] &&
  ! grep -q 'tessera::shmem' "$prefix/lib/cmake/tessera/tesseraTargets.cmake"; then
  echo "install test: libtessera_shmem.a is installed but tessera::shmem is not exported"
  exit 1
fi
for i in "${!launcher[@]}"; do
  [[ "${launcher[$i]}" == INSTALLED_TESSERA_RUN ]] && launcher[i]="$prefix/bin/tessera-run"
done

step "find_package(tessera): configure and build the consumer"
"$cmake" -S "$consumer_src" -B "$work/cmake-build" -G "$generator" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
"$cmake" --build "$work/cmake-build"

step "find_package(tessera): run on 2 PEs"
"${launcher[@]}" "$work/cmake-build/consumer"

step "pkg-config --static tessera: build the consumer"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
set -x
# shellcheck disable=SC2046  # the flags are meant to split into words
"$cxx" -std=c++20 -O1 "$consumer_src/main.cpp" -o "$work/consumer-pc" \
  $(pkg-config --cflags --libs --static tessera)
set +x

step "pkg-config --static tessera: run on 2 PEs"
"${launcher[@]}" "$work/consumer-pc"
step "both consumers verified"
