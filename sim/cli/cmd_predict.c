/* cmd_predict.c — `commscale predict`: step time, throughput, speedup and scaling efficiency of a
 * training plan from one GPU to hundreds of nodes, with the band from the calibration and the
 * breakdown of the step (step.h).
 *
 * Per node (or GPU) count, dp fills the GPUs unless the plan names it; a row whose plan does not
 * divide the model, does not fit memory or does not fit the cluster carries the reason instead of
 * figures. One record per row feeds the three writers (table, CSV with units, JSON with the tool
 * version, the arguments and the resolved plan). --plan "P1;P2" puts several plans side by side
 * (rows grouped by plan); --plot PREFIX draws the speedup curves with their bands against the
 * ideal line, and the stacked breakdown per node count (plot.h, templates sweep.gp and
 * breakdown.gp).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "framework.h"
#include "map.h"
#include "opts.h"
#include "output.h"
#include "plot.h"
#include "predict.h"
#include "setup.h"
#include "step.h"
#include "units.h"

static const struct cli_opt opts[] = {
    {"workload", 'w', "NAME|FILE", "a bundled workload (commscale workload --list) or a YAML file"},
    {"gpu", 0, "NAME|FILE", "a bundled GPU or a GPU YAML file"},
    {"topology", 't', "NAME|FILE", "a bundled topology (commscale topology --list) or a YAML file"},
    {"cal", 'c', "FILE", "calibration.yaml from commscale fit (default: NCCL-anchored constants)"},
    {"plan", 'p', "PLAN",
     "e.g. \"tp=8,pp=8,zero=1,mbs=1,gbs=1536\"; dp defaults to what fills the "
     "GPUs (GPUs / (tp*pp*cp)); \"P1;P2\" puts plans side by side (a plan YAML file is one "
     "plan)"},
    {"nodes", 'N', "LIST", "node counts, e.g. 1,2,4,8 or 1:400 (default 1)"},
    {"gpus", 'G', "LIST", "GPU counts instead of node counts, e.g. 1,8,16,32"},
    {"accum", 0, "K",
     "when the plan has no gbs: K micro-batches per step per replica (default 1), "
     "so the per-GPU batch stays fixed as nodes grow"},
    {"set", 0, "K=V,...", "override workload architecture keys, e.g. seq=4096"},
    {"measured", 0, "TIME",
     "measured single-GPU time of one micro-batch (fwd+bwd), e.g. 322ms: "
     "layer times are scaled to it"},
    {"interference", 0, "X",
     "compute slowdown under overlapped collectives (default 1.16, measured)"},
    {"probes", 0, "FILE",
     "compute probes of this GPU (commscale-run --probes): measured GEMM "
     "efficiencies and, unless --interference, the median interference"},
    {"net-gbps", 0, "LIST", "re-cost the network at these speeds per NIC, e.g. 100,200,400"},
    CLI_NETEDIT_OPTS,
    {"ignore-memory", 0, NULL, "do not reject plans that exceed the GPU's memory"},
    {"explain", 0, NULL, "also print the collectives of the first feasible row"},
    {"bench", 0, NULL, "print simulated steps per second on stderr"},
    CLI_OUTPUT_OPTS,
    {"plot", 0, "PREFIX",
     "also write PREFIX-speedup.{dat,gp,svg} (speedup vs nodes with bands and the ideal line) "
     "and PREFIX-breakdown.{dat,gp,svg} (stacked step breakdown per node count)"},
    {"png", 0, NULL, "with --plot: a PNG beside each SVG"},
};

static const struct cli_verb verb = {
    "predict",
    "--workload NAME --gpu NAME --topology NAME [--cal calibration.yaml] --plan PLAN "
    "[--nodes 1:400] [--plot PREFIX]",
    "Predict step time, throughput, speedup and scaling efficiency of a plan at many node counts.",
    "step_lo..step_hi: the schedule re-run with every collective at the low and at the high end\n"
    "of its ~95% band, widened in quadrature by the compute's uncertainty (9.7% of compute and\n"
    "optimizer time, 18.2% of the time an eager host holds the GPU), above one GPU the\n"
    "framework's (26.8% of the step), or what a steps calibration leaves: docs/constants.md.\n"
    "speedup, eff: against one reference for the whole table, the fastest run at the fewest\n"
    "GPUs (named in the header);\n"
    "eff = speedup / (GPUs / its GPUs), weak-scaling (marked w) where the batch grows with the\n"
    "GPUs; an eff above 100% is marked * with its reason. eff1: DLPerf's (over one GPU running\n"
    "the same micro-batches), only where the model fits one GPU. TFLOP/s per GPU counts model\n"
    "FLOPs (hw_\n"
    "adds recomputation); MFU = model FLOP/s per GPU / peak. Breakdown columns are the seconds of\n"
    "the critical pipeline stage: compute, exposed tp/cp/ep/dp comm, pp transfer waits, bubble,\n"
    "optimizer; they add up to the step.",
    opts,
    (int)(sizeof opts / sizeof opts[0]),
    NULL};

#define MAX_PLANS 16

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void write_table(FILE *f, const struct cs_predict_row *r, size_t n, const char *head,
                        int nplan, const char (*ptexts)[256]) {
  fprintf(f, "# commscale %s predict\n%s", CS_VERSION, head);
  struct cs_predict_ref rf;
  cs_predict_find_ref(r, n, 0, &rf);
  int weak = 0, one = 0;
  for (size_t i = 0; i < n; i++)
    weak |= r[i].ok && r[i].weak, one |= r[i].ok && r[i].one_gpu_fits;
  if (rf.ok)
    fprintf(f,
            "# speedup, eff: against one reference for every row: the fastest run at the fewest "
            "GPUs,\n#   plan %d (%s) on %ld nodes = %ld GPUs, %.4g samples/s at %.0f Gb/s; "
            "eff = speedup / (GPUs / %ld)%s\n",
            rf.pi + 1, rf.plan, rf.nodes, rf.gpus, rf.samples_per_s, r[rf.row].net_gbps, rf.gpus,
            weak ? ";\n#   rows marked w grow the global batch with the GPUs: their eff is "
                   "weak-scaling efficiency (throughput per GPU kept)"
                 : " (strong scaling: fixed global batch)");
  fprintf(f, "# eff1: DLPerf's efficiency over one GPU running the same micro-batches%s\n",
          one ? "; - where the model does not fit one GPU"
              : ": - (the model does not fit one GPU)");
  fprintf(f,
          "#%5s %6s %5s %8s %9s %9s %9s %10s %11s %7s %6s %8s %7s %6s %8s %7s %7s %7s %7s %7s "
          "%7s %7s %7s\n",
          "nodes", "gpus", "dp", "net", "step", "step_lo", "step_hi", "samples/s", "tokens/s",
          "TFLOP/s", "MFU", "speedup", "eff", "eff1", "compute", "tp", "cp", "ep", "dp", "pp",
          "bubble", "optim", "mem");
  fprintf(f,
          "#%5s %6s %5s %8s %9s %9s %9s %10s %11s %7s %6s %8s %7s %6s %8s %7s %7s %7s %7s %7s "
          "%7s %7s %7s\n",
          "", "", "", "(Gb/s)", "(s)", "(s)", "(s)", "", "", "(/GPU)", "(%)", "", "(%)", "(%)",
          "(s)", "(s)", "(s)", "(s)", "(s)", "(s)", "(s)", "(s)", "(GiB)");
  int notes = 0;
  for (size_t i = 0; i < n; i++) {
    const struct cs_predict_row *x = &r[i];
    if (nplan > 1 && (i == 0 || r[i - 1].pi != x->pi))
      fprintf(f, "# plan %d: %s\n", x->pi + 1, ptexts[x->pi]);
    if (!x->ok) {
      fprintf(f, " %5ld %6ld  rejected: %s\n", x->nodes, x->gpus, x->reason);
      continue;
    }
    const struct cs_sim_breakdown *b = &x->r.part;
    char e1[16], eff[16];
    if (x->one_gpu_fits)
      snprintf(e1, sizeof e1, "%.1f", 100 * x->efficiency);
    else
      snprintf(e1, sizeof e1, "-");
    snprintf(eff, sizeof eff, "%.1f%s%s", 100 * x->ref_eff, x->weak ? "w" : "",
             x->note[0] ? "*" : "");
    notes += x->note[0] != 0;
    fprintf(f,
            " %5ld %6ld %5ld %8.0f %9.4g %9.4g %9.4g %10.4g %11.4g %7.1f %6.1f %8.2f %7s %6s %8.4g "
            "%7.3g %7.3g %7.3g %7.3g %7.3g %7.3g %7.3g %7.1f\n",
            x->nodes, x->gpus, x->dp, x->net_gbps, x->r.step, x->r.step_lo, x->r.step_hi,
            x->r.samples_per_s, x->r.tokens_per_s, x->r.tflops_per_gpu, 100 * x->r.mfu,
            x->ref_speedup, eff, e1, b->compute, b->tp, b->cp, b->ep, b->dp, b->pp, b->bubble,
            b->optimizer, x->mem_gib);
  }
  for (size_t i = 0; notes && i < n; i++)
    if (r[i].ok && r[i].note[0])
      fprintf(f, "# * %ld nodes, plan %d: %s\n", r[i].nodes, r[i].pi + 1, r[i].note);
}

static const char csv_head[] =
    "nodes,gpus,plan,net_Gbps,status,step_s,step_lo_s,step_hi_s,samples_per_s,tokens_per_s,"
    "tflops_per_gpu,hw_tflops_per_gpu,mfu,speedup,efficiency,compute_s,tp_s,cp_s,ep_s,dp_s,pp_s,"
    "bubble_s,optimizer_s,critical_stage,microbatches,comm_bytes_per_gpu,memory_GiB,reason,"
    "ref_speedup,ref_efficiency,scaling,one_gpu_fits\n";

static void write_csv(FILE *f, const struct cs_predict_row *r, size_t n) {
  fputs(csv_head, f);
  for (size_t i = 0; i < n; i++) {
    const struct cs_predict_row *x = &r[i];
    const struct cs_sim_breakdown *b = &x->r.part;
    fprintf(f, "%ld,%ld,", x->nodes, x->gpus);
    cli_csv_field(f, x->plan);
    fprintf(f, ",%g,%s,", x->net_gbps, x->ok ? "ok" : "rejected");
    char dl[2][32] = {"", ""}; /* DLPerf's speedup and efficiency: only where one GPU fits it */
    if (x->one_gpu_fits)
      snprintf(dl[0], sizeof dl[0], "%.6g", x->speedup),
          snprintf(dl[1], sizeof dl[1], "%.6g", x->efficiency);
    if (x->ok)
      fprintf(f,
              "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,"
              "%.6g,%.6g,%d,%ld,%.6g,%.4g,",
              x->r.step, x->r.step_lo, x->r.step_hi, x->r.samples_per_s, x->r.tokens_per_s,
              x->r.tflops_per_gpu, x->r.hw_tflops_per_gpu, x->r.mfu, dl[0], dl[1], b->compute,
              b->tp, b->cp, b->ep, b->dp, b->pp, b->bubble, b->optimizer, x->r.stage,
              x->r.microbatches, x->r.comm_bytes, x->mem_gib);
    else
      fputs(",,,,,,,,,,,,,,,,,,,,,,", f);
    cli_csv_field(f, x->reason);
    if (x->ok)
      fprintf(f, ",%.6g,%.6g,%s,%d\n", x->ref_speedup, x->ref_eff, x->weak ? "weak" : "strong",
              x->one_gpu_fits);
    else
      fputs(",,,,\n", f);
  }
}

static void write_json(FILE *f, const struct cs_predict_row *r, size_t n, int argc, char **argv,
                       const struct cs_plan *plans, int nplan, const char *calpath, const char *wl,
                       const char *gpu, const char *topo) {
  cli_json_head(f, argc, argv);
  fputs(",\n \"workload\": ", f);
  cli_json_string(f, wl);
  fputs(", \"gpu\": ", f);
  cli_json_string(f, gpu);
  fputs(", \"topology\": ", f);
  cli_json_string(f, topo);
  fputs(", \"calibration\": ", f);
  if (calpath)
    cli_json_string(f, calpath);
  else
    fputs("null", f);
  if (nplan == 1) {
    fputs(", \"plan\": ", f);
    cli_json_plan(f, &plans[0]);
  } else {
    fputs(", \"plans\": [", f);
    for (int i = 0; i < nplan; i++) {
      if (i) fputs(", ", f);
      cli_json_plan(f, &plans[i]);
    }
    fputc(']', f);
  }
  fputs(",\n \"predictions\": [\n", f);
  for (size_t i = 0; i < n; i++) {
    const struct cs_predict_row *x = &r[i];
    const struct cs_sim_breakdown *b = &x->r.part;
    fprintf(f, "  {\"nodes\": %ld, \"gpus\": %ld, \"plan\": ", x->nodes, x->gpus);
    cli_json_string(f, x->plan);
    char dl[2][32] = {"null", "null"}; /* DLPerf's: only where one GPU fits the model */
    if (x->one_gpu_fits)
      snprintf(dl[0], sizeof dl[0], "%.6g", x->speedup),
          snprintf(dl[1], sizeof dl[1], "%.6g", x->efficiency);
    fprintf(f, ", \"net_Gbps\": %g, \"ok\": %s", x->net_gbps, x->ok ? "true" : "false");
    if (x->ok)
      fprintf(f,
              ", \"step_s\": %.6g, \"step_lo_s\": %.6g, \"step_hi_s\": %.6g, "
              "\"samples_per_s\": %.6g, \"tokens_per_s\": %.6g, \"tflops_per_gpu\": %.6g, "
              "\"hw_tflops_per_gpu\": %.6g, \"mfu\": %.6g, \"speedup\": %s, \"efficiency\": %s, "
              "\"breakdown_s\": {\"compute\": %.6g, \"tp\": %.6g, \"cp\": %.6g, \"ep\": %.6g, "
              "\"dp\": %.6g, \"pp\": %.6g, \"bubble\": %.6g, \"optimizer\": %.6g}, "
              "\"critical_stage\": %d, \"microbatches\": %ld, \"memory_GiB\": %.4g, "
              "\"ref_speedup\": %.6g, \"ref_efficiency\": %.6g, \"scaling\": \"%s\", "
              "\"one_gpu_fits\": %s",
              x->r.step, x->r.step_lo, x->r.step_hi, x->r.samples_per_s, x->r.tokens_per_s,
              x->r.tflops_per_gpu, x->r.hw_tflops_per_gpu, x->r.mfu, dl[0], dl[1], b->compute,
              b->tp, b->cp, b->ep, b->dp, b->pp, b->bubble, b->optimizer, x->r.stage,
              x->r.microbatches, x->mem_gib, x->ref_speedup, x->ref_eff,
              x->weak ? "weak" : "strong", x->one_gpu_fits ? "true" : "false");
    else {
      fputs(", \"reason\": ", f);
      cli_json_string(f, x->reason);
    }
    fprintf(f, "}%s\n", i + 1 < n ? "," : "");
  }
  fputs("]}\n", f);
}

static void explain(FILE *f, const struct cs_sim *s) {
  struct cs_sim_coll_info info[96];
  int n = cs_sim_collectives(s, info, 96);
  fprintf(f, "#\n# collectives (one pipeline, per step)\n");
  fprintf(f, "#%-6s %-15s %-6s %12s %7s %6s %5s %4s %6s %7s %11s %11s %11s\n", "group",
          "collective", "phase", "bytes", "calls", "ranks", "nodes", "gpn", "algo", "proto",
          "time_us", "lo_us", "hi_us");
  for (int i = 0; i < n; i++) {
    char sz[32];
    cs_units_format_size(info[i].bytes, sz, sizeof sz);
    fprintf(f, " %-6s %-15s %-6s %12s %7d %6d %5d %4d %6s %7s %11.2f %11.2f %11.2f\n",
            cs_group_name(info[i].group), cs_coll_name(info[i].coll), cs_phase_name(info[i].phase),
            sz, info[i].calls, info[i].ranks, info[i].nodes, info[i].gpus_per_node,
            cs_algo_name(info[i].algo), cs_proto_name(info[i].proto), info[i].time * 1e6,
            info[i].lo * 1e6, info[i].hi * 1e6);
  }
}

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  return n >= k && strcmp(s + n - k, tail) == 0;
}

/* Reads --plan: one plan (text or YAML file), or "P1;P2;..." (each item trimmed and non-empty)
 * into plans[], their texts into texts[] and whether each names dp into fixed[]. */
static enum cs_status parse_plans(const char *text, struct cs_plan *plans, char (*texts)[256],
                                  int *fixed, int *nplan, struct cs_error *err) {
  *nplan = 0;
  if (!strchr(text, ';') ||
      (!strchr(text, '=') && (ends_with(text, ".yaml") || ends_with(text, ".yml")))) {
    enum cs_status st = cli_setup_plan(text, &plans[0], err);
    if (st != CS_OK) return st;
    snprintf(texts[0], sizeof texts[0], "%s", text);
    fixed[0] = cs_plan_text_names(text, "dp");
    *nplan = 1;
    return CS_OK;
  }
  int items = 0, empty = 0, first_empty = 0;
  for (const char *s = text;; s++) {
    const char *e = strchr(s, ';');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    while (len > 0 && (*s == ' ' || *s == '\t'))
      s++, len--;
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
      len--;
    items++;
    if (len == 0) {
      if (!empty++) first_empty = items;
    } else if (*nplan == MAX_PLANS) {
      return cs_error_set(err, CS_ERR_USAGE, "at most %d plans", MAX_PLANS);
    } else {
      char *t = texts[*nplan];
      if (len >= sizeof texts[0])
        return cs_error_set(err, CS_ERR_USAGE, "plan %d is longer than %zu characters", items,
                            sizeof texts[0] - 1);
      memcpy(t, s, len);
      t[len] = '\0';
      enum cs_status st = cs_plan_parse(t, &plans[*nplan], err);
      if (st != CS_OK) {
        char where[32];
        snprintf(where, sizeof where, "plan %d", items);
        cs_error_prefix(err, where);
        return st;
      }
      fixed[*nplan] = cs_plan_text_names(t, "dp");
      if (plans[*nplan].precision != plans[0].precision)
        return cs_error_set(err, CS_ERR_USAGE,
                            "plan %d has another precision than plan 1: plans side by side share "
                            "one compute model",
                            items);
      (*nplan)++;
    }
    if (!e) break;
    s = e;
  }
  if (*nplan == 0) return cs_error_set(err, CS_ERR_USAGE, "expected at least one plan (\"P1;P2\")");
  if (empty)
    return cs_error_set(err, CS_ERR_USAGE, "plan %d is empty (expected \"P1;P2\")", first_empty);
  return CS_OK;
}

static int usage_fail(struct cs_error *err, const char *opt) {
  cs_error_prefix(err, opt);
  if (err->status != CS_ERR_NOMEM) err->status = CS_ERR_USAGE; /* out of memory is no usage error */
  return cli_fail("predict", err);
}

/* Renders fig with gnuplot (COMMSCALE_GNUPLOT, else the build's, else PATH's): when gnuplot cannot
 * run or fails, the .dat/.gp stay and stderr says that the SVG was not rendered (not an error). */
static enum cs_status plot_write(struct cs_plot *fig, const char *prefix, unsigned formats,
                                 struct cs_error *err) {
  struct cs_plot_opts po = {prefix, formats, NULL, getenv("COMMSCALE_GNUPLOT")};
  struct cs_error e2 = {0};
  enum cs_status st = cs_plot_write(fig, &po, &e2);
  if (st == CS_ERR_EXTERNAL) {
    fprintf(stderr, "commscale predict: %s.svg not rendered: %s\n", prefix, e2.msg);
    return CS_OK;
  }
  if (st != CS_OK) *err = e2;
  return st;
}

/* --plot PREFIX: PREFIX-speedup, one curve per plan of throughput over the best plan's at the
 * smallest feasible node count, with its band, and the ideal line nodes / that count (dashed);
 * PREFIX-breakdown, the stacked parts of the step per node count, one panel per plan. Only the
 * feasible rows at the first network speed are drawn. */
static enum cs_status plot(const char *prefix, const struct cs_predict_row *r, size_t n, int nplan,
                           char (*ptexts)[256], int by_gpus, const char *wl, const char *topo,
                           unsigned formats, struct cs_error *err) {
  static const char *const parts[] = {"compute", "tp", "cp",     "ep",
                                      "dp",      "pp", "bubble", "optimizer"};
  enum { NPART = sizeof parts / sizeof parts[0] };
  const struct cs_predict_row *ref = NULL;
  for (size_t i = 0; i < n; i++) {
    const struct cs_predict_row *x = &r[i];
    if (!x->ok || x->ni != 0) continue;
    long xv = by_gpus ? x->gpus : x->nodes, rv = ref ? (by_gpus ? ref->gpus : ref->nodes) : 0;
    if (!ref || xv < rv || (xv == rv && x->r.samples_per_s > ref->r.samples_per_s)) ref = x;
  }
  if (!ref) return CS_OK; /* nothing feasible: the caller reports it */
  double x0 = (double)(by_gpus ? ref->gpus : ref->nodes), t0 = ref->r.samples_per_s;
  double *xs = malloc(n * sizeof *xs), *ys = malloc(n * sizeof *ys), *lo = malloc(n * sizeof *lo),
         *hi = malloc(n * sizeof *hi), *vals = malloc(n * NPART * sizeof *vals);
  struct cs_plot *sp = NULL, *bd = NULL;
  enum cs_status st = CS_OK;
  if (!xs || !ys || !lo || !hi || !vals) st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  char title[512], path[4096];
  const char *unit = by_gpus ? "GPUs" : "nodes";
  if (st == CS_OK) {
    snprintf(title, sizeof title, "%s on %s: speedup vs %s", wl, topo, unit);
    if (!(sp = cs_plot_alloc("sweep", title, err))) st = err->status;
  }
  if (st == CS_OK) {
    snprintf(title, sizeof title, "%s on %s: step breakdown per %s count", wl, topo,
             by_gpus ? "GPU" : "node");
    if (!(bd = cs_plot_alloc("breakdown", title, err))) st = err->status;
  }
  for (int pi = 0; st == CS_OK && pi < nplan; pi++) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
      const struct cs_predict_row *x = &r[i];
      if (x->pi != pi || !x->ok || x->ni != 0) continue;
      const struct cs_sim_breakdown *b = &x->r.part;
      double y = x->r.samples_per_s / t0;
      xs[m] = (double)(by_gpus ? x->gpus : x->nodes);
      ys[m] = y;
      lo[m] = y * x->r.step / x->r.step_hi; /* samples/s goes as 1 / step */
      hi[m] = y * x->r.step / x->r.step_lo;
      const double v[NPART] = {b->compute, b->tp, b->cp,     b->ep,
                               b->dp,      b->pp, b->bubble, b->optimizer};
      memcpy(vals + m * NPART, v, sizeof v);
      m++;
    }
    if (m == 0) continue;
    st = cs_plot_add_xy(sp, CS_PLOT_PREDICTED, ptexts[pi], pi, m, xs, ys, lo, hi, err);
    if (st == CS_OK) st = cs_plot_add_stack(bd, ptexts[pi], pi, m, xs, NPART, parts, vals, err);
  }
  if (st == CS_OK) { /* the ideal line at every drawn count from the reference on */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
      const struct cs_predict_row *x = &r[i];
      double v = (double)(by_gpus ? x->gpus : x->nodes);
      int seen = 0;
      for (size_t j = 0; j < m; j++)
        seen |= xs[j] == v;
      if (x->ni != 0 || v < x0 || seen) continue;
      size_t j = m++;
      for (; j > 0 && xs[j - 1] > v; j--)
        xs[j] = xs[j - 1];
      xs[j] = v;
    }
    for (size_t j = 0; j < m; j++)
      ys[j] = xs[j] / x0;
    st = cs_plot_add_xy(sp, CS_PLOT_FITTED, "ideal (linear)", 7, m, xs, ys, NULL, NULL, err);
    sp->xlog = sp->ylog = 1;
    cs_plot_set_tics(sp, 'x', m, xs);
    cs_plot_set_tics(sp, 'y', m, ys);
  }
  if (st == CS_OK) {
    snprintf(sp->xlabel, sizeof sp->xlabel, "%s", unit);
    snprintf(sp->ylabel, sizeof sp->ylabel, "speedup over the best plan at %ld %s", (long)x0, unit);
    sp->xlog = sp->ylog = 1;
    snprintf(bd->xlabel, sizeof bd->xlabel, "%s (step time)", unit);
    snprintf(bd->ylabel, sizeof bd->ylabel, "share of the step (%%)");
    bd->share = 1; /* every bar to 100%: the short steps at many nodes show their parts too */
    snprintf(path, sizeof path, "%s-speedup", prefix);
    st = plot_write(sp, path, formats, err);
  }
  if (st == CS_OK) {
    snprintf(path, sizeof path, "%s-breakdown", prefix);
    st = plot_write(bd, path, formats, err);
  }
  cs_plot_free(sp);
  cs_plot_free(bd);
  free(xs);
  free(ys);
  free(lo);
  free(hi);
  free(vals);
  return st;
}

/* The first feasible point: --bench times its simulator (stderr), --explain keeps it. */
struct first_ctx {
  int bench, keep;
  struct cs_sim *sim;
  const struct cs_predict_row *row;
};

/* The "# links" lines (where each link value of the calibration comes from, for a whole-node
 * group at the widest node count) and, for a measured calibration, the "# warning" lines
 * (cs_cal_warnings), also written to stderr. Returns the characters written into buf. */
static int links_header(const struct cs_scenario *su, const struct cs_predict_spec *sp,
                        int measured, char *buf, size_t len) {
  const struct cs_topology *topo = &su->topo;
  const struct cs_cal *cal = su->calp;
  const char *gpu = su->gpu.name;
  long widest = 1;
  for (size_t i = 0; i < sp->ncount; i++) {
    long nd = sp->by_gpus ? (sp->counts[i] + topo->node.gpus - 1) / topo->node.gpus : sp->counts[i];
    widest = nd > widest ? nd : widest;
  }
  size_t k = cs_scenario_links(su, widest, sp->nnet > 0, buf, len);
  /* the calibration as applied to a whole-node group, for the warnings below */
  int nodes = widest > 1 && topo->net.nics > 0 ? 2 : 1;
  struct cs_topo_group grp;
  struct cs_cal shape = *cal; /* shallow: nothing of it is freed */
  if (cs_topo_map_shape(topo, nodes, topo->node.gpus, 0, &grp, NULL) == CS_OK)
    cs_topo_cal_apply(topo, &grp, sp->nnet > 0 ? CS_TOPO_NET_WHAT_IF : 0, &shape);
  char warn[CS_CAL_MAX_WARN][256];
  int nw = measured ? cs_cal_warnings(cal, gpu, (int)shape.model.intra, (int)widest,
                                      shape.source[cs_model_param_index("bw.net")], warn)
                    : 0;
  for (int i = 0; i < nw && k < len; i++) {
    fprintf(stderr, "commscale predict: warning: %s\n", warn[i]);
    int w = snprintf(buf + k, len - k, "# warning   %s\n", warn[i]);
    if (w > 0) k += (size_t)w;
  }
  return (int)(k < len ? k : len - 1);
}

/* The rows in the chosen format, the --explain breakdown after a table, and "no feasible plan"
 * (a usage error) when no row has figures. */
static enum cs_status write_all(FILE *f, int fmt, const struct cs_predict_row *recs, size_t nrec,
                                const struct cs_predict_spec *sp, const struct cs_scenario *su,
                                const char *calpath, const struct first_ctx *fc, int argc,
                                char **argv, struct cs_error *err) {
  char head[4096];
  int hl = snprintf(head, sizeof head,
                    "# workload  %s\n# gpu       %s\n# topology  %s\n# cal       %s\n# framework",
                    su->workload->description, su->gpu.description, su->topo.description,
                    calpath ? calpath : "(default model)");
  for (int i = 0; i < sp->nplan && hl > 0 && (size_t)hl < sizeof head; i++) {
    int seen = 0; /* each profile once, in plan order */
    for (int j = 0; j < i; j++)
      seen = seen || strcmp(sp->plans[j].framework, sp->plans[i].framework) == 0;
    if (!seen) hl += snprintf(head + hl, sizeof head - (size_t)hl, " %s", sp->plans[i].framework);
  }
  if (hl > 0 && (size_t)hl < sizeof head) snprintf(head + hl, sizeof head - (size_t)hl, "\n");
  const struct cs_cal_steps *sf = &su->calp->steps;
  if (sf->fitted && hl > 0 && (size_t)hl < sizeof head)
    snprintf(head + strlen(head), sizeof head - strlen(head),
             "# steps     calibrated from %s: compute x%.4f (se %.4f), host %.3f ms per step, "
             "interference %.3f\n",
             sf->source, sf->compute_scale, sf->compute_scale_se, sf->host_s * 1e3,
             su->interference);
  size_t used = strlen(head);
  if (used + 1 < sizeof head)
    links_header(su, sp, calpath != NULL, head + used, sizeof head - used);
  if (fmt == CLI_CSV)
    write_csv(f, recs, nrec);
  else if (fmt == CLI_JSON)
    write_json(f, recs, nrec, argc, argv, sp->plans, sp->nplan, calpath, su->workload->name,
               su->gpu.name, su->topo.name);
  else
    write_table(f, recs, nrec, head, sp->nplan, sp->texts);
  if (fc->sim) {
    fprintf(f, "#\n# explain: %ld GPUs, %s\n", fc->row->gpus, fc->row->plan);
    explain(f, fc->sim);
  }
  int any = 0;
  for (size_t i = 0; i < nrec; i++)
    any |= recs[i].ok;
  if (!any && nrec > 0)
    /* a failure, not a usage error: exit 1 as in search, sweep and size-network */
    return cs_error_set(err, CS_ERR_RANGE, "no feasible plan: %s", recs[0].reason);
  return CS_OK;
}

/* The first feasible point: --bench times its simulator (stderr), --explain keeps it. */
static int on_first(void *ctx, struct cs_sim *sim, const struct cs_sim_inputs *in,
                    const struct cs_predict_row *x) {
  struct first_ctx *c = ctx;
  if (c->bench) {
    long reps = 0;
    double t0 = now(), t1;
    struct cs_sim_result tmp;
    do {
      for (int j = 0; j < 100; j++)
        cs_sim_run(sim, &tmp);
      reps += 100;
    } while ((t1 = now()) - t0 < 0.5);
    double replay = reps / (t1 - t0);
    long reps2 = 0;
    t0 = now();
    do {
      struct cs_sim *s2 = NULL;
      if (cs_sim_alloc(in, &s2, NULL) == CS_OK) cs_sim_run(s2, &tmp);
      cs_sim_free(s2);
      reps2++;
    } while ((t1 = now()) - t0 < 0.5);
    fprintf(stderr,
            "commscale predict: simulated steps per second: %.4g (replay of a prepared plan, "
            "3 band levels + bubble split each), %.4g (prepare + replay); %s, %s, %ld GPUs, "
            "%ld micro-batches, one core\n",
            replay, reps2 / (t1 - t0), in->workload->name, x->plan, x->gpus, x->r.microbatches);
  }
  if (!c->keep) return 0;
  c->sim = sim; /* its collectives follow the table */
  c->row = x;
  return 1;
}

/* The grid of the options: plans, node or GPU counts, network speeds, accumulation. The lists
 * are malloc'd into sp (counts, nets). Returns an exit status, or -1 to go on. */
static int parse_grid(const struct cli_args *a, struct cs_predict_spec *sp, struct cs_plan *plans,
                      char (*ptexts)[256], int *fixed, struct cs_error *err) {
  const char *s = cli_get(&verb, a, "plan");
  if (parse_plans(s ? s : "", plans, ptexts, fixed, &sp->nplan, err) != CS_OK)
    return usage_fail(err, "--plan");
  /* a framework profile that does not exist is a usage error, named before any row is costed
   * (not a row rejected for it and then "no feasible plan") */
  for (int i = 0; i < sp->nplan; i++) {
    struct cs_framework fw;
    if (cs_framework_find(plans[i].framework, NULL, &fw, err) != CS_OK)
      return usage_fail(err, "--plan");
  }
  sp->plans = plans, sp->fixed = fixed, sp->texts = (const char(*)[256])ptexts;
  sp->accum = 1;
  if ((s = cli_get(&verb, a, "accum"))) {
    char *end;
    sp->accum = strtol(s, &end, 10);
    if (*end || sp->accum < 1 || sp->accum > 1000000) {
      cs_error_set(err, CS_ERR_USAGE, "--accum expects a positive integer, got \"%s\"", s);
      return cli_fail("predict", err);
    }
  }
  long *counts = NULL, *nets = NULL;
  sp->by_gpus = cli_get(&verb, a, "gpus") != NULL;
  s = sp->by_gpus ? cli_get(&verb, a, "gpus") : cli_get(&verb, a, "nodes");
  if (cs_units_parse_ints(s ? s : "1", 1, 1 << 24, &counts, &sp->ncount, err) != CS_OK)
    return usage_fail(err, sp->by_gpus ? "--gpus" : "--nodes");
  sp->counts = counts;
  if ((s = cli_get(&verb, a, "net-gbps")) &&
      cs_units_parse_ints(s, 1, 1000000, &nets, &sp->nnet, err) != CS_OK)
    return usage_fail(err, "--net-gbps");
  sp->nets = nets;
  sp->ignore_memory = cli_get(&verb, a, "ignore-memory") != NULL;
  return -1;
}

/* --measured TIME: the compute model calibrated to one GPU's measured micro-batch time. */
static enum cs_status measured(const struct cli_args *a, struct cs_scenario *su,
                               struct cs_error *err) {
  const char *s = cli_get(&verb, a, "measured");
  double m;
  if (!s) return CS_OK;
  if (cs_units_parse_quantity(s, CS_UNIT_TIME, &m, err) != CS_OK) {
    cs_error_prefix(err, "--measured");
    return err->status = CS_ERR_USAGE;
  }
  return cs_scenario_calibrate(su, m, err);
}

int cs_cmd_predict(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int fmt;
  int begun = cli_begin(&verb, argc, argv, &a, 0, 0, NULL, &fmt);
  if (begun >= 0) return begun;
  const char *calpath = cli_get(&verb, &a, "cal"), *s;
  if (!cli_get(&verb, &a, "workload") || !cli_get(&verb, &a, "gpu") ||
      !cli_get(&verb, &a, "topology")) {
    cs_error_set(&err, CS_ERR_USAGE, "--workload, --gpu and --topology are required");
    return cli_fail("predict", &err);
  }
  struct cs_plan plans[MAX_PLANS];
  char ptexts[MAX_PLANS][256];
  int fixed[MAX_PLANS];
  struct cs_predict_spec sp = {0};
  struct cs_scenario su = {0};
  struct cs_predict_row *recs = NULL;
  size_t nrec = 0;
  struct first_ctx fc = {cli_get(&verb, &a, "bench") != NULL,
                         cli_get(&verb, &a, "explain") && fmt == CLI_TABLE, NULL, NULL};
  int rc = parse_grid(&a, &sp, plans, ptexts, fixed, &err);
  enum cs_status st = rc >= 0 ? CS_ERR_USAGE : CS_OK;
  if (st == CS_OK)
    st = cli_setup_load_parts(&su, &verb, &a, &plans[0], CLI_SETUP_TOPOLOGY | CLI_SETUP_CAL_NOTE,
                              &err);
  if (rc < 0 && st != CS_OK) rc = cli_fail("predict", &err);
  if (rc < 0) {
    st = measured(&a, &su, &err);
    FILE *f = NULL;
    if (st == CS_OK && !(f = cli_open_out(cli_get(&verb, &a, "output"), &err))) st = CS_ERR_IO;
    if (st == CS_OK) st = cs_predict_run(&su, &sp, on_first, &fc, &recs, &nrec, &err);
    if (st == CS_OK) st = write_all(f, fmt, recs, nrec, &sp, &su, calpath, &fc, argc, argv, &err);
    st = cli_end_out(f, st, &err);
    if (st == CS_OK && (s = cli_get(&verb, &a, "plot")))
      st = plot(s, recs, nrec, sp.nplan, ptexts, sp.by_gpus, su.workload->name, su.topo.name,
                CS_PLOT_SVG | (cli_get(&verb, &a, "png") ? CS_PLOT_PNG : 0u), &err);
    rc = st != CS_OK ? cli_fail("predict", &err) : 0;
  }
  cs_sim_free(fc.sim);
  free(recs);
  free((void *)sp.counts);
  free((void *)sp.nets);
  cs_scenario_fini(&su);
  return rc;
}
