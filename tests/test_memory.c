/* test_memory.c — memory per GPU against the published accounting.
 *
 *  - Activations per transformer layer, arXiv 2205.05198 (sequence parallelism and selective
 *    recomputation), Table 2 and section 4: sbh(34 + 5as/h) with no parallelism,
 *    sbh(10 + 24/t + 5as/(ht)) with tensor parallelism, sbh/t (34 + 5as/h) with sequence
 *    parallelism too, sbh(10 + 24/t) and 34 sbh/t with selective recomputation, 2sbh (/t with
 *    SP) with full recomputation; the first pipeline stage holds L layers' worth of micro-batches
 *    under 1F1B and (1 + (p-1)/(pm)) times that under the interleaved schedule.
 *  - Parameters and optimizer state, ZeRO paper (arXiv 1910.02054), section 5: 2Ψ + 2Ψ + KΨ with
 *    K = 12, the optimizer state divided by Nd under ZeRO-1, gradients too under ZeRO-2, weights
 *    too under ZeRO-3.
 * Expected values are computed here from those expressions, never from the code under test.
 */
#include <math.h>
#include <string.h>

#include "datadir.h"
#include "gpu.h"
#include "memory.h"
#include "plan.h"
#include "testmodel.h"
#include "testutil.h"
#include "workload.h"

static double block_act(const struct cs_workload *w, const char *plan) {
  struct cs_plan p;
  cs_test_plan(plan, &p);
  struct cs_layer_cost c;
  struct cs_error err = {0};
  if (cs_workload_layer_cost(w, &p, 1, &c, &err) != CS_OK) fail_msg("%s", err.msg);
  return c.act_bytes;
}

/* The 22B model of arXiv 2205.05198 with two layers: GPT blocks with dropout and unfused
 * attention, as that paper's accounting assumes. */
static const char *gpt22 =
    "version: 1\nname: g\ntype: decoder\nlayers: 2\nhidden: 6144\nheads: 64\nvocab: 51200\n"
    "seq: 2048\nmax_positions: 2048\ntied_embeddings: true\nbias: true\ndropout: true\n";

static void activations_per_layer(void **state) {
  (void)state;
  struct cs_workload *w = NULL;
  struct cs_error err = {0};
  assert_int_equal(cs_workload_load_string(gpt22, "g.yaml", &w, &err), CS_OK);
  const double s = 2048, b = 4, h = 6144, a = 64, t = 8, sbh = s * b * h;
  assert_close(block_act(w, "mbs=4"), sbh * (34 + 5 * a * s / h), 0.01);
  assert_close(block_act(w, "mbs=4,tp=8"), sbh * (10 + 24 / t + 5 * a * s / (h * t)), 0.01);
  assert_close(block_act(w, "mbs=4,tp=8,sp=true"), sbh / t * (34 + 5 * a * s / h), 0.01);
  assert_close(block_act(w, "mbs=4,tp=8,recompute=selective"), sbh * (10 + 24 / t), 0.01);
  assert_close(block_act(w, "mbs=4,tp=8,sp=true,recompute=selective"), sbh * 34 / t, 0.01);
  assert_close(block_act(w, "mbs=4,recompute=selective"), sbh * 34, 0.01);
  assert_close(block_act(w, "mbs=4,recompute=full"), 2 * sbh, 0.01);
  assert_close(block_act(w, "mbs=4,tp=8,sp=true,recompute=full"), 2 * sbh / t, 0.01);
  /* context parallelism splits the sequence: everything, s x s terms included, divides by cp */
  assert_close(block_act(w, "mbs=4,cp=2"), sbh * (34 + 5 * a * s / h) / 2, 0.01);
  /* fp32 training stores 4-byte tensors: the 16-bit terms (32 of the 34, and 4 of the 5 in
   * 5as/h) double, the 1-byte masks do not */
  assert_close(block_act(w, "mbs=4,precision=fp32"), sbh * (2 + 2 * 32 + (1 + 2 * 4) * a * s / h),
               0.01);
  /* flash attention keeps no s x s tensors: selective recomputation has nothing left to drop */
  assert_int_equal(cs_workload_set(w, "flash_attention=true", &err), CS_OK);
  assert_close(block_act(w, "mbs=4"), block_act(w, "mbs=4,recompute=selective"), 1e-12);
  assert_close(block_act(w, "mbs=4"), sbh * 34, 0.01);
  cs_workload_free(w);
}

static void activations_pipeline(void **state) {
  (void)state;
  struct cs_workload *w = cs_test_workload("megatron-175b");
  struct cs_error err = {0};
  struct cs_plan p;
  struct cs_memory m;
  const double s = 2048, b = 1, h = 12288, t = 8, L = 96, pp = 8, v = 3;
  /* interleaved: the first stage holds (1 + (p-1)/(p v)) L layers' worth of one micro-batch */
  cs_test_plan("tp=8,pp=8,vpp=3,mbs=1,gbs=64,sp=true,recompute=selective", &p);
  assert_int_equal(cs_memory_stage(w, &p, 0, &m, &err), CS_OK);
  assert_close(m.activations, 34 * s * b * h / t * L * (1 + (pp - 1) / (pp * v)), 0.01);
  /* 1F1B: p micro-batches of L/p layers = L layers */
  p.vpp = 1;
  assert_int_equal(cs_memory_stage(w, &p, 0, &m, &err), CS_OK);
  assert_close(m.activations, 34 * s * b * h / t * L, 0.01);
  assert_close(m.inflight, 8, 0);
  /* the last stage holds one micro-batch of its layers (plus the fp32 logits) */
  assert_int_equal(cs_memory_stage(w, &p, 7, &m, &err), CS_OK);
  assert_close(m.inflight, 1, 0);
  /* fewer micro-batches than stages: the first stage holds all of them, no more */
  cs_test_plan("tp=8,pp=8,mbs=1,gbs=4,sp=true,recompute=selective", &p);
  assert_int_equal(cs_memory_stage(w, &p, 0, &m, &err), CS_OK);
  assert_close(m.activations, 34 * s * b * h / t * L / pp * 4, 0.01);
  assert_int_equal(cs_memory_stage(w, &p, 8, &m, &err), CS_ERR_RANGE);
  cs_workload_free(w);
}

static void zero_stages(void **state) {
  (void)state;
  struct cs_workload *w = cs_test_workload("megatron-7.5b");
  const double l = 36, h = 4096, V = 51200, s = 2048, Nd = 64, K = 12;
  const double psi = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
  const double expect[4][3] = {
      {2 * psi, 2 * psi, K * psi},                /* DDP */
      {2 * psi, 2 * psi, K * psi / Nd},           /* ZeRO-1: optimizer state */
      {2 * psi, 2 * psi / Nd, K * psi / Nd},      /* ZeRO-2: + gradients */
      {2 * psi / Nd, 2 * psi / Nd, K * psi / Nd}, /* ZeRO-3: + weights */
  };
  struct cs_error err = {0};
  for (int z = 0; z <= 3; z++) {
    char text[64];
    snprintf(text, sizeof text, "dp=64,zero=%d", z);
    struct cs_plan p;
    cs_test_plan(text, &p);
    struct cs_memory m;
    assert_int_equal(cs_memory_estimate(w, &p, NULL, &m, &err), CS_OK);
    assert_close(m.weights, expect[z][0], 0.01);
    assert_close(m.grads, expect[z][1], 0.01);
    assert_close(m.optimizer, expect[z][2], 0.01);
    assert_close(m.weights + m.grads + m.optimizer, expect[z][0] + expect[z][1] + expect[z][2],
                 0.01);
    assert_close(m.params, psi, 0.01);
    /* temporary buffers: two DDP buckets, or two gathered layers under ZeRO-3 */
    if (z < 3)
      assert_close(m.temp, 2 * 25 * 1048576.0, 1e-12);
    else
      assert_close(m.temp, 2 * 2 * (V + s) * h, 1e-9); /* the largest layer: embeddings */
  }
  /* Adam in fp32: 4 + 4 + 8 bytes; K set explicitly */
  struct cs_plan p;
  struct cs_memory m;
  cs_test_plan("precision=fp32", &p);
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &m, &err), CS_OK);
  assert_close(m.weights + m.grads + m.optimizer, 16 * psi, 0.01);
  assert_close(m.temp, 0, 0); /* no data parallelism, no buckets */
  cs_test_plan("optim_bytes=14,grad_bytes=4", &p);
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &m, &err), CS_OK);
  assert_close(m.weights + m.grads + m.optimizer, 20 * psi, 0.01);
  /* tensor parallelism: a quarter of the weights, embeddings included, per GPU */
  cs_test_plan("tp=4", &p);
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &m, &err), CS_OK);
  assert_close(m.params, psi / 4, 0.01);
  cs_workload_free(w);

  /* experts: dense state sharded over dp*cp, expert state over dp*cp/ep */
  w = cs_test_workload("mixtral-8x7b");
  cs_test_plan("dp=16,ep=8,zero=1", &p);
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &m, &err), CS_OK);
  double expert = 32 * 3.0 * 4096 * 14336; /* one expert per GPU in each of 32 blocks */
  double dense = cs_workload_params(w) - 8 * expert;
  assert_close(m.params, dense + expert, 1e-9);
  assert_close(m.optimizer, 12 * (dense / 16 + expert / 2), 1e-9);
  cs_workload_free(w);
}

static void fits(void **state) {
  (void)state;
  struct cs_workload *w = cs_test_workload("gpt3-175b");
  struct cs_error err = {0};
  struct cs_gpu g;
  cs_test_gpu("a100-80gb", &g);
  struct cs_plan p;
  struct cs_memory m;
  cs_test_plan("tp=8,pp=8,dp=16,zero=1,mbs=1,gbs=1536,recompute=selective", &p);
  assert_int_equal(cs_memory_estimate(w, &p, &g, &m, &err), CS_OK);
  assert_true(cs_memory_fits(&m));
  assert_int_equal(cs_memory_check(&m, g.name, &err), CS_OK);
  assert_int_equal(m.stage, 0);
  assert_close(m.total, m.weights + m.grads + m.optimizer + m.activations + m.temp + m.reserve,
               1e-12);
  /* data parallelism alone: 175B parameters at 16 bytes do not fit 80 GiB */
  cs_test_plan("dp=64,mbs=1", &p);
  assert_int_equal(cs_memory_estimate(w, &p, &g, &m, &err), CS_OK);
  assert_false(cs_memory_fits(&m));
  assert_int_equal(cs_memory_check(&m, g.name, &err), CS_ERR_RANGE);
  assert_non_null(strstr(err.msg, "does not fit"));
  assert_non_null(strstr(err.msg, "a100-80gb has 80.0 GiB"));
  assert_non_null(strstr(err.msg, "optimizer"));
  /* a plan that does not divide the model is refused before any arithmetic */
  cs_test_plan("tp=5", &p);
  assert_int_equal(cs_memory_estimate(w, &p, &g, &m, &err), CS_ERR_USAGE);
  assert_int_equal(cs_memory_stage(w, &p, 0, &m, &err), CS_ERR_USAGE);
  cs_workload_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(activations_per_layer),
      cmocka_unit_test(activations_pipeline),
      cmocka_unit_test(zero_stages),
      cmocka_unit_test(fits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
