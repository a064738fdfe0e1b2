# netns_lib.sh — sourced (not run) by the scripts that build a real, shaped CPU cluster on one
# machine (tests/netns_cluster.sh, tests/bench/netns_ranks_per_node.sh): one network namespace per
# "node", each joined to a Linux bridge (the switch) by a veth pair whose namespace end (eth0) is
# shaped by tbf to a rate. Needs root and `ip netns`; the caller checks both.
#
#   netns_setup COUNT RATE OCTET DISCARD   COUNT namespaces on subnet 10.OCTET.x.0/24 (x from the
#                                          caller's PID); sets NETNS_ID, NETNS_NET (the /24's
#                                          first three octets), NETNS_BR, NETNS_COUNT; stderr of
#                                          the set-up to DISCARD; returns non-zero on failure
#   netns_name I                           the name of namespace I (0-based)
#   netns_teardown                         removes the namespaces, veths and bridge (safe to call
#                                          twice, or after a failed set-up)
#
# Names are unique to the calling process and short enough for interface names (15 characters).
# tbf's burst is 64 KB: a trial shorter than a few bursts measures the veth, not the shaped rate,
# so callers time trials of hundreds of operations or 100 ms (--trial-time 100ms).

netns_name() { echo "csns${NETNS_ID}_$1"; }

netns_teardown() {
  local i
  [ -n "${NETNS_BR:-}" ] || return 0
  for i in $(seq 0 $((NETNS_COUNT - 1))); do
    ip netns del "$(netns_name "$i")" 2>>"$NETNS_DISCARD"
    ip link del "csv${NETNS_ID}_$i" 2>>"$NETNS_DISCARD"
  done
  ip link del "$NETNS_BR" 2>>"$NETNS_DISCARD"
  NETNS_BR=
}

netns_setup() {
  local count=$1 rate=$2 octet=$3 i n
  NETNS_DISCARD=$4
  NETNS_ID=$(( $$ % 10000 ))
  NETNS_NET=10.$octet.$(( $$ % 250 ))
  NETNS_BR=csbr$NETNS_ID
  NETNS_COUNT=$count
  ip link add "$NETNS_BR" type bridge || return 1
  # mpirun's side: the ranks reach its PMIx server on the bridge's address
  ip addr add "$NETNS_NET.254/24" dev "$NETNS_BR" || return 1
  ip link set "$NETNS_BR" up || return 1
  for i in $(seq 0 $((count - 1))); do
    n=$(netns_name "$i")
    ip netns add "$n" || return 1
    ip link add "csv${NETNS_ID}_$i" type veth peer name eth0 netns "$n" || return 1
    ip link set "csv${NETNS_ID}_$i" master "$NETNS_BR" || return 1
    ip link set "csv${NETNS_ID}_$i" up || return 1
    ip -n "$n" addr add "$NETNS_NET.$((i + 1))/24" dev eth0 || return 1
    ip -n "$n" link set eth0 up || return 1
    ip -n "$n" link set lo up || return 1
    ip netns exec "$n" tc qdisc add dev eth0 root tbf rate "$rate" burst 64kb latency 200ms ||
      return 1
  done
}
