/* map.h — where a communicating group of a parallel plan sits on a topology, and what links its
 * collectives see.
 *
 * Ranks are laid out as Megatron lays them out: the plan's dimensions in a rank order from the
 * fastest-varying to the slowest (default tp, cp, ep, pp, dp), so rank r has coordinate
 * (r / stride_d) % size_d in dimension d, stride_d being the product of the sizes before d.
 * Consecutive ranks fill a node (rank r on node r / gpus), nodes fill NVLink domains, leaves and
 * pods in order. A group of dimension d is the set of ranks that differ only in coordinate d.
 *
 * For one group the mapping gives the shape the cost model needs (ranks, NVLink domains spanned
 * and GPUs per domain: a node, unless NVLink spans several nodes as in GB200 NVL72), the tier
 * between members of one domain and its per-GPU link rate, and across domains the network
 * bandwidth per domain left to this group:
 *
 *   bw_net = nodes_of_group_in_domain * sum over the NICs near the group's GPUs of
 *            nic_speed / (groups of the same dimension on that node that use the NIC)
 *            / (product of the oversubscription of every switch level below the highest crossed)
 *
 * "Groups of the same dimension" are the sibling groups that run the same collective at the same
 * time in an SPMD step (all DP groups reduce gradients together); pass concurrent = 0 to cost a
 * group alone, as nccl-tests on a sub-communicator does. The highest level crossed is the lowest
 * one whose unit (pod) holds every node of the group; on a rail-optimised fabric a group whose
 * members sit at different local GPU indices on different nodes changes rail and so crosses the
 * spine. Oversubscription is applied in full: under a training step every node below a leaf is
 * sending at once. Sharing between groups of different dimensions that overlap in time is left
 * to the caller (the step simulator), which may divide bw_net further.
 *
 * Everything is computed from the group of one rank and the ranks of one node: O(group size +
 * GPUs per node), no allocation, so the simulator can call it per group per plan. For layouts
 * whose groups differ between ranks (sizes that do not divide the node), the group of the given
 * rank is the one described.
 */
#ifndef CS_TOPO_MAP_H
#define CS_TOPO_MAP_H

#include "cal.h"
#include "costmodel.h"
#include "status.h"
#include "topology.h"

#define CS_TOPO_MAX_DIMS 8
#define CS_TOPO_DEFAULT_ORDER "tp,cp,ep,pp,dp"

/* One group's place on the topology. Bandwidths are link rates (bytes/s, per direction); the
 * achieved bus bandwidth is these times the topology's efficiency (cs_topo_model_apply). */
struct cs_topo_group {
  int ranks;             /* members */
  int total_ranks;       /* ranks of the whole plan */
  int nodes;             /* physical nodes holding members */
  int gpus_per_node;     /* most members on one node */
  int domains;           /* NVLink domains holding members: the cost model's "nodes" */
  int gpus_per_domain;   /* most members in one domain: the cost model's "gpus_per_node" */
  int uniform;           /* 1 when every domain holds the same number of members */
  int rail_aligned;      /* 1 when members sit at the same local GPU indices on every node */
  enum cs_tier intra;    /* tier between members of one domain */
  enum cs_tier tier;     /* slowest tier crossed: CS_TIER_NET when domains > 1, else intra */
  double bw_intra;       /* bytes/s per GPU between members of one domain */
  int siblings_per_node; /* groups of this dimension with members on the group's first node */
  int nics_used;         /* NICs per node carrying the group's traffic (0 within a domain) */
  int flows_per_nic;     /* groups sharing the busiest of those NICs */
  int level;             /* highest switch level crossed: -1 none, 0 leaf, 1 spine, ... */
  int switches;          /* switches on the longest path between two members */
  double oversub;        /* divisor from the oversubscribed levels below `level` (1 = none) */
  double bw_net;         /* bytes/s of network per domain left to this group (0 within one) */
  double bw_net_gpu;     /* bw_net / gpus_per_domain */
  double lat_net;        /* s, one network step across the levels crossed (0 within one) */
  int nvls, collnet;     /* 1 when NCCL's NVLS / CollNet algorithms can serve this group */
};

/* Maps the group of dimension `dim` that holds `rank`, for a plan of ndims dimensions whose sizes
 * are given in rank order (sizes[0] varies fastest). concurrent = 1: all sibling groups of the
 * dimension communicate at once; 0: this group is alone. Errors: CS_ERR_USAGE for sizes < 1, dim
 * or rank out of range, more than CS_TOPO_MAX_DIMS dimensions or more than 2^30 ranks;
 * CS_ERR_RANGE when the plan needs more nodes than the topology's cluster has;
 * CS_ERR_UNSUPPORTED when the group leaves its NVLink domain on a topology without a network. */
enum cs_status cs_topo_map(const struct cs_topology *t, int ndims, const int *sizes, int dim,
                           int rank, int concurrent, struct cs_topo_group *g, struct cs_error *err);

/* The group of a collective on `nodes` nodes with gpus_per_node members each, laid out as a
 * data-parallel group beside (gpus / gpus_per_node)-way tensor parallelism: the members of a node
 * are local GPUs 0, k, 2k, ... with k = gpus / gpus_per_node. This is the shape `commscale coll`
 * queries. gpus_per_node must divide the topology's GPUs per node (CS_ERR_USAGE otherwise). */
enum cs_status cs_topo_map_shape(const struct cs_topology *t, int nodes, int gpus_per_node,
                                 int concurrent, struct cs_topo_group *g, struct cs_error *err);

/* What cs_topo_model_apply sets. */
#define CS_TOPO_APPLY_INTRA 1u /* m->intra and m->bw[intra] = bw_intra * node efficiency */
#define CS_TOPO_APPLY_NET                                                                          \
  2u /* m->bw[net] = bw_net * network efficiency (groups across domains)                           \
      */
#define CS_TOPO_APPLY_LAT                                                                          \
  4u /* hop[net][*], tree_hop[net][*] shifted so that hop[net][LL] = lat_net */
#define CS_TOPO_APPLY_ALGOS 8u /* the nvls and collnet bits of algo_enabled set or cleared */
#define CS_TOPO_APPLY_ALL 15u

/* Writes the link parameters of g into m, as selected by `what`; every other parameter (base
 * latencies, efficiencies, fitted values the caller wants to keep) is left alone. The network
 * latency shift keeps m's differences between protocols (NCCL's own table adds 1.3 us for LL128
 * and 11.3 us for Simple over LL) and never lowers a hop below lat_net. Network parameters are not
 * touched for a group inside one NVLink domain. */
void cs_topo_model_apply(const struct cs_topology *t, const struct cs_topo_group *g, unsigned what,
                         struct cs_model *m);

/* Flags of cs_topo_cal_apply. */
#define CS_TOPO_NET_WHAT_IF                                                                        \
  1u /* the topology's network is a hypothetical one (a sweep over network                         \
        speeds): its nominal bandwidth replaces a fitted one */

/* Writes the links of group g on topology t into cal's model for one prediction, parameter by
 * parameter by precedence (cal.h): a fitted or user-given value is kept, a default one is replaced
 * by the topology's nominal value (source CS_SRC_TOPO). The intra tier is always the group's; NVLS
 * and CollNet are enabled as the topology offers them. A fitted network bandwidth, measured for a
 * whole node, keeps its ratio to the topology's whole-node rate when g shares the node's NICs with
 * sibling groups (bw = fitted * g's rate / the node's rate alone); with CS_TOPO_NET_WHAT_IF the
 * topology's rate replaces it (source topology). Network latencies are replaced only when none of
 * them was fitted or given. cal is a shallow copy the caller owns; nothing is allocated. */
void cs_topo_cal_apply(const struct cs_topology *t, const struct cs_topo_group *g, unsigned flags,
                       struct cs_cal *cal);

/* One line per link tier the shape of g crosses, saying where each link value of cal came from,
 * e.g. "nvlink bw 360 GB/s (fit +-2.1%), hop 0.6/1.9/3.4 us (default)" and "net bw 400 GB/s
 * (topology), hop 2.7/4.0/14.0 us (default)"; lines are separated by "\n" and written into buf
 * (truncated to len). With g NULL, the calibration's intra tier and, when nodes > 1, the network.
 */
void cs_topo_cal_sources(const struct cs_cal *cal, int nodes, char *buf, size_t len);

/* Fills q's shape from g: ranks, nodes = domains, gpus_per_node = gpus_per_domain. A group that is
 * not uniform is costed at its fullest domain (ranks = domains * gpus_per_domain). */
void cs_topo_group_query(const struct cs_topo_group *g, struct cs_coll_query *q);

/* Parses a plan for cs_topo_map: order "tp,cp,ep,pp,dp" (NULL = CS_TOPO_DEFAULT_ORDER), sizes
 * "tp=8,pp=4,dp=16" (dimensions not named have size 1; a name not in the order is an error) and the
 * group's dimension name. Writes names[i] (at most 15 characters each), sizes_out[i], *ndims and
 * *dim. CS_ERR_USAGE with a message on any error. */
enum cs_status cs_topo_parse_plan(const char *order, const char *sizes, const char *group,
                                  char names[][16], int *sizes_out, int *ndims, int *dim,
                                  struct cs_error *err);

/* The calibration cal shaped for one collective of q's shape (nodes x gpus_per_node) on t, as
 * `commscale coll --topology` and the C API cost it: cs_topo_cal_apply on the group (precedence
 * fitted > user-given > topology > default). *shape starts as a shallow copy of *cal (do not
 * cs_cal_fini it); q's shape becomes the group's (cs_topo_group_query). Errors of
 * cs_topo_map_shape. */
enum cs_status cs_topo_shape_cal(const struct cs_cal *cal, const struct cs_topology *t,
                                 struct cs_coll_query *q, struct cs_cal *shape,
                                 struct cs_error *err);

#endif
