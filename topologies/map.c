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
#include <stdarg.h>
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

/* Checks the plan (ndims dimensions of sizes, dimension dim, rank) and gives its rank count and
 * the stride of dimension dim. Errors: CS_ERR_USAGE naming what is out of range. */
static enum cs_status check_plan(int ndims, const int *sizes, int dim, int rank, long *total,
                                 long *stride, struct cs_error *err) {
  if (ndims < 1 || ndims > CS_TOPO_MAX_DIMS)
    return cs_error_set(err, CS_ERR_USAGE, "a plan has 1 to %d dimensions, not %d",
                        CS_TOPO_MAX_DIMS, ndims);
  if (dim < 0 || dim >= ndims)
    return cs_error_set(err, CS_ERR_USAGE, "dimension %d is not one of the plan's %d", dim, ndims);
  *total = 1, *stride = 1;
  for (int i = 0; i < ndims; i++) {
    if (sizes[i] < 1)
      return cs_error_set(err, CS_ERR_USAGE, "dimension %d has size %d; sizes are at least 1", i,
                          sizes[i]);
    if (sizes[i] > MAX_RANKS / *total)
      return cs_error_set(err, CS_ERR_USAGE, "the plan has more than %ld ranks", MAX_RANKS);
    *total *= sizes[i];
    if (i < dim) *stride *= sizes[i];
  }
  if (rank < 0 || rank >= *total)
    return cs_error_set(err, CS_ERR_USAGE, "rank %d is outside the plan's %ld ranks", rank, *total);
  return CS_OK;
}

/* What scan_members learns besides g: the local GPU indices of the group's first node, its first
 * and last node, and how many of its nodes share the NVLink domain of its lowest rank. */
struct members {
  int loc0[CS_TOPO_MAX_GPUS], nloc0;
  long node_first, node_last;
  int nodes_in_dom0;
};

/* Where the group's members fall, from one pass over them in increasing order (base, base +
 * stride, ... S of them, on nodes of G GPUs and NVLink domains of D): its nodes, domains, GPUs
 * per node and per domain, uniformity and rail alignment into g (uniform and rail_aligned set by
 * the caller), the rest into M. */
static void scan_members(long base, long stride, long S, long G, long D, struct cs_topo_group *g,
                         struct members *M) {
  int loc[CS_TOPO_MAX_GPUS], nloc = 0;
  long node_prev = -1, dom_prev = -1;
  int per_dom = 0, dom_count0 = -1;
  M->nloc0 = 0;
  M->node_first = base / G, M->node_last = M->node_first;
  M->nodes_in_dom0 = 0;
  for (long k = 0; k < S; k++) {
    long m = base + k * stride, node = m / G, dom = m / D;
    if (node != node_prev) {
      if (node_prev >= 0) {
        if (nloc != M->nloc0 || memcmp(loc, M->loc0, (size_t)nloc * sizeof *loc) != 0)
          g->rail_aligned = 0;
        if (nloc > g->gpus_per_node) g->gpus_per_node = nloc;
      }
      g->nodes++;
      if (dom == base / D) M->nodes_in_dom0++;
      nloc = 0;
      node_prev = node;
      M->node_last = node;
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
    if (node == M->node_first) {
      M->loc0[M->nloc0] = (int)(m % G);
      M->nloc0++;
    }
  }
  if (nloc != M->nloc0 || memcmp(loc, M->loc0, (size_t)nloc * sizeof *loc) != 0)
    g->rail_aligned = 0;
  if (nloc > g->gpus_per_node) g->gpus_per_node = nloc;
  if (dom_count0 >= 0 && per_dom != dom_count0) g->uniform = 0;
  if (per_dom > g->gpus_per_domain) g->gpus_per_domain = per_dom;
}

/* The network rate of the group (its lowest rank base, dimension stride and size S, total ranks
 * of the plan) from one of its nodes, node_first: the sibling groups on that node and the NICs
 * they share (only the group's own traffic unless concurrent), into g's siblings_per_node,
 * nics_used and flows_per_nic. Returns the rate summed over the group's NICs. */
static double nic_share(const struct cs_topology *t, long base, long stride, long S, long total,
                        long node_first, int concurrent, struct cs_topo_group *g) {
  const struct cs_topo_node *nd = &t->node;
  const struct cs_topo_net *net = &t->net;
  long G = nd->gpus, D = nd->nvlink_domain;
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
  return bw;
}

/* The highest switch level the group crosses (its nodes node_first..node_last; one level up when
 * a rail-optimized fabric meets a group off its rails) and the oversubscription below it, into
 * g->level and g->oversub. */
static void switch_level(const struct cs_topo_net *net, long node_first, long node_last,
                         struct cs_topo_group *g) {
  if (net->nlevels == 0) {
    g->level = 0;
    return;
  }
  int l = 0;
  while (l < net->nlevels - 1 && net->level[l].nodes > 0 &&
         node_first / net->level[l].nodes != node_last / net->level[l].nodes)
    l++;
  if (l == 0 && net->rail_optimized && !g->rail_aligned && net->nlevels > 1) l = 1;
  g->level = l;
  for (int j = 0; j < l; j++)
    g->oversub *= net->level[j].oversub;
}

enum cs_status cs_topo_map(const struct cs_topology *t, int ndims, const int *sizes, int dim,
                           int rank, int concurrent, struct cs_topo_group *g,
                           struct cs_error *err) {
  memset(g, 0, sizeof *g);
  long total = 1, stride = 1;
  enum cs_status st = check_plan(ndims, sizes, dim, rank, &total, &stride, err);
  if (st != CS_OK) return st;
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
  struct members M;
  scan_members(base, stride, S, G, D, g, &M);

  intra_link(nd, M.loc0, M.nloc0, &g->intra, &g->bw_intra);
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
  double bw = nic_share(t, base, stride, S, total, M.node_first, concurrent, g);
  bw *= M.nodes_in_dom0;
  switch_level(net, M.node_first, M.node_last, g);
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
  /* the physical rates bound every value, fitted ones included */
  m->link_max[g->intra] = g->bw_intra;
  if (across) m->link_max[CS_TIER_NET] = g->bw_net;
  if ((what & CS_TOPO_APPLY_NET) && across) m->bw[CS_TIER_NET] = g->bw_net * t->net.efficiency;
  if ((what & CS_TOPO_APPLY_LAT) && across) {
    double shift = g->lat_net - m->hop[CS_TIER_NET][CS_PROTO_LL];
    for (int p = 0; p < CS_PROTO_COUNT; p++) {
      double h = m->hop[CS_TIER_NET][p] + shift;
      m->hop[CS_TIER_NET][p] = h > g->lat_net ? h : g->lat_net;
      /* a tree level crosses the same wire: the same shift, the same floor */
      h = m->tree_hop[CS_TIER_NET][p] + shift;
      m->tree_hop[CS_TIER_NET][p] = h > g->lat_net ? h : g->lat_net;
    }
  }
  if (what & CS_TOPO_APPLY_ALGOS) {
    m->algo_enabled &= ~((1u << CS_ALGO_NVLS) | (1u << CS_ALGO_COLLNET));
    if (g->nvls) m->algo_enabled |= 1u << CS_ALGO_NVLS;
    if (g->collnet) m->algo_enabled |= 1u << CS_ALGO_COLLNET;
  }
}

void cs_topo_cal_apply(const struct cs_topology *t, const struct cs_topo_group *g, unsigned flags,
                       struct cs_cal *cal) {
  struct cs_model *m = &cal->model;
  unsigned what = CS_TOPO_APPLY_ALGOS;
  const int ii = cs_model_param_bw_index(g->intra == CS_TIER_PCIE ? CS_TIER_PCIE : CS_TIER_NVLINK);
  const int in = cs_model_param_bw_index(CS_TIER_NET);
  m->intra = g->intra;
  m->net_no_ll128 = t->net.transport == CS_TOPO_TCP;
  if (cal->source[ii] == CS_SRC_DEFAULT || cal->source[ii] == CS_SRC_TOPO) {
    what |= CS_TOPO_APPLY_INTRA;
    cal->source[ii] = CS_SRC_TOPO;
  }
  int lat_kept = 0;
  for (int p = 0; p < CS_PROTO_COUNT; p++) {
    int k = cs_model_param_hop_index(CS_TIER_NET, (enum cs_proto)p);
    lat_kept |= cal->source[k] == CS_SRC_FIT || cal->source[k] == CS_SRC_USER;
  }
  const int across = g->domains > 1;
  if (!lat_kept && across) {
    what |= CS_TOPO_APPLY_LAT;
    for (int p = 0; p < CS_PROTO_COUNT; p++)
      cal->source[cs_model_param_hop_index(CS_TIER_NET, (enum cs_proto)p)] = CS_SRC_TOPO;
  }
  const double fitted = m->bw[CS_TIER_NET];
  const enum cs_param_source src = cal->source[in];
  if (across && (src == CS_SRC_DEFAULT || src == CS_SRC_TOPO ||
                 (src == CS_SRC_FIT && (flags & CS_TOPO_NET_WHAT_IF)))) {
    what |= CS_TOPO_APPLY_NET;
    cal->source[in] = CS_SRC_TOPO;
  }
  cs_topo_model_apply(t, g, what, m);
  if (across && src == CS_SRC_FIT && !(what & CS_TOPO_APPLY_NET)) {
    /* the fitted rate is a whole node's: keep its share when g shares the NICs */
    long per_dom = t->node.gpus > 0 && t->node.nvlink_domain > t->node.gpus
                       ? t->node.nvlink_domain / t->node.gpus
                       : 1;
    double whole = t->net.nics * t->net.nic_bw * (double)per_dom;
    if (whole > 0 && g->bw_net > 0 && g->bw_net < whole)
      m->bw[CS_TIER_NET] = fitted * g->bw_net / whole;
  }
}

/* Appends to buf at *k, never past len. */
static void put(char *buf, size_t len, size_t *k, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *k, const char *fmt, ...) {
  if (*k >= len) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + *k, len - *k, fmt, ap);
  va_end(ap);
  if (w > 0) *k += (size_t)w;
  if (*k > len) *k = len;
}

/* "hop ll/ll128/simple 0.60/1.90/3.40 us (default)" (the ring's per-step latencies; tree: the
 * tree's per-level ones, "tree ll/ll128/simple ..."), with each protocol's source when they
 * differ and the standard errors of fitted ones. */
static void put_hops(const struct cs_cal *cal, int tier, int tree, char *buf, size_t len,
                     size_t *k) {
  static const char *const tn[CS_TIER_COUNT] = {"nvlink", "pcie", "net"};
  int idx[CS_PROTO_COUNT], same = 1;
  char name[32];
  for (int p = 0; p < CS_PROTO_COUNT; p++) {
    snprintf(name, sizeof name, "%s.%s.%s", tree ? "tree_hop" : "hop", tn[tier], cs_proto_name(p));
    idx[p] = cs_model_param_index(name);
    same &= cal->source[idx[p]] == cal->source[idx[0]];
  }
  put(buf, len, k, "%s ll/ll128/simple", tree ? "tree" : "hop");
  for (int p = 0; p < CS_PROTO_COUNT; p++)
    put(buf, len, k, "%s%.2f", p ? "/" : " ", cs_model_param_get(&cal->model, idx[p]) * 1e6);
  put(buf, len, k, " us (");
  for (int p = 0; p < CS_PROTO_COUNT; p++) {
    if (same && p > 0) break;
    if (!same) put(buf, len, k, "%s%s ", p ? ", " : "", cs_proto_name(p));
    put(buf, len, k, "%s", cs_cal_source_name(cal->source[idx[p]]));
    if (cal->source[idx[p]] != CS_SRC_FIT) continue;
    put(buf, len, k, " +-");
    for (int j = same ? 0 : p; j < (same ? CS_PROTO_COUNT : p + 1); j++)
      put(buf, len, k, "%s%.0f", j > (same ? 0 : p) ? "/" : "", 100 * cs_cal_param_se(cal, idx[j]));
    put(buf, len, k, "%%");
  }
  put(buf, len, k, ")");
}

void cs_topo_cal_sources(const struct cs_cal *cal, int nodes, char *buf, size_t len) {
  static const char *const tn[CS_TIER_COUNT] = {"nvlink", "pcie", "net"};
  int tiers[2] = {cal->model.intra, CS_TIER_NET};
  size_t k = 0;
  if (len == 0) return;
  buf[0] = '\0';
  for (int j = 0; j < (nodes > 1 ? 2 : 1); j++) {
    int t = tiers[j];
    char name[32];
    snprintf(name, sizeof name, "bw.%s", tn[t]);
    int i = cs_model_param_index(name);
    put(buf, len, &k, "%s%-6s bw %.1f GB/s (%s", j ? "\n" : "", tn[t], cal->model.bw[t] / 1e9,
        cs_cal_source_name(cal->source[i]));
    if (cal->source[i] == CS_SRC_FIT) put(buf, len, &k, " +-%.1f%%", 100 * cs_cal_param_se(cal, i));
    put(buf, len, &k, "), ");
    put_hops(cal, t, 0, buf, len, &k);
    /* across nodes the tree's levels have their own latency (and default: docs/constants.md) */
    if (t == CS_TIER_NET) {
      put(buf, len, &k, ", ");
      put_hops(cal, t, 1, buf, len, &k);
    }
  }
  buf[k < len ? k : len - 1] = '\0';
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
  cs_topo_cal_apply(t, &grp, 0, shape);
  cs_topo_group_query(&grp, q);
  return CS_OK;
}
