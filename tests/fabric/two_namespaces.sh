#!/bin/sh
# A real two-host job on one machine: two network namespaces joined by a veth pair, with only
# the TEST-NET-1 addresses assigned here (192.0.2.1 and 192.0.2.2, never routed), one PE in each,
# bootstrapped over tcp and moving data over libfabric tcp;ofi_rxm on the veth. Needs root and
# `ip netns`; prints "SKIP: ..." and exits 77 otherwise. The namespaces are removed on every exit.
#   two_namespaces.sh FABRIC_PROC DEVICE_LITMUS
set -u
proc=$1
litmus=$2

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "the two-namespace test needs root (ip netns)"
command -v ip >/dev/null 2>&1 || skip "iproute2 'ip' is not installed"

tag=$$
ns_a=tessera-a-$tag
ns_b=tessera-b-$tag
veth_a=tsa$tag
veth_b=tsb$tag
out=$(mktemp -d)

cleanup() {
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  ip link del "$veth_a" 2>/dev/null
  rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add "$ns_a" 2>/dev/null || skip "cannot create a network namespace (ip netns add)"
ip netns add "$ns_b" || exit 1
ip link add "$veth_a" type veth peer name "$veth_b" || skip "cannot create a veth pair"
ip link set "$veth_a" netns "$ns_a" && ip link set "$veth_b" netns "$ns_b" || exit 1
ip -n "$ns_a" addr add 192.0.2.1/24 dev "$veth_a" || exit 1
ip -n "$ns_b" addr add 192.0.2.2/24 dev "$veth_b" || exit 1
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up || exit 1; done
ip -n "$ns_a" link set "$veth_a" up && ip -n "$ns_b" link set "$veth_b" up || exit 1

token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
port=$((20000 + tag % 20000))
id=192.0.2.1:$port:$token

# run_pair NAME PROGRAM ARGS...: PE 0 in namespace a, PE 1 in namespace b; fails unless both pass.
run_pair() {
  name=$1
  shift
  for rank in 0 1; do
    if [ $rank = 0 ]; then ns=$ns_a; dev=$veth_a; node=host-a; else ns=$ns_b; dev=$veth_b; node=host-b; fi
    ip netns exec "$ns" env TESSERA_BOOTSTRAP=tcp TESSERA_UNIQUE_ID="$id" TESSERA_RANK=$rank \
      TESSERA_SIZE=2 TESSERA_NODE_ID=$node TESSERA_TIMEOUT=30 \
      TESSERA_FABRIC_PROVIDER='tcp;ofi_rxm' FI_TCP_IFACE="$dev" \
      timeout 120 "$@" >"$out/$name.$rank" 2>&1 &
    eval "pid_$rank=\$!"
  done
  wait "$pid_0"; rc0=$?
  wait "$pid_1"; rc1=$?
  cat "$out/$name.0" "$out/$name.1"
  if [ $rc0 != 0 ] || [ $rc1 != 0 ]; then
    echo "FAILED: $name (PE 0 exit $rc0, PE 1 exit $rc1)"
    exit 1
  fi
  port=$((port + 1))
  id=192.0.2.1:$port:$token
}

run_pair ops "$proc" ops
run_pair litmus "$litmus" 500
echo "two-namespace job PASSED over $veth_a/$veth_b (192.0.2.1 <-> 192.0.2.2)"
