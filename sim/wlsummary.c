/* wlsummary.c — see wlsummary.h. */
#include "wlsummary.h"

#include <string.h>

#define GIB 1073741824.0

static void put(struct cs_wl_summary *o, const char *key, double value, const char *unit) {
  if (o->n < (int)(sizeof o->q / sizeof o->q[0]))
    o->q[o->n++] = (struct cs_quantity){key, value, unit};
}

/* The memory estimate's rows. */
static void put_memory(struct cs_wl_summary *o, const struct cs_memory *mem) {
  put(o, "stage", mem->stage, "fullest pipeline stage");
  put(o, "weights", mem->weights / GIB, "GiB");
  put(o, "grads", mem->grads / GIB, "GiB");
  put(o, "optimizer", mem->optimizer / GIB, "GiB");
  put(o, "activations", mem->activations / GIB, "GiB");
  put(o, "act_microbatch", mem->act_microbatch / GIB, "GiB");
  put(o, "inflight", mem->inflight, "micro-batches");
  put(o, "temp", mem->temp / GIB, "GiB");
  put(o, "reserve", mem->reserve / GIB, "GiB");
  put(o, "total", mem->total / GIB, "GiB");
  put(o, "capacity", mem->capacity / GIB, "GiB");
  put(o, "fits", cs_memory_fits(mem), "1 = yes");
}

enum cs_status cs_wl_summary(struct cs_scenario *s, const struct cs_plan *plan,
                             const char *gemm_path, double measured, struct cs_wl_summary *out,
                             struct cs_error *err) {
  memset(out, 0, sizeof *out);
  const struct cs_workload *w = s->workload;
  double model_flops, hw_flops;
  struct cs_layer_time mb;
  enum cs_status st = cs_workload_check_plan(w, plan, err);
  if (st == CS_OK) st = cs_workload_step_flops(w, plan, &model_flops, &hw_flops, err);
  if (st == CS_OK) st = cs_memory_estimate(w, plan, &s->gpu, &out->mem, err);
  if (st == CS_OK && gemm_path) st = cs_scenario_probes(s, gemm_path, 0, err);
  if (st == CS_OK && measured >= 0) st = cs_scenario_calibrate(s, measured, err);
  if (st == CS_OK) st = cs_compute_microbatch(&s->compute, w, plan, out->mem.stage, NULL, &mb, err);
  if (st != CS_OK) return st;
  long gpus = cs_plan_gpus(plan), micro = cs_plan_microbatches(plan);
  double mbt = mb.fwd + mb.bwd + mb.recompute;
  double samples = plan->gbs ? plan->gbs : (double)plan->mbs * plan->dp;
  put(out, "gpus", (double)gpus, "");
  put(out, "microbatches", (double)micro, "per step");
  put(out, "samples", samples, "per step");
  put(out, "tokens", cs_workload_is_transformer(w) ? samples * w->seq : 0, "per step");
  put(out, "params_total", cs_workload_params(w), "");
  put(out, "params_active", cs_workload_active_params(w), "per token");
  put(out, "params_per_gpu", out->mem.params, "");
  put(out, "model_flops", model_flops, "FLOP per step");
  put(out, "hw_flops", hw_flops, "FLOP per step");
  put(out, "model_flops_per_gpu", model_flops / gpus, "FLOP per step");
  put(out, "peak", s->compute.peak / 1e12, "TFLOP/s");
  put_memory(out, &out->mem);
  put(out, "fwd_time", mb.fwd * 1e3, "ms per micro-batch");
  put(out, "bwd_time", mb.bwd * 1e3, "ms per micro-batch");
  put(out, "recompute_time", mb.recompute * 1e3, "ms per micro-batch");
  put(out, "microbatch_time", mbt * 1e3, "ms");
  put(out, "compute_per_step", mbt * micro, "s (no comm, no bubble)");
  put(out, "compute_scale", s->compute.scale, "measured/modelled");
  return CS_OK;
}
