/* predict.c — see predict.h. */
#include "predict.h"

#include <stdlib.h>

#include "memory.h"

/* The plan of row x (dp filling its GPUs, gbs from accum), or 0 with the reason set. */
static int resolve_plan(const struct cs_predict_spec *sp, struct cs_predict_row *x,
                        struct cs_plan *plan) {
  *plan = sp->plans[x->pi];
  long mp = (long)plan->tp * plan->pp * plan->cp;
  if (!sp->fixed[x->pi]) {
    if (x->gpus % mp != 0) {
      snprintf(x->reason, sizeof x->reason, "%ld GPUs are not a multiple of tp*pp*cp = %ld",
               x->gpus, mp);
      return 0;
    }
    plan->dp = (int)(x->gpus / mp);
  } else if (cs_plan_gpus(plan) != x->gpus) {
    snprintf(x->reason, sizeof x->reason, "the plan occupies %ld GPUs, not %ld", cs_plan_gpus(plan),
             x->gpus);
    return 0;
  }
  x->dp = plan->dp;
  if (plan->gbs == 0 && sp->accum > 1) plan->gbs = (int)(plan->mbs * plan->dp * sp->accum);
  cs_plan_format(plan, x->plan, sizeof x->plan);
  return 1;
}

/* Costs row x: memory checks, then the step. CS_ERR_NOMEM fails the run; every other problem is
 * the row's reason. *sim is the simulator of a feasible row. */
static enum cs_status cost_row(struct cs_scenario *s, const struct cs_predict_spec *sp,
                               struct cs_predict_row *x, struct cs_plan *plan, struct cs_sim **sim,
                               struct cs_error *err) {
  struct cs_error e2 = {0};
  struct cs_memory mem;
  if (cs_workload_check_plan(s->workload, plan, &e2) != CS_OK ||
      cs_memory_estimate(s->workload, plan, &s->gpu, &mem, &e2) != CS_OK ||
      (!sp->ignore_memory && cs_memory_check(&mem, s->gpu.name, &e2) != CS_OK)) {
    if (e2.status == CS_ERR_NOMEM) return *err = e2, e2.status; /* the run fails */
    snprintf(x->reason, sizeof x->reason, "%s", e2.msg);
    return CS_OK;
  }
  x->mem_gib = mem.total / 1073741824.0;
  struct cs_sim_inputs in = cs_scenario_sim_inputs(s, plan);
  if (cs_sim_alloc(&in, sim, &e2) != CS_OK) {
    if (e2.status == CS_ERR_NOMEM) return *err = e2, e2.status;
    snprintf(x->reason, sizeof x->reason, "%s", e2.msg);
    return CS_OK;
  }
  cs_sim_run(*sim, &x->r);
  double one;
  if (cs_sim_single_gpu(s->workload, plan, &s->compute, &one, &e2) == CS_OK) {
    x->speedup = x->r.samples_per_s / one;
    x->efficiency = x->speedup / (double)x->gpus;
  }
  x->ok = 1;
  return CS_OK;
}

enum cs_status cs_predict_run(struct cs_scenario *s, const struct cs_predict_spec *sp,
                              cs_predict_first_fn first, void *ctx, struct cs_predict_row **rows,
                              size_t *n, struct cs_error *err) {
  size_t nn = sp->nnet ? sp->nnet : 1, nrec = 0;
  struct cs_predict_row *R = calloc((size_t)sp->nplan * sp->ncount * nn, sizeof *R);
  *rows = R, *n = 0;
  if (!R) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  struct cs_topology *topo = &s->topo;
  const double nic0 = topo->net.nic_bw;
  int firsted = 0;
  enum cs_status st = CS_OK;
  for (int pi = 0; st == CS_OK && pi < sp->nplan; pi++)
    for (size_t i = 0; st == CS_OK && i < sp->ncount; i++)
      for (size_t k = 0; st == CS_OK && k < nn; k++) {
        struct cs_predict_row *x = &R[nrec++];
        x->pi = pi;
        x->ni = (int)k;
        if (sp->nplan > 1) /* each row names its plan, even when rejected before it is resolved */
          snprintf(x->plan, sizeof x->plan, "%s", sp->texts[pi]);
        long gpn = topo->node.gpus, c = sp->counts[i];
        x->gpus = sp->by_gpus ? c : c * gpn;
        x->nodes = sp->by_gpus ? (c + gpn - 1) / gpn : c;
        x->net_gbps = sp->nnet ? (double)sp->nets[k] : topo->net.nic_bw * 8 / 1e9;
        topo->net.nic_bw = sp->nnet ? (double)sp->nets[k] * 1e9 / 8 : nic0;
        struct cs_plan plan;
        struct cs_sim *sim = NULL;
        if (!resolve_plan(sp, x, &plan)) continue;
        st = cost_row(s, sp, x, &plan, &sim, err);
        if (x->ok && !firsted++ && first) {
          struct cs_sim_inputs in = cs_scenario_sim_inputs(s, &plan);
          if (first(ctx, sim, &in, x)) sim = NULL; /* the caller took it */
        }
        cs_sim_free(sim);
      }
  *n = nrec;
  return st;
}
