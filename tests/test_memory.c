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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datadir.h"
#include "gpu.h"
#include "memory.h"
#include "plan.h"
#include "testmodel.h"
#include "testutil.h"
#include "workload.h"

#define GIB_BYTES 1073741824.0

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
    /* temporary buffers: DDP's buckets, a copy of every gradient (gradient_as_bucket_view off
     * by default), two buckets for ZeRO-1/2, or two gathered layers under ZeRO-3; and the loss's
     * backward (the default profile keeps fp32 logits): the gradients of the fp32 log-softmax
     * output and of its fp32 input, s b V (4 + 4) bytes with b = 1 (measured: 8 bytes per logit
     * above the forward's end, tests/data/h100-compute/saved_bytes.csv) */
    const double loss = s * V * (4 + 4);
    if (z == 0)
      assert_close(m.temp, 2 * psi + loss, 0.01);
    else if (z < 3)
      assert_close(m.temp, 2 * 25 * 1048576.0 + loss, 1e-12);
    else
      assert_close(m.temp, 2 * 2 * (V + s) * h + loss, 1e-9); /* the largest layer: embeddings */
  }
  /* Adam in fp32: 4 + 4 + 8 bytes; K set explicitly */
  struct cs_plan p;
  struct cs_memory m;
  cs_test_plan("precision=fp32", &p);
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &m, &err), CS_OK);
  assert_close(m.weights + m.grads + m.optimizer, 16 * psi, 0.01);
  /* no data parallelism, no buckets: only the loss's logits gradient, fp32 twice */
  assert_close(m.temp, s * V * (4 + 4), 1e-12);
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

/* No configuration that was published as run may be rejected for memory: VALIDATION.md sections
 * 3, 4, 8 and 9 and NVIDIA's MLPerf Training v3.1 GPT-3 175B submission on 80 GB H100s (TP 4,
 * PP 8, interleaved 12, micro-batch 1, SP, FP8, TP communication overlap, no recomputation, fp32
 * main parameters; NeMo with Transformer Engine's fused attention, hence flash_attention). Each
 * under the framework that ran it. */
struct published {
  const char *workload, *gpu, *plan;
};

static const char *gpt3_fused =
    "version: 1\nname: gpt3-175b-fused\ntype: decoder\nlayers: 96\nhidden: 12288\nheads: 96\n"
    "vocab: 50257\nseq: 2048\nmax_positions: 2048\ntied_embeddings: true\nbias: true\n"
    "dropout: true\nflash_attention: true\n";

static const struct published runs[] = {
    /* section 3 */
    {"megatron-1.7b", "a100-80gb", "dp=32,mbs=1,gbs=512,recompute=full,framework=megatron-lm-2021"},
    {"megatron-3.6b", "a100-80gb",
     "tp=2,dp=32,mbs=1,gbs=512,recompute=full,framework=megatron-lm-2021"},
    {"megatron-7.5b", "a100-80gb",
     "tp=4,dp=32,mbs=1,gbs=512,recompute=full,framework=megatron-lm-2021"},
    {"megatron-18.4b", "a100-80gb",
     "tp=8,dp=32,mbs=1,gbs=1024,recompute=full,framework=megatron-lm-2021"},
    {"megatron-39.1b", "a100-80gb",
     "tp=8,pp=2,dp=32,mbs=1,gbs=1536,recompute=full,framework=megatron-lm-2021"},
    {"megatron-76.1b", "a100-80gb",
     "tp=8,pp=4,dp=32,mbs=1,gbs=1792,recompute=full,framework=megatron-lm-2021"},
    /* section 4, both recomputation settings */
    {"megatron-22b", "a100-80gb", "tp=8,mbs=4,gbs=4,recompute=full,framework=megatron-lm-2021"},
    {"megatron-22b", "a100-80gb",
     "tp=8,mbs=4,gbs=4,sp=true,recompute=selective,framework=megatron-lm-2021"},
    {"megatron-175b", "a100-80gb",
     "tp=8,pp=8,vpp=3,mbs=1,gbs=64,recompute=full,framework=megatron-lm-2021"},
    {"megatron-175b", "a100-80gb",
     "tp=8,pp=8,vpp=3,mbs=1,gbs=64,sp=true,recompute=selective,framework=megatron-lm-2021"},
    {"megatron-530b", "a100-80gb",
     "tp=8,pp=35,vpp=3,mbs=1,gbs=280,recompute=full,framework=megatron-lm-2021"},
    {"megatron-530b", "a100-80gb",
     "tp=8,pp=35,vpp=3,mbs=1,gbs=280,sp=true,recompute=selective,framework=megatron-lm-2021"},
    {"megatron-1t", "a100-80gb",
     "tp=8,pp=64,mbs=1,gbs=512,recompute=full,framework=megatron-lm-2021"},
    {"megatron-1t", "a100-80gb",
     "tp=8,pp=64,mbs=1,gbs=512,sp=true,recompute=selective,framework=megatron-lm-2021"},
    /* section 8 */
    {"megatron-175b", "a100-80gb",
     "dp=384,zero=3,mbs=4,gbs=1536,recompute=full,framework=deepspeed-zero3-v0.3"},
    {"megatron-175b", "a100-80gb",
     "dp=768,zero=3,mbs=2,gbs=1536,recompute=full,framework=deepspeed-zero3-v0.3"},
    {"megatron-175b", "a100-80gb",
     "dp=1536,zero=3,mbs=1,gbs=1536,recompute=full,framework=deepspeed-zero3-v0.3"},
    {"megatron-530b", "a100-80gb",
     "dp=640,zero=3,mbs=4,gbs=2560,recompute=full,framework=deepspeed-zero3-v0.3"},
    {"megatron-530b", "a100-80gb",
     "dp=2240,zero=3,mbs=1,gbs=2240,recompute=full,framework=deepspeed-zero3-v0.3"},
    {"megatron-175b", "a100-80gb",
     "tp=8,pp=12,dp=4,mbs=1,gbs=1536,recompute=full,framework=megatron-lm-2021"},
    {"megatron-175b", "a100-80gb",
     "tp=8,pp=12,dp=16,mbs=1,gbs=1536,recompute=full,framework=megatron-lm-2021"},
    {"megatron-530b", "a100-80gb",
     "tp=8,pp=35,dp=2,mbs=1,gbs=2240,recompute=full,framework=megatron-lm-2021"},
    {"megatron-530b", "a100-80gb",
     "tp=8,pp=35,dp=8,mbs=1,gbs=2240,recompute=full,framework=megatron-lm-2021"},
    /* section 9 */
    {"mcore-gpt-1.7b", "h100-sxm", "dp=48,mbs=1,gbs=192,framework=megatron-core"},
    {"mcore-gpt-7.1b", "h100-sxm", "tp=2,dp=48,mbs=1,gbs=192,sp=true,framework=megatron-core"},
    {"mcore-gpt-16b", "h100-sxm", "tp=4,dp=48,mbs=1,gbs=192,sp=true,framework=megatron-core"},
    {"mcore-gpt-32b", "h100-sxm", "tp=8,dp=48,mbs=1,gbs=192,sp=true,framework=megatron-core"},
    {"mcore-gpt-70b", "h100-sxm", "tp=8,pp=2,dp=48,mbs=1,gbs=384,sp=true,framework=megatron-core"},
    {"mcore-gpt-119b", "h100-sxm", "tp=8,pp=4,dp=48,mbs=1,gbs=768,sp=true,framework=megatron-core"},
    {"mcore-gpt-177b", "h100-sxm",
     "tp=8,pp=6,dp=48,mbs=1,gbs=1152,sp=true,framework=megatron-core"},
    {"mcore-gpt-314b", "h100-sxm",
     "tp=8,pp=8,dp=48,mbs=1,gbs=1536,sp=true,framework=megatron-core"},
    {"mcore-gpt-462b", "h100-sxm",
     "tp=8,pp=16,dp=48,mbs=1,gbs=3072,sp=true,framework=megatron-core"},
    /* MLPerf Training v3.1, GPT-3 175B, at several data-parallel sizes */
    {NULL, "h100-sxm",
     "tp=4,pp=8,vpp=12,dp=8,mbs=1,gbs=2048,sp=true,precision=fp8,overlap_tp=true,"
     "framework=megatron-core"},
    {NULL, "h100-sxm",
     "tp=4,pp=8,vpp=12,dp=64,mbs=1,gbs=2048,sp=true,precision=fp8,overlap_tp=true,"
     "framework=megatron-core"},
    {NULL, "h100-sxm",
     "tp=4,pp=8,vpp=12,dp=256,mbs=1,gbs=2048,sp=true,precision=fp8,overlap_tp=true,"
     "framework=megatron-core"},
};

static void published_runs_fit(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    struct cs_error err = {0};
    struct cs_workload *w = NULL;
    if (runs[i].workload)
      w = cs_test_workload(runs[i].workload);
    else
      assert_int_equal(cs_workload_load_string(gpt3_fused, "gpt3.yaml", &w, &err), CS_OK);
    char path[4096];
    assert_int_equal(
        cs_datadir_find("gpus", "model/gpus", runs[i].gpu, NULL, path, sizeof path, &err), CS_OK);
    struct cs_gpu g;
    assert_int_equal(cs_gpu_load(path, &g, &err), CS_OK);
    struct cs_plan p;
    cs_test_plan(runs[i].plan, &p);
    struct cs_memory m;
    assert_int_equal(cs_workload_check_plan(w, &p, &err), CS_OK);
    assert_int_equal(cs_memory_estimate(w, &p, &g, &m, &err), CS_OK);
    if (cs_memory_check(&m, g.name, &err) != CS_OK)
      fail_msg("%s %s: %s", runs[i].workload ? runs[i].workload : "gpt3-175b-fused", runs[i].plan,
               err.msg);
    cs_workload_free(w);
  }
}

/* Framework profiles change memory as the frameworks do: Megatron-Core's distributed optimizer
 * shards the optimizer state over dp and keeps fp32 gradients (reduced in fp32 under bf16); FP8
 * adds Transformer Engine's FP8 weight and transpose copies, 2 bytes per parameter. */
static void framework_memory(void **state) {
  (void)state;
  struct cs_workload *w = cs_test_workload("megatron-7.5b");
  struct cs_error err = {0};
  struct cs_plan p;
  struct cs_memory ddp, mc, f8;
  cs_test_plan("dp=64,mbs=1", &p);
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &ddp, &err), CS_OK);
  cs_test_plan("dp=64,mbs=1,framework=megatron-core", &p);
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &mc, &err), CS_OK);
  const double psi = ddp.params;
  assert_close(mc.optimizer, 12 * psi / 64, 1e-9);
  assert_close(mc.grads, 4 * psi, 1e-9);
  assert_close(mc.weights, 2 * psi, 1e-9);
  cs_test_plan("dp=64,mbs=1,precision=fp8", &p);
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &f8, &err), CS_OK);
  assert_close(f8.weights, (2 + 2) * psi, 1e-9);
  /* FSDP2 without resharding holds every gathered weight from forward to backward */
  struct cs_memory rs, nrs;
  cs_test_plan("dp=64,zero=3,mbs=1,framework=fsdp2", &p);
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &rs, &err), CS_OK);
  cs_test_plan("dp=64,zero=3,mbs=1,framework=fsdp2-noreshard", &p);
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &nrs, &err), CS_OK);
  assert_close(nrs.temp - rs.temp, 2 * psi - 2 * 2 * (51200.0 + 2048) * 4096, 1e-9);
  /* an unknown profile is an error, not the default */
  cs_test_plan("dp=64,framework=no-such-framework", &p);
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &f8, &err), CS_ERR_IO);
  assert_non_null(strstr(err.msg, "framework"));
  cs_workload_free(w);
}

/* Peak memory against torch.cuda.max_memory_allocated of real steps (tests/gpu/steps.py, the
 * GPT 1.3B of tests/data/h200x2-steps/gpt-1b.yaml at micro-batch 8 on H200s and H100s, bf16
 * autocast over fp32 weights, fused AdamW): the peak_gib of each log's "# result" line, read here,
 * against the model's total less its reserve (max_memory_allocated counts neither the CUDA context
 * nor the allocator's cache). None of these logs set a constant (the single-GPU shapes below did).
 * One GPU, DDP and DataParallel -0.1%, Megatron-style TP +1.4% and +0.3% (it accumulates tp
 * micro-batches, so its gradients persist: the sum), held at 5%; FSDP2 -4.1% and -6.0%, held at
 * 10%. */
static double log_peak(const char *rel) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", CS_TEST_DATA, rel);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open %s", path);
  char line[1024];
  double peak = -1;
  while (fgets(line, sizeof line, f)) {
    const char *k = strstr(line, "peak_gib=");
    if (strncmp(line, "# result ", 9) == 0 && k) peak = strtod(k + 9, NULL);
  }
  fclose(f);
  if (peak <= 0) fail_msg("%s: no peak_gib in a # result line", path);
  return peak * GIB_BYTES;
}

static void measured_peaks(void **state) {
  (void)state;
  static const struct {
    const char *log, *plan;
    double tol;
  } logs[] = {
      {"h200x2-steps/single.log", "dp=1,mbs=8,weight_bytes=4,grad_bytes=4,optim_bytes=8", 0.10},
      {"h200x2-steps/ddp2.log", "dp=2,mbs=8,weight_bytes=4,grad_bytes=4,optim_bytes=8", 0.10},
      {"h200x4/steps/ddp4.log", "dp=4,mbs=8,weight_bytes=4,grad_bytes=4,optim_bytes=8", 0.10},
      {"h200x2-steps/fsdp2.log", "dp=2,zero=3,mbs=8,grad_bytes=4,framework=fsdp2", 0.10},
      {"h200x4/steps/fsdp4.log", "dp=4,zero=3,mbs=8,grad_bytes=4,framework=fsdp2", 0.10},
      {"h200x2-steps/tp2.log", "tp=2,mbs=8,gbs=16,weight_bytes=4,grad_bytes=4,optim_bytes=8", 0.05},
      {"h200x4/steps/tp4.log", "tp=4,mbs=8,gbs=32,weight_bytes=4,grad_bytes=4,optim_bytes=8", 0.05},
      /* torch.nn.DataParallel, GPU 0 (2026-11-28): as one GPU, its reductions 10 MiB at a time */
      {"h200x2-steps/dataparallel/run1/dataparallel2.log",
       "dp=2,mbs=8,weight_bytes=4,grad_bytes=4,optim_bytes=8,framework=dataparallel", 0.10},
      /* the same runs on 4 x H100 (2026-11-27): the same PyTorch allocates the same bytes */
      {"h100x4/steps/single.log", "dp=1,mbs=8,weight_bytes=4,grad_bytes=4,optim_bytes=8", 0.10},
      {"h100x4/steps/ddp4.log", "dp=4,mbs=8,weight_bytes=4,grad_bytes=4,optim_bytes=8", 0.10},
      {"h100x4/steps/fsdp4.log", "dp=4,zero=3,mbs=8,grad_bytes=4,framework=fsdp2", 0.10},
      {"h100x4/steps/tp4.log", "tp=4,mbs=8,gbs=32,weight_bytes=4,grad_bytes=4,optim_bytes=8", 0.05},
  };
  char path[4096];
  snprintf(path, sizeof path, "%s/h200x2-steps/gpt-1b.yaml", CS_TEST_DATA);
  struct cs_workload *w = NULL;
  struct cs_error err = {0};
  assert_int_equal(cs_workload_load(path, &w, &err), CS_OK);
  for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
    struct cs_plan p;
    cs_test_plan(logs[i].plan, &p);
    struct cs_memory m;
    assert_int_equal(cs_memory_estimate(w, &p, NULL, &m, &err), CS_OK);
    double measured = log_peak(logs[i].log), model = m.total - m.reserve;
    print_message("%-24s measured %6.2f GiB, model %6.2f GiB (%+.1f%%)\n", logs[i].log,
                  measured / GIB_BYTES, model / GIB_BYTES, 100 * (model / measured - 1));
    assert_close(model, measured, logs[i].tol);
  }
  cs_workload_free(w);
}

/* Peak memory of the single-GPU steps of tests/gpu/single_steps.py (the GPT of steps.py at 13
 * shapes, bf16 autocast over fp32 weights, fused AdamW) on one H100 and one H200:
 * peak_mem_bytes (torch.cuda.max_memory_allocated) of tests/data/{h100,h200}-compute/steps.csv,
 * read here, against the model's total less its reserve. The workload is gpt-1b.yaml's recipe with
 * each row's layers, hidden, heads, ffn and sequence. Issue 14 asks for 10% on every shape: all 13
 * are within 2.6% (the same on both GPUs: the same PyTorch allocates the same bytes), held at 5%.
 * Three facts measured on these shapes (tests/data/h100-compute/saved_bytes.csv) carry it: the
 * peak per phase (gradients freed after each step), the two norm inputs of a block saved in fp32
 * under autocast over fp32 weights, and 8 bytes per logit for the loss's backward; summing the
 * phases with 16-bit norm inputs gave 6 of 13 within 10% and +19.9% at worst. */
static void single_gpu_row(const char *gpu, const char *line, int *n) {
  char name[64];
  double L, h, a, ffn, vocab, seq, mbs, params, peak = 0;
  /* name,layers,hidden,heads,ffn,vocab,seq,mbs,params,step_ms,...,peak_mem_bytes (column 18) */
  if (sscanf(line, "%63[^,],%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", name, &L, &h, &a, &ffn, &vocab, &seq,
             &mbs, &params) != 9)
    return;
  const char *c = line;
  for (int k = 0; k < 17 && c; k++) {
    c = strchr(c, ',');
    if (c) c++;
  }
  if (c != NULL) peak = strtod(c, NULL);
  if (peak <= 0) fail_msg("%s: no peak_mem_bytes: %s", gpu, line);
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "version: 1\nname: %s\ntype: decoder\nlayers: %.0f\nhidden: %.0f\nheads: %.0f\n"
           "ffn: %.0f\nffn_type: gelu\nnorm: layernorm\nvocab: %.0f\nseq: %.0f\n"
           "max_positions: %.0f\ntied_embeddings: true\nbias: true\ndropout: false\n"
           "flash_attention: true\n",
           name, L, h, a, ffn, vocab, seq, seq);
  struct cs_workload *w = NULL;
  struct cs_error err = {0};
  if (cs_workload_load_string(yaml, name, &w, &err) != CS_OK) fail_msg("%s", err.msg);
  char plan[128];
  snprintf(plan, sizeof plan, "dp=1,mbs=%.0f,weight_bytes=4,grad_bytes=4,optim_bytes=8", mbs);
  struct cs_plan p;
  cs_test_plan(plan, &p);
  struct cs_memory m;
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &m, &err), CS_OK);
  double model = m.total - m.reserve;
  print_message("%s %-16s measured %6.2f GiB, model %6.2f GiB (%+.1f%%)\n", gpu, name,
                peak / GIB_BYTES, model / GIB_BYTES, 100 * (model / peak - 1));
  assert_close(model, peak, 0.05);
  cs_workload_free(w);
  (*n)++;
}

/* The peak per phase, by hand: with gradients freed after each step (the default profile) and one
 * micro-batch, the larger of forward's end (weights with their autocast copies, activations) and
 * backward's end (weights without the copies, gradients), plus optimizer state, temporaries and
 * reserve; with two micro-batches (accumulation) or a profile that keeps its gradients, the sum. */
static void phase_peak(void **state) {
  (void)state;
  char path[4096];
  snprintf(path, sizeof path, "%s/h200x2-steps/gpt-1b.yaml", CS_TEST_DATA);
  struct cs_workload *w = NULL;
  struct cs_error err = {0};
  assert_int_equal(cs_workload_load(path, &w, &err), CS_OK);
  struct cs_plan p;
  struct cs_memory m;
  cs_test_plan("dp=1,mbs=1,gbs=1,weight_bytes=4,grad_bytes=4,optim_bytes=8", &p);
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &m, &err), CS_OK);
  double cast = 2.0 * m.params;
  assert_close(m.weights, 6.0 * m.params, 1e-12);
  assert_close(m.total,
               fmax(m.weights + m.activations, m.weights - cast + m.grads) + m.optimizer + m.temp +
                   m.reserve,
               1e-12);
  assert_true(m.total < m.weights + m.grads + m.optimizer + m.activations + m.temp + m.reserve);
  const char *sums[] = {"dp=1,mbs=1,gbs=2,weight_bytes=4,grad_bytes=4,optim_bytes=8",
                        "dp=1,mbs=1,gbs=1,weight_bytes=4,grad_bytes=4,optim_bytes=8,"
                        "framework=megatron-core"};
  for (int i = 0; i < 2; i++) {
    cs_test_plan(sums[i], &p);
    assert_int_equal(cs_memory_estimate(w, &p, NULL, &m, &err), CS_OK);
    assert_close(m.total, m.weights + m.grads + m.optimizer + m.activations + m.temp + m.reserve,
                 1e-12);
  }
  cs_workload_free(w);
}

static void single_gpu_peaks(void **state) {
  (void)state;
  static const char *const gpus[] = {"h100-compute", "h200-compute"};
  for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++) {
    char path[4096], line[2048];
    snprintf(path, sizeof path, "%s/%s/steps.csv", CS_TEST_DATA, gpus[g]);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    int n = 0;
    while (fgets(line, sizeof line, f))
      if (line[0] != '#' && strncmp(line, "name,", 5) != 0) single_gpu_row(gpus[g], line, &n);
    fclose(f);
    assert_true(n >= 3); /* the acceptance: at least 3 sizes per GPU kind */
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(activations_per_layer),
      cmocka_unit_test(activations_pipeline),
      cmocka_unit_test(zero_stages),
      cmocka_unit_test(fits),
      cmocka_unit_test(published_runs_fit),
      cmocka_unit_test(measured_peaks),
      cmocka_unit_test(framework_memory),
      cmocka_unit_test(single_gpu_peaks),
      cmocka_unit_test(phase_peak),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
