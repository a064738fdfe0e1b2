/* memory.c — memory per GPU; see memory.h.
 *
 * One pass over the layers accumulates, per pipeline stage, the parameters (dense and expert),
 * the largest layer and the saved activations of one micro-batch; the schedule then says how
 * many micro-batches each stage holds.
 */
#include "memory.h"

#include <math.h>

#include "framework.h"
#include <stdlib.h>
#include <string.h>

#define GIB 1073741824.0

struct stage_sum {
  double dense, expert, largest, act, act_head, loss;
};

/* Transformer Engine keeps an FP8 copy of each weight and of its transpose for the FP8 GEMMs of
 * forward and backward (transformer_engine/pytorch/module/linear.py, v1.x: the cached
 * weight_fp8 and weight_t_fp8 of is_first_microbatch): 2 bytes per parameter. */
#define FP8_COPY_BYTES 2.0

/* torch.autocast's cached 16-bit copy of a 32-bit weight: 2 bytes per parameter. */
#define AUTOCAST_COPY_BYTES 2.0

static double inflight(const struct cs_plan *p, int s) {
  double m = (double)cs_plan_microbatches(p);
  if (p->vpp <= 1) return fmin((double)(p->pp - s), m);
  double units = 2.0 * (p->pp - s - 1) + (double)(p->vpp - 1) * p->pp + 1;
  return fmin(units, m * p->vpp) / p->vpp;
}

static void finish(const struct cs_plan *p, const struct cs_framework *f, int s,
                   const struct stage_sum *ss, struct cs_memory *m) {
  double wb, gb, ob;
  cs_plan_param_bytes(p, &wb, &gb, &ob);
  double ndp = (double)cs_plan_group_size(p, CS_GROUP_DP);
  double nedp = (double)cs_plan_group_size(p, CS_GROUP_EDP);
  /* parameters as the ZeRO stage leaves them on one GPU */
  double sharded = ss->dense / ndp + ss->expert / nedp, whole = ss->dense + ss->expert;
  memset(m, 0, sizeof *m);
  m->stage = s;
  m->params = whole;
  m->weights = wb * (p->zero >= 3 ? sharded : whole);
  if (p->precision == CS_PREC_FP8) m->weights += FP8_COPY_BYTES * (p->zero >= 3 ? sharded : whole);
  /* 16-bit compute over 32-bit weights (autocast): the 16-bit copy of every weight is cached
   * for the forward and saved for backward (torch.autocast, cache_enabled=True by default) */
  double cast = 0;
  if ((p->precision == CS_PREC_FP16 || p->precision == CS_PREC_BF16) && wb >= 4 && p->zero < 3)
    cast = AUTOCAST_COPY_BYTES * whole;
  m->weights += cast;
  m->grads = gb * (p->zero >= 2 ? sharded : whole);
  m->optimizer = ob * (p->zero >= 1 ? sharded : whole);
  m->inflight = inflight(p, s);
  m->act_microbatch = ss->act + ss->act_head;
  m->activations = ss->act * m->inflight + ss->act_head;
  if (p->zero >= 3 && ndp > 1 && !f->reshard_after_forward)
    m->temp = wb * whole; /* every gathered weight held from forward to backward */
  else if (p->zero >= 3 && ndp > 1)
    m->temp = 2 * wb * ss->largest;
  else if (ndp > 1 && p->zero == 0 && p->dp_mode == CS_DP_DDP && !f->bucket_view)
    m->temp = gb * whole; /* DDP's buckets hold a copy of every gradient */
  else if (ndp > 1)
    m->temp = 2 * fmin(p->bucket, gb * whole);
  m->temp += ss->loss;
  m->reserve = p->reserve;
  m->total = m->weights + m->grads + m->optimizer + m->activations + m->temp + m->reserve;
  if (f->grads_freed && cs_plan_microbatches(p) == 1) {
    /* gradients freed after each step: at the end of forward the weights, their 16-bit copies
     * and the activations are held, no gradient; backward frees copies and activations layer by
     * layer as it makes the gradients, so its end holds the weights and every gradient instead.
     * With several micro-batches per step the first backward's gradients are held through the
     * later forwards: the sum stands */
    double fwd = m->weights + m->activations, bwd = m->weights - cast + m->grads;
    m->total = fmax(fwd, bwd) + m->optimizer + m->temp + m->reserve;
  }
}

static enum cs_status sum_stages(const struct cs_workload *w, const struct cs_plan *p,
                                 int fp32_logits, struct stage_sum *ss, struct cs_error *err) {
  struct cs_layer_cost c;
  for (size_t i = 0; i < w->nlayer; i++) {
    enum cs_status st = cs_workload_layer_cost(w, p, i, &c, err);
    if (st != CS_OK) return st;
    struct stage_sum *s = &ss[cs_workload_layer_stage(w, p, i)];
    s->dense += c.params - c.params_expert;
    s->expert += c.params_expert;
    if (c.params > s->largest) s->largest = c.params;
    if (w->layer[i].type == CS_LAYER_HEAD) {
      s->act_head += c.act_bytes;
      /* the loss's backward: the gradient of the saved fp32 log-softmax output and the one of
       * its fp32 input, alive at once beside the saved output (the head's activations): 8 bytes
       * per logit above the forward's end on every shape of tests/data/h100-compute/
       * saved_bytes.csv */
      if (fp32_logits && cs_workload_is_transformer(w))
        s->loss += (double)p->mbs * w->seq / p->cp * w->vocab / p->tp * 8.0;
    } else
      s->act += c.act_bytes;
  }
  return CS_OK;
}

enum cs_status cs_memory_stage(const struct cs_workload *w, const struct cs_plan *p, int stage,
                               struct cs_memory *m, struct cs_error *err) {
  if (stage < 0 || stage >= p->pp)
    return cs_error_set(err, CS_ERR_RANGE, "pipeline stage %d does not exist (pp=%d)", stage,
                        p->pp);
  struct cs_framework fw;
  struct cs_plan q = *p;
  enum cs_status st = cs_framework_find(p->framework, NULL, &fw, err);
  if (st != CS_OK) return st;
  cs_framework_apply(&fw, &q);
  p = &q;
  struct stage_sum *ss = calloc((size_t)p->pp, sizeof *ss);
  if (ss == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  st = sum_stages(w, p, fw.fp32_logits, ss, err);
  if (st == CS_OK) finish(p, &fw, stage, &ss[stage], m);
  free(ss);
  return st;
}

enum cs_status cs_memory_estimate(const struct cs_workload *w, const struct cs_plan *p,
                                  const struct cs_gpu *g, struct cs_memory *m,
                                  struct cs_error *err) {
  struct cs_framework fw;
  struct cs_plan q = *p;
  enum cs_status st = cs_framework_find(p->framework, NULL, &fw, err);
  if (st != CS_OK) return st;
  cs_framework_apply(&fw, &q);
  p = &q;
  struct stage_sum *ss = calloc((size_t)p->pp, sizeof *ss);
  if (ss == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  st = sum_stages(w, p, fw.fp32_logits, ss, err);
  if (st == CS_OK) {
    struct cs_memory best, cur;
    for (int s = 0; s < p->pp; s++) {
      finish(p, &fw, s, &ss[s], &cur);
      if (s == 0 || cur.total > best.total) best = cur;
    }
    *m = best;
    m->capacity = g ? g->memory : 0;
  }
  free(ss);
  return st;
}

int cs_memory_fits(const struct cs_memory *m) {
  return m->capacity <= 0 || m->total <= m->capacity;
}

enum cs_status cs_memory_check(const struct cs_memory *m, const char *gpu_name,
                               struct cs_error *err) {
  if (cs_memory_fits(m)) return CS_OK;
  return cs_error_set(err, CS_ERR_RANGE,
                      "does not fit: needs %.1f GiB per GPU on pipeline stage %d but %s has %.1f "
                      "GiB (weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f for "
                      "%.3g micro-batch%s in flight, temporary %.1f, reserve %.1f GiB)",
                      m->total / GIB, m->stage, gpu_name ? gpu_name : "the GPU", m->capacity / GIB,
                      m->weights / GIB, m->grads / GIB, m->optimizer / GIB, m->activations / GIB,
                      m->inflight, m->inflight == 1 ? "" : "es", m->temp / GIB, m->reserve / GIB);
}
