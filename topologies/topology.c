/* topology.c — loading, validating and dumping topology files; see topology.h.
 *
 * Each section (the file, node, network, one switch level) has one schema table read by
 * cs_cfg_read, so units, ranges, defaults and unknown keys are handled the same way as in every
 * other commscale file. What a flat table cannot express — the NVLink link matrix, the GPU-to-NIC
 * list, the list of levels, "4:1" ratios — is read here with located errors. After reading,
 * resolve() fills the defaults that depend on other keys (efficiency by fabric and transport, a
 * leaf's size from its radix) and checks the cross-key rules, so that a loaded topology is
 * complete and the dump spells every value out.
 */
#include "topology.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datadir.h"
#include "yamlcfg.h"

#ifndef CS_TOPO_SOURCE_DIR
#define CS_TOPO_SOURCE_DIR "topologies"
#endif

static const char *const fabric_names[] = {"nvswitch", "nvlink-mesh", "pcie", NULL};
static const char *const transport_names[] = {"infiniband", "roce", "tcp", NULL};

const char *cs_topo_fabric_name(enum cs_topo_fabric f) {
  return f >= CS_TOPO_NVSWITCH && f <= CS_TOPO_PCIE ? fabric_names[f] : "?";
}

const char *cs_topo_transport_name(enum cs_topo_transport tr) {
  return tr >= CS_TOPO_INFINIBAND && tr <= CS_TOPO_TCP ? transport_names[tr] : "?";
}

/* Link efficiencies (ring all-reduce bus bandwidth over link bandwidth) when a file gives none,
 * from NVIDIA's published NCCL figures (GTC 2024 S62129): NVLink4 370/450, NVLink3 232/300,
 * NVLink2 122/150 (~0.8); PCIe Gen4 24/32, Gen5 48/64 (0.75); 400 Gb RDMA 48/50, DGX H100
 * 8 x 400 Gb 380/400 (0.95); 100GbE TCP sockets 10/12.5 (0.8).
 *
 * Network step latency when a file gives none. InfiniBand: NCCL's own NET/LL per-step latency
 * (2.7 us, src/graph/tuning.cc), also used for RoCE; TCP sockets: the 2 x H200 loopback socket
 * run of tests/data/h200x2 (all-reduce of 8 B: 28 us over 2 ring steps, ~10 us a step). Switch
 * hops: ~0.13 us port to port for InfiniBand switches (NVIDIA Quantum data sheets), ~0.5 us for
 * a cut-through Ethernet switch. */
static const struct cs_topo_defaults defaults = {
    .transport = {[CS_TOPO_INFINIBAND] = {2.7e-6, 0.13e-6, 0.95},
                  [CS_TOPO_ROCE] = {2.7e-6, 0.5e-6, 0.95},
                  [CS_TOPO_TCP] = {10e-6, 0.5e-6, 0.8}},
    .fabric_efficiency =
        {[CS_TOPO_NVSWITCH] = 0.8, [CS_TOPO_NVLINK_MESH] = 0.8, [CS_TOPO_PCIE] = 0.75},
};

const struct cs_topo_defaults *cs_topo_defaults(void) {
  return &defaults;
}

/* ---- schema tables ----------------------------------------------------------------------- */

#define BW CS_UNIT_BANDWIDTH
#define TM CS_UNIT_TIME

static const struct cs_cfg_field top_fields[] = {
    {"version", CS_CFG_INT, offsetof(struct cs_topology, version), 0, 0, 1, 1, NULL, NULL,
     "file format version (1)"},
    {"name", CS_CFG_STRING, offsetof(struct cs_topology, name), 64, 0, 0, 0, "", NULL,
     "short name"},
    {"description", CS_CFG_STRING, offsetof(struct cs_topology, description), 256, 0, 0, 0, "",
     NULL, "one line about the cluster"},
};
static const char *const top_extra[] = {"node", "network", NULL};

static const struct cs_cfg_field node_fields[] = {
    {"gpus", CS_CFG_INT, offsetof(struct cs_topo_node, gpus), 0, 0, 1, CS_TOPO_MAX_GPUS, NULL, NULL,
     "GPUs per node"},
    {"gpu", CS_CFG_STRING, offsetof(struct cs_topo_node, gpu), 64, 0, 0, 0, "", NULL,
     "GPU model (label)"},
    {"fabric", CS_CFG_ENUM, offsetof(struct cs_topo_node, fabric), 0, 0, 0, 0, NULL, fabric_names,
     "intra-node fabric: nvswitch, nvlink-mesh or pcie"},
    {"nvlink_bandwidth", CS_CFG_QTY, offsetof(struct cs_topo_node, nvlink_bw), 0, BW, 0, 1e14,
     "0GBps", NULL, "NVSwitch: per GPU, per direction"},
    {"link_bandwidth", CS_CFG_QTY, offsetof(struct cs_topo_node, link_bw), 0, BW, 0, 1e13, "0GBps",
     NULL, "one NVLink link, per direction"},
    {"pcie_bandwidth", CS_CFG_QTY, offsetof(struct cs_topo_node, pcie_bw), 0, BW, 1e6, 1e13,
     "16GBps", NULL, "GPU to PCIe switch, per direction (default Gen3 x16)"},
    {"gpus_per_switch", CS_CFG_INT, offsetof(struct cs_topo_node, gpus_per_switch), 0, 0, 0,
     CS_TOPO_MAX_GPUS, "0", NULL, "GPUs below one PCIe switch (0 = a socket)"},
    {"switch_uplink", CS_CFG_QTY, offsetof(struct cs_topo_node, switch_uplink), 0, BW, 0, 1e13,
     "0GBps", NULL, "PCIe switch to CPU (0 = pcie_bandwidth)"},
    {"gpus_per_socket", CS_CFG_INT, offsetof(struct cs_topo_node, gpus_per_socket), 0, 0, 0,
     CS_TOPO_MAX_GPUS, "0", NULL, "GPUs on one CPU socket (0 = all)"},
    {"socket_bandwidth", CS_CFG_QTY, offsetof(struct cs_topo_node, socket_bw), 0, BW, 0, 1e13,
     "0GBps", NULL, "between CPU sockets (0 = pcie_bandwidth)"},
    {"nvlink_domain", CS_CFG_INT, offsetof(struct cs_topo_node, nvlink_domain), 0, 0, 0, 1000000,
     "0", NULL, "GPUs joined by NVLink across nodes (0 = gpus)"},
    {"nvls", CS_CFG_BOOL, offsetof(struct cs_topo_node, nvls), 0, 0, 0, 1, "false", NULL,
     "NVLink SHARP reductions in the NVSwitches"},
    {"efficiency", CS_CFG_DOUBLE, offsetof(struct cs_topo_node, efficiency), 0, 0, 0.01, 1, "0.8",
     NULL, "ring all-reduce bus bandwidth / link bandwidth (default 0.8, pcie 0.75)"},
};
static const char *const node_extra[] = {"links", "nic_affinity", NULL};

static const struct cs_cfg_field net_fields[] = {
    {"nics", CS_CFG_INT, offsetof(struct cs_topo_net, nics), 0, 0, 0, CS_TOPO_MAX_NICS, NULL, NULL,
     "NICs (rails) per node"},
    {"nic_speed", CS_CFG_QTY, offsetof(struct cs_topo_net, nic_bw), 0, BW, 0, 1e13, "0Gbps", NULL,
     "per NIC, per direction"},
    {"transport", CS_CFG_ENUM, offsetof(struct cs_topo_net, transport), 0, 0, 0, 0, "infiniband",
     transport_names, "infiniband, roce or tcp"},
    {"latency", CS_CFG_QTY, offsetof(struct cs_topo_net, latency), 0, TM, 1e-9, 1e-2, "2.7us", NULL,
     "one step between nodes on one switch (default by transport)"},
    {"switch_latency", CS_CFG_QTY, offsetof(struct cs_topo_net, switch_latency), 0, TM, 0, 1e-3,
     "0.13us", NULL, "each further switch (default by transport)"},
    {"efficiency", CS_CFG_DOUBLE, offsetof(struct cs_topo_net, efficiency), 0, 0, 0.01, 1, "0.95",
     NULL, "ring all-reduce bus bandwidth / NIC bandwidth (default 0.95, tcp 0.8)"},
    {"rail_optimized", CS_CFG_BOOL, offsetof(struct cs_topo_net, rail_optimized), 0, 0, 0, 1,
     "false", NULL, "NIC k of every node on leaf k"},
    {"sharp", CS_CFG_BOOL, offsetof(struct cs_topo_net, sharp), 0, 0, 0, 1, "false", NULL,
     "in-network reduction (CollNet)"},
    {"nodes", CS_CFG_INT, offsetof(struct cs_topo_net, nodes), 0, 0, 0, 10000000, "0", NULL,
     "nodes in the cluster (0 = unbounded)"},
};
static const char *const net_extra[] = {"levels", NULL};

static const struct cs_cfg_field level_fields[] = {
    {"name", CS_CFG_STRING, offsetof(struct cs_topo_level, name), 16, 0, 0, 0, "", NULL,
     "leaf, spine, core, ..."},
    {"radix", CS_CFG_INT, offsetof(struct cs_topo_level, radix), 0, 0, 2, 65536, NULL, NULL,
     "ports per switch"},
    {"nodes", CS_CFG_INT, offsetof(struct cs_topo_level, nodes), 0, 0, 0, 10000000, "0", NULL,
     "nodes below one unit of this level (pod size)"},
};
static const char *const level_extra[] = {"oversubscription", NULL};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the parts a flat table cannot hold --------------------------------------------------- */

/* An integer element of a list, with the list's key in the located message. */
static enum cs_status list_int(const struct cs_yaml *d, int node, long min, long max,
                               const char *key, long *out, struct cs_error *err) {
  struct cs_error e2 = {0};
  enum cs_status st = cs_yaml_int(d, node, min, max, out, &e2);
  if (st == CS_OK) return CS_OK;
  const char *m = e2.msg, *path = cs_yaml_path(d);
  size_t pl = strlen(path);
  if (strncmp(m, path, pl) == 0) {
    m += pl;
    for (int colons = 0; *m && colons < 3; m++)
      colons += *m == ':';
    while (*m == ' ')
      m++;
  }
  return cs_yaml_error(d, node, err, st, "%s: %s", key, m);
}

static enum cs_status read_ratio(const struct cs_yaml *d, int node, double *out,
                                 struct cs_error *err) {
  const char *s = cs_yaml_scalar(d, node);
  if (s == NULL)
    return cs_yaml_error(d, node, err, CS_ERR_PARSE,
                         "oversubscription: expected a ratio such as 4:1 or 4, found a collection");
  char *e;
  errno = 0;
  double a = strtod(s, &e), b = 1;
  if (e != s && *e == ':') {
    const char *t = e + 1;
    b = strtod(t, &e);
    if (e == t) e = (char *)s; /* "4:" */
  }
  if (e == s || *e != '\0' || errno || !isfinite(a) || !isfinite(b) || b <= 0)
    return cs_yaml_error(d, node, err, CS_ERR_PARSE,
                         "oversubscription: expected a ratio such as 4:1 or 4, got \"%s\"", s);
  double r = a >= b ? a / b : b / a; /* "4:1" and "1:4" (up:down, as some papers write it) */
  if (!(a > 0 && r >= 1 && r <= 1000))
    return cs_yaml_error(
        d, node, err, CS_ERR_RANGE,
        "oversubscription: expected a down:up ratio from 1:1 to 1000:1, got \"%s\"", s);
  *out = r;
  return CS_OK;
}

static enum cs_status read_links(const struct cs_yaml *d, int node, struct cs_topo_node *n,
                                 struct cs_error *err) {
  if (cs_yaml_kind(d, node) != CS_YAML_SEQ || cs_yaml_len(d, node) != (size_t)n->gpus)
    return cs_yaml_error(d, node, err, CS_ERR_PARSE,
                         "links: expected a list of %d rows of %d link counts", n->gpus, n->gpus);
  for (int i = 0; i < n->gpus; i++) {
    int row = cs_yaml_item(d, node, (size_t)i);
    if (cs_yaml_kind(d, row) != CS_YAML_SEQ || cs_yaml_len(d, row) != (size_t)n->gpus)
      return cs_yaml_error(d, row, err, CS_ERR_PARSE,
                           "links: expected row %d as a list of %d counts", i, n->gpus);
    for (int j = 0; j < n->gpus; j++) {
      long v;
      enum cs_status st =
          list_int(d, cs_yaml_item(d, row, (size_t)j), 0, CS_TOPO_MAX_LINKS, "links", &v, err);
      if (st != CS_OK) return st;
      n->links[i][j] = (int)v;
    }
  }
  for (int i = 0; i < n->gpus; i++)
    for (int j = 0; j < n->gpus; j++) {
      int at = cs_yaml_item(d, cs_yaml_item(d, node, (size_t)i), (size_t)j);
      if (i == j && n->links[i][j] != 0)
        return cs_yaml_error(d, at, err, CS_ERR_RANGE, "links: GPU %d cannot link to itself", i);
      if (n->links[i][j] != n->links[j][i])
        return cs_yaml_error(d, at, err, CS_ERR_RANGE,
                             "links: GPU %d to %d has %d links but %d to %d has %d (expected a "
                             "symmetric matrix)",
                             i, j, n->links[i][j], j, i, n->links[j][i]);
    }
  n->has_links = 1;
  return CS_OK;
}

static enum cs_status read_affinity(const struct cs_yaml *d, int node, struct cs_topo_node *n,
                                    int nics, struct cs_error *err) {
  if (cs_yaml_kind(d, node) != CS_YAML_SEQ || cs_yaml_len(d, node) != (size_t)n->gpus)
    return cs_yaml_error(d, node, err, CS_ERR_PARSE,
                         "nic_affinity: expected a list of %d NIC indices, one per GPU", n->gpus);
  if (nics == 0)
    return cs_yaml_error(d, node, err, CS_ERR_RANGE,
                         "nic_affinity: the topology has no network NICs (network.nics)");
  for (int i = 0; i < n->gpus; i++) {
    long v;
    enum cs_status st =
        list_int(d, cs_yaml_item(d, node, (size_t)i), 0, nics - 1, "nic_affinity", &v, err);
    if (st != CS_OK) return st;
    n->nic_of_gpu[i] = (int)v;
  }
  return CS_OK;
}

static enum cs_status read_levels(const struct cs_yaml *d, int node, struct cs_topo_net *net,
                                  struct cs_error *err) {
  if (cs_yaml_kind(d, node) != CS_YAML_SEQ || cs_yaml_len(d, node) == 0 ||
      cs_yaml_len(d, node) > CS_TOPO_MAX_LEVELS)
    return cs_yaml_error(d, node, err, CS_ERR_PARSE,
                         "levels: expected a list of 1 to %d switch levels, leaf first",
                         CS_TOPO_MAX_LEVELS);
  net->nlevels = (int)cs_yaml_len(d, node);
  for (int l = 0; l < net->nlevels; l++) {
    int m = cs_yaml_item(d, node, (size_t)l);
    struct cs_topo_level *lv = &net->level[l];
    enum cs_status st = cs_cfg_read(d, m, level_fields, N(level_fields), lv, level_extra, err);
    if (st != CS_OK) return st;
    lv->oversub = 1;
    int r = cs_yaml_get(d, m, "oversubscription");
    if (r && (st = read_ratio(d, r, &lv->oversub, err)) != CS_OK) return st;
    if (lv->name[0] == '\0') snprintf(lv->name, sizeof lv->name, "level%d", l % CS_TOPO_MAX_LEVELS);
  }
  return CS_OK;
}

/* ---- defaults that depend on other keys, and cross-key rules ------------------------------ */

static enum cs_status resolve(const struct cs_yaml *d, int nmap, int netmap, struct cs_topology *t,
                              struct cs_error *err) {
  struct cs_topo_node *n = &t->node;
  struct cs_topo_net *net = &t->net;
  if (n->fabric == CS_TOPO_NVSWITCH && !(n->nvlink_bw > 0))
    return cs_yaml_error(d, nmap, err, CS_ERR_PARSE,
                         "fabric nvswitch needs nvlink_bandwidth (per GPU, per direction)");
  if (n->fabric == CS_TOPO_NVLINK_MESH && !n->has_links)
    return cs_yaml_error(d, nmap, err, CS_ERR_PARSE,
                         "fabric nvlink-mesh needs links (the NVLink link counts between GPUs)");
  if (n->has_links && !(n->link_bw > 0))
    return cs_yaml_error(d, nmap, err, CS_ERR_PARSE,
                         "links need link_bandwidth (one NVLink link, per direction)");
  if (n->fabric == CS_TOPO_NVSWITCH && n->has_links)
    return cs_yaml_error(d, cs_yaml_get(d, nmap, "links"), err, CS_ERR_PARSE,
                         "links describe nvlink-mesh or pcie bridges, not an nvswitch fabric");
  if (n->nvls && n->fabric != CS_TOPO_NVSWITCH)
    return cs_yaml_error(d, cs_yaml_get(d, nmap, "nvls"), err, CS_ERR_RANGE,
                         "nvls needs fabric nvswitch");
  if (n->gpus_per_socket == 0) n->gpus_per_socket = n->gpus;
  if (n->gpus_per_switch == 0) n->gpus_per_switch = n->gpus_per_socket;
  if (n->gpus % n->gpus_per_switch != 0)
    return cs_yaml_error(d, cs_yaml_get(d, nmap, "gpus_per_switch"), err, CS_ERR_RANGE,
                         "gpus_per_switch (%d) must divide gpus (%d)", n->gpus_per_switch, n->gpus);
  if (n->gpus % n->gpus_per_socket != 0 || n->gpus_per_socket % n->gpus_per_switch != 0)
    return cs_yaml_error(d, cs_yaml_get(d, nmap, "gpus_per_socket"), err, CS_ERR_RANGE,
                         "gpus_per_socket (%d) must divide gpus (%d) and be a multiple of "
                         "gpus_per_switch (%d)",
                         n->gpus_per_socket, n->gpus, n->gpus_per_switch);
  if (n->switch_uplink == 0) n->switch_uplink = n->pcie_bw;
  if (n->socket_bw == 0) n->socket_bw = n->pcie_bw;
  if (n->nvlink_domain == 0) n->nvlink_domain = n->gpus;
  if (n->nvlink_domain % n->gpus != 0)
    return cs_yaml_error(d, cs_yaml_get(d, nmap, "nvlink_domain"), err, CS_ERR_RANGE,
                         "nvlink_domain (%d) must be a multiple of gpus (%d)", n->nvlink_domain,
                         n->gpus);
  if (n->nvlink_domain > n->gpus && n->fabric != CS_TOPO_NVSWITCH)
    return cs_yaml_error(d, cs_yaml_get(d, nmap, "nvlink_domain"), err, CS_ERR_RANGE,
                         "an NVLink domain larger than a node needs fabric nvswitch");
  if (!cs_yaml_get(d, nmap, "efficiency")) n->efficiency = defaults.fabric_efficiency[n->fabric];

  if (netmap) {
    int tr = net->transport;
    if (!cs_yaml_get(d, netmap, "latency")) net->latency = defaults.transport[tr].latency;
    if (!cs_yaml_get(d, netmap, "switch_latency"))
      net->switch_latency = defaults.transport[tr].switch_latency;
    if (!cs_yaml_get(d, netmap, "efficiency")) net->efficiency = defaults.transport[tr].efficiency;
    if (net->nics > 0 && !(net->nic_bw > 0))
      return cs_yaml_error(d, netmap, err, CS_ERR_PARSE, "network needs nic_speed, e.g. 400Gbps");
    if (net->nics == 0 && net->nlevels > 0)
      return cs_yaml_error(d, cs_yaml_get(d, netmap, "levels"), err, CS_ERR_RANGE,
                           "switch levels need NICs (network.nics > 0)");
    int lv_node = cs_yaml_get(d, netmap, "levels");
    for (int l = 0; l < net->nlevels; l++) {
      struct cs_topo_level *lv = &net->level[l];
      int at = cs_yaml_item(d, lv_node, (size_t)l);
      int top = l == net->nlevels - 1;
      if (lv->nodes == 0 && l == 0 && !top) {
        /* a leaf's down ports: radix * r / (r + 1) below an r:1 oversubscribed uplink */
        int down = (int)floor(lv->radix * lv->oversub / (lv->oversub + 1) + 1e-9);
        lv->nodes = net->rail_optimized ? down : down / net->nics;
        if (lv->nodes < 1)
          return cs_yaml_error(d, at, err, CS_ERR_RANGE,
                               "a leaf of radix %d cannot hold one node of %d NICs", lv->radix,
                               net->nics);
      } else if (lv->nodes == 0 && !top) {
        return cs_yaml_error(d, at, err, CS_ERR_PARSE,
                             "level %s needs nodes (the nodes below one unit, its pod size)",
                             lv->name);
      }
      if (l > 0 && lv->nodes != 0 && lv->nodes <= net->level[l - 1].nodes)
        return cs_yaml_error(d, cs_yaml_get(d, at, "nodes"), err, CS_ERR_RANGE,
                             "level %s has %d nodes per unit, not more than the %d of %s below it",
                             lv->name, lv->nodes, net->level[l - 1].nodes, net->level[l - 1].name);
      if (l > 0 && lv->nodes != 0 && net->level[l - 1].nodes == 0)
        return cs_yaml_error(d, at, err, CS_ERR_RANGE, "only the top level may span the cluster");
    }
  } else {
    net->nics = 0;
    net->latency = defaults.transport[CS_TOPO_INFINIBAND].latency;
    net->switch_latency = defaults.transport[CS_TOPO_INFINIBAND].switch_latency;
    net->efficiency = defaults.transport[CS_TOPO_INFINIBAND].efficiency;
  }

  int aff = cs_yaml_get(d, nmap, "nic_affinity");
  if (aff) {
    enum cs_status st = read_affinity(d, aff, n, net->nics, err);
    if (st != CS_OK) return st;
  } else {
    for (int i = 0; i < n->gpus; i++)
      n->nic_of_gpu[i] = net->nics ? i * net->nics / n->gpus : 0;
  }
  return CS_OK;
}

static enum cs_status read_doc(const struct cs_yaml *d, struct cs_topology *t,
                               struct cs_error *err) {
  memset(t, 0, sizeof *t);
  int root = cs_yaml_root(d);
  enum cs_status st = cs_cfg_read(d, root, top_fields, N(top_fields), t, top_extra, err);
  if (st != CS_OK) return st;
  snprintf(t->path, sizeof t->path, "%s", cs_yaml_path(d));
  int nmap = cs_yaml_get(d, root, "node");
  if (nmap == 0)
    return cs_yaml_error(d, root, err, CS_ERR_PARSE,
                         "missing required key \"node\" (the node type)");
  st = cs_cfg_read(d, nmap, node_fields, N(node_fields), &t->node, node_extra, err);
  if (st != CS_OK) return st;
  int links = cs_yaml_get(d, nmap, "links");
  if (links && (st = read_links(d, links, &t->node, err)) != CS_OK) return st;
  int netmap = cs_yaml_get(d, root, "network");
  if (netmap) {
    st = cs_cfg_read(d, netmap, net_fields, N(net_fields), &t->net, net_extra, err);
    if (st != CS_OK) return st;
    int lv = cs_yaml_get(d, netmap, "levels");
    if (lv && (st = read_levels(d, lv, &t->net, err)) != CS_OK) return st;
  }
  return resolve(d, nmap, netmap, t, err);
}

enum cs_status cs_topo_load(const char *path, struct cs_topology *t, struct cs_error *err) {
  struct cs_yaml *d = NULL;
  enum cs_status st = cs_yaml_load(path, &d, err);
  if (st == CS_OK) st = read_doc(d, t, err);
  cs_yaml_free(d);
  return st;
}

enum cs_status cs_topo_load_string(const char *text, const char *name, struct cs_topology *t,
                                   struct cs_error *err) {
  struct cs_yaml *d = NULL;
  enum cs_status st = cs_yaml_load_string(text, name, &d, err);
  if (st == CS_OK) st = read_doc(d, t, err);
  cs_yaml_free(d);
  return st;
}

/* ---- finding bundled files ---------------------------------------------------------------- */

int cs_topo_search_dirs(char *dirs, size_t len, int max) {
  int k = 0;
  const char *env = getenv("COMMSCALE_DATA_DIR");
  if (env && *env && k < max) snprintf(dirs + (size_t)k++ * len, len, "%s/topologies", env);
  char exe[1024];
  ssize_t r = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (r > 0 && k < max) {
    exe[r] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = '\0';
      snprintf(dirs + (size_t)k++ * len, len, "%s/../share/commscale/topologies", exe);
    }
  }
  if (k < max && cs_datadir_library("topologies", dirs + (size_t)k * len, len)) k++;
  if (k < max) snprintf(dirs + (size_t)k++ * len, len, "%s", CS_TOPO_SOURCE_DIR);
  return k;
}

static int cmp_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

enum cs_status cs_topo_find(const char *name, char *buf, size_t len, struct cs_error *err) {
  size_t nl = strlen(name);
  if (nl == 0) return cs_error_set(err, CS_ERR_USAGE, "empty topology name");
  if (strchr(name, '/') || (nl > 5 && strcmp(name + nl - 5, ".yaml") == 0)) {
    if ((size_t)snprintf(buf, len, "%s", name) >= len)
      return cs_error_set(err, CS_ERR_RANGE, "topology path too long");
    if (access(buf, R_OK) != 0)
      return cs_error_set(err, CS_ERR_IO, "%s: cannot open: %s", name, strerror(errno));
    return CS_OK;
  }
  char dirs[4][1024];
  int nd = cs_topo_search_dirs(&dirs[0][0], sizeof dirs[0], 4);
  char tried[CS_ERROR_MSG_MAX / 2] = "";
  size_t w = 0;
  for (int i = 0; i < nd; i++) {
    if ((size_t)snprintf(buf, len, "%s/%s.yaml", dirs[i], name) >= len)
      return cs_error_set(err, CS_ERR_RANGE, "topology path too long");
    if (access(buf, R_OK) == 0) return CS_OK;
    int c = snprintf(tried + w, sizeof tried - w, "%s%s", i ? ", " : "", dirs[i]);
    if (c > 0 && (size_t)c < sizeof tried - w) w += (size_t)c;
  }
  /* the bundled names, for a suggestion */
  char stems[128][64];
  const char *names[128];
  size_t n = 0;
  for (int i = 0; i < nd; i++) {
    DIR *d = opendir(dirs[i]);
    if (d == NULL) continue;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 128) {
      size_t l = strlen(de->d_name);
      if (l < 6 || l - 5 >= sizeof stems[0] || strcmp(de->d_name + l - 5, ".yaml") != 0) continue;
      memcpy(stems[n], de->d_name, l - 5);
      stems[n][l - 5] = '\0';
      names[n] = stems[n];
      n++;
    }
    closedir(d);
  }
  qsort(names, n, sizeof names[0], cmp_name);
  char hint[256];
  cs_datadir_suggest(names, n, name, hint, sizeof hint);
  return cs_error_set(err, CS_ERR_IO,
                      "no topology \"%s\"%s (looked for %s.yaml in %s; 'commscale topology list' "
                      "shows the bundled ones)",
                      name, hint, name, tried);
}

/* ---- the resolved dump -------------------------------------------------------------------- */

/* key: "s", indented. */
static void put_string(FILE *out, const char *key, const char *s, int indent) {
  fprintf(out, "%*s%s: ", indent, "", key);
  cs_yaml_write_string(out, s);
  fputc('\n', out);
}

static void put_qty(FILE *out, const char *key, double v, enum cs_unit_kind k, int indent) {
  char buf[64];
  cs_units_format_quantity(v, k, buf, sizeof buf);
  fprintf(out, "%*s%s: %s\n", indent, "", key, buf);
}

void cs_topo_dump(FILE *out, const struct cs_topology *t) {
  const struct cs_topo_node *n = &t->node;
  const struct cs_topo_net *net = &t->net;
  fprintf(out, "version: %d\n", CS_TOPO_VERSION);
  put_string(out, "name", t->name, 0);
  put_string(out, "description", t->description, 0);
  fprintf(out, "node:\n  gpus: %d\n", n->gpus);
  put_string(out, "gpu", n->gpu, 2);
  fprintf(out, "  fabric: %s\n", cs_topo_fabric_name((enum cs_topo_fabric)n->fabric));
  put_qty(out, "nvlink_bandwidth", n->nvlink_bw, BW, 2);
  put_qty(out, "link_bandwidth", n->link_bw, BW, 2);
  if (n->has_links) {
    fprintf(out, "  links:\n");
    for (int i = 0; i < n->gpus; i++) {
      fprintf(out, "    - [");
      for (int j = 0; j < n->gpus; j++)
        fprintf(out, "%s%d", j ? ", " : "", n->links[i][j]);
      fprintf(out, "]\n");
    }
  }
  put_qty(out, "pcie_bandwidth", n->pcie_bw, BW, 2);
  fprintf(out, "  gpus_per_switch: %d\n", n->gpus_per_switch);
  put_qty(out, "switch_uplink", n->switch_uplink, BW, 2);
  fprintf(out, "  gpus_per_socket: %d\n", n->gpus_per_socket);
  put_qty(out, "socket_bandwidth", n->socket_bw, BW, 2);
  fprintf(out, "  nvlink_domain: %d\n  nvls: %s\n  efficiency: %.10g\n", n->nvlink_domain,
          n->nvls ? "true" : "false", n->efficiency);
  if (net->nics > 0) {
    fprintf(out, "  nic_affinity: [");
    for (int i = 0; i < n->gpus; i++)
      fprintf(out, "%s%d", i ? ", " : "", n->nic_of_gpu[i]);
    fprintf(out, "]\n");
  }
  fprintf(out, "network:\n  nics: %d\n", net->nics);
  put_qty(out, "nic_speed", net->nic_bw, BW, 2);
  fprintf(out, "  transport: %s\n", cs_topo_transport_name((enum cs_topo_transport)net->transport));
  put_qty(out, "latency", net->latency, TM, 2);
  put_qty(out, "switch_latency", net->switch_latency, TM, 2);
  fprintf(out, "  efficiency: %.10g\n  rail_optimized: %s\n  sharp: %s\n  nodes: %d\n",
          net->efficiency, net->rail_optimized ? "true" : "false", net->sharp ? "true" : "false",
          net->nodes);
  if (net->nlevels > 0) {
    fprintf(out, "  levels:\n");
    for (int l = 0; l < net->nlevels; l++) {
      const struct cs_topo_level *lv = &net->level[l];
      fprintf(out, "    - name: ");
      cs_yaml_write_string(out, lv->name); /* quotes and backslashes escaped */
      fprintf(out, "\n      radix: %d\n      oversubscription: \"%.10g:1\"\n      nodes: %d\n",
              lv->radix, lv->oversub, lv->nodes);
    }
  }
}
