/* test_workload.c — workloads, plans, GPU specs and compute time.
 *
 * Expected values come from published formulas and figures, written out here by hand:
 *  - FLOPs per iteration: 96 B s l h^2 (1 + s/6h + V/16lh) with full recomputation (arXiv
 *    2104.04473, eq. 3) and model FLOPs 72 B s l h^2 (1 + s/6h + V/12hl) (arXiv 2205.05198), for
 *    every model row of VALIDATION.md sections 3 and 4; MFU from the published iteration times;
 *  - parameters: 12 l h^2 (1 + 13/12h + (V+s)/12lh) (arXiv 2104.04473) and the totals the model
 *    papers state (GPT-2, GPT-3, Llama 3, Mixtral, BERT, BLOOM, ResNet-50);
 *  - ResNet-50: 25.6M parameters, 4.1 G multiply-adds per 224 x 224 forward.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compute.h"
#include "datadir.h"
#include "gpu.h"
#include "memory.h"
#include "plan.h"
#include "testmodel.h"
#include "testutil.h"
#include "workload.h"

/* ---- FLOPs per iteration (VALIDATION.md sections 3 and 4) ---------------------------------- */

static const double V = 51200, S = 2048;

static double megatron_hw(double B, double l, double h) {
  return 96 * B * S * l * h * h * (1 + S / (6 * h) + V / (16 * l * h));
}

static double model_flops(double B, double l, double h) {
  return 72 * B * S * l * h * h * (1 + S / (6 * h) + V / (12 * h * l));
}

static void flops_megatron_2021(void **state) {
  (void)state;
  static const struct {
    const char *name;
    int heads, hidden, layers, tp, pp, gpus, batch;
  } rows[] = {
      {"megatron-1.7b", 24, 2304, 24, 1, 1, 32, 512},
      {"megatron-3.6b", 32, 3072, 30, 2, 1, 64, 512},
      {"megatron-7.5b", 32, 4096, 36, 4, 1, 128, 512},
      {"megatron-18.4b", 48, 6144, 40, 8, 1, 256, 1024},
      {"megatron-39.1b", 64, 8192, 48, 8, 2, 512, 1536},
      {"megatron-76.1b", 80, 10240, 60, 8, 4, 1024, 1792},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    struct cs_workload *w = cs_test_workload(rows[i].name);
    assert_int_equal(w->heads, rows[i].heads);
    assert_int_equal(w->hidden, rows[i].hidden);
    assert_int_equal(w->layers, rows[i].layers);
    assert_int_equal(w->vocab, (int)V);
    assert_int_equal(w->seq, (int)S);
    char text[160];
    int dp = rows[i].gpus / (rows[i].tp * rows[i].pp);
    snprintf(text, sizeof text, "tp=%d,pp=%d,dp=%d,mbs=1,gbs=%d,recompute=full", rows[i].tp,
             rows[i].pp, dp, rows[i].batch);
    struct cs_plan p;
    cs_test_plan(text, &p);
    assert_int_equal(cs_plan_gpus(&p), rows[i].gpus);
    double model, hw;
    struct cs_error err = {0};
    assert_int_equal(cs_workload_step_flops(w, &p, &model, &hw, &err), CS_OK);
    double B = rows[i].batch, l = rows[i].layers, h = rows[i].hidden;
    assert_close(hw, megatron_hw(B, l, h), 0.01);
    assert_close(model, model_flops(B, l, h), 0.01);
    /* parameters: 12 l h^2 (1 + 13/12h + (V + s)/12lh) */
    assert_close(cs_workload_params(w),
                 12 * l * h * h * (1 + 13 / (12 * h) + (V + S) / (12 * l * h)), 0.01);
    cs_workload_free(w);
  }
}

static void flops_sequence_parallel_2022(void **state) {
  (void)state;
  static const struct {
    const char *name;
    int heads, hidden, layers, tp, pp, gpus, batch, mbs;
    double t_full, t_sel, mfu;
  } rows[] = {
      {"megatron-22b", 64, 6144, 48, 8, 1, 8, 4, 4, 1.42, 1.10, 0.415},
      {"megatron-175b", 96, 12288, 96, 8, 8, 64, 64, 1, 18.13, 13.75, 0.514},
      {"megatron-530b", 128, 20480, 105, 8, 35, 280, 280, 1, 49.05, 37.83, 0.560},
      {"megatron-1t", 160, 25600, 128, 8, 64, 512, 512, 1, 94.42, 71.49, 0.563},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    struct cs_workload *w = cs_test_workload(rows[i].name);
    assert_int_equal(w->heads, rows[i].heads);
    assert_int_equal(w->hidden, rows[i].hidden);
    assert_int_equal(w->layers, rows[i].layers);
    double B = rows[i].batch, l = rows[i].layers, h = rows[i].hidden;
    struct cs_error err = {0};
    double model, hw;
    char text[200];
    /* SP + selective: the same model FLOPs; the published MFU follows from the iteration time */
    snprintf(text, sizeof text, "tp=%d,pp=%d,vpp=%d,dp=1,mbs=%d,gbs=%d,recompute=selective,sp=true",
             rows[i].tp, rows[i].pp, rows[i].pp > 1 ? 3 : 1, rows[i].mbs, rows[i].batch);
    struct cs_plan p;
    cs_test_plan(text, &p);
    if (rows[i].layers % (rows[i].pp * p.vpp) != 0) p.vpp = 1; /* 1T: 128 layers on 64 stages */
    assert_int_equal(cs_workload_step_flops(w, &p, &model, &hw, &err), CS_OK);
    assert_close(model, model_flops(B, l, h), 0.01);
    assert_true(hw > model && hw < 1.05 * model); /* selective recomputation costs little */
    assert_close(model / (rows[i].t_sel * rows[i].gpus * 312e12), rows[i].mfu, 0.01);
    /* full recomputation: the hardware FLOPs of the 2021 formula */
    p.recompute = CS_RECOMPUTE_FULL;
    assert_int_equal(cs_workload_step_flops(w, &p, &model, &hw, &err), CS_OK);
    assert_close(hw, megatron_hw(B, l, h), 0.01);
    assert_close(model, model_flops(B, l, h), 0.01);
    cs_workload_free(w);
  }
}

/* ---- parameters of the bundled models against their papers -------------------------------- */

static void published_parameters(void **state) {
  (void)state;
  static const struct {
    const char *name;
    double params, tol;
  } rows[] = {
      {"gpt2-124m", 124e6, 0.01},     {"gpt2-1.5b", 1.5e9, 0.05},     {"gpt3-175b", 175e9, 0.01},
      {"gpt3-6.7b", 6.7e9, 0.02},     {"llama3-8b", 8.03e9, 0.01},    {"llama3-70b", 70.6e9, 0.01},
      {"llama3-405b", 405.8e9, 0.01}, {"mixtral-8x7b", 46.7e9, 0.01}, {"bloom-176b", 176.2e9, 0.01},
      {"bert-base", 110e6, 0.02},     {"bert-large", 340e6, 0.02},    {"resnet50", 25.6e6, 0.02},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    struct cs_workload *w = cs_test_workload(rows[i].name);
    assert_close(cs_workload_params(w), rows[i].params, rows[i].tol);
    cs_workload_free(w);
  }
  struct cs_workload *w = cs_test_workload("mixtral-8x7b");
  assert_close(cs_workload_active_params(w), 12.9e9, 0.01); /* 2 of 8 experts per token */
  cs_workload_free(w);
}

static void resnet50(void **state) {
  (void)state;
  struct cs_workload *w = cs_test_workload("resnet50");
  assert_false(cs_workload_is_transformer(w));
  assert_close(cs_workload_params(w), 25.6e6, 0.02);
  double fwd = 0;
  for (size_t i = 0; i < w->nlayer; i++)
    fwd += w->layer[i].fwd_flops;
  assert_close(fwd / 2, 4.1e9, 0.02); /* the literature's "4.1 GFLOPs" are multiply-adds */
  struct cs_plan p;
  cs_test_plan("dp=8,mbs=128", &p);
  double model, hw;
  struct cs_error err = {0};
  assert_int_equal(cs_workload_step_flops(w, &p, &model, &hw, &err), CS_OK);
  assert_close(model, 3 * 2 * 4.1e9 * 8 * 128, 0.02);
  /* data parallelism only: the gradients of all 25.6M parameters are all-reduced once */
  double grad = 0;
  struct cs_layer_cost c;
  for (size_t i = 0; i < w->nlayer; i++) {
    assert_int_equal(cs_workload_layer_cost(w, &p, i, &c, &err), CS_OK);
    for (size_t k = 0; k < c.ncomm; k++) {
      assert_int_equal(c.comm[k].coll, CS_COLL_ALL_REDUCE);
      assert_int_equal(c.comm[k].phase, CS_PHASE_GRAD);
      grad += c.comm[k].bytes;
    }
  }
  assert_close(grad, 2 * 25.6e6, 0.02);
  cs_test_plan("tp=2", &p);
  assert_int_equal(cs_workload_check_plan(w, &p, &err), CS_ERR_USAGE);
  assert_non_null(strstr(err.msg, "layer list"));
  cs_workload_free(w);
}

/* ---- per-layer collectives ------------------------------------------------------------------ */

static const struct cs_comm *find_comm(const struct cs_layer_cost *c, int coll, int group,
                                       int phase) {
  for (size_t i = 0; i < c->ncomm; i++)
    if (c->comm[i].coll == coll && c->comm[i].group == group && c->comm[i].phase == phase)
      return &c->comm[i];
  return NULL;
}

static void collectives(void **state) {
  (void)state;
  struct cs_workload *w = cs_test_workload("gpt3-175b");
  struct cs_error err = {0};
  struct cs_plan p;
  struct cs_layer_cost c;
  const double sbh2 = 2048.0 * 2 * 12288 * 2; /* s b h bytes, b = 2 */
  cs_test_plan("tp=8,pp=8,dp=16,zero=1,mbs=2,gbs=1536", &p);
  assert_int_equal(cs_workload_layer_cost(w, &p, 5, &c, &err), CS_OK);
  const struct cs_comm *m = find_comm(&c, CS_COLL_ALL_REDUCE, CS_GROUP_TP, CS_PHASE_FWD);
  assert_non_null(m);
  assert_int_equal(m->count, 2); /* attention and FFN outputs */
  assert_close(m->bytes, sbh2, 1e-12);
  assert_non_null(find_comm(&c, CS_COLL_ALL_REDUCE, CS_GROUP_TP, CS_PHASE_BWD));
  /* ZeRO-1: gradients reduce-scattered, weights all-gathered over dp = 16 */
  m = find_comm(&c, CS_COLL_REDUCE_SCATTER, CS_GROUP_DP, CS_PHASE_GRAD);
  assert_non_null(m);
  /* one block holds 12h^2 + 13h parameters: the weights and the QKV and first FFN biases (7h)
   * split over tp; the two norms (4h) and the two output biases (2h) are replicated */
  double h = 12288, layer = 12 * h * h + 13 * h;
  assert_close(m->bytes, 2 * ((12 * h * h + 7 * h) / 8 + 6 * h), 1e-9); /* bf16 gradients */
  assert_non_null(find_comm(&c, CS_COLL_ALL_GATHER, CS_GROUP_DP, CS_PHASE_PARAM));
  assert_int_equal(cs_plan_group_size(&p, CS_GROUP_DP), 16);
  /* sequence parallelism: all-gather and reduce-scatter instead of all-reduce */
  p.sp = 1;
  assert_int_equal(cs_workload_layer_cost(w, &p, 5, &c, &err), CS_OK);
  assert_null(find_comm(&c, CS_COLL_ALL_REDUCE, CS_GROUP_TP, CS_PHASE_FWD));
  m = find_comm(&c, CS_COLL_ALL_GATHER, CS_GROUP_TP, CS_PHASE_FWD);
  assert_non_null(m);
  assert_close(m->bytes, sbh2, 1e-12);
  assert_non_null(find_comm(&c, CS_COLL_REDUCE_SCATTER, CS_GROUP_TP, CS_PHASE_FWD));
  /* ZeRO-3: weights gathered in forward and backward, gradients reduce-scattered */
  cs_test_plan("dp=64,zero=3", &p);
  assert_int_equal(cs_workload_layer_cost(w, &p, 5, &c, &err), CS_OK);
  m = find_comm(&c, CS_COLL_ALL_GATHER, CS_GROUP_DP, CS_PHASE_FWD);
  assert_non_null(m);
  assert_close(m->bytes, 2 * layer, 1e-9);
  assert_non_null(find_comm(&c, CS_COLL_ALL_GATHER, CS_GROUP_DP, CS_PHASE_BWD));
  assert_non_null(find_comm(&c, CS_COLL_REDUCE_SCATTER, CS_GROUP_DP, CS_PHASE_BWD));
  /* pipeline placement: the embedding on the first stage, the head on the last */
  cs_test_plan("pp=8,vpp=3", &p);
  assert_int_equal(cs_workload_layer_stage(w, &p, 0), 0);
  assert_int_equal(cs_workload_layer_stage(w, &p, w->nlayer - 1), 7);
  assert_int_equal(cs_workload_layer_chunk(w, &p, 1), 0);
  assert_int_equal(cs_workload_layer_chunk(w, &p, 5), 1);  /* 4 blocks per chunk */
  assert_int_equal(cs_workload_layer_stage(w, &p, 33), 0); /* block 33: chunk 8, stage 0 */
  cs_workload_free(w);

  /* experts: all-to-all over ep, expert gradients over dp*cp/ep */
  w = cs_test_workload("mixtral-8x7b");
  cs_test_plan("dp=8,ep=8,mbs=1", &p);
  assert_int_equal(cs_workload_layer_cost(w, &p, 1, &c, &err), CS_OK);
  m = find_comm(&c, CS_COLL_ALL_TO_ALL, CS_GROUP_EP, CS_PHASE_FWD);
  assert_non_null(m);
  assert_int_equal(m->count, 2);
  assert_close(m->bytes, 4096.0 * 2 * 4096 * 2, 1e-12); /* s * top_k * h * 2 bytes */
  assert_null(find_comm(&c, CS_COLL_ALL_REDUCE, CS_GROUP_EDP, CS_PHASE_GRAD)); /* edp = 1 */
  assert_close(c.params_expert, 3.0 * 4096 * 14336, 1e-12); /* one expert per GPU */
  cs_workload_free(w);
}

/* ---- plans ----------------------------------------------------------------------------------- */

static void plans(void **state) {
  (void)state;
  struct cs_plan p;
  struct cs_error err = {0};
  assert_int_equal(
      cs_plan_parse("tp=8,pp=8,dp=16,zero=1,mbs=1,gbs=1536,recompute=selective", &p, &err), CS_OK);
  assert_int_equal(p.tp, 8);
  assert_int_equal(p.pp, 8);
  assert_int_equal(p.dp, 16);
  assert_int_equal(p.zero, 1);
  assert_int_equal(p.recompute, CS_RECOMPUTE_SELECTIVE);
  assert_int_equal(cs_plan_gpus(&p), 1024);
  assert_int_equal(cs_plan_microbatches(&p), 96);
  assert_close(p.bucket, 25 * 1048576.0, 0);
  assert_int_equal(cs_plan_parse(" tp = 2 , sp=true, bucket=100MB, precision=fp8", &p, &err),
                   CS_OK);
  assert_int_equal(p.tp, 2);
  assert_int_equal(p.sp, 1);
  assert_close(p.bucket, 100e6, 0);
  assert_int_equal(p.precision, CS_PREC_FP8);
  char buf[256];
  cs_plan_format(&p, buf, sizeof buf);
  assert_non_null(strstr(buf, "tp=2"));
  assert_non_null(strstr(buf, "precision=fp8"));
  double wb, gb, ob;
  cs_test_plan("", &p);
  cs_plan_param_bytes(&p, &wb, &gb, &ob);
  assert_true(wb + gb + ob == 16); /* mixed-precision Adam */
  cs_test_plan("precision=fp32", &p);
  cs_plan_param_bytes(&p, &wb, &gb, &ob);
  assert_true(wb + gb + ob == 16 && wb == 4);

  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"tp=8,pp=x", "plan item 2 \"pp=x\""},
      {"tp=8,foo=1", "unknown key \"foo\""},
      {"recompute=partial", "expected one of none, selective, full"},
      {"zero=4", "from 0 to 3"},
      {"tp=8,,pp=2", "plan item 2 is empty"},
      {"tp", "expected key=value"},
      {"bucket=25", "no unit"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(&err, 0, sizeof err);
    assert_int_equal(cs_plan_parse(bad[i].text, &p, &err), CS_ERR_USAGE);
    if (strstr(err.msg, bad[i].msg) == NULL) fail_msg("\"%s\": %s", bad[i].text, err.msg);
  }

  struct cs_workload *w = cs_test_workload("gpt3-175b");
  struct cs_workload *moe = cs_test_workload("mixtral-8x7b");
  static const struct {
    const char *text;
    int moe;
    const char *msg;
  } bad_plan[] = {
      {"tp=7", 0, "96 attention heads, not divisible by tp=7"},
      {"pp=5", 0, "96 layers, not divisible by pp*vpp"},
      {"pp=8,vpp=5", 0, "not divisible by pp*vpp = 8*5"},
      {"dp=4,mbs=3,gbs=100", 0, "gbs=100 is not a multiple of mbs*dp"},
      {"vpp=2", 0, "needs pipeline parallelism"},
      {"dp=4,ep=2", 0, "has no experts"},
      {"dp=3,ep=3", 1, "8 experts, not divisible by ep=3"},
      {"dp=2,ep=4", 1, "ep=4 must divide dp*cp"},
      {"cp=3", 0, "not divisible by cp=3"},
  };
  for (size_t i = 0; i < sizeof bad_plan / sizeof bad_plan[0]; i++) {
    cs_test_plan(bad_plan[i].text, &p);
    memset(&err, 0, sizeof err);
    assert_int_equal(cs_workload_check_plan(bad_plan[i].moe ? moe : w, &p, &err), CS_ERR_USAGE);
    if (strstr(err.msg, bad_plan[i].msg) == NULL) fail_msg("\"%s\": %s", bad_plan[i].text, err.msg);
    struct cs_layer_cost c;
    assert_int_equal(cs_workload_layer_cost(bad_plan[i].moe ? moe : w, &p, 1, &c, &err),
                     CS_ERR_USAGE);
  }
  cs_test_plan("tp=8,pp=8,vpp=3,dp=4,cp=2", &p);
  assert_int_equal(cs_workload_check_plan(w, &p, &err), CS_OK);
  cs_workload_free(w);
  cs_workload_free(moe);
}

/* ---- workload files ---------------------------------------------------------------------------
 */

static const char *gqa =
    "version: 1\nname: t\ntype: decoder\nlayers: 2\nhidden: 1024\nheads: 16\nkv_heads: 4\n"
    "ffn: 4096\nffn_type: swiglu\nnorm: rmsnorm\nvocab: 1000\nseq: 512\n";

static void workload_files(void **state) {
  (void)state;
  struct cs_workload *w = NULL;
  struct cs_error err = {0};
  assert_int_equal(cs_workload_load_string(gqa, "t.yaml", &w, &err), CS_OK);
  /* GQA block: Q and output h*h each, K and V h*(kv*d) each; SwiGLU 3hf; two RMSNorms h */
  double h = 1024, kvd = 4 * 64, f = 4096;
  assert_close(w->layer[1].params, 2 * h * h + 2 * h * kvd + 3 * h * f + 2 * h, 1e-12);
  assert_close(w->layer[1].fwd_flops,
               2 * 512 * (2 * h * h + 2 * h * kvd + 3 * h * f) + 4 * 512.0 * 512 * h, 1e-12);
  assert_close(w->layer[0].params, 1000 * h, 1e-12);     /* no positions */
  assert_close(w->layer[3].params, 1000 * h + h, 1e-12); /* untied head + final RMSNorm */
  assert_int_equal(cs_workload_set(w, "seq=1024", &err), CS_OK);
  assert_int_equal(w->seq, 1024);
  assert_close(w->layer[1].fwd_flops,
               2 * 1024 * (2 * h * h + 2 * h * kvd + 3 * h * f) + 4 * 1024.0 * 1024 * h, 1e-12);
  assert_int_equal(cs_workload_set(w, "heads=7", &err), CS_ERR_USAGE);
  assert_non_null(strstr(err.msg, "not divisible"));
  assert_int_equal(w->heads, 16); /* unchanged */
  assert_int_equal(cs_workload_set(w, "nope=1", &err), CS_ERR_USAGE);
  struct cs_plan p;
  cs_test_plan("tp=8", &p); /* 16 heads, 4 KV heads: each pair of GPUs shares a KV head */
  assert_int_equal(cs_workload_check_plan(w, &p, &err), CS_OK);
  assert_int_equal(cs_workload_set(w, "hidden=768", &err), CS_OK);
  assert_int_equal(cs_workload_set(w, "heads=12", &err), CS_OK);
  cs_test_plan("tp=6", &p); /* 12 heads, 4 KV heads: neither divides the other */
  assert_int_equal(cs_workload_check_plan(w, &p, &err), CS_ERR_USAGE);
  assert_non_null(strstr(err.msg, "KV heads"));
  cs_workload_free(w);

  static const struct {
    const char *text, *where, *what;
  } bad[] = {
      {"version: 1\nname: t\ntype: decoder\nlayers: 2\nhidden: 1000\nheads: 16\nvocab: 10\nseq: "
       "8\n",
       "t.yaml:6:8:", "not divisible by heads"},
      {"version: 1\nname: t\ntype: decoder\nlayerz: 2\n", "t.yaml:4:1:", "unknown key \"layerz\""},
      {"version: 1\nname: t\ntype: decoder\nhidden: 64\nheads: 4\nvocab: 10\nseq: 8\n",
       "t.yaml:1:1:", "needs layers"},
      {"version: 1\nname: t\ntype: layers\nlayer_list:\n  - {type: conv, name: c, cout: 4}\n",
       "t.yaml:5:5:", "needs cin, cout and in_size"},
      {"version: 1\nname: t\ntype: layers\nlayer_list:\n  - {type: generic, name: g, act: 5}\n",
       "t.yaml:5:35:", "no unit"},
      {"version: 1\nname: t\ntype: layers\nhidden: 3\nlayer_list: []\n",
       "t.yaml:4:9:", "belongs to transformers"},
      {"version: 1\nname: t\ntype: decoder\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 10\nseq: 8\n"
       "experts: 4\ntop_k: 5\n",
       "t.yaml:10:8:", "top_k must be from 1 to experts"},
      {"version: 2\nname: t\ntype: decoder\n", "t.yaml:1:10:", "from 1 to 1"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(&err, 0, sizeof err);
    w = NULL;
    assert_int_not_equal(cs_workload_load_string(bad[i].text, "t.yaml", &w, &err), CS_OK);
    assert_null(w);
    if (strncmp(err.msg, bad[i].where, strlen(bad[i].where)) != 0 || !strstr(err.msg, bad[i].what))
      fail_msg("case %zu: %s", i, err.msg);
  }
  assert_int_equal(cs_workload_load("/nonexistent/w.yaml", &w, &err), CS_ERR_IO);

  /* a generic layer list */
  assert_int_equal(cs_workload_load_string(
                       "version: 1\nname: g\ntype: layers\nlayer_list:\n"
                       "  - {type: generic, name: x, params: 1000, fwd_flops: 1e9, act: 1MB, io: "
                       "2MB, repeat: 3}\n"
                       "  - {type: linear, name: fc, cin: 100, cout: 10, bias: true, tokens: 4}\n",
                       "g.yaml", &w, &err),
                   CS_OK);
  assert_int_equal(w->nlayer, 4);
  assert_string_equal(w->layer[2].name, "x.3");
  assert_close(cs_workload_params(w), 3000 + 1010, 1e-12);
  assert_close(w->layer[3].fwd_flops, 2 * 4 * 100 * 10, 1e-12);
  cs_workload_free(w);
}

/* ---- GPUs and compute time ------------------------------------------------------------------- */

/* fp8 linears on the GEMM curve at gemm_efficiency_fp8 of the fp8 peak; attention GEMMs stay at
 * the bf16 peak and curve; without the key the fp8 fraction is the bf16 one. A 4096^3 GEMM,
 * eff = E x 4096 / (4096 + 64), by hand. */
static void compute_fp8_gemms(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_gpu g;
  const char *text = "version: 1\nname: t\nmemory: 80GiB\nhbm_bw: 100TBps\n"
                     "peak_bf16: 1000TFLOPS\npeak_fp8: 2000TFLOPS\ngemm_efficiency: 0.8\n"
                     "gemm_half_dim: 64\ngemm_efficiency_fp8: 0.6\nkernel_overhead: 1us\n";
  assert_int_equal(cs_gpu_load_string(text, "t.yaml", &g, &err), CS_OK);
  const double x = 4096, fl = 2 * x * x * x, shape = x / (x + 64);
  struct cs_op lin = {"qkv", CS_OP_GEMM, 0, 0, x, x, x, 1, fl, 0, 0, 0};
  struct cs_op att = lin;
  att.attention = 1;
  struct cs_compute c;
  assert_int_equal(cs_compute_init(&c, &g, CS_PREC_FP8, &err), CS_OK);
  assert_close(cs_compute_op_time(&c, &lin, 0), fl / (2000e12 * 0.6 * shape) + 1e-6, 1e-12);
  assert_close(cs_compute_op_time(&c, &att, 0), fl / (1000e12 * 0.8 * shape) + 1e-6, 1e-12);
  assert_int_equal(cs_compute_init(&c, &g, CS_PREC_BF16, &err), CS_OK);
  assert_close(cs_compute_op_time(&c, &lin, 0), fl / (1000e12 * 0.8 * shape) + 1e-6, 1e-12);
  g.gemm_efficiency_fp8 = 0;
  assert_int_equal(cs_compute_init(&c, &g, CS_PREC_FP8, &err), CS_OK);
  assert_close(cs_compute_op_time(&c, &lin, 0), fl / (2000e12 * 0.8 * shape) + 1e-6, 1e-12);
}

/* Attention, memory classes and the host floor, against hand-derived times. */
static void compute_measured_terms(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_gpu g;
  assert_int_equal(cs_gpu_load_string("version: 1\nname: t\nmemory: 80GiB\nhbm_bw: 1TBps\n"
                                      "peak_bf16: 1000TFLOPS\nmem_efficiency: 0.5\n"
                                      "norm_efficiency: 0.25\nxent_efficiency: 2\n"
                                      "attn_efficiency: 0.8\nattn_half_dim: 64\n"
                                      "attn_half_seq: 1024\nattn_bwd_factor: 3\n"
                                      "kernel_overhead: 1us\nhost_layer_time: 1s\n",
                                      "t.yaml", &g, &err),
                   CS_OK);
  struct cs_compute c;
  assert_int_equal(cs_compute_init(&c, &g, CS_PREC_BF16, &err), CS_OK);
  assert_int_equal(cs_mem_class_of("norm2"), CS_MEM_NORM);
  assert_int_equal(cs_mem_class_of("final_norm"), CS_MEM_NORM);
  assert_int_equal(cs_mem_class_of("swiglu"), CS_MEM_ACT);
  assert_int_equal(cs_mem_class_of("residual1"), CS_MEM_RESIDUAL);
  assert_int_equal(cs_mem_class_of("cross_entropy"), CS_MEM_XENT);
  assert_int_equal(cs_mem_class_of("lookup"), CS_MEM_COPY);
  /* 1e9 model bytes of a norm at 0.25 TB/s: 4 ms (+1 us); backward twice the bytes */
  struct cs_op norm = {"norm1", CS_OP_MEMORY, 0, 0, 0, 0, 0, 1, 0, 1e9, 0, 0};
  assert_close(cs_compute_op_time(&c, &norm, 0), 4e-3 + 1e-6, 1e-12);
  assert_close(cs_compute_op_time(&c, &norm, 1), 8e-3 + 1e-6, 1e-12);
  struct cs_op xent = {"cross_entropy", CS_OP_MEMORY, 0, 0, 0, 0, 0, 1, 0, 1e9, 0, 0};
  assert_close(cs_compute_op_time(&c, &xent, 0), 0.5e-3 + 1e-6, 1e-12);
  struct cs_op copy = {"lookup", CS_OP_MEMORY, 0, 0, 0, 0, 0, 1, 0, 1e9, 0, 0};
  assert_close(cs_compute_op_time(&c, &copy, 0), 2e-3 + 1e-6, 1e-12);
  /* causal attention, s = 2048 (m = n), d = 128, 16 x 32 batch x heads: executed FLOPs are half
   * of 4 s^2 d bh; eff = 0.8 * 128/192 * 2048/3072 = 0.35556 */
  double s = 2048, d = 128, bh = 512, fl = 4 * s * s * d * bh;
  struct cs_op at = {"attention", CS_OP_GEMM, 1, 1, s, s, d, bh, fl, 0, 1, 0};
  double eff = 0.8 * 128 / 192 * 2048 / 3072;
  assert_close(cs_compute_attn_efficiency(&c, s, d, bh, 0), eff, 1e-12);
  double tf = fl / 2 / (1000e12 * eff);
  assert_close(cs_compute_op_time(&c, &at, 0), tf + 1e-6, 1e-12);
  assert_close(cs_compute_op_time(&c, &at, 1), 3 * tf + 1e-6, 1e-12);
  at.causal = 0;
  assert_close(cs_compute_op_time(&c, &at, 0), 2 * tf + 1e-6, 1e-12);
  /* a measured table replaces the curve: the nearest point, head dimension first */
  struct cs_attn_point pts[2] = {{2048, 64, 512, 0.30, 0.25}, {4096, 128, 256, 0.50, 0.40}};
  cs_compute_set_attn_table(&c, pts, 2);
  assert_close(cs_compute_attn_efficiency(&c, s, d, bh, 0), 0.50, 0);
  assert_close(cs_compute_attn_efficiency(&c, s, d, bh, 1), 0.40, 0);
  cs_compute_set_attn_table(&c, NULL, 0);
  /* the host floor: a layer whose GPU time is under host_layer_time takes host_layer_time */
  struct cs_layer_cost lc;
  memset(&lc, 0, sizeof lc);
  lc.nops = 1;
  lc.op[0] = norm;
  struct cs_layer_time t;
  cs_compute_layer_time(&c, &lc, &t);
  assert_close(t.fwd + t.bwd, 1.0, 1e-12);
  assert_close(t.bwd / t.fwd, (8e-3 + 1e-6) / (4e-3 + 1e-6), 1e-9);
  /* the GPU waits for the host what the kernels (12.002 ms) leave of its 1 s */
  assert_close(t.host, 1.0 - 12.002e-3, 1e-12);
  assert_close(cs_compute_host_time(&c, 24), 24, 1e-12);
  /* with the host's forward share s: the layer takes max(max(s H, Gf) + Gb, H). Here Gf =
   * 4.001 ms, Gb = 8.001 ms; H = 1 s: the host rules both phases (0.4 s + 0.6 s) */
  c.host_fwd_share = 0.4;
  cs_compute_layer_time(&c, &lc, &t);
  assert_close(t.fwd, 0.4, 1e-12);
  assert_close(t.bwd, 0.6, 1e-12);
  /* H = 15 ms: the forward waits for the host (6 ms > Gf), the backward is the GPU's (6 + Gb =
   * 14.001 ms < H: still the host's 15 ms) */
  c.host_layer = 15e-3;
  cs_compute_layer_time(&c, &lc, &t);
  assert_close(t.fwd, 6e-3, 1e-12);
  assert_close(t.fwd + t.bwd, 15e-3, 1e-12);
  assert_close(t.host, 15e-3 - 12.002e-3, 1e-12);
  /* H = 12.5 ms: under the GPU's 12.002 ms total no more, yet the forward waits 5 ms for the
   * host: 5 + 8.001 = 13.001 ms, which the total-only rule (12.5 ms) misses */
  c.host_layer = 12.5e-3;
  cs_compute_layer_time(&c, &lc, &t);
  assert_close(t.fwd, 5e-3, 1e-12);
  assert_close(t.bwd, 8e-3 + 1e-6, 1e-12);
  assert_close(t.host, 13.001e-3 - 12.002e-3, 1e-12);
  /* H = 8 ms: the GPU rules (the forward's 3.2 ms of host under its 4.001 ms) */
  c.host_layer = 8e-3;
  cs_compute_layer_time(&c, &lc, &t);
  assert_close(t.fwd, 4e-3 + 1e-6, 1e-12);
  assert_close(t.bwd, 8e-3 + 1e-6, 1e-12);
  assert_true(t.host == 0);
}

static const struct cs_op *find_op(const struct cs_layer_cost *c, const char *name) {
  for (size_t i = 0; i < c->nops; i++)
    if (strcmp(c->op[i].name, name) == 0) return &c->op[i];
  return NULL;
}

/* The 2020 Megatron-LM GPT-2 code's own kernels (attention_code, loss_code megatron-v1) against
 * hand counts from its source: three forward passes over the b x a x s x s scores (scale, mask
 * multiply, mask subtract) and two backward (the product's and the division's gradients), each
 * reading and writing 2-byte elements; the loss on an fp32 copy of the logits, 46 bytes a logit
 * forward (2 + 4 for the copy, then 8 + 4 + 8 + 8 + 4 + 8) and 14 backward (8 + 4 + 2). The
 * fused default has neither. */
static void megatron_v1_kernels(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_workload *w = cs_test_workload("dlperf-gpt2-small");
  assert_int_equal(w->attention_code, CS_ATTN_CODE_MEGATRON_V1);
  assert_int_equal(w->loss_code, CS_LOSS_CODE_MEGATRON_V1);
  struct cs_plan p;
  struct cs_layer_cost c;
  cs_test_plan("mbs=4,precision=fp16", &p);
  assert_int_equal(cs_workload_layer_cost(w, &p, 1, &c, &err), CS_OK);
  const double scores = 4.0 * 12 * 1024 * 1024, T = 4.0 * 1024, vocab = 50304;
  const struct cs_op *f = find_op(&c, "score_mask"), *b = find_op(&c, "score_mask_grad");
  assert_non_null(f);
  assert_non_null(b);
  assert_int_equal(f->pass, CS_OP_FWD_ONLY);
  assert_int_equal(b->pass, CS_OP_BWD_ONLY);
  assert_close(f->bytes, 3 * 4 * scores, 1e-12);
  assert_close(b->bytes, 2 * 4 * scores, 1e-12);
  assert_int_equal(cs_workload_layer_cost(w, &p, w->nlayer - 1, &c, &err), CS_OK);
  double fwd = 0, bwd = 0;
  int n = 0;
  for (size_t i = 0; i < c.nops; i++) {
    if (strcmp(c.op[i].name, "cross_entropy") != 0) continue;
    n++;
    if (c.op[i].pass == CS_OP_FWD_ONLY) fwd += c.op[i].bytes;
    if (c.op[i].pass == CS_OP_BWD_ONLY) bwd += c.op[i].bytes;
  }
  assert_int_equal(n, 2);
  assert_close(fwd, 46 * T * vocab, 1e-12);
  assert_close(bwd, 14 * T * vocab, 1e-12);
  cs_workload_free(w);
  /* the same architecture under the default (fused) code */
  w = cs_test_workload("gpt2-124m");
  assert_int_equal(cs_workload_layer_cost(w, &p, 1, &c, &err), CS_OK);
  assert_null(find_op(&c, "score_mask"));
  assert_null(find_op(&c, "score_mask_grad"));
  assert_int_equal(cs_workload_layer_cost(w, &p, w->nlayer - 1, &c, &err), CS_OK);
  assert_int_equal(find_op(&c, "cross_entropy")->pass, CS_OP_BOTH);
  cs_workload_free(w);
}

/* The kernels an eager backward adds, the weight cast's two halves and the power limit's gain,
 * against hand-derived bytes and times. */
static void eager_backward_and_power_limit(void **state) {
  (void)state;
  struct cs_error err = {0};
  /* gpt3-175b has biases; tp=8 with sequence parallelism, b = 2, fp32 weights under bf16 */
  struct cs_workload *w = cs_test_workload("gpt3-175b");
  struct cs_plan p;
  struct cs_layer_cost c;
  cs_test_plan("tp=8,sp=true,mbs=2,gbs=16,weight_bytes=4", &p);
  assert_int_equal(cs_workload_layer_cost(w, &p, 5, &c, &err), CS_OK);
  const double h = 12288, T = 2 * 2048.0, t = 8, e = 2;
  const struct cs_op *o = find_op(&c, "qkv_grad_cat");
  assert_non_null(o);
  assert_int_equal(o->pass, CS_OP_BWD_ONLY);
  assert_close(o->bytes, 2 * T * 3 * h / t * e, 1e-12); /* reads q, k, v grads, writes one */
  o = find_op(&c, "bias_grad");
  assert_non_null(o);
  /* QKV and FC1 biases over all T tokens of their split outputs; the two row-parallel outputs'
   * biases over the T/tp tokens sequence parallelism leaves on this GPU */
  assert_close(o->bytes, T * (3 * h + 4 * h) / t * e + T / t * 2 * h * e, 1e-12);
  const struct cs_op *wc = find_op(&c, "weight_cast"), *gc = find_op(&c, "grad_cast");
  assert_non_null(wc);
  assert_non_null(gc);
  assert_int_equal(wc->pass, CS_OP_FWD_ONLY);
  assert_int_equal(gc->pass, CS_OP_BWD_ONLY);
  assert_close(gc->bytes, c.params * (4 + 2), 1e-12);
  /* autocast's activation casts over the fp32 residual stream: the two norm outputs narrowed
   * forward and their gradients widened backward, the two branch outputs' gradients narrowed;
   * each T/tp x h under sequence parallelism, 4 + 2 bytes an element */
  const struct cs_op *ac = find_op(&c, "act_cast"), *agc = find_op(&c, "act_grad_cast"),
                     *bgc = find_op(&c, "branch_grad_cast");
  assert_non_null(ac);
  assert_non_null(agc);
  assert_non_null(bgc);
  assert_int_equal(ac->pass, CS_OP_FWD_ONLY);
  assert_int_equal(agc->pass, CS_OP_BWD_ONLY);
  assert_int_equal(bgc->pass, CS_OP_BWD_ONLY);
  assert_close(ac->bytes, 2 * T / t * h * (4 + 2), 1e-12);
  assert_close(agc->bytes, 2 * T / t * h * (4 + 2), 1e-12);
  assert_close(bgc->bytes, 2 * T / t * h * (4 + 2), 1e-12);
  assert_int_equal(cs_mem_class_of("act_grad_cast"), CS_MEM_CAST);
  assert_int_equal(cs_mem_class_of("branch_grad_cast"), CS_MEM_COPY);
  assert_int_equal(cs_mem_class_of("act_cast"), CS_MEM_COPY);
  /* the head: the final norm's output only (the logits' own casts are cross-entropy's) */
  assert_int_equal(cs_workload_layer_cost(w, &p, w->nlayer - 1, &c, &err), CS_OK);
  ac = find_op(&c, "act_cast");
  assert_non_null(ac);
  assert_close(ac->bytes, T / t * h * (4 + 2), 1e-12);
  assert_null(find_op(&c, "branch_grad_cast"));
  /* weights in the compute type (no autocast): none of them */
  cs_test_plan("tp=8,sp=true,mbs=2,gbs=16", &p);
  assert_int_equal(cs_workload_layer_cost(w, &p, 5, &c, &err), CS_OK);
  assert_null(find_op(&c, "act_cast"));
  assert_null(find_op(&c, "act_grad_cast"));
  assert_null(find_op(&c, "branch_grad_cast"));
  cs_workload_free(w);

  struct cs_gpu g;
  assert_int_equal(cs_gpu_load_string("version: 1\nname: t\nmemory: 80GiB\nhbm_bw: 1TBps\n"
                                      "peak_bf16: 1000TFLOPS\nmem_efficiency: 0.5\n"
                                      "gather_efficiency: 0.25\nreduce_efficiency: 0.8\n"
                                      "cast_efficiency: 0.4\nkernel_overhead: 0us\n"
                                      "gemm_power_gain: 0.2\ngemm_power_share_lo: 0.4\n"
                                      "gemm_power_share_hi: 0.8\n",
                                      "t.yaml", &g, &err),
                   CS_OK);
  struct cs_compute k;
  assert_int_equal(cs_compute_init(&k, &g, CS_PREC_BF16, &err), CS_OK);
  /* a single pass moves its bytes once, at its class's rate; nothing in the other pass */
  struct cs_op cat = {"qkv_grad_cat", CS_OP_MEMORY, 0, 0, 0, 0, 0, 1, 0, 1e9, 0, CS_OP_BWD_ONLY};
  assert_close(cs_compute_op_time(&k, &cat, 0), 0, 0);
  assert_close(cs_compute_op_time(&k, &cat, 1), 4e-3, 1e-12);
  struct cs_op red = {"bias_grad", CS_OP_MEMORY, 0, 0, 0, 0, 0, 1, 0, 1e9, 0, CS_OP_BWD_ONLY};
  assert_close(cs_compute_op_time(&k, &red, 1), 1.25e-3, 1e-12);
  struct cs_op cast = {"grad_cast", CS_OP_MEMORY, 0, 0, 0, 0, 0, 1, 0, 1e9, 0, CS_OP_BWD_ONLY};
  assert_close(cs_compute_op_time(&k, &cast, 1), 2.5e-3, 1e-12);
  struct cs_op fwd = {"weight_cast", CS_OP_MEMORY, 0, 0, 0, 0, 0, 1, 0, 1e9, 0, CS_OP_FWD_ONLY};
  assert_close(cs_compute_op_time(&k, &fwd, 0), 2e-3, 1e-12);
  assert_close(cs_compute_op_time(&k, &fwd, 1), 0, 0);
  /* the gain: full at or under share 0.4, none from 0.8, linear between */
  assert_close(cs_compute_power_gain(&g, 0.1), 0.2, 1e-12);
  assert_close(cs_compute_power_gain(&g, 0.4), 0.2, 1e-12);
  assert_close(cs_compute_power_gain(&g, 0.6), 0.1, 1e-12);
  assert_close(cs_compute_power_gain(&g, 0.8), 0, 0);
  assert_close(cs_compute_power_gain(&g, 0.95), 0, 0);
  /* a layer of one 1 TFLOP product (1 ms forward; backward 2 ms: both halves of the same
   * shape) and one elementwise kernel of 1e9 bytes (2 ms forward, 4 ms backward at 0.5 TB/s):
   * tensor-core share 3/9, gain 0.2, so the product takes 1/1.2 ms and 2/1.2 ms */
  struct cs_layer_cost lc;
  memset(&lc, 0, sizeof lc);
  lc.nops = 2;
  double m = 1e4, n = 1e4, kk = 5e3;
  lc.op[0] = (struct cs_op){"fc1", CS_OP_GEMM, 0, 0, m, n, kk, 1, 2 * m * n * kk, 0, 0, 0};
  lc.op[1] = (struct cs_op){"lookup", CS_OP_MEMORY, 0, 0, 0, 0, 0, 1, 0, 1e9, 0, 0};
  lc.fwd_flops = lc.op[0].flops;
  lc.bwd_flops = 2 * lc.fwd_flops;
  double tg = cs_compute_op_time(&k, &lc.op[0], 0), tgb = cs_compute_op_time(&k, &lc.op[0], 1);
  double share = (tg + tgb) / (tg + tgb + 6e-3);
  double gain = cs_compute_power_gain(&g, share);
  assert_true(gain > 0);
  struct cs_layer_time lt;
  cs_compute_layer_time(&k, &lc, &lt);
  assert_close(lt.fwd, 2e-3 + tg / (1 + gain), 1e-12);
  assert_close(lt.bwd, 4e-3 + tgb / (1 + gain), 1e-12);
  /* a GPU file whose shares are the wrong way round is refused, naming the keys */
  assert_int_equal(cs_gpu_load_string("version: 1\nname: t\nmemory: 80GiB\nhbm_bw: 1TBps\n"
                                      "peak_bf16: 1000TFLOPS\ngemm_power_gain: 0.2\n"
                                      "gemm_power_share_lo: 0.8\ngemm_power_share_hi: 0.4\n",
                                      "t.yaml", &g, &err),
                   CS_ERR_RANGE);
  assert_non_null(strstr(err.msg, "gemm_power_share_lo below gemm_power_share_hi"));
}

/* Hybrid sharding (shard=N): ZeRO-3 over groups of N ranks, the gradient shard all-reduced across
 * the dp/N replicas; the plan checks, the groups, the layer's collectives and the memory,
 * against hand-derived figures. */
static void hybrid_sharding(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_workload *w = cs_test_workload("gpt3-6.7b");
  struct cs_plan p, full;
  cs_test_plan("dp=32,zero=3,shard=8,mbs=1,gbs=32", &p);
  cs_test_plan("dp=32,zero=3,mbs=1,gbs=32", &full);
  assert_int_equal(cs_workload_check_plan(w, &p, &err), CS_OK);
  assert_int_equal(cs_plan_group_size(&p, CS_GROUP_DP), 8);
  assert_int_equal(cs_plan_group_size(&p, CS_GROUP_REPLICA), 4);
  assert_int_equal(cs_plan_group_size(&full, CS_GROUP_DP), 32);
  assert_int_equal(cs_plan_group_size(&full, CS_GROUP_REPLICA), 1);
  char text[256];
  cs_plan_format(&p, text, sizeof text);
  assert_non_null(strstr(text, ",zero=3,shard=8,"));
  /* a block: gathers and reduce-scatters over the 8-rank group, and one all-reduce of the
   * gradient shard (an eighth of the block's gradient bytes) across the 4 replicas */
  struct cs_layer_cost c;
  assert_int_equal(cs_workload_layer_cost(w, &p, 5, &c, &err), CS_OK);
  const struct cs_comm *rs = find_comm(&c, CS_COLL_REDUCE_SCATTER, CS_GROUP_DP, CS_PHASE_BWD);
  const struct cs_comm *ar = find_comm(&c, CS_COLL_ALL_REDUCE, CS_GROUP_REPLICA, CS_PHASE_BWD);
  assert_non_null(rs);
  assert_non_null(ar);
  assert_close(rs->bytes, c.params * 2, 1e-12);
  assert_close(ar->bytes, c.params * 2 / 8, 1e-12);
  assert_int_equal(cs_workload_layer_cost(w, &full, 5, &c, &err), CS_OK);
  assert_null(find_comm(&c, CS_COLL_ALL_REDUCE, CS_GROUP_REPLICA, CS_PHASE_BWD));
  /* weights, gradients and optimizer state split 8 ways instead of 32 */
  struct cs_memory mh, mf;
  assert_int_equal(cs_memory_estimate(w, &p, NULL, &mh, &err), CS_OK);
  assert_int_equal(cs_memory_estimate(w, &full, NULL, &mf, &err), CS_OK);
  assert_close(mh.optimizer, 4 * mf.optimizer, 1e-9);
  assert_close(mh.grads, 4 * mf.grads, 1e-9);
  /* the checks: zero=3 only, a divisor of dp, no cp or ep */
  static const char *const bad[][2] = {
      {"dp=32,zero=1,shard=8,mbs=1,gbs=32", "shard=8 needs zero=3"},
      {"dp=32,zero=3,shard=6,mbs=1,gbs=32", "shard=6 must divide dp=32"},
      {"dp=16,cp=2,zero=3,shard=8,mbs=1,gbs=16", "without context or expert parallelism"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cs_test_plan(bad[i][0], &p);
    assert_int_equal(cs_workload_check_plan(w, &p, &err), CS_ERR_USAGE);
    if (!strstr(err.msg, bad[i][1])) fail_msg("%s: %s", bad[i][0], err.msg);
  }
  cs_workload_free(w);
}

static void gpus_and_compute(void **state) {
  (void)state;
  struct cs_gpu g;
  cs_test_gpu("a100-80gb", &g);
  assert_close(g.memory, 80.0 * 1073741824, 1e-12);
  assert_close(g.peak_bf16, 312e12, 1e-12);
  assert_close(g.hbm_bw, 2039e9, 1e-12);
  cs_test_gpu("h100-sxm", &g);
  assert_close(g.peak_bf16, 989.4e12, 1e-12);
  assert_close(g.hbm_bw, 3.35e12, 1e-12);
  char **names = NULL;
  size_t n = 0;
  struct cs_error err = {0};
  assert_int_equal(cs_datadir_list("gpus", "model/gpus", NULL, &names, &n, &err), CS_OK);
  assert_true(n >= 9);
  for (size_t i = 0; i < n; i++)
    cs_test_gpu(names[i], &g); /* every bundled file loads */
  cs_datadir_list_free(names, n);
  assert_int_equal(cs_datadir_list("workloads", "model/workloads", NULL, &names, &n, &err), CS_OK);
  for (size_t i = 0; i < n; i++)
    cs_workload_free(cs_test_workload(names[i]));
  cs_datadir_list_free(names, n);
  char path[256];
  assert_int_equal(
      cs_datadir_find("gpus", "model/gpus", "no-such-gpu", NULL, path, sizeof path, &err),
      CS_ERR_IO);
  assert_non_null(strstr(err.msg, "no-such-gpu"));

  assert_int_equal(
      cs_gpu_load_string("version: 1\nname: x\nmemory: 80\nhbm_bw: 1TBps\n", "g.yaml", &g, &err),
      CS_ERR_PARSE);
  assert_non_null(strstr(err.msg, "g.yaml:3:9:"));
  assert_int_equal(
      cs_gpu_load_string("version: 1\nname: x\nmemory: 8GiB\nhbm_bw: 1TBps\n", "g.yaml", &g, &err),
      CS_ERR_RANGE);
  assert_non_null(strstr(err.msg, "at least one precision"));

  /* roofline: a large square GEMM at gemm_efficiency * x/(x + half) of peak */
  struct cs_compute c;
  cs_test_gpu("a100-80gb", &g);
  assert_int_equal(cs_compute_init(&c, &g, CS_PREC_BF16, &err), CS_OK);
  struct cs_op op = {"gemm", CS_OP_GEMM, 0, 0, 8192, 8192, 8192, 1, 2.0 * 8192 * 8192 * 8192,
                     0,      0,          0};
  double eff = 0.8 * 8192 / (8192 + 64.0);
  assert_close(cs_compute_gemm_efficiency(&c, 8192, 8192, 8192), eff, 1e-12);
  assert_close(cs_compute_op_time(&c, &op, 0), op.flops / (312e12 * eff) + 3e-6, 1e-9);
  assert_true(cs_compute_gemm_efficiency(&c, 8192, 8192, 128) < eff);
  /* a memory-bound kernel runs at mem_efficiency of the HBM bandwidth */
  struct cs_op mem = {"copy", CS_OP_MEMORY, 0, 0, 0, 0, 0, 1, 0, 1e9, 0, 0};
  assert_close(cs_compute_op_time(&c, &mem, 0), 1e9 / (0.8 * 2039e9) + 3e-6, 1e-9);
  assert_close(cs_compute_op_time(&c, &mem, 1), 2e9 / (0.8 * 2039e9) + 3e-6, 1e-9);
  /* measured efficiencies replace the curve */
  static const struct cs_gemm_point pts[] = {{1024, 1024, 1024, 0.5}, {8192, 8192, 8192, 0.9}};
  cs_compute_set_gemm_table(&c, pts, 2);
  assert_close(cs_compute_gemm_efficiency(&c, 6000, 9000, 8000), 0.9, 0);
  assert_close(cs_compute_gemm_efficiency(&c, 1000, 1000, 2000), 0.5, 0);
  cs_compute_set_gemm_table(&c, NULL, 0);
  /* a measured single-GPU time is split over the layers in proportion */
  struct cs_workload *w = cs_test_workload("gpt2-124m");
  struct cs_plan p;
  cs_test_plan("mbs=8", &p);
  struct cs_layer_time sum, sum2;
  struct cs_layer_time *per = calloc(w->nlayer, sizeof *per);
  assert_int_equal(cs_compute_microbatch(&c, w, &p, -1, per, &sum, &err), CS_OK);
  double ratio = per[3].fwd / sum.fwd;
  assert_int_equal(cs_compute_calibrate(&c, w, &p, 0.25, &err), CS_OK);
  assert_int_equal(cs_compute_microbatch(&c, w, &p, -1, per, &sum2, &err), CS_OK);
  assert_close(sum2.fwd + sum2.bwd + sum2.recompute, 0.25, 1e-9);
  assert_close(per[3].fwd / sum2.fwd, ratio, 1e-9);
  assert_int_equal(cs_compute_calibrate(&c, w, &p, -1, &err), CS_ERR_RANGE);
  free(per);
  /* the forward of a GPT runs at a plausible fraction of peak: between 30% and 80% */
  double flops = 0;
  for (size_t i = 0; i < w->nlayer; i++)
    flops += w->layer[i].fwd_flops * 8;
  assert_int_equal(cs_compute_init(&c, &g, CS_PREC_BF16, &err), CS_OK);
  assert_int_equal(cs_compute_microbatch(&c, w, &p, -1, NULL, &sum, &err), CS_OK);
  assert_true(flops / sum.fwd > 0.3 * 312e12 && flops / sum.fwd < 0.8 * 312e12);
  cs_workload_free(w);
  /* precisions a GPU lacks */
  cs_test_gpu("v100-16gb", &g);
  assert_int_equal(cs_compute_init(&c, &g, CS_PREC_BF16, &err), CS_ERR_UNSUPPORTED);
  assert_non_null(strstr(err.msg, "bf16"));
  assert_int_equal(cs_compute_init(&c, &g, CS_PREC_TF32, &err), CS_OK); /* falls back to fp32 */
  assert_close(c.peak, 15.7e12, 1e-12);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(flops_megatron_2021),
      cmocka_unit_test(flops_sequence_parallel_2022),
      cmocka_unit_test(published_parameters),
      cmocka_unit_test(resnet50),
      cmocka_unit_test(collectives),
      cmocka_unit_test(plans),
      cmocka_unit_test(workload_files),
      cmocka_unit_test(gpus_and_compute),
      cmocka_unit_test(compute_fp8_gemms),
      cmocka_unit_test(compute_measured_terms),
      cmocka_unit_test(eager_backward_and_power_limit),
      cmocka_unit_test(megatron_v1_kernels),
      cmocka_unit_test(hybrid_sharding),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
