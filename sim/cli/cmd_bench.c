/* cmd_bench.c — `commscale bench`: how fast the model predicts, the step simulator simulates
 * and the fitter fits, with the conditions printed beside each figure (CPU, sizes, shapes, plan,
 * node count, repetitions). */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cal.h"
#include "cmds.h"
#include "fit.h"
#include "measread.h"
#include "opts.h"
#include "datadir.h"
#include "framework.h"
#include "search.h"
#include "stats.h"
#include "step.h"
#include <unistd.h>

static const struct cli_opt opts[] = {
    {"fit", 0, NULL, "also time the fit of the measurement files given as arguments"},
    {"repeat", 'n', "N", "repetitions of each timed run (default 5; the median is reported)"},
    {"search", 0, NULL, "time the full plan search: GPT-3 175B on 400 x DGX H100, gbs 1600"},
    {"sim-only", 0, NULL, "time the step simulator only (no collective predictions or fits)"},
};

static const struct cli_verb verb = {
    "bench",
    "[--fit MEASUREMENTS...] [--search] [--sim-only] [-n N]",
    "Time the cost model's predictions, the step simulator (GPT-3 175B, tp=8,pp=16,dp=25 on 400 "
    "x DGX H100) and, with --fit, the fit of the given measurements.",
    NULL,
    opts,
    (int)(sizeof opts / sizeof opts[0]),
    NULL};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* This thread's CPU time: on a shared machine, the rate one core gives when it runs us. */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void cpu_name(char *buf, size_t len) {
  snprintf(buf, len, "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f == NULL) return;
  char line[256];
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "model name", 10) == 0) {
      char *c = strchr(line, ':');
      if (c) {
        c++;
        while (*c == ' ')
          c++;
        c[strcspn(c, "\n")] = '\0';
        snprintf(buf, len, "%s", c);
      }
      break;
    }
  fclose(f);
}

/* The load averages of /proc/loadavg ("1, 5 and 15 min"), or "unknown". */
static void load_avg(char *buf, size_t len) {
  snprintf(buf, len, "unknown");
  FILE *f = fopen("/proc/loadavg", "r");
  if (f == NULL) return;
  double a, b, c;
  if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
  fclose(f);
}

/* Loads GPT-3 175B, the H100 and the DGX H100 topology as the bundled data has them. */
static enum cs_status load_gpt3(struct cs_workload **w, struct cs_gpu *g, struct cs_topology *topo,
                                struct cs_compute *c, struct cs_error *err) {
  char exe[4096], path[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? (size_t)n : 0] = '\0';
  *w = NULL;
  enum cs_status st =
      cs_datadir_find("workloads", "model/workloads", "gpt3-175b", exe, path, sizeof path, err);
  if (st == CS_OK) st = cs_workload_load(path, w, err);
  if (st == CS_OK)
    st = cs_datadir_find("gpus", "model/gpus", "h100-sxm", exe, path, sizeof path, err);
  if (st == CS_OK) st = cs_gpu_load(path, g, err);
  if (st == CS_OK) st = cs_topo_find("dgx-h100", path, sizeof path, err);
  if (st == CS_OK) st = cs_topo_load(path, topo, err);
  if (st == CS_OK) st = cs_compute_init(c, g, CS_PREC_BF16, err);
  return st;
}

/* Calls per second of what(s), timed over at least 0.2 s per repetition, median of reps; *cpu
 * the same per second of this thread's CPU time. */
enum sim_what { SIM_STEP, SIM_BAND, SIM_FULL };
static double sim_rate(struct cs_sim *s, const struct cs_sim_inputs *in, enum sim_what what,
                       int reps, double *t, double *cpu, double *sink) {
  double tc[1000];
  for (int r = 0; r < reps; r++) {
    long calls = 0;
    double t0 = now(), t1, c0 = cpu_now();
    struct cs_sim_result res;
    do {
      for (int j = 0; j < 50; j++) {
        if (what == SIM_STEP)
          cs_sim_run_step(s, &res);
        else if (what == SIM_BAND)
          cs_sim_run(s, &res);
        else {
          struct cs_sim *s2 = NULL;
          res.step = 0;
          if (cs_sim_alloc(in, &s2, NULL) == CS_OK) cs_sim_run(s2, &res);
          cs_sim_free(s2);
        }
        *sink += res.step;
      }
      calls += 50;
    } while ((t1 = now()) - t0 < 0.2);
    t[r] = calls / (t1 - t0);
    tc[r] = calls / (cpu_now() - c0);
  }
  *cpu = cs_stats_median(tc, (size_t)reps);
  return cs_stats_median(t, (size_t)reps);
}

/* Issue 5's acceptance case: simulated steps per second of GPT-3 175B, tp=8, pp=16, dp=25 on 400
 * DGX H100 nodes (gbs 1600: 64 micro-batches per pipeline), default collective model, one core. */
static enum cs_status bench_sim(int reps, double *t, double *sink, struct cs_error *err) {
  struct cs_workload *w = NULL;
  struct cs_gpu g;
  struct cs_topology topo;
  struct cs_compute c;
  struct cs_cal cal;
  struct cs_plan plan;
  cs_cal_init(&cal);
  enum cs_status st = load_gpt3(&w, &g, &topo, &c, err);
  /* the framework that runs this plan, loaded once as predict and search load it */
  if (st == CS_OK)
    st = cs_plan_parse("tp=8,pp=16,dp=25,mbs=1,gbs=1600,framework=megatron-core", &plan, err);
  struct cs_framework fw;
  if (st == CS_OK) st = cs_framework_find(plan.framework, NULL, &fw, err);
  struct cs_sim_inputs in = {w, &plan, &c, &topo, &cal, CS_SIM_DEFAULT_INTERFERENCE, &fw};
  struct cs_sim *s = NULL;
  if (st == CS_OK) st = cs_sim_alloc(&in, &s, err);
  if (st == CS_OK) {
    struct cs_sim_result r;
    cs_sim_run(s, &r);
    char desc[256];
    cs_plan_format(&plan, desc, sizeof desc);
    long nodes = (cs_plan_gpus(&plan) + topo.node.gpus - 1) / topo.node.gpus;
    printf("simulate GPT-3 175B, plan %s (%ld micro-batches), %ld nodes x %d GPUs (%s), default "
           "collective model, step %.4g s [%.4g, %.4g]:\n",
           desc, r.microbatches, nodes, topo.node.gpus, topo.name, r.step, r.step_lo, r.step_hi);
    printf("  framework profile %s (%s)\n", fw.name, fw.release);
    double cstep, cband, cfull;
    double step = sim_rate(s, &in, SIM_STEP, reps, t, &cstep, sink);
    double band = sim_rate(s, &in, SIM_BAND, reps, t, &cband, sink);
    double full = sim_rate(s, &in, SIM_FULL, reps, t, &cfull, sink);
    printf("  replayed steps per second, predicted step only (cs_sim_run_step): %.0f; target >= "
           "200000: %s\n",
           step, step >= 2e5 ? "met" : "MISSED");
    printf("  replayed steps per second with band (cs_sim_run: predicted, low, high and the bubble "
           "split): %.0f\n",
           band);
    printf("  full predictions per second including preparation (cs_sim_alloc + cs_sim_run + "
           "cs_sim_free): %.0f; target >= 20000: %s\n",
           full, full >= 2e4 ? "met" : "MISSED");
    printf(
        "  the same per second of this thread's CPU time (the machine's load aside): %.0f, %.0f, "
        "%.0f\n",
        cstep, cband, cfull);
  }
  cs_sim_free(s);
  cs_workload_free(w);
  cs_cal_fini(&cal);
  return st;
}

/* The acceptance case of the plan search: every plan of GPT-3 175B on 400 nodes of 8 H100 with
 * gbs 1600 on one core, timed reps times; prints the median and the space's figures. */
static enum cs_status bench_search(int reps, double *t, struct cs_error *err) {
  struct cs_workload *w = NULL;
  struct cs_gpu g;
  struct cs_topology topo;
  struct cs_compute c;
  struct cs_cal cal;
  cs_cal_init(&cal);
  enum cs_status st = load_gpt3(&w, &g, &topo, &c, err);
  struct cs_search_inputs in = {w, &c, &g, &topo, &cal, 1.05};
  struct cs_search_space sp;
  cs_search_space_init(&sp, 3200, 1600);
  struct cs_search_result r = {0};
  for (int i = 0; i < reps && st == CS_OK; i++) {
    cs_search_result_free(&r);
    double t0 = now();
    st = cs_search_run(&in, &sp, 0, 1, &r, err);
    t[i] = now() - t0;
  }
  if (st == CS_OK) {
    double m = cs_stats_median(t, (size_t)reps);
    char best[256];
    cs_plan_format(&r.e[0].plan, best, sizeof best);
    printf("search GPT-3 175B on 400 nodes x 8 H100 (dgx-h100, 400 Gb/s per GPU, default model), "
           "gbs 1600: %ld points (%ld invalid, %ld over memory, %ld pruned by exact memory bounds, "
           "%ld simulated) in %.3f s: %.0f configurations per second (%.0f simulated per second); "
           "target < 1 s: %s; best %s at %.4g s\n",
           r.stats.points, r.stats.invalid, r.stats.memory, r.stats.pruned, r.stats.simulated, m,
           r.stats.points / m, r.stats.simulated / m, m < 1 ? "met" : "MISSED", best, r.e[0].step);
  }
  cs_search_result_free(&r);
  cs_workload_free(w);
  cs_cal_fini(&cal);
  return st;
}

int cs_cmd_bench(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int begun = cli_begin(&verb, argc, argv, &a, 0, CLI_MAX_POS, NULL, NULL);
  if (begun >= 0) return begun;
  int reps = 5;
  const char *s = cli_get(&verb, &a, "repeat");
  if (s && (sscanf(s, "%d", &reps) != 1 || reps < 1 || reps > 1000)) {
    cs_error_set(&err, CS_ERR_USAGE, "--repeat expects 1 to 1000");
    return cli_fail("bench", &err);
  }
  char cpu[128];
  cpu_name(cpu, sizeof cpu);
  char load[64];
  load_avg(load, sizeof load);
  printf("# commscale %s bench on %s, 1 thread, median of %d runs, load average %s (%ld CPUs "
         "online)\n",
         CS_VERSION, cpu, reps, load, sysconf(_SC_NPROCESSORS_ONLN));
  double sink = 0;
  double t[1000];
  if (bench_sim(reps, t, &sink, &err) != CS_OK) return cli_fail("bench", &err);
  if (cli_get(&verb, &a, "sim-only")) {
    if (sink < 0) printf("%g\n", sink);
    return 0;
  }

  /* predictions: auto all-reduce over 31 sizes x 10 node counts of 8 GPUs */
  struct cs_cal cal;
  cs_cal_init(&cal);
  const int sizes = 31, nodes = 10;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    for (int k = 0; k < 20; k++)
      for (int i = 0; i < nodes; i++)
        for (int j = 0; j < sizes; j++) {
          int N = 1 << i;
          struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, N * 8, N, 8,
                                    ldexp(1.0, 3 + j)};
          struct cs_coll_pred pr;
          if (cs_model_predict(&cal.model, &q, &pr, NULL) == CS_OK) sink += pr.time;
        }
    t[r] = (now() - t0) / (20.0 * nodes * sizes);
  }
  printf("predict (auto all_reduce, NCCL-style choice of 3 algorithms x 3 protocols): %.2f us per "
         "prediction, %.0f per second\n",
         cs_stats_median(t, (size_t)reps) * 1e6, 1.0 / cs_stats_median(t, (size_t)reps));
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    for (int i = 0; i < nodes; i++)
      for (int j = 0; j < sizes; j++) {
        int N = 1 << i;
        struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, N * 8, N, 8,
                                  ldexp(1.0, 3 + j)};
        struct cs_coll_pred pr;
        double lo, hi;
        if (cs_cal_predict(&cal, &q, &pr, &lo, &hi, NULL) == CS_OK) sink += hi - lo;
      }
    t[r] = (now() - t0) / (nodes * sizes);
  }
  printf("predict with band (delta method over all %d parameters): %.1f us per prediction\n",
         CS_MODEL_NPARAMS, cs_stats_median(t, (size_t)reps) * 1e6);
  cs_cal_fini(&cal);

  if (cli_get(&verb, &a, "fit")) {
    struct cs_meas_set set;
    cs_meas_set_init(&set);
    enum cs_status st = CS_OK;
    for (int i = 0; i < a.npos && st == CS_OK; i++)
      st = cs_meas_read_any(a.pos[i], &set, &err);
    for (int cv = 0; cv < 2 && st == CS_OK; cv++) {
      int points = 0, nfit = 0;
      for (int r = 0; r < reps && st == CS_OK; r++) {
        struct cs_fit_opts o;
        cs_fit_opts_default(&o);
        o.cross_validate = cv;
        struct cs_cal c;
        cs_cal_init(&c);
        double t0 = now();
        st = cs_fit_run(&set, &o, &c, NULL, &err);
        t[r] = now() - t0;
        points = c.quality.points;
        nfit = c.n_fit;
        cs_cal_fini(&c);
      }
      if (st == CS_OK)
        printf("fit %d points, %d parameters%s: %.3f s\n", points, nfit,
               cv ? ", with leave-one-shape-out cross-validation" : "",
               cs_stats_median(t, (size_t)reps));
    }
    cs_meas_set_fini(&set);
    if (st != CS_OK) return cli_fail("bench", &err);
  }
  if (cli_get(&verb, &a, "search") && bench_search(reps, t, &err) != CS_OK)
    return cli_fail("bench", &err);
  if (sink < 0) printf("%g\n", sink); /* keeps the loops from being optimised away */
  return 0;
}
