#!/usr/bin/env bash
# bench/netns_cluster.sh — the netns cluster's prediction figure against its target, on demand
# (not in ctest: the shaped links share the machine's cores, so the figure moves with the load).
# Calibrates 2-4 shaped-veth "nodes" (Open MPI's own all_reduce choice and each algorithm it uses,
# forced), predicts 6 and 8 at Open MPI's own choice, measures them once and asserts the median
# |error| over every size <= CS_NETNS_TARGET (default 0.10). Prints the figure, the target and
# the conditions (cores, load average, link rate, sizes). The links default to 100 Mbit/s here: at
# 200 Mbit/s the kernel's shaping of 8 nodes' traffic saturates a 2-core machine (the 8-node
# 512 KiB all_reduce took 1.58x as long at 100 Mbit/s, not 2x, 2026-11-27), so the figure would
# measure the host, not the network. Run it as root on an idle machine:
#   sudo tests/bench/netns_cluster.sh build/calibrate/commscale-run build/sim/commscale
# Exit 0 met, 1 missed, 77 skipped (not root, or no `ip netns`).
here=$(cd "$(dirname "$0")/.." && pwd)
CS_NETNS_RATE=${CS_NETNS_RATE:-100mbit} CS_NETNS_STRICT=1 exec bash "$here/netns_cluster.sh" "$@"
