/* map.c — placing one communicating group on a topology; see map.h for the layout and the
 * bandwidth rule.
 *
 * The group of a rank is an arithmetic progression base, base + stride, ... so its nodes,
 * domains and local GPU indices come from one pass over its members in increasing order. NIC
 * sharing needs only the ranks of the group's first node: each of them belongs to one sibling
 * group (identified by its lowest rank), and the NIC nearest to it carries that sibling's traffic.
 */
#include "map.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANKS (1L << 30)

/* Lowest rank of the group of dimension (stride, size) holding r. */
static long group_base(long r, long stride, long size) {
  return r - ((r / stride) % size) * stride;
}

/* Per-GPU rate among the local GPUs in `loc` (n of them) of one node, and its tier. */
static void intra_link(const struct cs_topo_node *nd, const int *loc, int n, enum cs_tier *tier,
                       double *bw) {
  if (nd->fabric == CS_TOPO_NVSWITCH) {
    *tier = CS_TIER_NVLINK;
    *bw = nd->nvlink_bw;
    return;
  }
  if (n == 1) {
    /* no traffic between members of a node: describe the GPU's own fabric */
    double links = 0;
    if (nd->has_links)
      for (int j = 0; j < nd->gpus; j++)
        links += nd->links[loc[0]][j];
    if (links > 0) {
      *tier = CS_TIER_NVLINK;
      *bw = links * nd->link_bw;
    } else {
      *tier = CS_TIER_PCIE;
      *bw = nd->pcie_bw;
    }
    return;
  }
  if (nd->has_links) {
    /* a ring through every member can use at most each member's links to the others: the least
     * of those counts bounds the rate, provided the NVLink subgraph joins all members */
    int minl = CS_TOPO_MAX_LINKS * CS_TOPO_MAX_GPUS, reached[CS_TOPO_MAX_GPUS] = {0};
    for (int a = 0; a < n; a++) {
      int l = 0;
      for (int b = 0; b < n; b++)
        l += nd->links[loc[a]][loc[b]];
      if (l < minl) minl = l;
    }
    int stack[CS_TOPO_MAX_GPUS], top = 0, seen = 1;
    reached[0] = 1;
    stack[top++] = 0;
    while (top > 0) {
      int a = stack[--top];
      for (int b = 0; b < n; b++)
        if (!reached[b] && nd->links[loc[a]][loc[b]] > 0) {
          reached[b] = 1;
          seen++;
          stack[top++] = b;
        }
    }
    if (minl > 0 && seen == n) {
      *tier = CS_TIER_NVLINK;
      *bw = minl * nd->link_bw;
      return;
    }
  }
  /* PCIe: the GPU's link, and the switch uplink or socket link when members are split by them */
  *tier = CS_TIER_PCIE;
  double b = nd->pcie_bw;
  int sw0 = loc[0] / nd->gpus_per_switch, so0 = loc[0] / nd->gpus_per_socket, sw = 0, so = 0;
  for (int a = 1; a < n; a++) {
    sw |= loc[a] / nd->gpus_per_switch != sw0;
    so |= loc[a] / nd->gpus_per_socket != so0;
  }
  if (sw && nd->switch_uplink < b) b = nd->switch_uplink;
  if (so && nd->socket_bw < b) b = nd->socket_bw;
  *bw = b;
}

enum cs_status cs_topo_map(const struct cs_topology *t, int ndims, const int *sizes, int dim,
                           int rank, int concurrent, struct cs_topo_group *g,
                           struct cs_error *err) {
  memset(g, 0, sizeof *g);
  if (ndims < 1 || ndims > CS_TOPO_MAX_DIMS)
    return cs_error_set(err, CS_ERR_USAGE, "a plan has 1 to %d dimensions, not %d",
                        CS_TOPO_MAX_DIMS, ndims);
  if (dim < 0 || dim >= ndims)
    return cs_error_set(err, CS_ERR_USAGE, "dimension %d is not one of the plan's %d", dim, ndims);
  long total = 1, stride = 1;
  for (int i = 0; i < ndims; i++) {
    if (sizes[i] < 1)
      return cs_error_set(err, CS_ERR_USAGE, "dimension %d has size %d; sizes are at least 1", i,
                          sizes[i]);
    if (sizes[i] > MAX_RANKS / total)
      return cs_error_set(err, CS_ERR_USAGE, "the plan has more than %ld ranks", MAX_RANKS);
    total *= sizes[i];
    if (i < dim) stride *= sizes[i];
  }
  if (rank < 0 || rank >= total)
    return cs_error_set(err, CS_ERR_USAGE, "rank %d is outside the plan's %ld ranks", rank, total);
  const struct cs_topo_node *nd = &t->node;
  const struct cs_topo_net *net = &t->net;
  long G = nd->gpus, D = nd->nvlink_domain, S = sizes[dim];
  long nodes_needed = (total + G - 1) / G;
  if (net->nodes > 0 && nodes_needed > net->nodes)
    return cs_error_set(err, CS_ERR_RANGE,
                        "the plan's %ld ranks need %ld nodes of %ld GPUs; topology %s has %d",
                        total, nodes_needed, G, t->name, net->nodes);

  long base = group_base(rank, stride, S);
  g->ranks = (int)S;
  g->total_ranks = (int)total;
  g->uniform = 1;
  g->rail_aligned = 1;

  /* one pass over the members: nodes, domains, local indices of the first node */
  int loc0[CS_TOPO_MAX_GPUS], nloc0 = 0, loc[CS_TOPO_MAX_GPUS], nloc = 0;
  long node_prev = -1, dom_prev = -1, node_first = base / G, node_last = node_first;
  int per_dom = 0, dom_count0 = -1, nodes_in_dom0 = 0;
  for (long k = 0; k < S; k++) {
    long m = base + k * stride, node = m / G, dom = m / D;
    if (node != node_prev) {
      if (node_prev >= 0) {
        if (nloc != nloc0 || memcmp(loc, loc0, (size_t)nloc * sizeof *loc) != 0)
          g->rail_aligned = 0;
        if (nloc > g->gpus_per_node) g->gpus_per_node = nloc;
      }
      g->nodes++;
      if (dom == base / D) nodes_in_dom0++;
      nloc = 0;
      node_prev = node;
      node_last = node;
    }
    if (dom != dom_prev) {
      if (dom_prev >= 0) {
        if (dom_count0 < 0) dom_count0 = per_dom;
        if (per_dom != dom_count0) g->uniform = 0;
        if (per_dom > g->gpus_per_domain) g->gpus_per_domain = per_dom;
      }
      g->domains++;
      per_dom = 0;
      dom_prev = dom;
    }
    per_dom++;
    loc[nloc++] = (int)(m % G);
    if (node == node_first) {
      loc0[nloc0] = (int)(m % G);
      nloc0++;
    }
  }
  if (nloc != nloc0 || memcmp(loc, loc0, (size_t)nloc * sizeof *loc) != 0) g->rail_aligned = 0;
  if (nloc > g->gpus_per_node) g->gpus_per_node = nloc;
  if (dom_count0 >= 0 && per_dom != dom_count0) g->uniform = 0;
  if (per_dom > g->gpus_per_domain) g->gpus_per_domain = per_dom;

  intra_link(nd, loc0, nloc0, &g->intra, &g->bw_intra);
  g->nvls = nd->nvls && nd->fabric == CS_TOPO_NVSWITCH && g->gpus_per_domain > 1;
  g->level = -1;
  g->oversub = 1;
  if (g->domains == 1) {
    g->tier = g->intra;
    return CS_OK;
  }

  /* across domains: the network */
  g->tier = CS_TIER_NET;
  if (net->nics == 0)
    return cs_error_set(err, CS_ERR_UNSUPPORTED,
                        "topology %s has no network, but the group spans %d NVLink domains of %d "
                        "GPUs",
                        t->name, g->domains, nd->nvlink_domain);
  g->collnet = net->sharp;

  /* the sibling groups on the first node and the NICs they use */
  int users[CS_TOPO_MAX_NICS] = {0}, mine[CS_TOPO_MAX_NICS] = {0};
  long sib[CS_TOPO_MAX_GPUS];
  int nsib = 0;
  for (long q = 0; q < G; q++) {
    long r = node_first * G + q;
    if (r >= total) break;
    long b = group_base(r, stride, S);
    if (b == base) mine[nd->nic_of_gpu[q]] = 1;
    /* a sibling held inside one domain sends nothing through the NICs */
    if (b / D == (b + (S - 1) * stride) / D) continue;
    int seen = 0;
    for (int i = 0; i < nsib; i++)
      seen |= sib[i] == b;
    if (!seen) sib[nsib++] = b;
    if (!concurrent && b != base) continue;
    /* count each sibling once per NIC */
    int dup = 0;
    for (long q2 = 0; q2 < q; q2++) {
      long r2 = node_first * G + q2;
      dup |= group_base(r2, stride, S) == b && nd->nic_of_gpu[q2] == nd->nic_of_gpu[q];
    }
    if (!dup) users[nd->nic_of_gpu[q]]++;
  }
  g->siblings_per_node = nsib;
  double bw = 0;
  for (int k = 0; k < net->nics; k++)
    if (mine[k]) {
      g->nics_used++;
      bw += net->nic_bw / users[k];
      if (users[k] > g->flows_per_nic) g->flows_per_nic = users[k];
    }
  bw *= nodes_in_dom0;

  /* the highest switch level crossed */
  if (net->nlevels == 0) {
    g->level = 0;
  } else {
    int l = 0;
    while (l < net->nlevels - 1 && net->level[l].nodes > 0 &&
           node_first / net->level[l].nodes != node_last / net->level[l].nodes)
      l++;
    if (l == 0 && net->rail_optimized && !g->rail_aligned && net->nlevels > 1) l = 1;
    g->level = l;
    for (int j = 0; j < l; j++)
      g->oversub *= net->level[j].oversub;
  }
  g->switches = 2 * g->level + 1;
  g->bw_net = bw / g->oversub;
  g->bw_net_gpu = g->bw_net / g->gpus_per_domain;
  g->lat_net = net->latency + (g->switches - 1) * net->switch_latency;
  return CS_OK;
}

enum cs_status cs_topo_map_shape(const struct cs_topology *t, int nodes, int gpus_per_node,
                                 int concurrent, struct cs_topo_group *g, struct cs_error *err) {
  int G = t->node.gpus;
  if (gpus_per_node < 1 || G % gpus_per_node != 0)
    return cs_error_set(err, CS_ERR_USAGE,
                        "%d GPUs per node does not divide the %d GPUs of a %s node", gpus_per_node,
                        G, t->name);
  if (nodes < 1)
    return cs_error_set(err, CS_ERR_USAGE, "a group spans at least 1 node, not %d", nodes);
  if ((long)nodes * gpus_per_node > MAX_RANKS / G)
    return cs_error_set(err, CS_ERR_USAGE, "too many nodes (%d)", nodes);
  int sizes[2] = {G / gpus_per_node, nodes * gpus_per_node};
  return cs_topo_map(t, 2, sizes, 1, 0, concurrent, g, err);
}

void cs_topo_model_apply(const struct cs_topology *t, const struct cs_topo_group *g, unsigned what,
                         struct cs_model *m) {
  if (what & CS_TOPO_APPLY_INTRA) {
    m->intra = g->intra;
    m->bw[g->intra] = g->bw_intra * t->node.efficiency;
  }
  int across = g->domains > 1;
  if ((what & CS_TOPO_APPLY_NET) && across) m->bw[CS_TIER_NET] = g->bw_net * t->net.efficiency;
  if ((what & CS_TOPO_APPLY_LAT) && across) {
    double shift = g->lat_net - m->hop[CS_TIER_NET][CS_PROTO_LL];
    for (int p = 0; p < CS_PROTO_COUNT; p++) {
      double h = m->hop[CS_TIER_NET][p] + shift;
      m->hop[CS_TIER_NET][p] = h > g->lat_net ? h : g->lat_net;
    }
  }
  if (what & CS_TOPO_APPLY_ALGOS) {
    m->algo_enabled &= ~((1u << CS_ALGO_NVLS) | (1u << CS_ALGO_COLLNET));
    if (g->nvls) m->algo_enabled |= 1u << CS_ALGO_NVLS;
    if (g->collnet) m->algo_enabled |= 1u << CS_ALGO_COLLNET;
  }
}

void cs_topo_group_query(const struct cs_topo_group *g, struct cs_coll_query *q) {
  q->nodes = g->domains;
  q->gpus_per_node = g->gpus_per_domain;
  q->ranks = g->domains * g->gpus_per_domain;
}

/* ---- plans from text ---------------------------------------------------------------------- */

static enum cs_status next_item(const char **s, char *buf, size_t len, struct cs_error *err) {
  const char *e = strchr(*s, ',');
  size_t n = e ? (size_t)(e - *s) : strlen(*s);
  if (n == 0 || n >= len)
    return cs_error_set(err, CS_ERR_USAGE, "expected a name of 1 to %zu characters in \"%s\"",
                        len - 1, *s);
  memcpy(buf, *s, n);
  buf[n] = '\0';
  *s = e ? e + 1 : *s + n;
  return CS_OK;
}

enum cs_status cs_topo_parse_plan(const char *order, const char *sizes, const char *group,
                                  char names[][16], int *sizes_out, int *ndims, int *dim,
                                  struct cs_error *err) {
  const char *s = order ? order : CS_TOPO_DEFAULT_ORDER;
  int n = 0;
  while (*s) {
    if (n == CS_TOPO_MAX_DIMS)
      return cs_error_set(err, CS_ERR_USAGE, "--order: at most %d dimensions", CS_TOPO_MAX_DIMS);
    if (next_item(&s, names[n], 16, err) != CS_OK) return cs_error_prefix(err, "--order");
    for (int i = 0; i < n; i++)
      if (strcmp(names[i], names[n]) == 0)
        return cs_error_set(err, CS_ERR_USAGE, "--order: \"%s\" appears twice", names[n]);
    sizes_out[n++] = 1;
  }
  if (n == 0) return cs_error_set(err, CS_ERR_USAGE, "--order: no dimensions");
  s = sizes ? sizes : "";
  while (*s) {
    char item[48];
    if (next_item(&s, item, sizeof item, err) != CS_OK) return cs_error_prefix(err, "--sizes");
    char *eq = strchr(item, '=');
    if (eq == NULL)
      return cs_error_set(err, CS_ERR_USAGE, "--sizes: expected name=size, got \"%s\"", item);
    *eq = '\0';
    int i;
    for (i = 0; i < n; i++)
      if (strcmp(names[i], item) == 0) break;
    if (i == n)
      return cs_error_set(err, CS_ERR_USAGE, "--sizes: \"%s\" is not in the rank order", item);
    char *e;
    long v = strtol(eq + 1, &e, 10);
    if (e == eq + 1 || *e != '\0' || v < 1 || v > MAX_RANKS)
      return cs_error_set(err, CS_ERR_USAGE, "--sizes: %s needs a positive integer, got \"%s\"",
                          item, eq + 1);
    sizes_out[i] = (int)v;
  }
  *ndims = n;
  if (group == NULL) return cs_error_set(err, CS_ERR_USAGE, "--group: which dimension's group");
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], group) == 0) {
      *dim = i;
      return CS_OK;
    }
  return cs_error_set(err, CS_ERR_USAGE, "--group: \"%s\" is not in the rank order", group);
}

enum cs_status cs_topo_shape_cal(const struct cs_cal *cal, const struct cs_topology *t,
                                 struct cs_coll_query *q, struct cs_cal *shape,
                                 struct cs_error *err) {
  *shape = *cal;
  struct cs_topo_group grp;
  enum cs_status st = cs_topo_map_shape(t, q->nodes, q->gpus_per_node, 0, &grp, err);
  if (st != CS_OK) return st;
  unsigned what = CS_TOPO_APPLY_ALGOS;
  if (cal->source[cs_model_param_index("bw.net")] != CS_SRC_USER) what |= CS_TOPO_APPLY_NET;
  if (cal->source[cs_model_param_index("hop.net.simple")] != CS_SRC_USER) what |= CS_TOPO_APPLY_LAT;
  char intra[32];
  snprintf(intra, sizeof intra, "bw.%s", grp.intra == CS_TIER_PCIE ? "pcie" : "nvlink");
  if (cal->source[cs_model_param_index(intra)] == CS_SRC_DEFAULT) what |= CS_TOPO_APPLY_INTRA;
  cs_topo_model_apply(t, &grp, what, &shape->model);
  if (what & CS_TOPO_APPLY_NET) shape->source[cs_model_param_index("bw.net")] = CS_SRC_USER;
  if (what & CS_TOPO_APPLY_INTRA) shape->source[cs_model_param_index(intra)] = CS_SRC_USER;
  cs_topo_group_query(&grp, q);
  return CS_OK;
}
