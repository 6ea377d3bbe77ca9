# Shared by scripts/demo and scripts/test (sourced, not run): installs the system packages the
# build needs, then configures and builds Tessera.
#
#   TESSERA_BUILD_DIR   build directory, relative to the repository root or absolute (default: build)
#   TESSERA_BUILD_JOBS  parallel compile jobs (default: nproc)

# The repository root: the parent of the folder holding this file.
TESSERA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TESSERA_BUILD_DIR="${TESSERA_BUILD_DIR:-build}"
case "$TESSERA_BUILD_DIR" in
  /*) ;;
  *) TESSERA_BUILD_DIR="$TESSERA_ROOT/$TESSERA_BUILD_DIR" ;;
esac

# Debian/Ubuntu packages needed to build Tessera and run every test, example and CI check.
TESSERA_PACKAGES=(
  cmake ninja-build g++ pkg-config
  libgtest-dev libbenchmark-dev
  openmpi-bin libopenmpi-dev
  libfabric-dev libfabric-bin
  libhwloc-dev hwloc
  clang-format iproute2
  doxygen python3-matplotlib
  clang libclang-rt-dev  # scripts/fuzz: clang, with libFuzzer in its runtime libraries
  # issue 19: the host tile GEMM's BLAS, loaded at run time (tessera/device/ops/impl/host_blas.hpp);
  # the serial flavours are the ones it prefers (no thread pool of their own).
  libopenblas-dev libopenblas0-serial libblis-dev libblis4-serial
  ccache  # tessera_compiler_cache: rebuilds of sources already compiled on this machine are cheap
)

tessera_log() { echo "scripts: $*" >&2; }

# Installs the packages of TESSERA_PACKAGES that are missing: with apt-get when root, otherwise
# prints the command to run and fails. Does nothing (no apt-get update either) when all are there.
tessera_install_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    tessera_log "not a Debian-based system; make sure the equivalents of these are installed:" \
      "${TESSERA_PACKAGES[*]}"
    return 0
  fi
  local missing=() package
  for package in "${TESSERA_PACKAGES[@]}"; do
    if [[ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" != "install ok installed" ]]; then
      missing+=("$package")
    fi
  done
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  if [[ "$(id -u)" != 0 ]]; then
    tessera_log "missing packages: ${missing[*]}"
    tessera_log "install them with:"
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    return 1
  fi
  tessera_log "installing ${missing[*]} (needed to build and test Tessera)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update </dev/null
  apt-get install -y --no-install-recommends "${missing[@]}" </dev/null
}

# Makes every CMake configure of this shell (tessera_build, scripts/sanitize, scripts/fuzz)
# compile through ccache when it is installed and TESSERA_CCACHE is not 0: CMake reads
# CMAKE_<LANG>_COMPILER_LAUNCHER from the environment at a build tree's first configure. Paths
# under the repository root are hashed relative to it (CCACHE_BASEDIR, CCACHE_NOHASHDIR), so
# another checkout of the same sources on this machine (CI's fresh clone) hits the cache; a
# command line that names absolute paths of its own (the tests' -D...PATH= binaries) misses, as
# it should. A cold cache costs a few percent; nothing else changes.
tessera_compiler_cache() {
  if [[ "${TESSERA_CCACHE:-1}" == 0 ]] || ! command -v ccache >/dev/null 2>&1; then
    return 0
  fi
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CMAKE_CUDA_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR="$TESSERA_ROOT" CCACHE_NOHASHDIR=1
  # The main build with CUDA, two sanitizer builds and the fuzzers: room for all of them.
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-20G}"
}

# Configures (the same settings as the `ci` preset in CMakePresets.json: Ninja, RelWithDebInfo,
# warnings as errors) and builds into TESSERA_BUILD_DIR: every target, or only the targets named
# as arguments (scripts/demo). TESSERA_CMAKE_ARGS adds configure arguments.
# The CUDA backend is AUTO: compiled (for sm_80 and sm_90) whenever nvcc is found, also on
# machines without a GPU; TESSERA_ENABLE_CUDA=OFF skips it.
tessera_build() {
  local jobs="${TESSERA_BUILD_JOBS:-$(nproc)}" targets=() what="${*:-every target}"
  (($# > 0)) && targets=(--target "$@")
  tessera_compiler_cache
  tessera_log "configuring and building in $TESSERA_BUILD_DIR"
  local start=$SECONDS
  cmake -S "$TESSERA_ROOT" -B "$TESSERA_BUILD_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_WERROR=ON \
    -DTESSERA_ENABLE_CUDA="${TESSERA_ENABLE_CUDA:-AUTO}" ${TESSERA_CMAKE_ARGS[@]+"${TESSERA_CMAKE_ARGS[@]}"}
  tessera_log "configured in $((SECONDS - start)) s"
  start=$SECONDS
  cmake --build "$TESSERA_BUILD_DIR" -j"$jobs" ${targets[@]+"${targets[@]}"}
  tessera_log "built $what in $((SECONDS - start)) s"
  # torch and triton arrived while the build ran: configure again to register their tests.
  if tessera_python_env_wait; then
    start=$SECONDS
    cmake "$TESSERA_BUILD_DIR" >/dev/null
    cmake --build "$TESSERA_BUILD_DIR" -j"$jobs" ${targets[@]+"${targets[@]}"}
    tessera_log "configured again and built the torch and triton tests in $((SECONDS - start)) s"
  fi
  # Show which GPU code the build holds (nvcc's --generate-code flags), or that there is none.
  local gencode
  gencode="$(grep -oh -- '--generate-code=[^ ]*' "$TESSERA_BUILD_DIR"/build.ninja \
    "$TESSERA_BUILD_DIR"/CMakeFiles/rules.ninja 2>/dev/null | sort -u | tr '\n' ' ' || true)"
  tessera_log "CUDA code generated for: ${gencode:-none (host backend only)}"
}

# OpenMPI refuses to run as root unless told; harmless for other users.
tessera_mpi_env() {
  if [[ "$(id -u)" == 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
}

# The Python package's test environment: a venv (TESSERA_PYTHON_VENV, default
# <build>/python-venv) with what tests/python needs from PyPI; on success it adds the CMake
# arguments that build the package for that venv's Python to TESSERA_CMAKE_ARGS (call it before
# tessera_build). When the venv cannot be made or the packages cannot be installed (no network),
# it says so and the build goes on without the package: the `python` label is then empty.
TESSERA_PYTHON_VENV="${TESSERA_PYTHON_VENV:-$TESSERA_BUILD_DIR/python-venv}"
TESSERA_PYTHON_PIP_PACKAGES=(numpy pytest nanobind scikit-build-core)
tessera_python_env() {
  local venv="$TESSERA_PYTHON_VENV"
  if [[ ! -x "$venv/bin/python" ]]; then
    # Debian splits venv/ensurepip and the C headers out of python3.
    if ! python3 -c 'import ensurepip, sysconfig, os, sys; sys.exit(not os.path.exists(
        os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then
      local saved=("${TESSERA_PACKAGES[@]}")
      TESSERA_PACKAGES=(python3 python3-venv python3-dev)
      tessera_install_packages || true
      TESSERA_PACKAGES=("${saved[@]}")
    fi
    tessera_log "making the Python venv $venv"
    if ! python3 -m venv "$venv"; then
      tessera_log "cannot make a Python venv: building without the Python package (python tests skipped)"
      rm -rf "$venv"
      return 0
    fi
  fi
  if ! "$venv/bin/pip" install -q --disable-pip-version-check "${TESSERA_PYTHON_PIP_PACKAGES[@]}"; then
    tessera_log "cannot install ${TESSERA_PYTHON_PIP_PACKAGES[*]} from PyPI: building without the" \
      "Python package (python tests skipped)"
    return 0
  fi
  # torch and triton (about 70 s and 5 GB the first time) are optional: without them the torch
  # tests skip and the triton label is empty. Installed together so triton is the one torch pins,
  # in the background while tessera_build compiles (mostly download and unpacking: the CPUs are
  # the compiler's); tessera_build waits for it and configures again, which registers the torch
  # and triton tests.
  if ! "$venv/bin/python" -c 'import torch, triton' 2>/dev/null; then
    mkdir -p "$TESSERA_BUILD_DIR"
    TESSERA_PIP_LOG="$TESSERA_BUILD_DIR/pip-torch-triton.log"
    tessera_log "installing torch and triton into $venv in the background (log: $TESSERA_PIP_LOG)"
    "$venv/bin/pip" install -q --disable-pip-version-check torch triton >"$TESSERA_PIP_LOG" 2>&1 &
    TESSERA_PIP_PID=$!
  fi
  TESSERA_CMAKE_ARGS+=(-DTESSERA_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$venv/bin/python")
}

# Waits for tessera_python_env's background install of torch and triton, if one runs; returns 0
# when it finished and the build should configure again.
tessera_python_env_wait() {
  [[ -n "${TESSERA_PIP_PID:-}" ]] || return 1
  tessera_log "waiting for the torch and triton install to finish"
  local status=0
  wait "$TESSERA_PIP_PID" || status=$?
  TESSERA_PIP_PID=
  if ((status != 0)); then
    tail -n 20 "$TESSERA_PIP_LOG" >&2 || true
    tessera_log "cannot install torch and triton from PyPI: the torch tests of the python label" \
      "are skipped and the triton label is empty"
    return 1
  fi
  return 0
}
