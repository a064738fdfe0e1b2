/* compute.c — roofline kernel times with a shape-dependent GEMM efficiency; see compute.h. */
#include "compute.h"

#include <math.h>
#include <string.h>

enum cs_status cs_compute_init(struct cs_compute *c, const struct cs_gpu *g, int prec,
                               struct cs_error *err) {
  memset(c, 0, sizeof *c);
  c->gpu = *g;
  c->precision = prec;
  c->peak = cs_gpu_peak(g, prec);
  if (!(c->peak > 0))
    return cs_error_set(err, CS_ERR_UNSUPPORTED,
                        "%s has no %s tensor cores (its peak is not given)", g->name,
                        cs_precision_name(prec));
  c->peak_attn = c->peak;
  if (prec == CS_PREC_FP8) {
    c->peak_attn = g->peak_bf16 > 0 ? g->peak_bf16 : g->peak_fp16;
    if (!(c->peak_attn > 0)) c->peak_attn = c->peak;
  }
  c->elem_bytes = prec == CS_PREC_FP32 || prec == CS_PREC_TF32 ? 4 : prec == CS_PREC_FP8 ? 1 : 2;
  c->scale = 1;
  return CS_OK;
}

void cs_compute_set_gemm_table(struct cs_compute *c, const struct cs_gemm_point *pts, size_t n) {
  c->table = n ? pts : NULL;
  c->ntable = n;
}

static double lg(double x) {
  return log(x > 1 ? x : 1);
}

double cs_compute_gemm_efficiency(const struct cs_compute *c, double m, double n, double k) {
  if (m <= 0 || n <= 0 || k <= 0) return c->gpu.gemm_efficiency;
  if (c->table) {
    double best = INFINITY, eff = c->gpu.gemm_efficiency;
    for (size_t i = 0; i < c->ntable; i++) {
      const struct cs_gemm_point *q = &c->table[i];
      double dm = lg(m) - lg(q->m), dn = lg(n) - lg(q->n), dk = lg(k) - lg(q->k);
      double dist = dm * dm + dn * dn + dk * dk;
      if (dist < best) best = dist, eff = q->efficiency;
    }
    return eff;
  }
  double x = fmin(m, fmin(n, k));
  return c->gpu.gemm_efficiency * x / (x + c->gpu.gemm_half_dim);
}

static double gemm_time(const struct cs_compute *c, const struct cs_op *op, double m, double n,
                        double k, double flops) {
  double peak = op->attention ? c->peak_attn : c->peak;
  double eff = cs_compute_gemm_efficiency(c, m, n, k);
  double bytes = op->bytes > 0 ? op->bytes : c->elem_bytes * (m * k + k * n + m * n) * op->batch;
  double tc = flops / (peak * eff);
  double tm = bytes / (c->gpu.hbm_bw * c->gpu.mem_efficiency);
  return fmax(tc, tm) + c->gpu.kernel_overhead;
}

double cs_compute_op_time(const struct cs_compute *c, const struct cs_op *op, int backward) {
  if (op->kind == CS_OP_MEMORY) {
    double t = op->bytes / (c->gpu.hbm_bw * c->gpu.mem_efficiency);
    return (backward ? 2 : 1) * t + c->gpu.kernel_overhead;
  }
  double f = gemm_time(c, op, op->m, op->n, op->k, op->flops);
  if (!backward) return f;
  if (op->fused) return 2.5 * (f - c->gpu.kernel_overhead) + c->gpu.kernel_overhead;
  /* input gradient: (m x n)(n x k); weight gradient: (k x m)(m x n) */
  return gemm_time(c, op, op->m, op->k, op->n, op->flops) +
         gemm_time(c, op, op->k, op->n, op->m, op->flops);
}

void cs_compute_layer_time(const struct cs_compute *c, const struct cs_layer_cost *lc,
                           struct cs_layer_time *t) {
  memset(t, 0, sizeof *t);
  double gemm_bwd = 0, other_bwd = 0;
  for (size_t i = 0; i < lc->nops; i++) {
    const struct cs_op *op = &lc->op[i];
    double f = cs_compute_op_time(c, op, 0);
    double b = cs_compute_op_time(c, op, 1);
    t->fwd += f;
    if (op->kind == CS_OP_GEMM)
      gemm_bwd += b;
    else
      other_bwd += b;
    if (lc->op_recompute[i]) t->recompute += f;
  }
  /* layers whose backward is not twice the forward (generic ones) scale their GEMM part */
  if (lc->fwd_flops > 0) gemm_bwd *= lc->bwd_flops / (2 * lc->fwd_flops);
  t->bwd = gemm_bwd + other_bwd;
  t->fwd *= c->scale;
  t->bwd *= c->scale;
  t->recompute *= c->scale;
}

enum cs_status cs_compute_microbatch(const struct cs_compute *c, const struct cs_workload *w,
                                     const struct cs_plan *p, int stage,
                                     struct cs_layer_time *per_layer, struct cs_layer_time *sum,
                                     struct cs_error *err) {
  enum cs_status st = cs_workload_check_plan(w, p, err);
  if (st != CS_OK) return st;
  memset(sum, 0, sizeof *sum);
  struct cs_layer_cost lc;
  for (size_t i = 0; i < w->nlayer; i++) {
    struct cs_layer_time t = {0, 0, 0};
    if (stage < 0 || cs_workload_layer_stage(w, p, i) == stage) {
      if ((st = cs_workload_layer_cost(w, p, i, &lc, err)) != CS_OK) return st;
      cs_compute_layer_time(c, &lc, &t);
    }
    if (per_layer) per_layer[i] = t;
    sum->fwd += t.fwd;
    sum->bwd += t.bwd;
    sum->recompute += t.recompute;
  }
  return CS_OK;
}

enum cs_status cs_compute_calibrate(struct cs_compute *c, const struct cs_workload *w,
                                    const struct cs_plan *p, double measured_s,
                                    struct cs_error *err) {
  if (!(measured_s > 0) || !isfinite(measured_s))
    return cs_error_set(err, CS_ERR_RANGE, "a measured step time must be positive, got %g s",
                        measured_s);
  c->scale = 1;
  struct cs_layer_time sum;
  enum cs_status st = cs_compute_microbatch(c, w, p, -1, NULL, &sum, err);
  if (st != CS_OK) return st;
  double model = sum.fwd + sum.bwd + sum.recompute;
  if (!(model > 0))
    return cs_error_set(err, CS_ERR_NUMERIC, "%s: the modelled micro-batch takes no time", w->name);
  c->scale = measured_s / model;
  return CS_OK;
}
