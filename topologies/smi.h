/* smi.h — building the intra-node part of a topology from `nvidia-smi topo -m` output.
 *
 * The matrix printed by `nvidia-smi topo -m` names, for every pair of GPUs (and GPU-NIC pairs when
 * NICs are listed), how they are joined: NV# (a bond of # NVLink links), PIX (at most one PCIe
 * bridge), PXB (several PCIe bridges), PHB (through a CPU host bridge), NODE (across host bridges
 * of one NUMA node) or SYS (across the CPU interconnect). From it:
 *
 *   fabric    nvswitch when every pair is NV# with the same count and there are more than two
 *             GPUs (an NVSwitch system shows NV18 everywhere), nvlink-mesh when every GPU has an
 *             NVLink bond, else pcie (with the NV# pairs as bridges);
 *   links     the NV# counts; link_bandwidth from `nvidia-smi nvlink -s` lines ("Link 0: 26.562
 *             GB/s") in the same text, else the caller's value;
 *   PCIe      gpus_per_switch from PIX/PXB blocks, gpus_per_socket from the blocks not split by SYS
 *             (each only when the blocks are contiguous and equal, else the conservative 1);
 *   NICs      the nearest NIC of each GPU (PIX before PXB, PHB, NODE, SYS).
 *
 * The GPU model comes from the `nvidia-smi` table when present ("NVIDIA H200").
 */
#ifndef CS_TOPO_SMI_H
#define CS_TOPO_SMI_H

#include "status.h"
#include "topology.h"

/* Parses text (the output of `nvidia-smi topo -m`, possibly among other output) into *t, a
 * complete topology named `name` that cs_topo_dump writes as a loadable file. link_bw (bytes/s per
 * link per direction) is used when the text has no `nvidia-smi nvlink -s` lines; 0 means 25 GB/s
 * (NVLink 2 to 4). nic_bw (bytes/s per NIC) > 0 adds a network section with the NICs found; 0
 * leaves the topology without a network. Errors: CS_ERR_PARSE naming the line when no matrix is
 * found, a row is missing or short, or an entry is not one of X, NV#, PIX, PXB, PHB, NODE, SYS;
 * CS_ERR_RANGE for more GPUs or NICs than topology.h allows or an asymmetric matrix. */
enum cs_status cs_topo_import_smi(const char *text, const char *name, double link_bw, double nic_bw,
                                  struct cs_topology *t, struct cs_error *err);

#endif
