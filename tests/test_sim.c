/* test_sim.c — the step simulator: schedule properties, monotonicity, the bucket latency effect,
 * error paths, and the validation cases of validation/sim_cases.h printed as predicted vs
 * published with their error.
 *
 * Properties (issue acceptance 4): the bubble of uniform stages without transfers equals
 * (p - 1) / (m + p - 1) (1F1B) and shrinks by v under interleaving; more network bandwidth never
 * slows a step; doubling nodes at a fixed per-GPU batch never lowers throughput when the
 * communication is hidden.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calfile.h"
#include "compute.h"
#include "datadir.h"
#include "gpu.h"
#include "pipeline.h"
#include "plan.h"
#include "step.h"
#include "testutil.h"
#include "topology.h"
#include "validation/sim_cases.h"
#include "workload.h"

#define VALIDATION_DIR CS_TEST_DATA "/../validation"

/* Everything one prediction needs, loaded by name. */
struct setup {
  struct cs_workload *w;
  struct cs_gpu gpu;
  struct cs_topology topo;
  struct cs_cal cal;
  struct cs_compute comp;
  struct cs_plan plan;
};

static void setup_load(struct setup *s, const char *wl, const char *gpu, const char *topo,
                       const char *plan) {
  char path[4096];
  struct cs_error err = {0};
  memset(s, 0, sizeof *s);
  cs_cal_init(&s->cal);
  if (cs_datadir_find("workloads", "model/workloads", wl, NULL, path, sizeof path, &err) != CS_OK ||
      cs_workload_load(path, &s->w, &err) != CS_OK)
    fail_msg("%s", err.msg);
  if (cs_datadir_find("gpus", "model/gpus", gpu, NULL, path, sizeof path, &err) != CS_OK ||
      cs_gpu_load(path, &s->gpu, &err) != CS_OK)
    fail_msg("%s", err.msg);
  if (strstr(topo, ".yaml")) snprintf(path, sizeof path, "%s/%s", VALIDATION_DIR, topo);
  else if (cs_topo_find(topo, path, sizeof path, &err) != CS_OK) fail_msg("%s", err.msg);
  if (cs_topo_load(path, &s->topo, &err) != CS_OK) fail_msg("%s", err.msg);
  if (cs_plan_parse(plan, &s->plan, &err) != CS_OK) fail_msg("%s", err.msg);
  if (cs_compute_init(&s->comp, &s->gpu, s->plan.precision, &err) != CS_OK) fail_msg("%s", err.msg);
}

static void setup_fini(struct setup *s) {
  cs_workload_free(s->w);
  cs_cal_fini(&s->cal);
}

static struct cs_sim_inputs inputs(struct setup *s) {
  return (struct cs_sim_inputs){s->w, &s->plan, &s->comp, &s->topo, &s->cal,
                                CS_SIM_DEFAULT_INTERFERENCE};
}

static struct cs_sim_result predict(struct setup *s) {
  struct cs_error err = {0};
  struct cs_sim_result r;
  struct cs_sim_inputs in = inputs(s);
  if (cs_sim_predict(&in, &r, &err) != CS_OK) fail_msg("%s", err.msg);
  return r;
}

/* ---- the pipeline schedule ---------------------------------------------------------------- */

static void check_bubble(int pp, int v, long m) {
  struct cs_sim_pipe *p = NULL;
  struct cs_error err = {0};
  assert_int_equal(cs_sim_pipe_alloc(pp, v, m, &p, &err), CS_OK);
  double f[256], b[256];
  struct cs_sim_pipe_stage st[64];
  for (int i = 0; i < pp * v; i++) f[i] = 1.0 / v, b[i] = 2.0 / v; /* a stage: fwd 1, bwd 2 */
  double end = cs_sim_pipe_run(p, f, b, 0, st, NULL);
  /* every stage busy m * 3; the first stage idles (p - 1) * 3 / v */
  assert_close(end, m * 3.0 + (pp - 1) * 3.0 / v, 1e-12);
  if (v == 1) assert_close(st[0].idle / end, (pp - 1.0) / (m + pp - 1.0), 1e-12);
  for (int s = 0; s < pp; s++) assert_close(st[s].busy, m * 3.0, 1e-12);
  cs_sim_pipe_free(p);
}

static void test_pipe_bubble(void **state) {
  (void)state;
  check_bubble(1, 1, 1);
  check_bubble(4, 1, 8);
  check_bubble(8, 1, 3); /* fewer micro-batches than stages */
  check_bubble(4, 2, 8);
  check_bubble(8, 3, 16);
}

static void test_pipe_transfers(void **state) {
  (void)state;
  struct cs_sim_pipe *p = NULL;
  assert_int_equal(cs_sim_pipe_alloc(4, 1, 1, &p, NULL), CS_OK);
  double f[4] = {1, 1, 1, 1}, b[4] = {2, 2, 2, 2};
  struct cs_sim_pipe_stage st[4];
  /* one micro-batch: 4 forwards, 4 backwards and 6 transfers in a chain */
  assert_close(cs_sim_pipe_run(p, f, b, 0.5, st, NULL), 4 + 8 + 6 * 0.5, 1e-12);
  cs_sim_pipe_free(p);
  struct cs_error err = {0};
  assert_int_equal(cs_sim_pipe_alloc(4, 2, 6, &p, &err), CS_ERR_USAGE);
  assert_null(p);
  assert_non_null(strstr(err.msg, "multiple of pp"));
  assert_int_equal(cs_sim_pipe_alloc(0, 1, 6, &p, &err), CS_ERR_USAGE);
}

/* A pipeline run through the simulator: the bubble it reports is the schedule's. */
static void test_step_bubble(void **state) {
  (void)state;
  struct setup s;
  setup_load(&s, "megatron-1t", "a100-80gb", "dgx-a100", "tp=8,pp=64,mbs=1,gbs=512,recompute=full");
  struct cs_sim_result r = predict(&s);
  double parts = r.part.compute + r.part.tp + r.part.cp + r.part.ep + r.part.dp + r.part.pp +
                 r.part.bubble + r.part.optimizer;
  assert_close(parts, r.step, 1e-9);
  /* 128 layers on 64 stages, the embedding on the first and the head on the last: stages are not
   * uniform, so the bubble is at least (p-1)/(m+p-1) of the pipeline's time, and the head's
   * extra work on the last stage adds less than as much again */
  double frac = r.part.bubble / (r.step - r.part.optimizer - r.part.dp);
  assert_true(frac >= 63.0 / (512 + 63) * (1 - 1e-9));
  assert_true(frac <= 2 * 63.0 / (512 + 63));
  assert_true(r.step_lo <= r.step && r.step <= r.step_hi);
  setup_fini(&s);
}

/* ---- properties --------------------------------------------------------------------------- */

static void test_more_bandwidth_never_slower(void **state) {
  (void)state;
  static const char *plans[] = {"dp=64,zero=3,mbs=1,gbs=256", "tp=8,pp=2,dp=4,zero=1,mbs=1,gbs=256",
                                "dp=64,mbs=1,gbs=64,bucket=4MiB"};
  for (size_t k = 0; k < sizeof plans / sizeof plans[0]; k++) {
    struct setup s;
    setup_load(&s, "gpt3-6.7b", "h100-sxm", "dgx-h100", plans[k]);
    double prev = INFINITY;
    for (double gbps = 25; gbps <= 3200; gbps *= 2) {
      s.topo.net.nic_bw = gbps * 1e9 / 8;
      struct cs_sim_result r = predict(&s);
      assert_true(r.step <= prev * (1 + 1e-12));
      prev = r.step;
    }
    setup_fini(&s);
  }
}

static void test_hidden_comm_scales(void **state) {
  (void)state;
  struct setup s;
  setup_load(&s, "resnet50", "h100-sxm", "dgx-h100", "mbs=256");
  double prev = 0;
  for (int nodes = 1; nodes <= 64; nodes *= 2) {
    s.plan.dp = nodes * 8;
    s.plan.gbs = 0;
    struct cs_sim_result r = predict(&s);
    assert_true(r.samples_per_s >= prev);
    prev = r.samples_per_s;
  }
  setup_fini(&s);
}

/* The bucket size trades latency for overlap: thousands of tiny buckets pay a latency each, one
 * bucket of all gradients cannot start before backward ends; 25 MiB beats both. */
static void test_bucket_latency(void **state) {
  (void)state;
  struct setup s;
  setup_load(&s, "gpt2-1.5b", "v100-32gb", "dgx1-v100-edr", "dp=32,mbs=4,precision=fp16");
  double t[3];
  const double bucket[3] = {64 * 1024.0, 25 * 1048576.0, 8 * 1073741824.0};
  for (int i = 0; i < 3; i++) {
    s.plan.bucket = bucket[i];
    struct cs_sim_result r = predict(&s);
    t[i] = r.step;
    print_message("bucket %.0f B: step %.4f s, exposed dp %.4f s\n", bucket[i], r.step, r.part.dp);
  }
  assert_true(t[0] > t[1] * 1.02);
  assert_true(t[2] > t[1] * 1.02);
  s.plan.overlap_grad = 0; /* no overlap is no better than one huge bucket */
  struct cs_sim_result r = predict(&s);
  assert_true(r.step >= t[1]);
  setup_fini(&s);
}

/* ZeRO-3 moves 1.5x the data of plain data parallelism and needs the network (VALIDATION.md
 * section 7): at 64 GPUs its efficiency climbs with the network speed and 100 Gb/s per node is
 * markedly worse than 800. */
static void test_zero3_network(void **state) {
  (void)state;
  struct setup s;
  setup_load(&s, "gpt3-6.7b", "v100-32gb", "dgx1-v100-edr", "dp=64,zero=3,mbs=1,gbs=64,precision=fp16");
  s.topo.net.nodes = 0;
  double eff[4];
  const double gbps[4] = {100, 200, 400, 800};
  struct cs_error err = {0};
  for (int i = 0; i < 4; i++) {
    s.topo.net.nic_bw = gbps[i] * 1e9 / 8;
    struct cs_sim_result r = predict(&s);
    double one;
    assert_int_equal(cs_sim_single_gpu(s.w, &s.plan, &s.comp, &one, &err), CS_OK);
    eff[i] = r.samples_per_s / one / 64;
    print_message("ZeRO-3 6.7B on 64 V100, %4.0f Gb/s per node: scaling efficiency %.1f%%\n",
                  gbps[i], 100 * eff[i]);
    if (i) assert_true(eff[i] >= eff[i - 1]);
  }
  assert_true(eff[0] < 0.8 * eff[3]);
  setup_fini(&s);
}

/* ---- error paths -------------------------------------------------------------------------- */

static void test_errors(void **state) {
  (void)state;
  struct setup s;
  setup_load(&s, "gpt3-175b", "h100-sxm", "dgx-h100", "tp=8,pp=8,dp=2,mbs=1,gbs=64");
  struct cs_sim *sim = NULL;
  struct cs_error err = {0};
  struct cs_sim_inputs in = inputs(&s);
  in.interference = 0.5;
  assert_int_equal(cs_sim_alloc(&in, &sim, &err), CS_ERR_USAGE);
  assert_null(sim);
  assert_non_null(strstr(err.msg, "interference"));
  in = inputs(&s);
  in.topology = NULL;
  assert_int_equal(cs_sim_alloc(&in, &sim, &err), CS_ERR_USAGE);
  s.plan.tp = 7; /* 96 heads do not divide by 7 */
  in = inputs(&s);
  assert_int_equal(cs_sim_alloc(&in, &sim, &err), CS_ERR_USAGE);
  s.plan.tp = 8;
  s.plan.bucket = 0;
  assert_int_equal(cs_sim_alloc(&in, &sim, &err), CS_ERR_USAGE);
  s.plan.bucket = 25 * 1048576.0;
  s.plan.vpp = 3;
  s.plan.gbs = 2 * 12; /* 12 micro-batches: not a multiple of pp = 8 */
  assert_int_equal(cs_sim_alloc(&in, &sim, &err), CS_ERR_USAGE);
  setup_fini(&s);
  /* more nodes than the cluster has */
  setup_load(&s, "resnet50", "v100-16gb", "dgx1-v100-edr", "dp=64,mbs=32,precision=fp32");
  in = inputs(&s);
  assert_int_equal(cs_sim_alloc(&in, &sim, &err), CS_ERR_RANGE);
  assert_null(sim);
  setup_fini(&s);
  cs_sim_free(NULL);
  cs_sim_pipe_free(NULL);
}

/* ---- validation --------------------------------------------------------------------------- */

static double case_value(const struct sim_case *c, double *pred) {
  struct setup s;
  setup_load(&s, c->workload, c->gpu, c->topology, c->plan);
  struct cs_error err = {0};
  long mp = (long)s.plan.tp * s.plan.pp * s.plan.cp;
  s.plan.dp = (int)(c->gpus / mp);
  if (c->mb_time > 0) {
    struct cs_plan one = s.plan;
    one.dp = one.tp = one.pp = one.vpp = one.cp = one.ep = 1;
    one.gbs = 0, one.zero = 0, one.sp = 0;
    if (cs_compute_calibrate(&s.comp, s.w, &one, c->mb_time, &err) != CS_OK) fail_msg("%s", err.msg);
  }
  struct cs_sim_result r = predict(&s);
  double v = 0;
  if (c->metric == SIM_HW_TFLOPS) v = r.hw_tflops_per_gpu;
  else if (c->metric == SIM_STEP) v = r.step;
  else {
    double one;
    if (cs_sim_single_gpu(s.w, &s.plan, &s.comp, &one, &err) != CS_OK) fail_msg("%s", err.msg);
    v = r.samples_per_s / one;
  }
  setup_fini(&s);
  *pred = v;
  return (v - c->published) / c->published;
}

static void test_validation(void **state) {
  (void)state;
  double sum = 0, worst = 0;
  int n = 0, failed = 0;
  print_message("%-3s %-42s %12s %12s %8s %6s\n", "sec", "case", "predicted", "published", "error",
                "tol");
  for (size_t i = 0; i < sizeof sim_dlperf / sizeof sim_dlperf[0]; i++) {
    const struct sim_dlperf *d = &sim_dlperf[i];
    static const int gpus[3] = {8, 16, 32};
    char plan[128], name[96];
    snprintf(plan, sizeof plan, "%s,mbs=%.0f", d->plan, d->batch);
    for (int k = 0; k < 3; k++) {
      snprintf(name, sizeof name, "%s %s %s %d GPUs", d->workload,
               strstr(d->plan, "fp16") ? "AMP" : "FP32", d->framework, gpus[k]);
      struct sim_case c = {"2", name, d->workload, "v100-16gb", "dgx1-v100-edr", plan, gpus[k],
                           d->batch / d->thr[0], SIM_SPEEDUP, d->thr[k + 1] / d->thr[0], d->tol};
      double pred, e = case_value(&c, &pred);
      print_message("%-3s %-42s %12.4g %12.4g %+7.1f%% %5.0f%%%s\n", c.section, c.name, pred,
                    c.published, 100 * e, 100 * c.tol, fabs(e) > c.tol ? "  FAIL" : "");
      failed += fabs(e) > c.tol;
      sum += fabs(e), n++;
      if (fabs(e) > worst) worst = fabs(e);
    }
  }
  for (size_t i = 0; i < sizeof sim_cases / sizeof sim_cases[0]; i++) {
    const struct sim_case *c = &sim_cases[i];
    double pred, e = case_value(c, &pred);
    print_message("%-3s %-42s %12.4g %12.4g %+7.1f%% %5.0f%%%s\n", c->section, c->name, pred,
                  c->published, 100 * e, 100 * c->tol, fabs(e) > c->tol ? "  FAIL" : "");
    failed += fabs(e) > c->tol;
    sum += fabs(e), n++;
    if (fabs(e) > worst) worst = fabs(e);
  }
  print_message("%d cases: mean |error| %.1f%%, max %.1f%%\n", n, 100 * sum / n, 100 * worst);
  /* section 6: whatever the magnitude, NVLink must make the step faster */
  double nv, off;
  case_value(&sim_cases[sizeof sim_cases / sizeof sim_cases[0] - 2], &nv);
  case_value(&sim_cases[sizeof sim_cases / sizeof sim_cases[0] - 1], &off);
  assert_true(off > nv);
  assert_int_equal(failed, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pipe_bubble),
      cmocka_unit_test(test_pipe_transfers),
      cmocka_unit_test(test_step_bubble),
      cmocka_unit_test(test_more_bandwidth_never_slower),
      cmocka_unit_test(test_hidden_comm_scales),
      cmocka_unit_test(test_bucket_latency),
      cmocka_unit_test(test_zero3_network),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_validation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
