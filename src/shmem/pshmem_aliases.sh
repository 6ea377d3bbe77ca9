#!/bin/sh
# The profiling names of the OpenSHMEM API (include/tessera/pshmem.h), made after the archive is
# built: in every object of ARCHIVE, each global function shmem_NAME becomes weak and gains a
# strong alias pshmem_NAME at the same address. A profiling tool then defines its own shmem_NAME
# (which wins over the weak one without a clash) and calls pshmem_NAME to reach Tessera's.
#   pshmem_aliases.sh ARCHIVE AR OBJCOPY OBJDUMP
set -eu
archive=$1
ar=$2
objcopy=$3
objdump=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
members=$("$ar" t "$archive")
(cd "$work" && "$ar" x "$archive")
for member in $members; do
  object="$work/$member"
  # objdump -t: "VALUE g F SECTION SIZE NAME" for a global function defined in SECTION.
  "$objdump" -t "$object" |
    awk '$2 == "g" && $3 == "F" && $NF ~ /^shmem_/ {
           printf "--weaken-symbol=%s\n--add-symbol=p%s=%s:0x%s,global,function\n", $NF, $NF, $4, $1
         }' >"$work/args"
  if [ -s "$work/args" ]; then
    "$objcopy" "@$work/args" "$object"
  fi
done
rm -f "$archive"
(cd "$work" && "$ar" qcs "$archive" $members)
