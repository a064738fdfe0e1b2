/* test_topology.c — topology files, group mapping and nvidia-smi import.
 *
 * Every expected figure below is worked out by hand from the published hardware figures in the
 * bundled files (written next to each assertion), never taken from the code's own output:
 * the DLPerf cluster's 8 GPUs sharing one 100 Gb/s NIC, DGX H100 rails and oversubscription, GB200
 * NVLink domains, Llama 3 pods, NVLink mesh sub-groups, and the NV18 bond of the 2 x H200 machine.
 * A fuzz test feeds 1,000 mutated bundled files (fixed seed) to the loader and requires a clean
 * answer every time: success, or one located error line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "netedit.h"
#include "smi.h"
#include "testutil.h"
#include "topology.h"

#define TOPO_DIR CS_TEST_DATA "/../../topologies"

static const char *const bundled[] = {"dgx1-v100-edr",    "dgx2-v100",   "aws-p3-16xlarge",
                                      "azure-nd-a100-v4", "dgx-a100",    "dgx-h100",
                                      "dgx-h200",         "gb200-nvl72", "pcie-8gpu-2x100gbe",
                                      "llama3-pod",       "h200x2"};
#define NBUNDLED (sizeof bundled / sizeof bundled[0])

static void load(const char *name, struct cs_topology *t) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.yaml", TOPO_DIR, name);
  struct cs_error err = {0};
  if (cs_topo_load(path, t, &err) != CS_OK) fail_msg("%s: %s", name, err.msg);
}

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  assert_non_null(s);
  assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
  s[n] = '\0';
  fclose(f);
  return s;
}

static char *dump_string(const struct cs_topology *t) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  cs_topo_dump(f, t);
  fclose(f);
  return buf;
}

/* Loads t's resolved dump back into u (as a file called name), failing the test when it does not
 * load; returns the dump, which the caller frees. */
static char *reload(const struct cs_topology *t, const char *name, struct cs_topology *u) {
  char *d = dump_string(t);
  struct cs_error err = {0};
  if (cs_topo_load_string(d, name, u, &err) != CS_OK)
    fail_msg("%s: the dump does not load: %s\n%s", name, err.msg, d);
  return d;
}

/* Imports nvidia-smi topo -m text as topology name into t, failing the test on an error. */
static void import(const char *text, const char *name, double link_bw, double nic_bw,
                   struct cs_topology *t) {
  struct cs_error err = {0};
  if (cs_topo_import_smi(text, name, link_bw, nic_bw, t, &err) != CS_OK)
    fail_msg("%s: %s", name, err.msg);
}

/* Maps the group of dimension `dim` of a plan given as text, holding rank 0, all siblings busy. */
static struct cs_topo_group map(const struct cs_topology *t, const char *sizes, const char *dim) {
  char names[CS_TOPO_MAX_DIMS][16];
  int sz[CS_TOPO_MAX_DIMS], nd, d;
  struct cs_error err = {0};
  struct cs_topo_group g;
  if (cs_topo_parse_plan(NULL, sizes, dim, names, sz, &nd, &d, &err) != CS_OK)
    fail_msg("%s", err.msg);
  if (cs_topo_map(t, nd, sz, d, 0, 1, &g, &err) != CS_OK)
    fail_msg("%s %s: %s", sizes, dim, err.msg);
  return g;
}

/* Acceptance 4 (first half): every bundled file loads, and its resolved dump loads back to the
 * same topology (the dump of the reload is byte-identical). */
static void bundled_files_load(void **state) {
  (void)state;
  for (size_t i = 0; i < NBUNDLED; i++) {
    struct cs_topology t, u;
    load(bundled[i], &t);
    assert_string_equal(t.name, bundled[i]);
    char *d1 = reload(&t, bundled[i], &u);
    char *d2 = dump_string(&u);
    assert_string_equal(d1, d2);
    free(d1);
    free(d2);
  }
}

/* Acceptance 1: the DLPerf cluster, plain data parallelism. 16 GPUs = 2 nodes of 8; the single
 * EDR NIC (100 Gb/s = 12.5 GB/s) carries the whole node's share: 12.5 GB/s per node, 12.5 / 8 =
 * 1.5625 GB/s per GPU, against 6 NVLink2 links x 25 GB/s = 150 GB/s per GPU inside the node. */
static void dlperf_dp(void **state) {
  (void)state;
  struct cs_topology t;
  load("dgx1-v100-edr", &t);
  struct cs_topo_group g = map(&t, "dp=16", "dp");
  assert_int_equal(g.ranks, 16);
  assert_int_equal(g.nodes, 2);
  assert_int_equal(g.gpus_per_node, 8);
  assert_int_equal(g.domains, 2);
  assert_int_equal(g.tier, CS_TIER_NET);
  assert_int_equal(g.intra, CS_TIER_NVLINK);
  assert_close(g.bw_intra, 150e9, 1e-12);
  assert_int_equal(g.nics_used, 1);
  assert_int_equal(g.flows_per_nic, 1);
  assert_close(g.bw_net, 100e9 / 8, 1e-12);
  assert_close(g.bw_net_gpu, 100e9 / 8 / 8, 1e-12);
  /* 32 GPUs: 4 nodes, the same per-GPU share */
  g = map(&t, "dp=32", "dp");
  assert_int_equal(g.nodes, 4);
  assert_close(g.bw_net_gpu, 1.5625e9, 1e-12);
  /* 8 GPUs: one node, NVLink only */
  g = map(&t, "dp=8", "dp");
  assert_int_equal(g.domains, 1);
  assert_int_equal(g.tier, CS_TIER_NVLINK);
  assert_close(g.bw_net, 0, 0);
  /* tp=2 beside dp=8: two DP groups of 4 GPUs per node share the NIC: 12.5 / 2 per group per
   * node, still 1.5625 GB/s per GPU */
  g = map(&t, "tp=2,dp=8", "dp");
  assert_int_equal(g.gpus_per_node, 4);
  assert_int_equal(g.siblings_per_node, 2);
  assert_int_equal(g.flows_per_nic, 2);
  assert_close(g.bw_net, 6.25e9, 1e-12);
  assert_close(g.bw_net_gpu, 1.5625e9, 1e-12);

  /* the cost model fed from the topology: a 1 GiB ring/Simple all-reduce over 16 GPUs moves
   * 2 * 15/16 GiB of bus bytes through a 12.5 GB/s NIC at 0.95 efficiency: bus bandwidth
   * 11.875 GB/s at most, within 10% of it after latency */
  struct cs_model m;
  cs_model_defaults(&m);
  g = map(&t, "dp=16", "dp");
  cs_topo_model_apply(&t, &g, CS_TOPO_APPLY_ALL, &m);
  assert_close(m.bw[CS_TIER_NET], 12.5e9 * 0.95, 1e-12);
  assert_close(m.bw[CS_TIER_NVLINK], 150e9 * 0.8, 1e-12);
  struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 0, 0, 0,
                            1073741824.0};
  cs_topo_group_query(&g, &q);
  assert_int_equal(q.ranks, 16);
  assert_int_equal(q.nodes, 2);
  assert_int_equal(q.gpus_per_node, 8);
  struct cs_coll_pred p;
  struct cs_error err = {0};
  assert_int_equal(cs_model_predict(&m, &q, &p, &err), CS_OK);
  double busbw = q.bytes * 2 * 15 / 16 / p.time;
  assert_true(busbw <= 11.875e9);
  assert_true(busbw >= 0.9 * 11.875e9);
}

/* Acceptance 2: DGX H100 with 8 rails. */
static void dgx_h100_rails(void **state) {
  (void)state;
  struct cs_topology t;
  load("dgx-h100", &t);
  /* tp=8 stays inside the node on NVSwitch: 18 NVLink4 links x 25 GB/s = 450 GB/s per GPU */
  struct cs_topo_group g = map(&t, "tp=8,dp=16", "tp");
  assert_int_equal(g.nodes, 1);
  assert_int_equal(g.gpus_per_node, 8);
  assert_int_equal(g.tier, CS_TIER_NVLINK);
  assert_close(g.bw_intra, 450e9, 1e-12);
  assert_int_equal(g.nvls, 1);
  /* its DP groups: 1 GPU per node, each on its own rail of 400 Gb/s = 50 GB/s; the 8 groups of
   * a node use all 8 rails at once, 16 nodes sit in one 32-node scalable unit */
  g = map(&t, "tp=8,dp=16", "dp");
  assert_int_equal(g.nodes, 16);
  assert_int_equal(g.gpus_per_node, 1);
  assert_int_equal(g.siblings_per_node, 8);
  assert_int_equal(g.nics_used, 1);
  assert_int_equal(g.flows_per_nic, 1);
  assert_close(g.bw_net, 50e9, 1e-12);
  assert_int_equal(g.level, 0);
  /* SHARP-capable switches, but NCCL's CollNet is off by default (NCCL_COLLNET_ENABLE=0): the
   * bundled file says sharp: false; with SHARP in use the group may run CollNet */
  assert_int_equal(g.collnet, 0);
  t.net.sharp = 1;
  g = map(&t, "tp=8,dp=16", "dp");
  assert_int_equal(g.collnet, 1);
  t.net.sharp = 0;
  /* plain DP across 16 nodes: each group uses all 8 rails, 8 x 400 Gb/s = 400 GB/s per node */
  g = map(&t, "dp=128", "dp");
  assert_int_equal(g.gpus_per_node, 8);
  assert_int_equal(g.nics_used, 8);
  assert_close(g.bw_net, 8 * 400e9 / 8, 1e-12);
  assert_close(g.bw_net_gpu, 50e9, 1e-12);
  /* beyond one scalable unit (64 nodes) the spine is non-blocking: no loss */
  g = map(&t, "dp=512", "dp");
  assert_int_equal(g.level, 1);
  assert_close(g.bw_net, 400e9, 1e-12);
  /* latency: one switch in a leaf, three through the spine (2.7 us + 2 x 0.13 us) */
  assert_close(g.lat_net, 2.7e-6 + 2 * 0.13e-6, 1e-9);

  /* the same nodes on a rail-unaware fabric whose leaves are 4:1 oversubscribed: a leaf of 64
   * ports keeps 64 * 4/5 = 51 down, 51 / 8 NICs = 6 nodes per leaf */
  char *text = read_all(TOPO_DIR "/dgx-h100.yaml");
  char *p = strstr(text, "rail_optimized: true");
  assert_non_null(p);
  memcpy(p, "rail_optimized: 0   ", 20); /* same length; "0" is not a YAML boolean here */
  struct cs_error err = {0};
  assert_int_not_equal(cs_topo_load_string(text, "ru.yaml", &t, &err), CS_OK);
  assert_non_null(strstr(err.msg, "ru.yaml:"));
  memcpy(p, "rail_optimized: no  ", 20);
  p = strstr(text, "oversubscription: 1:1");
  assert_non_null(p);
  memcpy(p, "oversubscription: 4:1", 21);
  if (cs_topo_load_string(text, "ru.yaml", &t, &err) != CS_OK) fail_msg("%s", err.msg);
  free(text);
  assert_int_equal(t.net.rail_optimized, 0);
  assert_int_equal(t.net.level[0].nodes, 6);
  g = map(&t, "dp=32", "dp"); /* 4 nodes: inside one leaf */
  assert_int_equal(g.level, 0);
  assert_close(g.bw_net, 400e9, 1e-12);
  g = map(&t, "dp=128", "dp"); /* 16 nodes: across leaves, 400 / 4 */
  assert_int_equal(g.level, 1);
  assert_close(g.oversub, 4, 1e-12);
  assert_close(g.bw_net, 400e9 / 4, 1e-12);
  g = map(&t, "tp=8,dp=16", "dp"); /* one rail per group: 50 / 4 */
  assert_close(g.bw_net, 50e9 / 4, 1e-12);
  /* the model sees it: bw[net] = 100 GB/s x 0.95 */
  struct cs_model m;
  cs_model_defaults(&m);
  g = map(&t, "dp=128", "dp");
  cs_topo_model_apply(&t, &g, CS_TOPO_APPLY_NET, &m);
  assert_close(m.bw[CS_TIER_NET], 100e9 * 0.95, 1e-12);
}

/* A rail-optimised fabric and a group whose members change local GPU index between nodes: its
 * traffic changes rail and crosses the spine even inside one scalable unit. 3-way inner
 * dimension: DP members 0,3,6 on node 0 and 9,12,15 (local 1,4,7) on node 1. */
static void rail_change(void **state) {
  (void)state;
  struct cs_topology t;
  load("dgx-h100", &t);
  struct cs_topo_group g = map(&t, "tp=3,dp=6", "dp");
  assert_int_equal(g.nodes, 2);
  assert_int_equal(g.rail_aligned, 0);
  assert_int_equal(g.level, 1);
  g = map(&t, "tp=2,dp=8", "dp");
  assert_int_equal(g.rail_aligned, 1);
  assert_int_equal(g.level, 0);
}

/* NVLink domains larger than a node, and pods with 1:7 between them. */
static void domains_and_pods(void **state) {
  (void)state;
  struct cs_topology t;
  load("gb200-nvl72", &t);
  /* tp=8 spans two trays of 4 GPUs but one NVLink domain: NVLink5 900 GB/s per GPU */
  struct cs_topo_group g = map(&t, "tp=8,dp=18", "tp");
  assert_int_equal(g.nodes, 2);
  assert_int_equal(g.domains, 1);
  assert_int_equal(g.tier, CS_TIER_NVLINK);
  assert_close(g.bw_intra, 900e9, 1e-12);
  /* plain DP over two racks: 72 GPUs per domain, its 18 trays x 4 NICs x 50 GB/s = 3.6 TB/s */
  g = map(&t, "dp=144", "dp");
  assert_int_equal(g.domains, 2);
  assert_int_equal(g.gpus_per_domain, 72);
  assert_int_equal(g.nodes, 36);
  assert_close(g.bw_net, 18 * 4 * 50e9, 1e-12);
  assert_close(g.bw_net_gpu, 50e9, 1e-12);

  load("llama3-pod", &t);
  /* 2 nodes: one rack switch */
  g = map(&t, "tp=8,dp=2", "dp");
  assert_int_equal(g.level, 0);
  assert_close(g.bw_net, 50e9, 1e-12);
  /* 384 nodes = 3,072 GPUs: one pod, full bisection */
  g = map(&t, "tp=8,dp=384", "dp");
  assert_int_equal(g.level, 1);
  assert_close(g.bw_net, 50e9, 1e-12);
  /* 768 nodes: two pods, 1:7 at the aggregation layer */
  g = map(&t, "tp=8,dp=768", "dp");
  assert_int_equal(g.level, 2);
  assert_close(g.oversub, 7, 1e-12);
  assert_close(g.bw_net, 50e9 / 7, 1e-12);
  /* the cluster has 3,072 nodes */
  char names[CS_TOPO_MAX_DIMS][16];
  int sz[CS_TOPO_MAX_DIMS], nd, d;
  struct cs_error err = {0};
  assert_int_equal(cs_topo_parse_plan(NULL, "tp=8,dp=3073", "dp", names, sz, &nd, &d, &err), CS_OK);
  assert_int_equal(cs_topo_map(&t, nd, sz, d, 0, 1, &g, &err), CS_ERR_RANGE);
}

/* Intra-node fabrics: sub-groups of an NVLink mesh and of a PCIe tree with bridges. */
static void intra_fabrics(void **state) {
  (void)state;
  struct cs_topology t;
  load("dgx1-v100-edr", &t);
  /* GPUs 0,1: NV1 = 25 GB/s; quad 0-3: GPU0 has 1+1+2 = 4 links to the others (the least),
   * 100 GB/s; all 8: 6 links each, 150 GB/s */
  assert_close(map(&t, "tp=2,dp=4", "tp").bw_intra, 25e9, 1e-12);
  assert_close(map(&t, "tp=4,dp=2", "tp").bw_intra, 100e9, 1e-12);
  assert_close(map(&t, "tp=8", "tp").bw_intra, 150e9, 1e-12);
  /* GPUs 0 and 4 (stride 4): NV2 = 50 GB/s */
  struct cs_topo_group g = map(&t, "cp=4,ep=2", "ep");
  assert_int_equal(g.intra, CS_TIER_NVLINK);
  assert_close(g.bw_intra, 50e9, 1e-12);
  /* GPUs 0 and 5 (stride 5) have no NVLink: PCIe across sockets, the lesser of the GPU's Gen3
   * x16 link (15.75 GB/s) and the QPI link (19.2 GB/s) */
  g = map(&t, "cp=5,ep=2", "ep");
  assert_int_equal(g.intra, CS_TIER_PCIE);
  assert_close(g.bw_intra, 15.75e9, 1e-12);

  load("pcie-8gpu-2x100gbe", &t);
  /* a bridged pair: 4 links x 14.0625 = 56.25 GB/s; four GPUs of one switch: PCIe Gen4 x16
   * 31.5 GB/s; all eight: across sockets, the 22.4 GB/s UPI link */
  g = map(&t, "tp=2", "tp");
  assert_int_equal(g.intra, CS_TIER_NVLINK);
  assert_close(g.bw_intra, 56.25e9, 1e-12);
  g = map(&t, "tp=4", "tp");
  assert_int_equal(g.intra, CS_TIER_PCIE);
  assert_close(g.bw_intra, 31.5e9, 1e-12);
  g = map(&t, "tp=8", "tp");
  assert_close(g.bw_intra, 22.4e9, 1e-12);
  /* plain DP on two servers: both 100 GbE NICs, 25 GB/s per node, RoCE */
  g = map(&t, "dp=16", "dp");
  assert_int_equal(g.nics_used, 2);
  assert_close(g.bw_net, 25e9, 1e-12);
}

/* Acceptance 3: import-smi on the 2 x H200 machine.txt: two GPUs joined by NV18, 18 links of
 * 26.562 GB/s = 478.116 GB/s per direction. */
static void import_h200(void **state) {
  (void)state;
  char *text = read_all(CS_TEST_DATA "/h200x2/machine.txt");
  struct cs_topology t;
  import(text, "h200x2-imported", 0, 0, &t);
  free(text);
  assert_int_equal(t.node.gpus, 2);
  assert_int_equal(t.node.fabric, CS_TOPO_NVLINK_MESH);
  assert_int_equal(t.node.links[0][1], 18);
  assert_int_equal(t.node.links[1][0], 18);
  assert_close(t.node.link_bw, 26.562e9, 1e-12);
  assert_string_equal(t.node.gpu, "H200");
  assert_int_equal(t.net.nics, 0);
  struct cs_topo_group g = map(&t, "tp=2", "tp");
  assert_int_equal(g.tier, CS_TIER_NVLINK);
  assert_close(g.bw_intra, 18 * 26.562e9, 1e-12);
  /* the emitted file loads */
  struct cs_topology u;
  free(reload(&t, "imported.yaml", &u));
  assert_int_equal(u.node.links[0][1], 18);
  /* and a group beyond the host is refused: no network */
  struct cs_error err = {0};
  char names[CS_TOPO_MAX_DIMS][16];
  int sz[CS_TOPO_MAX_DIMS], nd, dd;
  assert_int_equal(cs_topo_parse_plan(NULL, "dp=4", "dp", names, sz, &nd, &dd, &err), CS_OK);
  assert_int_equal(cs_topo_map(&u, nd, sz, dd, 0, 1, &g, &err), CS_ERR_UNSUPPORTED);
}

/* The defaults table is what the loader fills in when a file leaves a value out, for every
 * transport and fabric; a transport edit (netedit) gives what loading a file with that transport
 * gives; the nvidia-smi import uses the same values. */
static void defaults_table(void **state) {
  (void)state;
  const struct cs_topo_defaults *def = cs_topo_defaults();
  static const char *const tr_names[] = {"infiniband", "roce", "tcp"};
  static const char *const fab_names[] = {"nvswitch", "nvlink-mesh", "pcie"};
  for (int tr = 0; tr < CS_TOPO_TRANSPORTS; tr++) {
    char text[512];
    snprintf(text, sizeof text,
             "version: 1\nname: t\nnode:\n  gpus: 2\n  fabric: pcie\nnetwork:\n  nics: 1\n"
             "  nic_speed: 100Gbps\n  transport: %s\n",
             tr_names[tr]);
    struct cs_topology t, ib;
    struct cs_error err = {0};
    assert_int_equal(cs_topo_load_string(text, "defaults", &t, &err), CS_OK);
    assert_true(t.net.latency == def->transport[tr].latency);
    assert_true(t.net.switch_latency == def->transport[tr].switch_latency);
    assert_true(t.net.efficiency == def->transport[tr].efficiency);
    snprintf(text, sizeof text,
             "version: 1\nname: t\nnode:\n  gpus: 2\n  fabric: pcie\nnetwork:\n  nics: 1\n"
             "  nic_speed: 100Gbps\n  transport: %s\n  latency: 1ms\n  efficiency: 0.5\n",
             tr_names[(tr + 1) % CS_TOPO_TRANSPORTS]);
    assert_int_equal(cs_topo_load_string(text, "edited", &ib, &err), CS_OK);
    struct cs_netedit e;
    cs_netedit_init(&e);
    e.transport = tr;
    assert_int_equal(cs_netedit_apply(&ib, &e, &err), CS_OK);
    assert_int_equal(ib.net.transport, tr);
    assert_true(ib.net.latency == t.net.latency && ib.net.efficiency == t.net.efficiency);
    assert_true(ib.net.switch_latency == t.net.switch_latency);
  }
  for (int f = 0; f < CS_TOPO_FABRICS; f++) {
    char text[512];
    snprintf(text, sizeof text, "version: 1\nname: t\nnode:\n  gpus: 2\n  fabric: %s\n%s",
             fab_names[f],
             f == CS_TOPO_NVSWITCH      ? "  nvlink_bandwidth: 450GBps\n"
             : f == CS_TOPO_NVLINK_MESH ? "  link_bandwidth: 25GBps\n  links: [[0, 18], [18, 0]]\n"
                                        : "");
    struct cs_topology t;
    struct cs_error err = {0};
    if (cs_topo_load_string(text, "fabric", &t, &err) != CS_OK) {
      print_error("%s: %s\n", fab_names[f], err.msg);
      fail();
    }
    assert_true(t.node.efficiency == def->fabric_efficiency[f]);
  }
  /* the smi import of the 2 x H200 (NVLink mesh, no NIC) takes the mesh's default */
  char *text = read_all(CS_TEST_DATA "/h200x2/machine.txt");
  struct cs_topology u;
  import(text, "h200x2-defaults", 0, 0, &u);
  free(text);
  assert_true(u.node.efficiency == def->fabric_efficiency[CS_TOPO_NVLINK_MESH]);
  assert_true(u.net.latency == def->transport[CS_TOPO_INFINIBAND].latency);
}

/* import-smi on other shapes: NVSwitch (NV18 everywhere) with NICs, a DGX-1 mesh, a PCIe box. */
static void import_shapes(void **state) {
  (void)state;
  static const char nvswitch[] =
      "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\t X \tNV18\tNV18\tNV18\tPIX\tSYS\t0-47\t0\n"
      "GPU1\tNV18\t X \tNV18\tNV18\tPXB\tSYS\t0-47\t0\n"
      "GPU2\tNV18\tNV18\t X \tNV18\tSYS\tPIX\t48-95\t1\n"
      "GPU3\tNV18\tNV18\tNV18\t X \tSYS\tPXB\t48-95\t1\n"
      "NIC0\tPIX\tPXB\tSYS\tSYS\t X \tSYS\n"
      "NIC1\tSYS\tSYS\tPIX\tPXB\tSYS\t X \n"
      "\nLegend:\n";
  struct cs_topology t, u;
  import(nvswitch, "sw", 25e9, 50e9, &t);
  assert_int_equal(t.node.fabric, CS_TOPO_NVSWITCH);
  assert_close(t.node.nvlink_bw, 18 * 25e9, 1e-12);
  assert_int_equal(t.net.nics, 2);
  assert_int_equal(t.node.nic_of_gpu[0], 0);
  assert_int_equal(t.node.nic_of_gpu[1], 0);
  assert_int_equal(t.node.nic_of_gpu[2], 1);
  assert_int_equal(t.node.nic_of_gpu[3], 1);
  free(reload(&t, "sw.yaml", &u));

  static const char pcie[] = "        GPU0    GPU1    GPU2    GPU3    CPU Affinity\n"
                             "GPU0     X      PIX     SYS     SYS     0-15\n"
                             "GPU1    PIX      X      SYS     SYS     0-15\n"
                             "GPU2    SYS     SYS      X      PXB     16-31\n"
                             "GPU3    SYS     SYS     PXB      X      16-31\n";
  import(pcie, "p", 0, 0, &t);
  assert_int_equal(t.node.fabric, CS_TOPO_PCIE);
  assert_int_equal(t.node.gpus_per_switch, 2);
  assert_int_equal(t.node.gpus_per_socket, 2);
  free(reload(&t, "p.yaml", &u));

  static const struct {
    const char *text;
    const char *what;
  } bad[] = {
      {"nothing here\n", "no GPU matrix"},
      {"\tGPU0\tGPU1\nGPU0\t X \tNVX\nGPU1\tNV2\t X \n", "got \"NVX\""},
      {"\tGPU0\tGPU1\nGPU0\t X \nGPU1\tNV2\t X \n", "has 1 entries, expected 2"},
      {"\tGPU0\tGPU1\nGPU0\t X \tNV2\n", "2 columns but 1 rows"},
      {"\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV4\t X \n", "differ"},
      {"\tGPU0\tGPU2\n", "expected column GPU1"},
      {"\tGPU0\tGPU1\nGPU0\tNV2\tNV2\nGPU1\tNV2\t X \n", "X on the diagonal"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct cs_error err = {0};
    assert_int_not_equal(cs_topo_import_smi(bad[i].text, "b", 0, 0, &t, &err), CS_OK);
    if (!strstr(err.msg, bad[i].what))
      fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].what);
  }
}

/* Invalid files: one located line each. */
static void errors(void **state) {
  (void)state;
  static const char head[] = "version: 1\nname: x\n";
  static const struct {
    const char *text;
    const char *where;
    const char *what;
  } cases[] = {
      {"node:\n  gpus: 8\n  fabric: nvswitch\n  nvlink_bandwith: 450GBps\n",
       "t.yaml:6:3:", "unknown key \"nvlink_bandwith\""},
      {"node:\n  gpus: 8\n  fabric: nvswitch\n", "t.yaml:4:3:", "needs nvlink_bandwidth"},
      {"node:\n  gpus: 8\n  fabric: nvswitch\n  nvlink_bandwidth: 450\n",
       "t.yaml:6:21:", "no unit"},
      {"node:\n  gpus: 2\n  fabric: nvlink-mesh\n  link_bandwidth: 25GBps\n  links: [[0, 1], [2, "
       "0]]\n",
       "t.yaml:7:", "symmetric"},
      {"node:\n  gpus: 2\n  fabric: nvlink-mesh\n  link_bandwidth: 25GBps\n  links: [[0, 1]]\n",
       "t.yaml:7:10:", "2 rows"},
      {"node:\n  gpus: 2\n  fabric: nvlink-mesh\n  link_bandwidth: 25GBps\n  links: [[1, 1], [1, "
       "0]]\n",
       "t.yaml:7:", "itself"},
      {"node:\n  gpus: 2\n  fabric: nvlink-mesh\n", "t.yaml:4:3:", "needs links"},
      {"node:\n  gpus: 2\n  fabric: torus\n", "t.yaml:5:11:", "expected one of nvswitch"},
      {"node:\n  gpus: 99\n  fabric: pcie\n", "t.yaml:4:9:", "from 1 to 32"},
      {"node:\n  gpus: 8\n  fabric: pcie\n  gpus_per_switch: 3\n", "t.yaml:6:20:", "must divide"},
      {"node:\n  gpus: 8\n  fabric: pcie\n  nvls: true\n", "t.yaml:6:9:", "nvls needs"},
      {"node:\n  gpus: 4\n  fabric: pcie\n  nvlink_domain: 8\n",
       "t.yaml:6:18:", "needs fabric nvswitch"},
      {"node:\n  gpus: 4\n  fabric: nvswitch\n  nvlink_bandwidth: 1GBps\n  nvlink_domain: 6\n",
       "t.yaml:7:18:", "multiple of gpus"},
      {"node:\n  gpus: 2\n  fabric: pcie\n  nic_affinity: [0, 1]\nnetwork:\n  nics: 1\n  "
       "nic_speed: 1Gbps\n",
       "t.yaml:6:", "nic_affinity"},
      {"node:\n  gpus: 2\n  fabric: pcie\nnetwork:\n  nics: 1\n", "t.yaml:7:3:", "needs nic_speed"},
      {"node:\n  gpus: 2\n  fabric: pcie\nnetwork:\n  nics: 1\n  nic_speed: 1Gbps\n  transport: "
       "carrier\n",
       "t.yaml:9:14:", "expected one of infiniband, roce, tcp"},
      {"node:\n  gpus: 2\n  fabric: pcie\nnetwork:\n  nics: 1\n  nic_speed: 1Gbps\n  levels:\n"
       "    - {radix: 8, oversubscription: 0:1}\n",
       "t.yaml:10:", "oversubscription"},
      {"node:\n  gpus: 2\n  fabric: pcie\nnetwork:\n  nics: 1\n  nic_speed: 1Gbps\n  levels:\n"
       "    - {radix: 8, oversubscription: lots}\n",
       "t.yaml:10:", "ratio such as 4:1"},
      {"node:\n  gpus: 2\n  fabric: pcie\nnetwork:\n  nics: 1\n  nic_speed: 1Gbps\n  levels:\n"
       "    - {radix: 8, nodes: 4}\n    - {radix: 8, nodes: 4}\n    - {radix: 8}\n",
       "t.yaml:11:", "not more than"},
      {"node:\n  gpus: 2\n  fabric: pcie\nnetwork:\n  nics: 1\n  nic_speed: 1Gbps\n  levels:\n"
       "    - {radix: 8}\n    - {radix: 8}\n    - {radix: 8}\n",
       "t.yaml:11:", "needs nodes"},
      {"node:\n  gpus: 2\n  fabric: pcie\nnetwork:\n  nics: 8\n  nic_speed: 1Gbps\n  levels:\n"
       "    - {radix: 4}\n    - {radix: 8}\n",
       "t.yaml:10:", "cannot hold one node"},
      {"node:\n  gpus: 2\n  fabric: pcie\nnetwork:\n  nics: 0\n  levels:\n    - {radix: 4}\n",
       "t.yaml:9:", "need NICs"},
      {"node:\n  gpus: 2\n  fabric: pcie\nnetwork:\n  nics: 1\n  nic_speed: 1Gbps\n  levels: "
       "{radix: 4}\n",
       "t.yaml:9:11:", "list of 1 to 4"},
      {"nodes: {}\n", "t.yaml:3:1:", "unknown key \"nodes\""},
      {"", "t.yaml:1:1:", "missing required key \"node\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[1024];
    snprintf(text, sizeof text, "%s%s", head, cases[i].text);
    struct cs_topology t;
    struct cs_error err = {0};
    assert_int_not_equal(cs_topo_load_string(text, "t.yaml", &t, &err), CS_OK);
    if (!strstr(err.msg, cases[i].where) || !strstr(err.msg, cases[i].what))
      fail_msg("case %zu: \"%s\" lacks \"%s\" or \"%s\"", i, err.msg, cases[i].where,
               cases[i].what);
  }
  struct cs_topology t;
  struct cs_error err = {0};
  assert_int_equal(
      cs_topo_load_string("version: 2\nnode: {gpus: 1, fabric: pcie}\n", "v.yaml", &t, &err),
      CS_ERR_RANGE);
  assert_non_null(strstr(err.msg, "v.yaml:1:10:"));
  assert_int_equal(cs_topo_load("/nonexistent/t.yaml", &t, &err), CS_ERR_IO);
}

/* Plans and lookups that must be refused. */
static void usage_errors(void **state) {
  (void)state;
  struct cs_topology t;
  load("dgx1-v100-edr", &t);
  struct cs_topo_group g;
  struct cs_error err = {0};
  int sz[3] = {8, 0, 4};
  assert_int_equal(cs_topo_map(&t, 3, sz, 0, 0, 1, &g, &err), CS_ERR_USAGE);
  sz[1] = 1;
  assert_int_equal(cs_topo_map(&t, 3, sz, 3, 0, 1, &g, &err), CS_ERR_USAGE);
  assert_int_equal(cs_topo_map(&t, 3, sz, 0, 32, 1, &g, &err), CS_ERR_USAGE);
  assert_int_equal(cs_topo_map(&t, 0, sz, 0, 0, 1, &g, &err), CS_ERR_USAGE);
  int big[3] = {8, 1, 8}; /* 64 GPUs on a 4-node cluster */
  assert_int_equal(cs_topo_map(&t, 3, big, 2, 0, 1, &g, &err), CS_ERR_RANGE);
  assert_non_null(strstr(err.msg, "need 8 nodes"));
  int huge[2] = {1 << 20, 1 << 20};
  assert_int_equal(cs_topo_map(&t, 2, huge, 0, 0, 1, &g, &err), CS_ERR_USAGE);
  assert_int_equal(cs_topo_map_shape(&t, 2, 3, 1, &g, &err), CS_ERR_USAGE);
  assert_int_equal(cs_topo_map_shape(&t, 0, 8, 1, &g, &err), CS_ERR_USAGE);
  /* map_shape: 2 nodes x 8 GPUs is the DLPerf DP group; alone it still has the NIC to itself */
  assert_int_equal(cs_topo_map_shape(&t, 2, 8, 0, &g, &err), CS_OK);
  assert_close(g.bw_net, 12.5e9, 1e-12);
  /* 2 nodes x 2 GPUs beside 3 more such groups: alone it has the whole NIC, with its siblings a
   * quarter of it */
  assert_int_equal(cs_topo_map_shape(&t, 2, 2, 0, &g, &err), CS_OK);
  assert_close(g.bw_net, 12.5e9, 1e-12);
  assert_int_equal(cs_topo_map_shape(&t, 2, 2, 1, &g, &err), CS_OK);
  assert_close(g.bw_net, 12.5e9 / 4, 1e-12);

  char names[CS_TOPO_MAX_DIMS][16];
  int s[CS_TOPO_MAX_DIMS], nd, d;
  static const struct {
    const char *order, *sizes, *group, *what;
  } bad[] = {
      {NULL, "tp=8,xx=2", "dp", "not in the rank order"},
      {NULL, "tp=0", "dp", "positive integer"},
      {NULL, "tp8", "dp", "name=size"},
      {NULL, "tp=8", "zz", "--group"},
      {"tp,tp", "", "tp", "twice"},
      {"tp,,dp", "", "tp", "--order"},
      {"a,b,c,d,e,f,g,h,i", "", "a", "at most 8"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err = (struct cs_error){0};
    assert_int_equal(
        cs_topo_parse_plan(bad[i].order, bad[i].sizes, bad[i].group, names, s, &nd, &d, &err),
        CS_ERR_USAGE);
    if (!strstr(err.msg, bad[i].what))
      fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].what);
  }
  char buf[1024];
  assert_int_equal(cs_topo_find("no-such-cluster", buf, sizeof buf, &err), CS_ERR_IO);
  assert_non_null(strstr(err.msg, "no topology \"no-such-cluster\""));
  assert_int_equal(cs_topo_find("dgx-h100", buf, sizeof buf, &err), CS_OK);
  assert_non_null(strstr(buf, "dgx-h100.yaml"));
  assert_int_equal(cs_topo_find(TOPO_DIR "/dgx-a100.yaml", buf, sizeof buf, &err), CS_OK);
}

/* Acceptance 4 (second half): 1,000 mutated bundled files, each either loading (and then mapping
 * and dumping without harm) or failing with one line that names the file. */
static unsigned long long rng = 0x5eed2024ULL;
static unsigned next(void) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)(rng >> 33);
}

static void fuzz(void **state) {
  (void)state;
  static const char alphabet[] = ":-[]{}#&*!|>'\"%@`,\n\t 0123456789.xGBpsu";
  char *src[NBUNDLED];
  for (size_t i = 0; i < NBUNDLED; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.yaml", TOPO_DIR, bundled[i]);
    src[i] = read_all(path);
  }
  int ok = 0, bad = 0;
  for (int it = 0; it < 1000; it++) {
    const char *s = src[next() % NBUNDLED];
    size_t n = strlen(s);
    char *m = malloc(n + 64);
    assert_non_null(m);
    memcpy(m, s, n + 1);
    int edits = 1 + (int)(next() % 3);
    for (int e = 0; e < edits; e++) {
      n = strlen(m);
      if (n == 0) break;
      size_t at = next() % n;
      switch (next() % 5) {
      case 0: /* overwrite one byte */
        m[at] = alphabet[next() % (sizeof alphabet - 1)];
        break;
      case 1: { /* delete a run */
        size_t len = 1 + next() % 12;
        if (at + len > n) len = n - at;
        memmove(m + at, m + at + len, n - at - len + 1);
        break;
      }
      case 2: { /* insert a few bytes */
        size_t len = 1 + next() % 8;
        memmove(m + at + len, m + at, n - at + 1);
        for (size_t k = 0; k < len; k++)
          m[at + k] = alphabet[next() % (sizeof alphabet - 1)];
        break;
      }
      case 3: /* truncate */
        m[at] = '\0';
        break;
      default: { /* a digit becomes an extreme number */
        static const char *const nums[] = {"0", "-1", "99999999999", "1e308", "4096"};
        char *dgt = strpbrk(m + at, "0123456789");
        if (dgt) {
          const char *r = nums[next() % 5];
          size_t rl = strlen(r);
          if (strlen(m) + rl < n + 60) {
            memmove(dgt + rl, dgt + 1, strlen(dgt + 1) + 1);
            memcpy(dgt, r, rl);
          }
        }
        break;
      }
      }
    }
    struct cs_topology t;
    struct cs_error err = {0};
    enum cs_status st = cs_topo_load_string(m, "fuzz.yaml", &t, &err);
    if (st == CS_OK) {
      ok++;
      struct cs_topo_group g;
      int sizes[2] = {t.node.gpus, 4};
      cs_topo_map(&t, 2, sizes, 1, 0, 1, &g, &err);
      cs_topo_map(&t, 2, sizes, 0, 3, 0, &g, &err);
      char *d = dump_string(&t);
      struct cs_topology u;
      if (cs_topo_load_string(d, "fuzz-dump.yaml", &u, &err) != CS_OK)
        fail_msg("iteration %d: the dump of a loaded file does not load: %s\n%s", it, err.msg, d);
      free(d);
    } else {
      bad++;
      if (strncmp(err.msg, "fuzz.yaml:", 10) != 0 || strchr(err.msg, '\n') != NULL ||
          err.status != st || st == CS_ERR_NOMEM)
        fail_msg("iteration %d: unclean error (%d) \"%s\"", it, (int)st, err.msg);
    }
    free(m);
  }
  for (size_t i = 0; i < NBUNDLED; i++)
    free(src[i]);
  print_message("fuzz: %d of 1000 mutated files loaded, %d rejected with a located error\n", ok,
                bad);
  assert_int_equal(ok + bad, 1000);
  assert_true(bad > 300);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bundled_files_load), cmocka_unit_test(dlperf_dp),
      cmocka_unit_test(dgx_h100_rails),     cmocka_unit_test(rail_change),
      cmocka_unit_test(domains_and_pods),   cmocka_unit_test(intra_fabrics),
      cmocka_unit_test(import_h200),        cmocka_unit_test(defaults_table),
      cmocka_unit_test(import_shapes),      cmocka_unit_test(errors),
      cmocka_unit_test(usage_errors),       cmocka_unit_test(fuzz),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
