/* topology.h — cluster topology files: what a node is made of and how nodes are wired.
 *
 * A topology file (a .yaml file in topologies/, `version: 1`) describes one kind of node and the
 * network that joins many of them. Every quantity carries its unit in the text ("400Gbps",
 * "450GBps", "2.7us"); inside, struct cs_topology holds SI doubles (bytes/s, seconds). Bandwidths
 * are per direction: NVIDIA's "900 GB/s" for NVLink4 is 450 GB/s each way.
 *
 *   version: 1
 *   name: dgx-h100
 *   description: ...
 *   node:
 *     gpus: 8                     GPUs per node (1..CS_TOPO_MAX_GPUS)
 *     gpu: H100-SXM5-80GB         label only
 *     fabric: nvswitch            nvswitch | nvlink-mesh | pcie
 *     nvlink_bandwidth: 450GBps   nvswitch: per GPU, per direction
 *     link_bandwidth: 25GBps      nvlink-mesh, bridges: one NVLink link, per direction
 *     links: [[0,1,...],...]      nvlink-mesh, bridges: NVLink link counts between GPUs
 *     pcie_bandwidth: 32GBps      GPU to its PCIe switch
 *     gpus_per_switch: 2          GPUs below one PCIe switch (default: a socket)
 *     switch_uplink: 32GBps       PCIe switch to CPU (default: pcie_bandwidth)
 *     gpus_per_socket: 4          GPUs on one CPU socket (default: all)
 *     socket_bandwidth: 40GBps    between sockets, UPI/xGMI (default: pcie_bandwidth)
 *     nvlink_domain: 72           GPUs joined by NVLink across nodes (default: gpus)
 *     nvls: true                  NVLink SHARP in the NVSwitches (NCCL's NVLS)
 *     efficiency: 0.8             ring all-reduce busbw / link rate (default by fabric)
 *     nic_affinity: [0,0,1,...]   the NIC nearest to each GPU (default: spread evenly)
 *   network:                      optional: without one, a node stands alone
 *     nics: 8                     NICs (rails) per node
 *     nic_speed: 400Gbps          per NIC, per direction
 *     transport: infiniband       infiniband | roce | tcp
 *     latency: 2.7us              one small-message step between nodes on one switch
 *     switch_latency: 0.13us      each further switch on the path
 *     efficiency: 0.95            ring all-reduce busbw / NIC rate (default by transport)
 *     rail_optimized: true        NIC k of every node on leaf k (else all NICs on one leaf)
 *     sharp: true                 in-network reduction in use (CollNet; NCCL's default: off)
 *     nodes: 4                    nodes in the cluster (0 = as many as a plan asks for)
 *     levels:                     switch levels, leaf first
 *       - name: leaf
 *         radix: 64               ports per switch
 *         oversubscription: 1:1   down:up ratio at its uplinks ("4:1", "1:4" or 4)
 *         nodes: 32               nodes below one unit: the pod size (default: from radix)
 *
 * A level's `nodes` is the pod size at that level: a group whose nodes all sit below one unit stays
 * there; one that spans units crosses up, through the uplinks of every level below. A leaf's size
 * follows from its radix when omitted: its down ports are radix * r / (r + 1) below an r:1
 * oversubscribed uplink, and a rail-optimised leaf takes one port per node while a rail-unaware
 * one takes `nics`. Levels above the leaf give `nodes` explicitly, except the top level, which
 * spans the whole cluster (so does a leaf that is the only level).
 *
 * Errors name the file, line and column ("dgx.yaml:12:5: ..."); unknown keys are errors.
 */
#ifndef CS_TOPOLOGY_H
#define CS_TOPOLOGY_H

#include <stddef.h>
#include <stdio.h>

#include "status.h"

#define CS_TOPO_VERSION 1
#define CS_TOPO_MAX_GPUS 32  /* GPUs per node */
#define CS_TOPO_MAX_NICS 32  /* NICs per node */
#define CS_TOPO_MAX_LEVELS 4 /* switch levels */
#define CS_TOPO_MAX_LINKS 64 /* NVLink links between one pair of GPUs */

enum cs_topo_fabric { CS_TOPO_NVSWITCH, CS_TOPO_NVLINK_MESH, CS_TOPO_PCIE };
enum cs_topo_transport { CS_TOPO_INFINIBAND, CS_TOPO_ROCE, CS_TOPO_TCP };

/* One switch level. Fields of int/enum type are int so that the schema tables can address them. */
struct cs_topo_level {
  char name[16];
  int radix;
  double oversub; /* >= 1: bandwidth below this level's uplinks is oversub times that above */
  int nodes;      /* nodes below one unit; 0 only on the top level = the whole cluster */
};

struct cs_topo_node {
  int gpus;
  char gpu[64];
  int fabric;       /* enum cs_topo_fabric */
  double nvlink_bw; /* bytes/s per GPU per direction (nvswitch) */
  double link_bw;   /* bytes/s per NVLink link per direction (mesh, bridges) */
  int has_links;    /* links[][] was given */
  int links[CS_TOPO_MAX_GPUS][CS_TOPO_MAX_GPUS];
  double pcie_bw; /* bytes/s per GPU */
  int gpus_per_switch;
  double switch_uplink; /* bytes/s */
  int gpus_per_socket;
  double socket_bw;  /* bytes/s */
  int nvlink_domain; /* GPUs per NVLink domain: gpus, or a multiple of it */
  int nvls;
  double efficiency; /* (0, 1] */
  int nic_of_gpu[CS_TOPO_MAX_GPUS];
};

struct cs_topo_net {
  int nics;              /* 0: no network */
  double nic_bw;         /* bytes/s per NIC per direction */
  int transport;         /* enum cs_topo_transport */
  double latency;        /* s, one step through one switch */
  double switch_latency; /* s per further switch */
  double efficiency;     /* (0, 1] */
  int rail_optimized;
  int sharp;
  int nodes;        /* cluster size; 0 = unbounded */
  int hypothetical; /* 1: the network's speed was edited for a what-if (cs_netedit): its nominal
                       rate then replaces a fitted one (cs_topo_cal_apply, CS_TOPO_NET_WHAT_IF) */
  int nlevels;
  struct cs_topo_level level[CS_TOPO_MAX_LEVELS];
};

/* A resolved topology: every default filled in and every derived value computed. */
struct cs_topology {
  int version;
  char name[64];
  char description[256];
  char path[512]; /* the file it came from ("" when built in memory) */
  struct cs_topo_node node;
  struct cs_topo_net net;
};

/* Loads and validates a topology file into *t (caller storage; nothing to free). On failure *t
 * is unspecified and err holds "path:line:col: what was expected" (CS_ERR_PARSE or CS_ERR_RANGE),
 * or a CS_ERR_IO message when the file cannot be read. */
enum cs_status cs_topo_load(const char *path, struct cs_topology *t, struct cs_error *err);

/* As cs_topo_load, from text in memory; name stands in for the path in messages. */
enum cs_status cs_topo_load_string(const char *text, const char *name, struct cs_topology *t,
                                   struct cs_error *err);

/* Finds a topology by path or bundled name. A name that contains '/' or ends in ".yaml" is a path
 * and is used as is; otherwise NAME.yaml is looked up, in order, in $COMMSCALE_DATA_DIR/topologies,
 * <directory of the running executable>/../share/commscale/topologies, the installed data beside
 * libcommscale.so when this code runs from it (datadir.h) and the source tree's topologies/ folder.
 * Writes the path into buf. CS_ERR_IO when nothing is found (the message lists where it looked),
 * CS_ERR_RANGE when buf is too small. */
enum cs_status cs_topo_find(const char *name, char *buf, size_t len, struct cs_error *err);

/* The folders cs_topo_find searches, in order, for listings: writes up to max paths of at most
 * len bytes each into dirs (row-major, dirs[i * len]) and returns how many it wrote. */
int cs_topo_search_dirs(char *dirs, size_t len, int max);

/* Writes t as a topology file with every default and derived value explicit (the resolved dump);
 * loading the dump gives the same topology. */
void cs_topo_dump(FILE *out, const struct cs_topology *t);

/* The loader's values for what a file leaves out, by transport and by intra-node fabric (their
 * sources are in topology.c). Editors of a loaded topology (netedit.h) and importers that build
 * one (smi.c) take them from here, so that every topology means the same thing by "default". */
#define CS_TOPO_TRANSPORTS 3 /* enum cs_topo_transport */
#define CS_TOPO_FABRICS 3    /* enum cs_topo_fabric */
struct cs_topo_defaults {
  struct {
    double latency;        /* s, one step between nodes on one switch */
    double switch_latency; /* s per further switch */
    double efficiency;     /* ring all-reduce bus bandwidth / NIC bandwidth */
  } transport[CS_TOPO_TRANSPORTS];
  double fabric_efficiency[CS_TOPO_FABRICS]; /* ring all-reduce bus bandwidth / link bandwidth */
};
const struct cs_topo_defaults *cs_topo_defaults(void);

/* Names used in files. */
const char *cs_topo_fabric_name(enum cs_topo_fabric f);
const char *cs_topo_transport_name(enum cs_topo_transport tr);

#endif
