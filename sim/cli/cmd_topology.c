/* cmd_topology.c — `commscale topology`: show, list, import and map cluster topologies.
 *
 *   commscale topology show FILE|NAME         the resolved topology, every default spelled out
 *   commscale topology list                   the bundled topologies
 *   commscale topology import-smi FILE        a topology from `nvidia-smi topo -m` output
 *   commscale topology map FILE|NAME --order tp,cp,ep,pp,dp --sizes tp=8,dp=16 --group dp
 *                                             where one group of a plan sits and what it sees
 *
 * The work is done by the cs_topo library (topologies/); this file only parses arguments and
 * writes what the library returns.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "input.h"
#include "map.h"
#include "opts.h"
#include "output.h"
#include "smi.h"
#include "topology.h"
#include "units.h"

static const struct cli_opt opts[] = {
    {"order", 0, "LIST", "map: rank order, fastest-varying first (default tp,cp,ep,pp,dp)"},
    {"sizes", 0, "LIST", "map: dimension sizes, e.g. tp=8,pp=4,dp=16 (others are 1)"},
    {"group", 0, "DIM", "map: the dimension whose group to map, e.g. dp"},
    {"rank", 0, "R", "map: the group holding rank R (default 0)"},
    {"alone", 0, NULL, "map: cost the group alone (default: all sibling groups at once)"},
    {"name", 0, "NAME", "import-smi: the topology's name (default: the file's base name)"},
    {"link-bw", 0, "BW", "import-smi: NVLink link bandwidth when the text has no nvlink -s lines"},
    {"nic-speed", 0, "BW", "import-smi: add a network with the NICs found, each of this speed"},
    {"list", 0, NULL, "the same as the subcommand list (as workload --list)"},
    {"format", 0, "FMT", "map: table (default) or json"},
    {"output", 'o', "FILE", "write to FILE instead of stdout"},
};

static const struct cli_verb verb = {
    "topology",
    "show FILE|NAME | list | import-smi FILE | map FILE|NAME --sizes ... --group DIM",
    "Show, list, import and map cluster topologies.",
    "show prints the resolved topology (every default and derived value explicit; it loads back).\n"
    "list prints the bundled topologies, found in $COMMSCALE_DATA_DIR/topologies,\n"
    "<exe dir>/../share/commscale/topologies and the source tree. import-smi reads the output of\n"
    "`nvidia-smi topo -m` (and `nvidia-smi nvlink -s` when present) and writes a topology file.\n"
    "map places one group of a parallel plan on the topology: ranks, nodes and NVLink domains\n"
    "spanned, GPUs per node, the slowest tier, NICs and flows sharing them, the switch level\n"
    "crossed, and the bandwidth and latency its collectives see.",
    opts,
    (int)(sizeof opts / sizeof opts[0]),
    NULL};

static enum cs_status load_named(const char *name, struct cs_topology *t, struct cs_error *err) {
  char path[1024];
  enum cs_status st = cs_topo_find(name, path, sizeof path, err);
  return st == CS_OK ? cs_topo_load(path, t, err) : st;
}

static enum cs_status read_text(const char *path, char **text, struct cs_error *err) {
  FILE *f = cs_input_open(path, err);
  if (f == NULL) return err->status;
  enum cs_status st = cs_input_read_all(f, path, CS_INPUT_DOC_MAX, text, NULL, err);
  fclose(f);
  return st;
}

struct entry {
  char stem[64];
  char path[2048];
};

static int cmp_entry(const void *a, const void *b) {
  return strcmp(((const struct entry *)a)->stem, ((const struct entry *)b)->stem);
}

/* Lists NAME.yaml files of the search folders, the first folder's copy of a name winning. */
static int cmd_list(FILE *out) {
  char dirs[3][1024];
  static struct entry e[256];
  int nd = cs_topo_search_dirs(&dirs[0][0], sizeof dirs[0], 3), n = 0;
  for (int i = 0; i < nd; i++) {
    DIR *d = opendir(dirs[i]);
    if (d == NULL) continue;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 256) {
      size_t l = strlen(de->d_name);
      if (l < 6 || strcmp(de->d_name + l - 5, ".yaml") != 0 || l - 5 >= sizeof e[0].stem) continue;
      char stem[64];
      memcpy(stem, de->d_name, l - 5);
      stem[l - 5] = '\0';
      int dup = 0;
      for (int k = 0; k < n; k++)
        dup |= strcmp(e[k].stem, stem) == 0;
      if (dup) continue;
      int w = snprintf(e[n].path, sizeof e[n].path, "%s/%s", dirs[i], de->d_name);
      if (w < 0 || (size_t)w >= sizeof e[n].path) continue;
      memcpy(e[n++].stem, stem, sizeof stem);
    }
    closedir(d);
  }
  qsort(e, (size_t)n, sizeof e[0], cmp_entry);
  fprintf(out, "# %-20s %4s %-12s %-22s %s\n", "name", "gpus", "fabric", "network", "description");
  for (int i = 0; i < n; i++) {
    struct cs_topology t;
    struct cs_error err = {0};
    if (cs_topo_load(e[i].path, &t, &err) != CS_OK) {
      fprintf(stderr, "commscale topology: %s\n", err.msg);
      continue;
    }
    char net[48] = "none";
    if (t.net.nics > 0)
      snprintf(net, sizeof net, "%dx%gGbps %s", t.net.nics, t.net.nic_bw * 8 / 1e9,
               cs_topo_transport_name((enum cs_topo_transport)t.net.transport));
    fprintf(out, "  %-20s %4d %-12s %-22s %s\n", e[i].stem, t.node.gpus,
            cs_topo_fabric_name((enum cs_topo_fabric)t.node.fabric), net, t.description);
  }
  return 0;
}

static const char *tier_name(enum cs_tier t) {
  return t == CS_TIER_NVLINK ? "nvlink" : t == CS_TIER_PCIE ? "pcie" : "net";
}

static void write_map(FILE *out, int json, const struct cs_topology *t, char names[][16],
                      const int *sizes, int nd, int dim, const struct cs_topo_group *g) {
  struct cs_model m;
  cs_model_defaults(&m);
  cs_topo_model_apply(t, g, CS_TOPO_APPLY_ALL, &m);
  const char *level = g->level >= 0 && g->level < t->net.nlevels ? t->net.level[g->level].name
                      : g->level >= 0                            ? "switch"
                                                                 : "none";
  if (json) {
    /* the topology's and its levels' names come from a file: written as JSON strings */
    fprintf(out, "{\"tool\": \"commscale %s\", \"topology\": ", CS_VERSION);
    cli_json_string(out, t->name);
    fprintf(out, ", \"plan\": {");
    for (int i = 0; i < nd; i++)
      fprintf(out, "%s\"%s\": %d", i ? ", " : "", names[i], sizes[i]);
    fprintf(out,
            "}, \"group\": \"%s\", \"ranks\": %d, \"total_ranks\": %d, \"nodes\": %d, "
            "\"gpus_per_node\": %d, \"domains\": %d, \"gpus_per_domain\": %d, \"uniform\": %s, "
            "\"rail_aligned\": %s, \"tier\": \"%s\", \"intra_tier\": \"%s\", "
            "\"bw_intra_GBps\": %.6g, \"siblings_per_node\": %d, \"nics_used\": %d, "
            "\"flows_per_nic\": %d, \"level\": ",
            names[dim], g->ranks, g->total_ranks, g->nodes, g->gpus_per_node, g->domains,
            g->gpus_per_domain, g->uniform ? "true" : "false", g->rail_aligned ? "true" : "false",
            tier_name(g->tier), tier_name(g->intra), g->bw_intra / 1e9, g->siblings_per_node,
            g->nics_used, g->flows_per_nic);
    cli_json_string(out, level);
    fprintf(out,
            ", \"switches\": %d, \"oversubscription\": %.6g, \"bw_net_GBps\": %.6g, "
            "\"bw_net_per_gpu_GBps\": %.6g, \"lat_net_us\": %.6g, \"nvls\": %s, \"collnet\": %s, "
            "\"model_bw_intra_GBps\": %.6g, \"model_bw_net_GBps\": %.6g}\n",
            g->switches, g->oversub, g->bw_net / 1e9, g->bw_net_gpu / 1e9, g->lat_net * 1e6,
            g->nvls ? "true" : "false", g->collnet ? "true" : "false", m.bw[g->intra] / 1e9,
            g->domains > 1 ? m.bw[CS_TIER_NET] / 1e9 : 0.0);
    return;
  }
  fprintf(out, "# group %s of plan", names[dim]);
  for (int i = 0; i < nd; i++)
    fprintf(out, " %s=%d", names[i], sizes[i]);
  fprintf(out, " on %s (%d GPUs per node)\n", t->name, t->node.gpus);
  fprintf(out, "%-22s %d of %d\n", "ranks", g->ranks, g->total_ranks);
  fprintf(out, "%-22s %d (%d GPUs per node%s)\n", "nodes", g->nodes, g->gpus_per_node,
          g->uniform ? "" : ", not uniform");
  fprintf(out, "%-22s %d (%d GPUs per domain)\n", "nvlink domains", g->domains, g->gpus_per_domain);
  fprintf(out, "%-22s %s\n", "slowest tier", tier_name(g->tier));
  fprintf(out, "%-22s %s, %.6g GB/s per GPU (model busbw %.6g GB/s)\n", "intra-domain",
          tier_name(g->intra), g->bw_intra / 1e9, m.bw[g->intra] / 1e9);
  if (g->domains > 1) {
    fprintf(out, "%-22s %d on the group's first node\n", "sibling groups", g->siblings_per_node);
    fprintf(out, "%-22s %d per node, shared by up to %d groups each\n", "NICs used", g->nics_used,
            g->flows_per_nic);
    fprintf(out, "%-22s %s (%d switches), rail-aligned %s, oversubscription %.6g:1\n",
            "fabric level", level, g->switches, g->rail_aligned ? "yes" : "no", g->oversub);
    fprintf(out,
            "%-22s %.6g GB/s per domain = %.6g Gb/s; %.6g GB/s per GPU (model busbw %.6g GB/s)\n",
            "network bandwidth", g->bw_net / 1e9, g->bw_net * 8 / 1e9, g->bw_net_gpu / 1e9,
            m.bw[CS_TIER_NET] / 1e9);
    fprintf(out, "%-22s %.6g us per step\n", "network latency", g->lat_net * 1e6);
  }
  fprintf(out, "%-22s nvls %s, collnet %s\n", "in-network reduction", g->nvls ? "yes" : "no",
          g->collnet ? "yes" : "no");
  fprintf(out, "%-22s ranks=%d nodes=%d gpus_per_node=%d\n", "cost-model shape",
          g->domains * g->gpus_per_domain, g->domains, g->gpus_per_domain);
}

int cs_cmd_topology(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int begun = cli_begin(&verb, argc, argv, &a, 0, CLI_MAX_POS, NULL, NULL);
  if (begun >= 0) return begun;
  int listopt = cli_get(&verb, &a, "list") != NULL;
  if (a.npos < 1 && !listopt) {
    cs_error_set(&err, CS_ERR_USAGE, "expected show, list, import-smi or map (see --help)");
    return cli_fail("topology", &err);
  }
  const char *sub = a.npos < 1 ? "list" : a.pos[0];
  int want_args = strcmp(sub, "list") == 0 ? 1 : 2;
  if (listopt && (a.npos > 1 || strcmp(sub, "list") != 0)) {
    cs_error_set(&err, CS_ERR_USAGE, "--list takes no subcommand or argument");
    return cli_fail("topology", &err);
  }
  if (listopt && a.npos == 0) want_args = 0;
  if (strcmp(sub, "show") && strcmp(sub, "list") && strcmp(sub, "import-smi") &&
      strcmp(sub, "map")) {
    cs_error_set(&err, CS_ERR_USAGE, "unknown subcommand \"%s\" (show, list, import-smi, map)",
                 sub);
    return cli_fail("topology", &err);
  }
  if (a.npos != want_args) {
    cs_error_set(&err, CS_ERR_USAGE, "%s takes %s", sub,
                 want_args == 1 ? "no argument" : "one FILE");
    return cli_fail("topology", &err);
  }
  FILE *out = cli_open_out(cli_get(&verb, &a, "output"), &err);
  if (out == NULL) return cli_fail("topology", &err);
  enum cs_status st = CS_OK;
  struct cs_topology t;
  if (strcmp(sub, "list") == 0) {
    cmd_list(out);
  } else if (strcmp(sub, "show") == 0) {
    if ((st = load_named(a.pos[1], &t, &err)) == CS_OK) {
      fprintf(out, "# resolved from %s by commscale %s\n", t.path, CS_VERSION);
      cs_topo_dump(out, &t);
    }
  } else if (strcmp(sub, "import-smi") == 0) {
    double link_bw = 0, nic_bw = 0;
    const char *s;
    if ((s = cli_get(&verb, &a, "link-bw")) &&
        cs_units_parse_quantity(s, CS_UNIT_BANDWIDTH, &link_bw, &err) != CS_OK)
      st = cs_error_prefix(&err, "--link-bw");
    if (st == CS_OK && (s = cli_get(&verb, &a, "nic-speed")) &&
        cs_units_parse_quantity(s, CS_UNIT_BANDWIDTH, &nic_bw, &err) != CS_OK)
      st = cs_error_prefix(&err, "--nic-speed");
    if (st != CS_OK) err.status = st = CS_ERR_USAGE;
    char *text = NULL, name[64];
    const char *base = strrchr(a.pos[1], '/');
    base = base ? base + 1 : a.pos[1];
    snprintf(name, sizeof name, "%s",
             cli_get(&verb, &a, "name") ? cli_get(&verb, &a, "name") : base);
    char *dot = strrchr(name, '.');
    if (dot && !cli_get(&verb, &a, "name")) *dot = '\0';
    if (st == CS_OK) st = read_text(a.pos[1], &text, &err);
    if (st == CS_OK && (st = cs_topo_import_smi(text, name, link_bw, nic_bw, &t, &err)) != CS_OK)
      cs_error_prefix(&err, a.pos[1]); /* the message names the input file */
    if (st == CS_OK) {
      fprintf(out,
              "# imported from %s by commscale %s topology import-smi; check the PCIe and\n"
              "# network values, which nvidia-smi topo -m does not show\n",
              a.pos[1], CS_VERSION);
      cs_topo_dump(out, &t);
    }
    free(text);
  } else {
    char names[CS_TOPO_MAX_DIMS][16];
    int sizes[CS_TOPO_MAX_DIMS], nd = 0, dim = 0, rank = 0;
    const char *fmt = cli_get(&verb, &a, "format");
    int json = fmt && strcmp(fmt, "json") == 0;
    if (fmt && !json && strcmp(fmt, "table") != 0)
      st = cs_error_set(&err, CS_ERR_USAGE, "--format: expected table or json, got \"%s\"", fmt);
    if (st == CS_OK)
      st = cs_topo_parse_plan(cli_get(&verb, &a, "order"), cli_get(&verb, &a, "sizes"),
                              cli_get(&verb, &a, "group"), names, sizes, &nd, &dim, &err);
    const char *r = cli_get(&verb, &a, "rank");
    if (st == CS_OK && r) {
      char *e;
      long v = strtol(r, &e, 10);
      if (e == r || *e || v < 0 || v > (1L << 30))
        st = cs_error_set(&err, CS_ERR_USAGE, "--rank: expected a rank number, got \"%s\"", r);
      rank = (int)v;
    }
    if (st == CS_OK) st = load_named(a.pos[1], &t, &err);
    struct cs_topo_group g;
    if (st == CS_OK)
      st = cs_topo_map(&t, nd, sizes, dim, rank, cli_get(&verb, &a, "alone") == NULL, &g, &err);
    if (st == CS_OK) write_map(out, json, &t, names, sizes, nd, dim, &g);
  }
  st = cli_end_out(out, st, &err);
  return st == CS_OK ? 0 : cli_fail("topology", &err);
}
