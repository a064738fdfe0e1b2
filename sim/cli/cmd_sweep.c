/* cmd_sweep.c — `commscale sweep`: a grid over nodes x network Gb/s (per GPU, or per node with
 * --per-node) x plans x global batch. A plan is either given (--plans "P1;P2", dp filling the
 * GPUs as in predict) or a family (--families zero3,dp+tp,tp+pp,3d, the default): the fastest
 * feasible plan of the family at that grid point (sizing.h's context, one search per node count
 * and batch). One record per point feeds the table, CSV and JSON writers; --plot PREFIX draws
 * PREFIX-net (throughput or MFU vs Gb/s per GPU at the largest node count, one curve per plan)
 * and PREFIX-nodes (speedup over the smallest node count vs nodes, at the first speed).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "memory.h"
#include "plot.h"
#include "setup.h"
#include "sizing.h"
#include "step.h"
#include "units.h"

static const struct cli_opt opts[] = {
    CLI_SETUP_OPTS,
    {"nodes", 'N', "LIST", "node counts, e.g. 16,32,64 or 50:400 (required)"},
    {"net-gbps", 0, "LIST", "network speeds, Gb/s per GPU (default 50,100,200,400,800)"},
    {"per-node", 0, NULL, "--net-gbps values are per node, not per GPU"},
    {"gbs", 0, "LIST", "global batches in samples (required)"},
    {"families", 0, "LIST", "plan families (default zero3,dp+tp,tp+pp,3d): the best plan of each"},
    {"plans", 'p', "P1;P2", "explicit plans instead of families; dp fills the GPUs"},
    {"metric", 0, "NAME", "plotted value: tokens (default), mfu or samples"},
    {"plot", 0, "PREFIX", "write PREFIX-net.{dat,gp,svg} and PREFIX-nodes.{dat,gp,svg}"},
    {"format", 0, "FMT", "table (default), csv or json; -o FILE.csv/.json implies it"},
    {"output", 'o', "FILE", "write to FILE instead of stdout"},
};

static const struct cli_verb verb = {
    "sweep",
    "--workload NAME --gpu NAME --topology NAME --nodes LIST --gbs LIST [--net-gbps LIST] "
    "[--families LIST | --plans \"P1;P2\"] [--plot PREFIX]",
    "Step time, throughput and MFU over nodes x network speed x plans (or families) x batch.",
    "Network speeds are per GPU (all NICs of a node together divided by its GPUs) unless\n"
    "--per-node. A family's row is the fastest feasible plan of that family at the point (it may\n"
    "change along the grid; the plan column says which). speedup_vs_first: throughput over that "
    "of\n"
    "the smallest node count of the same curve, speed and batch.",
    opts,
    (int)(sizeof opts / sizeof opts[0])};

#define MAX_CURVES 16

struct rec {
  long nodes;
  double gbps_gpu;
  int gbs, curve, ok;
  char name[64], plan[256], reason[256];
  double step, samples_per_s, tokens_per_s, mfu, net_bytes, speedup;
};

static double metric_of(const struct rec *r, int m) {
  return m == 1 ? 100 * r->mfu : m == 2 ? r->samples_per_s : r->tokens_per_s / 1e6;
}

/* Parses option opt's integer list (1,2,4 or 50:400); a bad list is a usage error naming opt. */
static enum cs_status int_list(const char *opt, const char *text, long lo, long hi, long **out,
                               size_t *n, struct cs_error *err) {
  enum cs_status st = cs_units_parse_ints(text, lo, hi, out, n, err);
  if (st != CS_OK) {
    cs_error_prefix(err, opt);
    if (st != CS_ERR_NOMEM) st = err->status = CS_ERR_USAGE;
  }
  return st;
}

int cs_cmd_sweep(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int help;
  if (cli_parse(&verb, argc, argv, &a, &help, &err) != CS_OK) return cli_fail("sweep", &err);
  if (help) {
    cli_usage(stdout, &verb);
    return 0;
  }
  const char *outpath = cli_get(&verb, &a, "output"), *s;
  int fmt = cli_format(cli_get(&verb, &a, "format"), outpath);
  long *nodes = NULL, *gbs = NULL, *nets = NULL;
  size_t nn = 0, ng = 0, nnet = 0;
  enum cs_status st =
      fmt < 0 ? cs_error_set(&err, CS_ERR_USAGE, "--format expects table, csv or json") : CS_OK;
  if (st == CS_OK && (!cli_get(&verb, &a, "nodes") || !cli_get(&verb, &a, "gbs")))
    st = cs_error_set(&err, CS_ERR_USAGE, "--nodes and --gbs are required");
  if (st == CS_OK)
    st = int_list("--nodes", cli_get(&verb, &a, "nodes"), 1, 1 << 20, &nodes, &nn, &err);
  if (st == CS_OK) st = int_list("--gbs", cli_get(&verb, &a, "gbs"), 1, 1 << 30, &gbs, &ng, &err);
  s = cli_get(&verb, &a, "net-gbps");
  /* 1 Pb/s per GPU (or node) is beyond any real network: the cap keeps the model's sums finite */
  if (st == CS_OK)
    st = int_list("--net-gbps", s ? s : "50,100,200,400,800", 1, 1000000, &nets, &nnet, &err);
  int metric = 0;
  if (st == CS_OK && (s = cli_get(&verb, &a, "metric"))) {
    if (strcmp(s, "mfu") == 0)
      metric = 1;
    else if (strcmp(s, "samples") == 0)
      metric = 2;
    else if (strcmp(s, "tokens") != 0)
      st = cs_error_set(&err, CS_ERR_USAGE, "--metric expects tokens, mfu or samples");
  }
  /* curves: families or plans */
  int fam[MAX_CURVES], ncurve = 0;
  struct cs_plan plans[MAX_CURVES];
  char names[MAX_CURVES][64];
  int explicit_plans = cli_get(&verb, &a, "plans") != NULL;
  if (st == CS_OK && explicit_plans && cli_get(&verb, &a, "families"))
    st = cs_error_set(&err, CS_ERR_USAGE,
                      "give --plans or --families, not both (the curves are either the plans "
                      "given or the best plan of each family)");
  char buf[2048];
  if (st == CS_OK) {
    snprintf(buf, sizeof buf, "%s",
             explicit_plans                   ? cli_get(&verb, &a, "plans")
             : cli_get(&verb, &a, "families") ? cli_get(&verb, &a, "families")
                                              : "zero3,dp+tp,tp+pp,3d");
    char *save = NULL;
    for (char *t = strtok_r(buf, explicit_plans ? ";" : ",", &save); t && st == CS_OK;
         t = strtok_r(NULL, explicit_plans ? ";" : ",", &save)) {
      if (ncurve == MAX_CURVES) {
        st = cs_error_set(&err, CS_ERR_USAGE, "at most %d plans or families", MAX_CURVES);
        break;
      }
      if (explicit_plans) {
        if ((st = cs_plan_parse(t, &plans[ncurve], &err)) != CS_OK) {
          cs_error_prefix(&err, "--plans");
          if (st != CS_ERR_NOMEM) err.status = st = CS_ERR_USAGE; /* out of memory is no misuse */
        }
        snprintf(names[ncurve], sizeof names[0], "%.63s", t);
        fam[ncurve++] = -1;
      } else {
        int f = cs_family_parse(t);
        if (f < 0)
          st = cs_error_set(&err, CS_ERR_USAGE, "--families: unknown family \"%s\"", t);
        else {
          snprintf(names[ncurve], sizeof names[0], "%s", cs_family_name(f));
          fam[ncurve++] = f;
        }
      }
    }
    if (st == CS_OK && ncurve == 0)
      st = cs_error_set(&err, CS_ERR_USAGE, "%s: expected at least one %s",
                        explicit_plans ? "--plans" : "--families",
                        explicit_plans ? "plan (\"P1;P2\")" : "family");
  }
  struct cli_setup su;
  int loaded = 0;
  if (st == CS_OK && (st = cli_setup_load(&su, &verb, &a, NULL, &err)) == CS_OK) loaded = 1;
  size_t nrec = nn * ng * nnet * (size_t)ncurve, k = 0;
  struct rec *R = st == CS_OK ? calloc(nrec + 1, sizeof *R) : NULL;
  if (st == CS_OK && !R) st = cs_error_set(&err, CS_ERR_NOMEM, "out of memory");
  int per_node = cli_get(&verb, &a, "per-node") != NULL;
  for (size_t i = 0; st == CS_OK && i < nn; i++)
    for (size_t b = 0; st == CS_OK && b < ng; b++) {
      struct cs_decide *d = NULL;
      if (!explicit_plans) {
        struct cs_search_space sp;
        cs_search_space_init(&sp, nodes[i] * su.topo.node.gpus, (int)gbs[b]);
        struct cs_search_inputs in = cli_setup_inputs(&su);
        struct cs_error e2 = {0};
        enum cs_status s2 = cs_decide_alloc(&in, &su.topo, &sp, &d, &e2);
        if (s2 == CS_ERR_NOMEM)
          st = s2, err = e2;
        else if (s2 != CS_OK)
          d = NULL;
      }
      for (size_t c = 0; st == CS_OK && c < (size_t)ncurve; c++)
        for (size_t q = 0; st == CS_OK && q < nnet; q++) {
          struct rec *r = &R[k++];
          r->nodes = nodes[i], r->gbs = (int)gbs[b], r->curve = (int)c;
          r->gbps_gpu = per_node ? (double)nets[q] / su.topo.node.gpus : (double)nets[q];
          snprintf(r->name, sizeof r->name, "%s", names[c]);
          struct cs_search_entry e;
          struct cs_error e2 = {0};
          if (!explicit_plans) {
            if (!d || cs_decide_best(d, fam[c], r->gbps_gpu, &e, &e2) != CS_OK) {
              if (e2.status == CS_ERR_NOMEM) st = e2.status, err = e2;
              snprintf(r->reason, sizeof r->reason, "%.200s", d ? e2.msg : "no feasible plan");
              continue;
            }
          } else {
            struct cs_plan p = plans[c];
            long mp = (long)p.tp * p.pp * p.cp, g = nodes[i] * su.topo.node.gpus;
            if (g % mp) {
              snprintf(r->reason, sizeof r->reason, "%ld GPUs not a multiple of tp*pp*cp", g);
              continue;
            }
            p.dp = (int)(g / mp);
            p.gbs = (int)gbs[b];
            struct cs_topology t = su.topo;
            cs_topo_set_gbps_per_gpu(&t, r->gbps_gpu);
            struct cs_search_inputs in = cli_setup_inputs(&su);
            in.topology = &t;
            if (cs_search_eval(&in, &p, &e, &e2) != CS_OK) {
              if (e2.status == CS_ERR_NOMEM) st = e2.status, err = e2;
              snprintf(r->reason, sizeof r->reason, "%.200s", e2.msg);
              continue;
            }
          }
          r->ok = 1;
          cs_plan_format(&e.plan, r->plan, sizeof r->plan);
          r->step = e.step, r->samples_per_s = e.samples_per_s, r->tokens_per_s = e.tokens_per_s;
          r->mfu = e.mfu, r->net_bytes = e.net_bytes;
        }
      cs_decide_free(d);
    }
  /* speedup over the smallest node count of the same curve, speed and batch */
  for (size_t i = 0; i < k; i++) {
    const struct rec *ref = NULL;
    for (size_t j = 0; j < k; j++)
      if (R[j].ok && R[j].curve == R[i].curve && R[j].gbs == R[i].gbs &&
          R[j].gbps_gpu == R[i].gbps_gpu && (!ref || R[j].nodes < ref->nodes))
        ref = &R[j];
    if (R[i].ok && ref) R[i].speedup = R[i].samples_per_s / ref->samples_per_s;
  }
  if (st == CS_OK && (s = cli_get(&verb, &a, "plot"))) {
    static const char *ylab[] = {"throughput (million tokens/s)", "MFU (%)", "samples/s"};
    for (int fig = 0; fig < 2 && st == CS_OK; fig++) {
      char title[512], prefix[4096];
      long N = nodes[nn - 1];
      if (fig == 0)
        snprintf(title, sizeof title, "%s on %ld x %s, gbs %ld: %s vs network", su.workload->name,
                 N, su.topo.name, gbs[0], ylab[metric]);
      else
        snprintf(title, sizeof title, "%s on %s, gbs %ld, %.0f Gb/s per GPU: speedup vs nodes",
                 su.workload->name, su.topo.name, gbs[0],
                 per_node ? (double)nets[0] / su.topo.node.gpus : (double)nets[0]);
      snprintf(prefix, sizeof prefix, "%s-%s", s, fig == 0 ? "net" : "nodes");
      struct cs_plot *pl = cs_plot_alloc("sweep", title, &err);
      if (!pl) {
        st = err.status;
        break;
      }
      double xs[512], ys[512];
      for (int c = 0; c < ncurve && st == CS_OK; c++) {
        size_t m = 0;
        for (size_t i = 0; i < k && m < 512; i++) {
          const struct rec *r = &R[i];
          if (!r->ok || r->curve != c || r->gbs != gbs[0]) continue;
          if (fig == 0 && r->nodes == N) xs[m] = r->gbps_gpu, ys[m++] = metric_of(r, metric);
          if (fig == 1 && r->gbps_gpu == R[0].gbps_gpu)
            xs[m] = (double)r->nodes, ys[m++] = r->speedup;
        }
        if (m > 0)
          st = cs_plot_add_xy(pl, CS_PLOT_PREDICTED, names[c], fam[c] >= 0 ? fam[c] : c, m, xs, ys,
                              NULL, NULL, &err);
      }
      if (st == CS_OK && fig == 1) {
        double ix[2] = {(double)nodes[0], (double)nodes[nn - 1]},
               iy[2] = {1, (double)nodes[nn - 1] / nodes[0]};
        st = cs_plot_add_xy(pl, CS_PLOT_FITTED, "ideal (linear)", 7, 2, ix, iy, NULL, NULL, &err);
      }
      if (st == CS_OK) {
        snprintf(pl->xlabel, sizeof pl->xlabel, "%s",
                 fig == 0 ? "network per GPU (Gb/s)" : "nodes");
        snprintf(pl->ylabel, sizeof pl->ylabel, "%s",
                 fig == 0 ? ylab[metric] : "speedup over the smallest node count");
        pl->xlog = 1;
        struct cs_plot_opts po = {prefix, CS_PLOT_SVG, NULL, NULL};
        if (pl->n > 0) st = cs_plot_write(pl, &po, &err);
      }
      cs_plot_free(pl);
    }
  }
  if (st == CS_OK) {
    FILE *f = cli_open_out(outpath, &err);
    if (!f) st = CS_ERR_IO;
    if (f && fmt == CLI_TABLE) {
      fprintf(f,
              "# commscale %s sweep\n# workload  %s\n# topology  %s\n#%5s %9s %6s %-6s %9s %11s "
              "%6s %8s %9s  %s\n",
              CS_VERSION, su.workload->description, su.topo.description, "nodes", "Gb/s/GPU", "gbs",
              "curve", "step(s)", "tokens/s", "MFU%", "speedup", "net(GB)", "plan");
      for (size_t i = 0; i < k; i++) {
        const struct rec *r = &R[i];
        if (!r->ok) {
          fprintf(f, " %5ld %9.4g %6d %-6.6s rejected: %s\n", r->nodes, r->gbps_gpu, r->gbs,
                  r->name, r->reason);
          continue;
        }
        fprintf(f, " %5ld %9.4g %6d %-6.6s %9.4g %11.4g %6.1f %8.2f %9.3g  %s\n", r->nodes,
                r->gbps_gpu, r->gbs, r->name, r->step, r->tokens_per_s, 100 * r->mfu, r->speedup,
                r->net_bytes / 1e9, r->plan);
      }
    } else if (f && fmt == CLI_CSV) {
      fputs("nodes,net_Gbps_per_gpu,net_Gbps_per_node,gbs,curve,status,plan,step_s,samples_per_s,"
            "tokens_per_s,mfu,speedup_vs_first,net_bytes_per_gpu,reason\n",
            f);
      for (size_t i = 0; i < k; i++) {
        const struct rec *r = &R[i];
        fprintf(f, "%ld,%g,%g,%d,\"%s\",%s,\"%s\",", r->nodes, r->gbps_gpu,
                r->gbps_gpu * su.topo.node.gpus, r->gbs, r->name, r->ok ? "ok" : "rejected",
                r->plan);
        if (r->ok)
          fprintf(f, "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,\"\"\n", r->step, r->samples_per_s,
                  r->tokens_per_s, r->mfu, r->speedup, r->net_bytes);
        else
          fprintf(f, ",,,,,,\"%s\"\n", r->reason);
      }
    } else if (f) {
      fprintf(f, "{\"tool\": \"commscale %s\", \"arguments\": [", CS_VERSION);
      for (int i = 0; i < argc; i++) {
        if (i) fputs(", ", f);
        cli_json_string(f, argv[i]);
      }
      fprintf(f, "], \"workload\": \"%s\", \"topology\": \"%s\",\n \"points\": [\n",
              su.workload->name, su.topo.name);
      for (size_t i = 0; i < k; i++) {
        const struct rec *r = &R[i];
        fprintf(f,
                "  {\"nodes\": %ld, \"net_Gbps_per_gpu\": %g, \"gbs\": %d, \"curve\": ", r->nodes,
                r->gbps_gpu, r->gbs);
        cli_json_string(f, r->name);
        fprintf(f, ", \"ok\": %s, \"plan\": ", r->ok ? "true" : "false");
        cli_json_string(f, r->ok ? r->plan : r->reason);
        if (r->ok)
          fprintf(f,
                  ", \"step_s\": %.6g, \"samples_per_s\": %.6g, \"tokens_per_s\": %.6g, "
                  "\"mfu\": %.6g, \"speedup_vs_first\": %.6g, \"net_bytes_per_gpu\": %.6g",
                  r->step, r->samples_per_s, r->tokens_per_s, r->mfu, r->speedup, r->net_bytes);
        fprintf(f, "}%s\n", i + 1 < k ? "," : "");
      }
      fputs("]}\n", f);
    }
    if (f) cli_close_out(f);
  }
  int rc = st != CS_OK ? cli_fail("sweep", &err) : 0;
  free(R);
  free(nodes);
  free(gbs);
  free(nets);
  if (loaded) cli_setup_fini(&su);
  return rc;
}
