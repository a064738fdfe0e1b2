/* cmd_predict.c — `commscale predict`: step time, throughput, speedup and scaling efficiency of a
 * training plan from one GPU to hundreds of nodes, with the band from the calibration and the
 * breakdown of the step (step.h).
 *
 * Per node (or GPU) count, dp fills the GPUs unless the plan names it; a row whose plan does not
 * divide the model, does not fit memory or does not fit the cluster carries the reason instead of
 * figures. One record per row feeds the three writers (table, CSV with units, JSON with the tool
 * version, the arguments and the resolved plan).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "memory.h"
#include "opts.h"
#include "output.h"
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
     "GPUs (GPUs / (tp*pp*cp))"},
    {"nodes", 'N', "LIST", "node counts, e.g. 1,2,4,8 or 1:400 (default 1)"},
    {"gpus", 'G', "LIST", "GPU counts instead of node counts, e.g. 1,8,16,32"},
    {"accum", 0, "K",
     "when the plan has no gbs: K micro-batches per step per replica (default 1), "
     "so the per-GPU batch stays fixed as nodes grow"},
    {"set", 0, "K=V,...", "override workload architecture keys, e.g. seq=4096"},
    {"measured", 0, "TIME",
     "measured single-GPU time of one micro-batch (fwd+bwd), e.g. 322ms: "
     "layer times are scaled to it"},
    {"interference", 0, "X", "compute slowdown under overlapped collectives (default 1.05)"},
    {"probes", 0, "FILE",
     "compute probes of this GPU (commscale-run --probes): measured GEMM "
     "efficiencies and, unless --interference, the median interference"},
    {"net-gbps", 0, "LIST", "re-cost the network at these speeds per NIC, e.g. 100,200,400"},
    {"ignore-memory", 0, NULL, "do not reject plans that exceed the GPU's memory"},
    {"explain", 0, NULL, "also print the collectives of the first feasible row"},
    {"bench", 0, NULL, "print simulated steps per second on stderr"},
    {"format", 0, "FMT", "table (default), csv or json; -o FILE.csv/.json implies it"},
    {"output", 'o', "FILE", "write to FILE instead of stdout"},
};

static const struct cli_verb verb = {
    "predict",
    "--workload NAME --gpu NAME --topology NAME [--cal calibration.yaml] --plan PLAN "
    "[--nodes 1:400]",
    "Predict step time, throughput, speedup and scaling efficiency of a plan at many node counts.",
    "step_lo..step_hi: the schedule re-run with every collective at the low and at the high end\n"
    "of its ~95% band. speedup = throughput / throughput of one GPU running the same "
    "micro-batches\n"
    "(DLPerf's definition); efficiency = speedup / GPUs. TFLOP/s per GPU counts model FLOPs (hw_\n"
    "adds recomputation); MFU = model FLOP/s per GPU / peak. Breakdown columns are the seconds of\n"
    "the critical pipeline stage: compute, exposed tp/cp/ep/dp comm, pp transfer waits, bubble,\n"
    "optimizer; they add up to the step.",
    opts,
    (int)(sizeof opts / sizeof opts[0])};

struct rec {
  long nodes, gpus, dp;
  double net_gbps; /* per NIC; 0 = the topology's */
  int ok;
  char reason[CS_ERROR_MSG_MAX];
  char plan[256];
  struct cs_sim_result r;
  double speedup, efficiency, mem_gib;
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void write_table(FILE *f, const struct rec *r, size_t n, const char *head) {
  fprintf(f, "# commscale %s predict\n%s", CS_VERSION, head);
  fprintf(f,
          "#%5s %6s %5s %8s %9s %9s %9s %10s %11s %7s %6s %8s %6s %8s %7s %7s %7s %7s %7s %7s %7s "
          "%7s\n",
          "nodes", "gpus", "dp", "net", "step", "step_lo", "step_hi", "samples/s", "tokens/s",
          "TFLOP/s", "MFU", "speedup", "eff", "compute", "tp", "cp", "ep", "dp", "pp", "bubble",
          "optim", "mem");
  fprintf(f,
          "#%5s %6s %5s %8s %9s %9s %9s %10s %11s %7s %6s %8s %6s %8s %7s %7s %7s %7s %7s %7s %7s "
          "%7s\n",
          "", "", "", "(Gb/s)", "(s)", "(s)", "(s)", "", "", "(/GPU)", "(%)", "", "(%)", "(s)",
          "(s)", "(s)", "(s)", "(s)", "(s)", "(s)", "(s)", "(GiB)");
  for (size_t i = 0; i < n; i++) {
    const struct rec *x = &r[i];
    if (!x->ok) {
      fprintf(f, " %5ld %6ld  rejected: %s\n", x->nodes, x->gpus, x->reason);
      continue;
    }
    const struct cs_sim_breakdown *b = &x->r.part;
    fprintf(f,
            " %5ld %6ld %5ld %8.0f %9.4g %9.4g %9.4g %10.4g %11.4g %7.1f %6.1f %8.2f %6.1f %8.4g "
            "%7.3g %7.3g %7.3g %7.3g %7.3g %7.3g %7.3g %7.1f\n",
            x->nodes, x->gpus, x->dp, x->net_gbps, x->r.step, x->r.step_lo, x->r.step_hi,
            x->r.samples_per_s, x->r.tokens_per_s, x->r.tflops_per_gpu, 100 * x->r.mfu, x->speedup,
            100 * x->efficiency, b->compute, b->tp, b->cp, b->ep, b->dp, b->pp, b->bubble,
            b->optimizer, x->mem_gib);
  }
}

static const char csv_head[] =
    "nodes,gpus,plan,net_Gbps,status,step_s,step_lo_s,step_hi_s,samples_per_s,tokens_per_s,"
    "tflops_per_gpu,hw_tflops_per_gpu,mfu,speedup,efficiency,compute_s,tp_s,cp_s,ep_s,dp_s,pp_s,"
    "bubble_s,optimizer_s,critical_stage,microbatches,comm_bytes_per_gpu,memory_GiB,reason\n";

static void write_csv(FILE *f, const struct rec *r, size_t n) {
  fputs(csv_head, f);
  for (size_t i = 0; i < n; i++) {
    const struct rec *x = &r[i];
    const struct cs_sim_breakdown *b = &x->r.part;
    fprintf(f, "%ld,%ld,\"%s\",%g,%s,", x->nodes, x->gpus, x->plan, x->net_gbps,
            x->ok ? "ok" : "rejected");
    if (x->ok)
      fprintf(f,
              "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,"
              "%.6g,%.6g,%d,%ld,%.6g,%.4g,",
              x->r.step, x->r.step_lo, x->r.step_hi, x->r.samples_per_s, x->r.tokens_per_s,
              x->r.tflops_per_gpu, x->r.hw_tflops_per_gpu, x->r.mfu, x->speedup, x->efficiency,
              b->compute, b->tp, b->cp, b->ep, b->dp, b->pp, b->bubble, b->optimizer, x->r.stage,
              x->r.microbatches, x->r.comm_bytes, x->mem_gib);
    else
      fputs(",,,,,,,,,,,,,,,,,,,,,,", f);
    fputc('"', f);
    for (const char *s = x->reason; *s; s++)
      fputs(*s == '"' ? "\"\"" : (char[]){*s, 0}, f);
    fputs("\"\n", f);
  }
}

static void write_json(FILE *f, const struct rec *r, size_t n, int argc, char **argv,
                       const struct cs_plan *plan, const char *calpath, const char *wl,
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
  fputs(", \"plan\": ", f);
  cli_json_plan(f, plan);
  fputs(",\n \"predictions\": [\n", f);
  for (size_t i = 0; i < n; i++) {
    const struct rec *x = &r[i];
    const struct cs_sim_breakdown *b = &x->r.part;
    fprintf(f, "  {\"nodes\": %ld, \"gpus\": %ld, \"plan\": ", x->nodes, x->gpus);
    cli_json_string(f, x->plan);
    fprintf(f, ", \"net_Gbps\": %g, \"ok\": %s", x->net_gbps, x->ok ? "true" : "false");
    if (x->ok)
      fprintf(
          f,
          ", \"step_s\": %.6g, \"step_lo_s\": %.6g, \"step_hi_s\": %.6g, "
          "\"samples_per_s\": %.6g, \"tokens_per_s\": %.6g, \"tflops_per_gpu\": %.6g, "
          "\"hw_tflops_per_gpu\": %.6g, \"mfu\": %.6g, \"speedup\": %.6g, \"efficiency\": %.6g, "
          "\"breakdown_s\": {\"compute\": %.6g, \"tp\": %.6g, \"cp\": %.6g, \"ep\": %.6g, "
          "\"dp\": %.6g, \"pp\": %.6g, \"bubble\": %.6g, \"optimizer\": %.6g}, "
          "\"critical_stage\": %d, \"microbatches\": %ld, \"memory_GiB\": %.4g",
          x->r.step, x->r.step_lo, x->r.step_hi, x->r.samples_per_s, x->r.tokens_per_s,
          x->r.tflops_per_gpu, x->r.hw_tflops_per_gpu, x->r.mfu, x->speedup, x->efficiency,
          b->compute, b->tp, b->cp, b->ep, b->dp, b->pp, b->bubble, b->optimizer, x->r.stage,
          x->r.microbatches, x->mem_gib);
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

/* Whether the plan text names key (so that it is not filled in). */
static int names_key(const char *text, const char *key) {
  size_t k = strlen(key);
  for (const char *s = text; (s = strstr(s, key)) != NULL; s += k) {
    int start = s == text || s[-1] == ',' || s[-1] == ' ';
    const char *e = s + k;
    while (*e == ' ')
      e++;
    if (start && *e == '=') return 1;
  }
  return 0;
}

static int usage_fail(struct cs_error *err, const char *opt) {
  cs_error_prefix(err, opt);
  if (err->status != CS_ERR_NOMEM) err->status = CS_ERR_USAGE; /* out of memory is no usage error */
  return cli_fail("predict", err);
}

int cs_cmd_predict(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int help;
  if (cli_parse(&verb, argc, argv, &a, &help, &err) != CS_OK) return cli_fail("predict", &err);
  if (help) {
    cli_usage(stdout, &verb);
    return 0;
  }
  if (a.npos > 0) {
    cs_error_set(&err, CS_ERR_USAGE, "unexpected argument \"%s\" (see commscale predict --help)",
                 a.pos[0]);
    return cli_fail("predict", &err);
  }
  const char *wname = cli_get(&verb, &a, "workload"), *gname = cli_get(&verb, &a, "gpu");
  const char *tname = cli_get(&verb, &a, "topology"), *ptext = cli_get(&verb, &a, "plan");
  const char *outpath = cli_get(&verb, &a, "output"), *calpath = cli_get(&verb, &a, "cal");
  if (!wname || !gname || !tname) {
    cs_error_set(&err, CS_ERR_USAGE, "--workload, --gpu and --topology are required");
    return cli_fail("predict", &err);
  }
  int fmt = cli_format(cli_get(&verb, &a, "format"), outpath);
  if (fmt < 0) {
    cs_error_set(&err, CS_ERR_USAGE, "--format expects table, csv or json");
    return cli_fail("predict", &err);
  }
  if (!ptext) ptext = "";
  struct cs_plan base;
  if (cli_setup_plan(ptext, &base, &err) != CS_OK) return usage_fail(&err, "--plan");
  int fixed_dp = names_key(ptext, "dp");
  const char *s;
  long accum = 1;
  if ((s = cli_get(&verb, &a, "accum"))) {
    char *end;
    accum = strtol(s, &end, 10);
    if (*end || accum < 1 || accum > 1000000) {
      cs_error_set(&err, CS_ERR_USAGE, "--accum expects a positive integer, got \"%s\"", s);
      return cli_fail("predict", &err);
    }
  }
  long *counts = NULL, *nets = NULL;
  size_t ncount = 0, nnet = 0;
  int by_gpus = cli_get(&verb, &a, "gpus") != NULL;
  s = by_gpus ? cli_get(&verb, &a, "gpus") : cli_get(&verb, &a, "nodes");
  if (cs_units_parse_ints(s ? s : "1", 1, 1 << 24, &counts, &ncount, &err) != CS_OK)
    return usage_fail(&err, by_gpus ? "--gpus" : "--nodes");
  if ((s = cli_get(&verb, &a, "net-gbps")) &&
      cs_units_parse_ints(s, 1, 1000000, &nets, &nnet, &err) != CS_OK) {
    free(counts);
    return usage_fail(&err, "--net-gbps");
  }

  struct cli_setup su;
  struct rec *recs = NULL;
  size_t nrec = 0;
  int rc = 0;
  enum cs_status st =
      cli_setup_load_parts(&su, &verb, &a, &base, CLI_SETUP_TOPOLOGY | CLI_SETUP_CAL_NOTE, &err);
  if (st != CS_OK) {
    free(counts);
    free(nets);
    return cli_fail("predict", &err);
  }
  struct cs_workload *w = su.workload;
  const struct cs_gpu *gpu = &su.gpu;
  struct cs_topology *topo = &su.topo;
  struct cs_compute *comp = &su.compute;
  if ((s = cli_get(&verb, &a, "measured"))) {
    double m;
    struct cs_plan one = base;
    one.dp = one.tp = one.pp = one.vpp = one.cp = one.ep = 1;
    one.sp = 0, one.gbs = 0, one.zero = 0;
    if (cs_units_parse_quantity(s, CS_UNIT_TIME, &m, &err) != CS_OK) {
      cs_error_prefix(&err, "--measured");
      st = err.status = CS_ERR_USAGE;
    } else
      st = cs_compute_calibrate(comp, w, &one, m, &err);
  }
  size_t nn = nnet ? nnet : 1;
  if (st == CS_OK && !(recs = calloc(ncount * nn, sizeof *recs)))
    st = cs_error_set(&err, CS_ERR_NOMEM, "out of memory");
  const double nic0 = topo->net.nic_bw;
  int explained = 0;
  struct cs_sim *keep = NULL;
  const struct rec *keep_rec = NULL;
  FILE *f = NULL;
  if (st == CS_OK && !(f = cli_open_out(outpath, &err))) st = CS_ERR_IO;
  for (size_t i = 0; st == CS_OK && i < ncount; i++)
    for (size_t k = 0; k < nn; k++) {
      struct rec *x = &recs[nrec++];
      long gpn = topo->node.gpus;
      x->gpus = by_gpus ? counts[i] : counts[i] * gpn;
      x->nodes = by_gpus ? (counts[i] + gpn - 1) / gpn : counts[i];
      x->net_gbps = nnet ? (double)nets[k] : topo->net.nic_bw * 8 / 1e9;
      topo->net.nic_bw = nnet ? (double)nets[k] * 1e9 / 8 : nic0;
      struct cs_plan plan = base;
      long mp = (long)plan.tp * plan.pp * plan.cp;
      struct cs_error e2 = {0};
      if (!fixed_dp) {
        if (x->gpus % mp != 0) {
          snprintf(x->reason, sizeof x->reason, "%ld GPUs are not a multiple of tp*pp*cp = %ld",
                   x->gpus, mp);
          continue;
        }
        plan.dp = (int)(x->gpus / mp);
      } else if (cs_plan_gpus(&plan) != x->gpus) {
        snprintf(x->reason, sizeof x->reason, "the plan occupies %ld GPUs, not %ld",
                 cs_plan_gpus(&plan), x->gpus);
        continue;
      }
      x->dp = plan.dp;
      if (plan.gbs == 0 && accum > 1) plan.gbs = (int)(plan.mbs * plan.dp * accum);
      cs_plan_format(&plan, x->plan, sizeof x->plan);
      struct cs_memory mem;
      if (cs_plan_check(&plan, w, &e2) != CS_OK ||
          cs_memory_estimate(w, &plan, gpu, &mem, &e2) != CS_OK ||
          (!cli_get(&verb, &a, "ignore-memory") &&
           cs_memory_check(&mem, gpu->name, &e2) != CS_OK)) {
        if (e2.status == CS_ERR_NOMEM) { /* no reason to reject the plan: the run fails */
          st = e2.status;
          err = e2;
          break;
        }
        snprintf(x->reason, sizeof x->reason, "%s", e2.msg);
        continue;
      }
      x->mem_gib = mem.total / 1073741824.0;
      struct cs_sim_inputs in = {w, &plan, comp, topo, &su.cal, su.interference};
      struct cs_sim *sim = NULL;
      if (cs_sim_alloc(&in, &sim, &e2) != CS_OK) {
        if (e2.status == CS_ERR_NOMEM) {
          st = e2.status;
          err = e2;
          break;
        }
        snprintf(x->reason, sizeof x->reason, "%s", e2.msg);
        continue;
      }
      cs_sim_run(sim, &x->r);
      double one;
      if (cs_sim_single_gpu(w, &plan, comp, &one, &e2) == CS_OK) {
        x->speedup = x->r.samples_per_s / one;
        x->efficiency = x->speedup / (double)x->gpus;
      }
      x->ok = 1;
      if (cli_get(&verb, &a, "bench") && !explained) {
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
          if (cs_sim_alloc(&in, &s2, NULL) == CS_OK) cs_sim_run(s2, &tmp);
          cs_sim_free(s2);
          reps2++;
        } while ((t1 = now()) - t0 < 0.5);
        fprintf(stderr,
                "commscale predict: simulated steps per second: %.4g (replay of a prepared plan, "
                "3 band levels + bubble split each), %.4g (prepare + replay); %s, %s, %ld GPUs, "
                "%ld micro-batches, one core\n",
                replay, reps2 / (t1 - t0), w->name, x->plan, x->gpus, x->r.microbatches);
      }
      if (!explained && cli_get(&verb, &a, "explain") && fmt == CLI_TABLE) {
        keep = sim; /* its collectives follow the table */
        keep_rec = x;
        sim = NULL;
      }
      explained = 1;
      cs_sim_free(sim);
    }
  if (st == CS_OK) {
    char head[1024];
    snprintf(head, sizeof head, "# workload  %s\n# gpu       %s\n# topology  %s\n# cal       %s\n",
             w->description, gpu->description, topo->description,
             calpath ? calpath : "(default model)");
    if (fmt == CLI_CSV)
      write_csv(f, recs, nrec);
    else if (fmt == CLI_JSON)
      write_json(f, recs, nrec, argc, argv, &base, calpath, w->name, gpu->name, topo->name);
    else
      write_table(f, recs, nrec, head);
    if (keep) {
      fprintf(f, "#\n# explain: %ld GPUs, %s\n", keep_rec->gpus, keep_rec->plan);
      explain(f, keep);
    }
    int any = 0;
    for (size_t i = 0; i < nrec; i++)
      any |= recs[i].ok;
    if (!any && nrec > 0) {
      cs_error_set(&err, CS_ERR_USAGE, "no feasible plan: %s", recs[0].reason);
      st = CS_ERR_USAGE;
    }
  }
  if (f) cli_close_out(f);
  if (st != CS_OK) rc = cli_fail("predict", &err);
  cs_sim_free(keep);
  free(recs);
  free(counts);
  free(nets);
  cli_setup_fini(&su);
  return rc;
}
