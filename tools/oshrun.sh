#!/bin/sh
# oshrun: the launcher name OpenSHMEM users type, over tessera-run (installed next to it):
#   oshrun -np N [tessera-run options...] PROGRAM [ARGS...]
# -n N and --np N are taken as -np N; everything else goes to tessera-run unchanged (see
# tessera-run --help). Under mpirun, run the program with mpirun directly.
set -e
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
count=$#
while [ "$count" -gt 0 ]; do
  arg=$1
  shift
  count=$((count - 1))
  case "$arg" in
    -n|--np|-np) arg=-np ;;
  esac
  set -- "$@" "$arg"
done
exec "$here/tessera-run" "$@"
