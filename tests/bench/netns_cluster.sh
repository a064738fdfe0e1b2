#!/usr/bin/env bash
# bench/netns_cluster.sh — the netns cluster's prediction figure against its target, on demand
# (not in ctest: the shaped links share the machine's cores, so the figure moves with the load).
# Calibrates 2-4 shaped-veth "nodes", predicts 6 and 8, measures them once and asserts every
# point >= 64 KiB within CS_NETNS_TARGET (default 0.15). Prints the figure, the target and the
# conditions (cores, load average, link rate, sizes). Run it as root on an idle machine:
#   sudo tests/bench/netns_cluster.sh build/calibrate/commscale-run build/sim/commscale
# Exit 0 met, 1 missed, 77 skipped (not root, or no `ip netns`).
here=$(cd "$(dirname "$0")/.." && pwd)
CS_NETNS_STRICT=1 exec bash "$here/netns_cluster.sh" "$@"
