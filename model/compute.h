/* compute.h — how long a layer's kernels take on one GPU.
 *
 * Each forward kernel of struct cs_layer_cost is costed by a roofline:
 *
 *   t = max(flops / (peak * eff), bytes / (hbm_bw * mem_efficiency)) + kernel_overhead
 *
 * where peak is the GPU's dense peak at the plan's precision (attention stays at bf16/fp16 under
 * fp8) and eff depends on the GEMM's shape. The default curve is
 *
 *   eff(m, n, k) = gemm_efficiency * x / (x + gemm_half_dim),   x = min(m, n, k)
 *
 * (large square GEMMs approach gemm_efficiency; a thin dimension, such as attention's head size
 * or a small micro-batch, lowers it). Measured GEMM efficiencies replace the curve: the point
 * nearest in log(m), log(n), log(k) is used. Backward runs two GEMMs per forward GEMM (input and
 * weight gradients, with the shapes transposed accordingly), twice the traffic of each memory
 * kernel, and 2.5 times a fused attention kernel (it recomputes the scores).
 *
 * A measured single-GPU time overrides the model: cs_compute_calibrate scales every layer's time
 * so that the modelled micro-batch equals the measurement, i.e. splits the measured time over the
 * layers in proportion to the model.
 */
#ifndef CS_COMPUTE_H
#define CS_COMPUTE_H

#include <stddef.h>

#include "gemm_point.h"
#include "gpu.h"
#include "plan.h"
#include "status.h"
#include "workload.h"

struct cs_compute {
  struct cs_gpu gpu;                 /* a copy */
  int precision;                     /* enum cs_precision */
  double peak;                       /* FLOP/s of the linear layers at that precision */
  double peak_attn;                  /* FLOP/s of attention (bf16/fp16 under fp8) */
  double elem_bytes;                 /* bytes per GEMM operand element */
  const struct cs_gemm_point *table; /* borrowed; NULL = the default curve */
  size_t ntable;
  double scale; /* 1, or measured / modelled after cs_compute_calibrate */
};

/* Times for one layer and one micro-batch, seconds. recompute: the forward work re-run during
 * backward under the plan's recomputation (and no more). */
struct cs_layer_time {
  double fwd, bwd, recompute;
};

/* Prepares c for GPU g at precision prec. CS_ERR_UNSUPPORTED when g has no peak for it
 * ("v100-16gb has no bf16 tensor cores"). */
enum cs_status cs_compute_init(struct cs_compute *c, const struct cs_gpu *g, int prec,
                               struct cs_error *err);

/* Uses measured efficiencies (n points, borrowed: they must outlive c); n == 0 restores the
 * default curve. */
void cs_compute_set_gemm_table(struct cs_compute *c, const struct cs_gemm_point *pts, size_t n);

/* The efficiency of an m x n x k GEMM (a dimension of 0 means "unknown, large"). */
double cs_compute_gemm_efficiency(const struct cs_compute *c, double m, double n, double k);

/* The time of one forward kernel (backward = 0) or of its backward (backward = 1). */
double cs_compute_op_time(const struct cs_compute *c, const struct cs_op *op, int backward);

/* The times of one layer (scaled by c->scale). */
void cs_compute_layer_time(const struct cs_compute *c, const struct cs_layer_cost *lc,
                           struct cs_layer_time *t);

/* The compute of one micro-batch under p on one GPU of pipeline stage `stage` (-1: every layer,
 * as one GPU holding the whole model would run them). per_layer (may be NULL) receives w->nlayer
 * entries, zero for layers on other stages; *sum the totals. */
enum cs_status cs_compute_microbatch(const struct cs_compute *c, const struct cs_workload *w,
                                     const struct cs_plan *p, int stage,
                                     struct cs_layer_time *per_layer, struct cs_layer_time *sum,
                                     struct cs_error *err);

/* Sets c->scale so that one micro-batch of w under p (normally a single-GPU plan) takes
 * measured_s (forward + backward + recomputation). CS_ERR_RANGE for a non-positive measurement. */
enum cs_status cs_compute_calibrate(struct cs_compute *c, const struct cs_workload *w,
                                    const struct cs_plan *p, double measured_s,
                                    struct cs_error *err);

#endif
