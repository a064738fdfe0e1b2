/* sim_dump.c — a before/after check for changes to the step simulator that must not change its
 * results (speed work): prints, for a fixed set of plans that touch every feature (1F1B and
 * interleaved pipelines, ZeRO-0..3, TP/SP, EP, CP, DataParallel, NIC sharing, bucket sizes, the
 * overlap switches, a layer-list model, the shared collective cache), the predicted step, its
 * band, the breakdown and the critical stage at full precision, from cs_sim_run and
 * cs_sim_run_step.
 *
 *   sim_dump [--cal CAL] > before.txt              (with the old simulator)
 *   sim_dump [--cal CAL] --check before.txt        (with the new one: exit 1 on any difference
 *                                                   > 1e-12)
 *
 * --cal takes a calibration file (default: the default model), so that the band's propagation
 * of a fitted covariance is compared too.
 *
 * A value matches when |new - old| <= 1e-12 max(|old|, |new|, step): parts of the breakdown that
 * are differences of large times are held to the step's scale. Not a ctest test: the reference
 * is the simulator's own earlier output, which only says "unchanged", never "right".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calfile.h"
#include "compute.h"
#include "datadir.h"
#include "gpu.h"
#include "plan.h"
#include "step.h"
#include "topology.h"
#include "workload.h"

struct dcase {
  const char *workload, *gpu, *topology, *plan;
  double nic_gbps; /* 0 = the topology's */
};

static const struct dcase cases[] = {
    {"megatron-1.7b", "a100-80gb", "dgx-a100", "dp=32,mbs=1,gbs=512,recompute=full", 0},
    {"megatron-18.4b", "a100-80gb", "dgx-a100", "tp=8,dp=32,mbs=1,gbs=1024,recompute=full", 0},
    {"megatron-39.1b", "a100-80gb", "dgx-a100", "tp=8,pp=2,dp=32,mbs=1,gbs=1536,recompute=full", 0},
    {"megatron-76.1b", "a100-80gb", "dgx-a100", "tp=8,pp=4,dp=32,mbs=1,gbs=1792,recompute=full", 0},
    {"megatron-22b", "a100-80gb", "dgx-a100", "tp=8,mbs=4,gbs=4,sp=true,recompute=selective", 0},
    {"megatron-175b", "a100-80gb", "dgx-a100", "tp=8,pp=8,vpp=3,mbs=1,gbs=64,recompute=full", 0},
    {"megatron-530b", "a100-80gb", "dgx-a100",
     "tp=8,pp=35,vpp=3,mbs=1,gbs=280,sp=true,recompute=selective", 0},
    {"megatron-1t", "a100-80gb", "dgx-a100", "tp=8,pp=64,mbs=1,gbs=512,recompute=full", 0},
    {"gpt3-175b", "h100-sxm", "dgx-h100", "tp=8,pp=16,dp=25,mbs=1,gbs=1600", 0},
    {"gpt3-175b", "h100-sxm", "dgx-h100", "tp=8,pp=16,vpp=6,dp=25,mbs=1,gbs=1600,sp=true", 0},
    {"gpt3-175b", "h100-sxm", "dgx-h100", "tp=8,pp=16,vpp=6,dp=25,mbs=1,gbs=1600,sp=true", 50},
    {"gpt3-175b", "h100-sxm", "dgx-h100", "tp=8,pp=8,dp=4,zero=1,mbs=1,gbs=256", 0},
    {"gpt3-175b", "h100-sxm", "dgx-h100", "tp=8,pp=8,dp=4,zero=2,mbs=1,gbs=256,overlap_param=false",
     0},
    {"gpt3-6.7b", "h100-sxm", "dgx-h100", "dp=64,zero=3,mbs=1,gbs=256", 0},
    {"gpt3-6.7b", "h100-sxm", "dgx-h100", "dp=64,zero=3,mbs=1,gbs=256,overlap_param=false", 100},
    {"gpt3-6.7b", "h100-sxm", "dgx-h100", "tp=8,pp=2,dp=4,zero=1,mbs=1,gbs=256", 25},
    {"gpt3-6.7b", "h100-sxm", "dgx-h100", "dp=64,mbs=1,gbs=64,bucket=4MiB", 0},
    {"gpt3-6.7b", "h100-sxm", "dgx-h100", "dp=64,mbs=1,gbs=64,overlap_grad=false", 0},
    {"gpt3-1.3b", "h100-sxm", "dgx-h100", "tp=8,pp=2,dp=2,mbs=1,gbs=2,bucket=900GB", 0},
    {"gpt3-1.3b", "h100-sxm", "dgx-h100", "tp=2,pp=4,vpp=2,dp=8,mbs=2,gbs=128,overlap_tp=true",
     100},
    {"gpt2-1.5b", "v100-32gb", "dgx1-v100-edr", "dp=32,mbs=4,precision=fp16,bucket=64KiB", 0},
    {"gpt2-124m", "h100-sxm", "dgx-h100", "dp=8,mbs=8,gbs=256,dp_mode=dataparallel", 0},
    {"llama3-8b", "h100-sxm", "dgx-h100", "tp=8,cp=4,mbs=1,gbs=2", 0},
    {"llama3-8b", "h100-sxm", "dgx-h100", "tp=8,cp=2,pp=2,dp=2,mbs=1,gbs=16", 100},
    {"mixtral-8x7b", "h100-sxm", "dgx-h100", "tp=2,ep=8,dp=16,pp=2,mbs=1,gbs=256", 0},
    {"mixtral-8x7b", "h100-sxm", "dgx-h100", "tp=2,ep=4,dp=8,zero=1,mbs=1,gbs=64", 50},
    {"resnet50", "v100-16gb", "dgx1-v100-edr", "dp=32,mbs=128,precision=fp32", 0},
    {"resnet50", "h100-sxm", "dgx-h100", "dp=16,pp=2,mbs=64,gbs=4096", 0},
    {"bert-large", "a100-80gb", "dgx-a100", "tp=2,pp=2,dp=8,mbs=8,gbs=512,zero=2", 0},
};

#define NVAL 14

static int load(const struct dcase *c, struct cs_workload **w, struct cs_gpu *g,
                struct cs_topology *t, struct cs_plan *p, struct cs_compute *comp,
                struct cs_error *err) {
  char path[4096];
  if (cs_plan_parse(c->plan, p, err) != CS_OK) return -1;
  if (cs_datadir_find("workloads", "model/workloads", c->workload, NULL, path, sizeof path, err) ||
      cs_workload_load(path, w, err))
    return -1;
  if (cs_datadir_find("gpus", "model/gpus", c->gpu, NULL, path, sizeof path, err) ||
      cs_gpu_load(path, g, err) || cs_topo_find(c->topology, path, sizeof path, err) ||
      cs_topo_load(path, t, err) || cs_compute_init(comp, g, p->precision, err))
    return -1;
  if (c->nic_gbps > 0) t->net.nic_bw = c->nic_gbps * 1e9 / 8;
  return 0;
}

static void values(const struct cs_sim_result *r, double *v) {
  const double x[NVAL] = {r->step,       r->step_lo,     r->step_hi,        r->part.compute,
                          r->part.tp,    r->part.cp,     r->part.ep,        r->part.dp,
                          r->part.pp,    r->part.bubble, r->part.optimizer, (double)r->stage,
                          r->comm_bytes, r->mfu};
  memcpy(v, x, sizeof x);
}

int main(int argc, char **argv) {
  FILE *ref = NULL;
  const char *refpath = NULL, *calpath = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--check") == 0 && i + 1 < argc)
      refpath = argv[++i];
    else if (strcmp(argv[i], "--cal") == 0 && i + 1 < argc)
      calpath = argv[++i];
    else {
      fprintf(stderr, "usage: sim_dump [--cal CAL] [--check FILE]\n");
      return 2;
    }
  }
  if (refpath && !(ref = fopen(refpath, "r"))) {
    fprintf(stderr, "sim_dump: cannot open %s\n", refpath);
    return 2;
  }
  struct cs_cal cal;
  cs_cal_init(&cal);
  struct cs_sim_cache *cache = NULL;
  struct cs_error err = {0};
  if (calpath && cs_calfile_read(calpath, &cal, &err) != CS_OK) {
    fprintf(stderr, "sim_dump: %s\n", err.msg);
    return 1;
  }
  if (cs_sim_cache_alloc(&cache, &err) != CS_OK) return 1;
  int bad = 0, lines = 0;
  double worst = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (int mode = 0; mode < 3; mode++) { /* run, run_step, run through the shared cache */
      const struct dcase *c = &cases[i];
      struct cs_workload *w = NULL;
      struct cs_gpu g;
      struct cs_topology t;
      struct cs_plan p;
      struct cs_compute comp;
      double v[NVAL] = {0};
      char status[256] = "ok";
      if (load(c, &w, &g, &t, &p, &comp, &err) == 0) {
        struct cs_sim_inputs in = {w, &p, &comp, &t, &cal, CS_SIM_DEFAULT_INTERFERENCE, NULL};
        struct cs_sim *s = NULL;
        if (cs_sim_alloc_cached(&in, mode == 2 ? cache : NULL, &s, &err) == CS_OK) {
          struct cs_sim_result r;
          if (mode == 1)
            cs_sim_run_step(s, &r);
          else
            cs_sim_run(s, &r);
          values(&r, v);
          cs_sim_free(s);
        } else
          snprintf(status, sizeof status, "error");
      } else
        snprintf(status, sizeof status, "error");
      cs_workload_free(w);
      char line[2048];
      int n = snprintf(line, sizeof line, "%zu %d %s", i, mode, status);
      for (int k = 0; k < NVAL; k++)
        n += snprintf(line + n, sizeof line - (size_t)n, " %.17g", v[k]);
      lines++;
      if (!ref) {
        printf("%s\n", line);
        continue;
      }
      char old[2048];
      if (!fgets(old, sizeof old, ref)) {
        fprintf(stderr, "sim_dump: %s ends early\n", refpath);
        return 1;
      }
      size_t ci;
      int cm;
      char ost[64];
      double o[NVAL];
      char *q = old;
      int used = 0;
      if (sscanf(q, "%zu %d %63s%n", &ci, &cm, ost, &used) != 3 || ci != i || cm != mode) {
        fprintf(stderr, "sim_dump: %s line %d does not match case %zu mode %d\n", refpath, lines, i,
                mode);
        return 1;
      }
      q += used;
      for (int k = 0; k < NVAL; k++)
        o[k] = strtod(q, &q);
      int differs = strcmp(ost, status) != 0;
      double scale_step = fmax(fabs(o[0]), fabs(v[0]));
      for (int k = 0; k < NVAL; k++) {
        double scale = fmax(fmax(fabs(o[k]), fabs(v[k])), k < 11 ? scale_step : 0);
        double d = scale > 0 ? fabs(v[k] - o[k]) / scale : 0;
        if (d > worst) worst = d;
        if (d > 1e-12) differs = 1;
      }
      if (differs) {
        bad++;
        printf("DIFF case %zu (%s %s) mode %d:\n  old %s  new %s\n", i, c->workload, c->plan, mode,
               old, line);
      }
    }
  }
  cs_sim_cache_free(cache);
  cs_cal_fini(&cal);
  if (ref) {
    printf("sim_dump: %d results compared, %d differ by more than 1e-12; largest relative "
           "difference %.3g\n",
           lines, bad, worst);
    fclose(ref);
  }
  return bad ? 1 : 0;
}
