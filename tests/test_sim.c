/* test_sim.c — the step simulator: schedule properties, monotonicity, the bucket latency effect
 * and error paths. The validation against published figures (predicted vs published with the
 * error) is `commscale validate` over the case files of tests/validation (ctest "validate").
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
#include "framework.h"
#include "gpu.h"
#include "pipeline.h"
#include "plan.h"
#include "step.h"
#include "scenario.h"
#include "testutil.h"
#include "topology.h"
#include "workload.h"

/* Everything one prediction needs, loaded by name (the plan is s->base). */
static void setup_load(struct cs_scenario *s, const char *wl, const char *gpu, const char *topo,
                       const char *plan) {
  struct cs_error err = {0};
  struct cs_scenario_spec sp = {.workload = wl, .gpu = gpu, .topology = topo, .plan_text = plan};
  if (cs_scenario_load(s, &sp, &err) != CS_OK) fail_msg("%s", err.msg);
}

static struct cs_sim_inputs inputs(struct cs_scenario *s) {
  return cs_scenario_sim_inputs(s, &s->base);
}

static struct cs_sim_result predict(struct cs_scenario *s) {
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
  for (int i = 0; i < pp * v; i++)
    f[i] = 1.0 / v, b[i] = 2.0 / v; /* a stage: fwd 1, bwd 2 */
  double end = cs_sim_pipe_run(p, f, b, 0, st, NULL);
  /* every stage busy m * 3; the first stage idles (p - 1) * 3 / v */
  assert_close(end, m * 3.0 + (pp - 1) * 3.0 / v, 1e-12);
  if (v == 1) assert_close(st[0].idle / end, (pp - 1.0) / (m + pp - 1.0), 1e-12);
  for (int s = 0; s < pp; s++)
    assert_close(st[s].busy, m * 3.0, 1e-12);
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

/* Four lanes in one pass give each lane's own run, bit for bit; a rerun with extras gives the
 * full run with them. Durations from a fixed linear congruential sequence. */
static void test_pipe_lanes(void **state) {
  (void)state;
  enum { PP = 4, V = 2, M = 8, NC = PP * V, L = CS_SIM_PIPE_LANES };
  struct cs_sim_pipe *p = NULL;
  assert_int_equal(cs_sim_pipe_alloc(PP, V, M, &p, NULL), CS_OK);
  double f[NC * L], b[NC * L], bx[NC * L], sx[NC * L], p2p[L];
  unsigned long x = 12345;
  for (int i = 0; i < NC * L; i++) {
    x = x * 6364136223846793005ul + 1442695040888963407ul;
    f[i] = 1 + (double)(x >> 40) / (1 << 24);
    b[i] = 2 * f[i] + (double)((x >> 20) & 1023) / 1024;
    bx[i] = (double)((x >> 8) & 255) / 256;
    sx[i] = (double)((x >> 30) & 255) / 512;
  }
  for (int l = 0; l < L; l++)
    p2p[l] = 0.1 * l;
  struct cs_sim_pipe_stage st[PP * L], one[PP];
  double lb[NC * L], lb1[NC];
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 0)
      cs_sim_pipe_run_lanes(p, L, f, b, p2p, NULL, NULL, st, lb);
    else
      cs_sim_pipe_rerun_lanes(p, L, f, b, p2p, bx, sx, st, lb);
    for (int l = 0; l < L; l++) {
      double fl[NC], bl[NC], bxl[NC], sxl[NC];
      for (int k = 0; k < NC; k++)
        fl[k] = f[k * L + l], bl[k] = b[k * L + l], bxl[k] = bx[k * L + l], sxl[k] = sx[k * L + l];
      cs_sim_pipe_run_ext(p, fl, bl, p2p[l], pass ? bxl : NULL, pass ? sxl : NULL, one, lb1);
      for (int s = 0; s < PP; s++) {
        assert_true(st[s * L + l].end == one[s].end);
        assert_true(st[s * L + l].busy == one[s].busy);
      }
      for (int k = 0; k < NC; k++)
        assert_true(lb[k * L + l] == lb1[k]);
    }
    if (pass == 0) cs_sim_pipe_run_lanes(p, L, f, b, p2p, NULL, NULL, st, lb); /* for the rerun */
  }
  cs_sim_pipe_free(p);
}

/* A pipeline run through the simulator: the bubble it reports is the schedule's. */
static void test_step_bubble(void **state) {
  (void)state;
  struct cs_scenario s;
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
  cs_scenario_fini(&s);
}

/* ---- properties --------------------------------------------------------------------------- */

static void test_more_bandwidth_never_slower(void **state) {
  (void)state;
  static const char *plans[] = {"dp=64,zero=3,mbs=1,gbs=256", "tp=8,pp=2,dp=4,zero=1,mbs=1,gbs=256",
                                "dp=64,mbs=1,gbs=64,bucket=4MiB"};
  for (size_t k = 0; k < sizeof plans / sizeof plans[0]; k++) {
    struct cs_scenario s;
    setup_load(&s, "gpt3-6.7b", "h100-sxm", "dgx-h100", plans[k]);
    double prev = INFINITY;
    for (double gbps = 25; gbps <= 3200; gbps *= 2) {
      s.topo.net.nic_bw = gbps * 1e9 / 8;
      struct cs_sim_result r = predict(&s);
      assert_true(r.step <= prev * (1 + 1e-12));
      prev = r.step;
    }
    cs_scenario_fini(&s);
  }
}

static void test_hidden_comm_scales(void **state) {
  (void)state;
  struct cs_scenario s;
  setup_load(&s, "resnet50", "h100-sxm", "dgx-h100", "mbs=256");
  double prev = 0;
  for (int nodes = 1; nodes <= 64; nodes *= 2) {
    s.base.dp = nodes * 8;
    s.base.gbs = 0;
    struct cs_sim_result r = predict(&s);
    assert_true(r.samples_per_s >= prev);
    prev = r.samples_per_s;
  }
  cs_scenario_fini(&s);
}

/* The bucket size trades latency for overlap: thousands of tiny buckets pay a latency each, one
 * bucket of all gradients cannot start before backward ends; 25 MiB beats both. */
static void test_bucket_latency(void **state) {
  (void)state;
  struct cs_scenario s;
  setup_load(&s, "gpt2-1.5b", "v100-32gb", "dgx1-v100-edr", "dp=32,mbs=4,precision=fp16");
  double t[3];
  const double bucket[3] = {64 * 1024.0, 25 * 1048576.0, 8 * 1073741824.0};
  for (int i = 0; i < 3; i++) {
    s.base.bucket = bucket[i];
    struct cs_sim_result r = predict(&s);
    t[i] = r.step;
    print_message("bucket %.0f B: step %.4f s, exposed dp %.4f s\n", bucket[i], r.step, r.part.dp);
  }
  assert_true(t[0] > t[1] * 1.02);
  assert_true(t[2] > t[1] * 1.02);
  s.base.overlap_grad = 0; /* no overlap is no better than one huge bucket */
  struct cs_sim_result r = predict(&s);
  assert_true(r.step >= t[1]);
  cs_scenario_fini(&s);
}

/* The collectives a run of in issues, as the collective list reports them, into info (at most
 * max); returns their count. */
static int run_collectives(struct cs_sim_inputs *in, struct cs_sim_coll_info *info, int max) {
  struct cs_sim *sim = NULL;
  struct cs_error err = {0};
  assert_int_equal(cs_sim_alloc(in, &sim, &err), CS_OK);
  int n = cs_sim_collectives(sim, info, max);
  cs_sim_free(sim);
  return n;
}

/* The gradient reductions a step issues, as the collective list reports them: floor(G / B) full
 * buckets of B bytes and one tail of the rest, G the gradient bytes of one GPU. GPT-2 124M in
 * fp16 has 124,439,808 parameters (12 blocks of 7,087,872 with biases, 50257 x 768 tokens and 1024
 * x 768 positions, the final norm's 1536): G = 248,879,616 bytes. One 1e9-byte bucket (DeepSpeed's
 * 5e8 elements) holds it all: one call of G, not one of the bucket's size. */
static void check_buckets(struct cs_scenario *s, double full_bytes, long full_calls,
                          double tail_bytes) {
  struct cs_sim_inputs in = inputs(s);
  struct cs_sim_coll_info info[64];
  int n = run_collectives(&in, info, 64);
  long full = 0, tail = 0;
  for (int i = 0; i < n; i++) {
    if (info[i].group != CS_GROUP_DP || info[i].coll != CS_COLL_ALL_REDUCE) continue;
    if (info[i].bytes == full_bytes)
      full += info[i].calls;
    else if (fabs(info[i].bytes - tail_bytes) < 0.5)
      tail += info[i].calls;
    else
      fail_msg("unexpected dp all_reduce of %.0f bytes", info[i].bytes);
  }
  assert_int_equal(full, full_calls);
  assert_int_equal(tail, tail_bytes > 0 ? 1 : 0);
}

static void test_bucket_calls(void **state) {
  (void)state;
  struct cs_scenario s;
  setup_load(&s, "gpt2-124m", "v100-16gb", "dgx1-v100-edr",
             "dp=8,mbs=4,precision=fp16,framework=deepspeed-zero0-v0.3");
  const double G = 124439808.0 * 2;
  check_buckets(&s, 1e9, 0, G);
  s.base.bucket = 1e8; /* two full buckets and a tail of 48,879,616 bytes */
  check_buckets(&s, 1e8, 2, G - 2e8);
  cs_scenario_fini(&s);
}

/* ZeRO-3 moves 1.5x the data of plain data parallelism and needs the network (VALIDATION.md
 * section 7): at 64 GPUs its efficiency climbs with the network speed and 100 Gb/s per node is
 * markedly worse than 800. */
static void test_zero3_network(void **state) {
  (void)state;
  struct cs_scenario s;
  setup_load(&s, "gpt3-6.7b", "v100-32gb", "dgx1-v100-edr",
             "dp=64,zero=3,mbs=1,gbs=64,precision=fp16");
  s.topo.net.nodes = 0;
  double eff[4];
  const double gbps[4] = {100, 200, 400, 800};
  struct cs_error err = {0};
  for (int i = 0; i < 4; i++) {
    s.topo.net.nic_bw = gbps[i] * 1e9 / 8;
    struct cs_sim_result r = predict(&s);
    double one;
    assert_int_equal(cs_sim_single_gpu(s.workload, &s.base, &s.compute, &one, &err), CS_OK);
    eff[i] = r.samples_per_s / one / 64;
    print_message("ZeRO-3 6.7B on 64 V100, %4.0f Gb/s per node: scaling efficiency %.1f%%\n",
                  gbps[i], 100 * eff[i]);
    if (i) assert_true(eff[i] >= eff[i - 1]);
  }
  assert_true(eff[0] < 0.8 * eff[3]);
  cs_scenario_fini(&s);
}

/* ---- DataParallel, ring attention, NIC sharing ---------------------------------------------- */

static struct cs_sim_result run_in(struct cs_sim_inputs *in, int share) {
  struct cs_error err = {0};
  struct cs_sim *sim = NULL;
  struct cs_sim_result r;
  if (cs_sim_alloc(in, &sim, &err) != CS_OK) fail_msg("%s", err.msg);
  cs_sim_set_nic_sharing(sim, share);
  cs_sim_run(sim, &r);
  cs_sim_free(sim);
  return r;
}

/* The default profile with ZeRO-3 gathered per weight matrix on a serial schedule: no prefetch,
 * no overlap, a device sync per fetch, so that what a unit adds adds to the step exactly; every
 * layer outside the blocks its own unit, as DeepSpeed has them (no root_unit); no host costs
 * (each test sets the one it checks). */
static void serial_units(struct cs_framework *f) {
  cs_framework_default(f);
  f->unit = CS_FW_UNIT_MODULE;
  f->root_unit = 0;
  f->host_call = f->host_module = 0;
  f->prefetch_implicit = 0;
  f->prefetch_depth = 0;
  f->overlap_param = 0;
  f->sync_per_fetch = 1;
}

/* GPT-3 1.3B on one DGX H100 node under plan, simulated with framework profile f (borrowed). */
static struct cs_sim_inputs gpt13b_under(struct cs_scenario *s, const char *plan,
                                         struct cs_framework *f) {
  setup_load(s, "gpt3-1.3b", "h100-sxm", "dgx-h100", plan);
  struct cs_sim_inputs in = inputs(s);
  in.framework = f;
  return in;
}

/* ZeRO-3 priced per gather unit from a framework profile. Without prefetch and with a device
 * sync per fetch the schedule is serial, so host work adds to the step exactly: with one
 * micro-batch, every gathered unit pays host_call three times (its forward gather, its backward
 * gather, its reduce-scatter): GPT-3 1.3B per weight matrix has 24 x 4 block units plus the
 * embedding and the final norm, 98 units. Weights under the persistence threshold are never
 * gathered, so a threshold above every weight leaves no all-gather (the gradients are still
 * reduce-scattered). */
static void test_zero3_units(void **state) {
  (void)state;
  struct cs_scenario s;
  struct cs_framework f;
  serial_units(&f);
  struct cs_sim_inputs in = gpt13b_under(&s, "dp=8,zero=3,mbs=1,gbs=8", &f);
  struct cs_sim_result r0 = run_in(&in, 1);
  f.host_call = 1e-3;
  struct cs_sim_result r1 = run_in(&in, 1);
  assert_close(r1.step - r0.step, 98 * 3 * 1e-3, 1e-9);
  /* per rank of a list-form collective: the same, times the 8 ranks of the group */
  f.host_call = 0;
  f.host_rank = 1e-4;
  struct cs_sim_result r2 = run_in(&in, 1);
  assert_close(r2.step - r0.step, 98 * 3 * 8 * 1e-4, 1e-9);
  /* a copy per rank issued by the host (rank_copies, host_copy above the GPU's 1.3 us per
   * copy kernel): the same as host_rank, the copies' GPU time hidden behind their issue */
  f.host_rank = 0;
  f.rank_copies = 1;
  f.host_copy = 1e-4;
  struct cs_sim_result rc = run_in(&in, 1);
  assert_close(rc.step - r0.step, 98 * 3 * 8 * 1e-4, 1e-9);
  f.rank_copies = 0;
  f.host_copy = 0;
  /* a zero-fill before each gather is one streaming pass over the gathered weight, as a norm
   * after it is: the same added time */
  f.fetch_zero = 1;
  struct cs_sim_result rz = run_in(&in, 1);
  f.fetch_zero = 0;
  f.fetch_norm = 1;
  struct cs_sim_result rn = run_in(&in, 1);
  f.fetch_norm = 0;
  assert_true(rz.step > r0.step);
  assert_close(rz.step, rn.step, 1e-12);
  /* hooks per unit and pass (host_module): 98 units, forward and backward; under full
   * recomputation a block's forward hooks run once more inside backward (96 block units) */
  f.host_module = 1e-3;
  struct cs_sim_result rm = run_in(&in, 1);
  assert_close(rm.step - r0.step, 98 * 2 * 1e-3, 1e-9);
  /* the root (root_unit): the embedding and the final norm are one unit, gathered in forward
   * only. Its hooks run once per pass (97 hooked units, not 98), and its calls are the
   * embedding's forward gather and one reduce-scatter (96 x 3 + 2 = 290 calls, not 294); the
   * backward gather it no longer makes shortens the serial step */
  f.root_unit = 1;
  struct cs_sim_result rr0 = run_in(&in, 1);
  assert_true(rr0.step < rm.step - 2 * 1e-3);
  f.host_module = 0;
  struct cs_sim_result rr = run_in(&in, 1);
  assert_close(rr0.step - rr.step, 97 * 2 * 1e-3, 1e-9);
  assert_true(rr.step < r0.step);
  f.host_call = 1e-3;
  struct cs_sim_result rr1 = run_in(&in, 1);
  assert_close(rr1.step - rr.step, 290 * 1e-3, 1e-9);
  f.host_call = 0;
  f.root_unit = 0;
  /* the prefetch's walk (host_prefetch): with a prefetch larger than the model each fetch walks
   * every unit left in its pass, forward the ones after it, backward the ones before, each other
   * layer taken as as many units as the fetching one has. Forward: the embedding's 1 unit walks
   * 25 layers of 1; block k's 4 units (k = 1..24) walk 4 (25 - k) + 3, + 2, + 1, + 0, together
   * 16 (24 + ... + 1) + 6 x 24 = 4944; the head none: 4969. Backward the same, mirrored. */
  const double prefetch = f.prefetch_params;
  f.host_prefetch = 1e-4;
  f.prefetch_params = 1e15;
  struct cs_sim_result rw = run_in(&in, 1);
  assert_close(rw.step - r0.step, 2 * 4969 * 1e-4, 1e-9);
  f.host_prefetch = 0;
  f.prefetch_params = prefetch;
  /* per parameter tensor in the optimizer step (host_step_param): GPT-3 1.3B holds token and
   * position embeddings, 24 blocks of 4 weights, 4 biases and two layer norms of 2 tensors, and
   * the final norm's 2 (the head is tied): 2 + 24 x 12 + 2 = 292 */
  f.host_step_param = 1e-4;
  struct cs_sim_result rp = run_in(&in, 1);
  assert_close(rp.part.optimizer - r0.part.optimizer, 292 * 1e-4, 1e-12);
  assert_close(rp.step - r0.step, 292 * 1e-4, 1e-9);
  f.host_step_param = 0;
  /* per parameter tensor of a reduction after backward (host_grad_param): the host does it while
   * the GPU still runs the backward it issued, so a little of it (292 x 1 us) hides there; what
   * outlasts the backward is priced with the optimizer phase, each further second per tensor
   * 292 seconds */
  f.host_grad_param = 1e-6;
  struct cs_sim_result rg0 = run_in(&in, 1);
  assert_close(rg0.step, r0.step, 1e-12);
  f.host_grad_param = 1.0;
  struct cs_sim_result rg1 = run_in(&in, 1);
  f.host_grad_param = 2.0;
  struct cs_sim_result rg2 = run_in(&in, 1);
  assert_close(rg2.part.optimizer - rg1.part.optimizer, 292.0, 1e-9);
  assert_close(rg2.step - rg1.step, 292.0, 1e-6);
  assert_true(rg1.step - r0.step < 292.0 && rg1.step - r0.step > 291.0);
  f.host_grad_param = 0;
  /* one GPU reduces no gradients: no per-tensor reduction work, however long it would take */
  struct cs_scenario s1;
  struct cs_sim_inputs in1 = gpt13b_under(&s1, "dp=1,mbs=1,gbs=1", &f);
  struct cs_sim_result one0 = run_in(&in1, 1);
  f.host_grad_param = 1.0;
  struct cs_sim_result one1 = run_in(&in1, 1);
  assert_close(one1.step, one0.step, 1e-12);
  f.host_grad_param = 0;
  cs_scenario_fini(&s1);
  /* hidden behind the units' kernels when the framework does not synchronise */
  f.sync_per_fetch = 0;
  f.host_rank = 1e-7;
  struct cs_sim_result r3 = run_in(&in, 1);
  assert_close(r3.step, r0.step, 1e-12);
  /* persistence above every weight: no gathers (gradients are still reduce-scattered) */
  f.host_rank = 0;
  f.persistence = 1e12;
  struct cs_sim_result r4 = run_in(&in, 1);
  assert_true(r4.step < r0.step);
  struct cs_sim_coll_info info[64];
  int n = run_collectives(&in, info, 64), rs = 0;
  for (int i = 0; i < n; i++) {
    assert_int_not_equal(info[i].coll, CS_COLL_ALL_GATHER);
    rs += info[i].coll == CS_COLL_REDUCE_SCATTER;
  }
  assert_true(rs > 0);
  /* prefetching one unit ahead never slows the step */
  f.persistence = 0;
  f.prefetch_depth = 1;
  f.overlap_param = 1;
  struct cs_sim_result r5 = run_in(&in, 1);
  assert_true(r5.step <= r0.step);
  /* behind units the host holds up (0.1 s of hooks each, no sync), a prefetch issued as a unit
   * starts hides the next gather; one issued when the host reaches the next unit (implicit)
   * hides none in forward, where it is issued as the unit ends, as without prefetch: at least
   * the forward's half of what the prefetch hid comes back (backward, where reduce-scatters
   * queue on the stream, it still goes ahead of them), never more than all of it */
  f.host_module = 0.1;
  struct cs_sim_result rx = run_in(&in, 1);
  f.prefetch_implicit = 1;
  struct cs_sim_result ri = run_in(&in, 1);
  f.prefetch_implicit = 0;
  f.prefetch_depth = 0;
  struct cs_sim_result rq = run_in(&in, 1);
  assert_true(rq.step > rx.step);
  assert_true(ri.step > rx.step + 0.5 * (rq.step - rx.step));
  assert_true(ri.step <= rq.step);
  f.host_module = 0;
  cs_scenario_fini(&s);
}

/* The host's tensor-parallel calls (host_tp_call): hidden while the layer's kernels and TP
 * collectives outlast the host's share of the pass; where the host sets the pace, each further
 * second per call adds one second per TP (and vocabulary-parallel) collective call the pass
 * issues, as the collective list counts them (GPT-3 1.3B at TP 2). */
static void test_host_tp_call(void **state) {
  (void)state;
  struct cs_scenario s;
  struct cs_framework f;
  cs_framework_default(&f);
  struct cs_sim_inputs in = gpt13b_under(&s, "tp=2,mbs=1,gbs=4", &f);
  f.host_tp_call = 0;
  struct cs_sim_result r0 = run_in(&in, 1);
  f.host_tp_call = 1e-9;
  struct cs_sim_result r1 = run_in(&in, 1);
  assert_close(r1.step, r0.step, 1e-12);
  f.host_tp_call = 1;
  struct cs_sim_result ra = run_in(&in, 1);
  f.host_tp_call = 2;
  struct cs_sim_result rb = run_in(&in, 1);
  struct cs_sim_coll_info info[64];
  int n = run_collectives(&in, info, 64);
  long calls = 0;
  for (int i = 0; i < n; i++)
    if ((info[i].group == CS_GROUP_TP || info[i].group == CS_GROUP_EMBED) &&
        (info[i].phase == CS_PHASE_FWD || info[i].phase == CS_PHASE_BWD))
      calls += info[i].calls;
  print_message("TP calls per step %ld: +%.3f s per second a call\n", calls, rb.step - ra.step);
  assert_true(calls >= 24 * 4);
  assert_close(rb.step - ra.step, (double)calls, 1e-6);
  assert_close(rb.part.tp - ra.part.tp, (double)calls, 1e-6);
  cs_scenario_fini(&s);
}

/* Under full recomputation a profile that frees weights after use gathers each matrix three
 * times per micro-batch (forward, recomputed forward, backward). A reuse distance limit keeps a
 * matrix from its recomputed forward to its backward when twice the parameters of the block's
 * later matrices are under it: with a limit above any block every matrix qualifies, with a limit
 * of one parameter only the last (nothing after it) does. GPT-3
 * 1.3B: 24 blocks of 4 matrices, one micro-batch. */
static long gathers(struct cs_sim_inputs *in) {
  struct cs_sim *sim = NULL;
  struct cs_error err = {0};
  if (cs_sim_alloc(in, &sim, &err) != CS_OK) fail_msg("%s", err.msg);
  struct cs_sim_coll_info info[64];
  int n = cs_sim_collectives(sim, info, 64);
  long calls = 0;
  for (int i = 0; i < n; i++)
    if (info[i].coll == CS_COLL_ALL_GATHER) calls += info[i].calls;
  cs_sim_free(sim);
  return calls;
}

static void test_zero3_reuse(void **state) {
  (void)state;
  struct cs_scenario s;
  struct cs_framework f;
  cs_framework_default(&f);
  f.unit = CS_FW_UNIT_MODULE;
  f.regather_recompute = 1;
  struct cs_sim_inputs in = gpt13b_under(&s, "dp=8,zero=3,mbs=1,gbs=8,recompute=full", &f);
  long all = gathers(&in);
  f.max_reuse = 1;
  long last = gathers(&in);
  f.max_reuse = 1e15;
  long every = gathers(&in);
  assert_int_equal(all - last, 24);
  assert_int_equal(all - every, 24 * 4);
  struct cs_sim_result r1 = run_in(&in, 1);
  f.max_reuse = 0;
  struct cs_sim_result r0 = run_in(&in, 1);
  assert_true(r1.step < r0.step);
  /* the hooks run in the recomputed forward too: on the serial schedule (serial_units) 96
   * block units three times, the embedding and the final norm twice */
  serial_units(&f);
  f.regather_recompute = 1;
  struct cs_sim_result rs = run_in(&in, 1);
  f.host_module = 1e-3;
  struct cs_sim_result rm = run_in(&in, 1);
  assert_close(rm.step - rs.step, (96 * 3 + 2 * 2) * 1e-3, 1e-9);
  cs_scenario_fini(&s);
}

/* Megatron-LM 2021 reduces all gradients in one call after backward, so it is never faster than
 * DDP's overlapped buckets; its pipeline send moves 1/tp of the chunk's output per rank and the
 * receiver all-gathers the whole output over TP (without sequence parallelism). */
static void test_framework_schedule(void **state) {
  (void)state;
  struct cs_scenario s;
  setup_load(&s, "gpt3-1.3b", "h100-sxm", "dgx-h100", "tp=2,pp=2,dp=8,mbs=1,gbs=64");
  struct cs_sim_result ddp = predict(&s);
  snprintf(s.base.framework, sizeof s.base.framework, "megatron-lm-2021");
  struct cs_sim_result meg = predict(&s);
  assert_true(meg.step >= ddp.step);
  struct cs_sim_inputs in = inputs(&s);
  struct cs_sim_coll_info info[64];
  int n = run_collectives(&in, info, 64);
  double send = 0, gather = 0;
  for (int i = 0; i < n; i++) {
    if (info[i].coll == CS_COLL_SEND_RECV && info[i].group == CS_GROUP_PP) send = info[i].bytes;
    if (info[i].coll == CS_COLL_ALL_GATHER && info[i].group == CS_GROUP_TP) gather = info[i].bytes;
  }
  /* the output of one stage: mbs x seq x hidden at 2 bytes */
  const double out = 1.0 * 2048 * 2048 * 2;
  assert_close(send, out / 2, 1e-12);
  assert_close(gather, out, 1e-12);
  cs_scenario_fini(&s);
}

/* What setting *flag (a profile value of in's framework) from 0 to `on` adds to the step. */
static double step_added(struct cs_sim_inputs *in, int *flag, int on) {
  *flag = 0;
  double t0 = run_in(in, 1).step;
  *flag = on;
  return run_in(in, 1).step - t0;
}

/* FSDP2's copy-out of each gather (gather_copy): on a serial schedule (no prefetch, a device sync
 * per fetch) every gathered unit's forward and backward gather add a read and a write of its
 * weights at the GPU's copy rate plus one kernel: 98 units (test_zero3_units) whose weights sum
 * to the model's parameters, gathered twice, 4 x params x weight bytes / rate + 2 x 98 kernels. */
static void test_gather_copy(void **state) {
  (void)state;
  struct cs_scenario s;
  struct cs_framework f;
  serial_units(&f);
  struct cs_sim_inputs in = gpt13b_under(&s, "dp=8,zero=3,mbs=1,gbs=8", &f);
  double added = step_added(&in, &f.gather_copy, 1);
  const struct cs_gpu *g = &in.compute->gpu;
  double wb, gb, ob;
  cs_plan_param_bytes(&s.base, &wb, &gb, &ob);
  double want = 4 * cs_workload_params(in.workload) * wb / (g->hbm_bw * g->mem_efficiency) +
                2 * 98 * g->kernel_overhead;
  print_message("gather copies: +%.4f s, by hand %.4f s\n", added, want);
  assert_close(added, want, 1e-6);
  cs_scenario_fini(&s);
}

/* A bucketed reduction's copies of the gradients (grad_copies): each pass reads and writes the
 * gradient bytes once at the GPU's copy rate, on the compute stream, so with DDP on 8 GPUs the
 * step grows by exactly grad_copies x 2 x params x 4 bytes (fp32 gradients) / (hbm_bw x
 * mem_efficiency); one GPU (no reduction) and ZeRO-3 (its units price their own) do not move. */
static void test_grad_copies(void **state) {
  (void)state;
  struct cs_scenario s;
  struct cs_framework f;
  cs_framework_default(&f);
  struct cs_sim_inputs in = gpt13b_under(&s, "dp=8,mbs=1,gbs=8,grad_bytes=4", &f);
  double added = step_added(&in, &f.grad_copies, 2);
  const struct cs_gpu *g = &in.compute->gpu;
  double want = 2 * 2 * cs_workload_params(in.workload) * 4 / (g->hbm_bw * g->mem_efficiency);
  assert_true(want > 1e-3); /* 1.3 B x 16 B at a few TB/s: milliseconds */
  assert_close(added, want, 1e-3);
  /* a measured copy rate (the memop probe's) replaces the GPU file's: at half the rate the
   * copies take twice as long */
  struct cs_compute probed = *in.compute;
  probed.mem_bw[CS_MEM_COPY] = 0.5 * g->hbm_bw * g->mem_efficiency;
  in.compute = &probed;
  assert_close(step_added(&in, &f.grad_copies, 2), 2 * want, 1e-3);
  cs_scenario_fini(&s);
  static const char *const unmoved[] = {"dp=1,mbs=1,gbs=1,grad_bytes=4",
                                        "dp=8,zero=3,mbs=1,gbs=8,grad_bytes=4"};
  for (size_t k = 0; k < 2; k++) {
    in = gpt13b_under(&s, unmoved[k], &f);
    added = step_added(&in, &f.grad_copies, 2);
    assert_true(fabs(added) <= 1e-12);
    cs_scenario_fini(&s);
  }
}

/* Single-process DataParallel on one DGX H100: every micro-batch broadcasts the weights and
 * reduces the gradients through GPU 0 with nothing overlapped. Each moves params x 4 bytes (fp32
 * weights and gradients here) and cannot beat the NVLink rate of one GPU, 450 GB/s per
 * direction (dgx-h100.yaml), so 4 micro-batches add at least 4 x 2 x 4 params / 450e9 s over DDP,
 * whose own gradient traffic hides behind backward. */
static void test_dataparallel(void **state) {
  (void)state;
  struct cs_scenario s;
  setup_load(&s, "gpt2-124m", "h100-sxm", "dgx-h100",
             "dp=8,mbs=8,gbs=256,weight_bytes=4,grad_bytes=4,optim_bytes=8");
  struct cs_sim_inputs in = inputs(&s);
  in.interference = 1;
  /* DDP's copies of the gradients into its buckets set aside (test_grad_copies prices them), so
   * that both run the same kernels and optimizer */
  struct cs_framework f;
  cs_framework_default(&f);
  f.grad_copies = 0;
  in.framework = &f;
  struct cs_sim_result ddp = run_in(&in, 1);
  s.base.dp_mode = CS_DP_DATAPARALLEL;
  struct cs_sim_result dpl = run_in(&in, 1);
  double bytes = 4 * cs_workload_params(s.workload), m = 4;
  double hand = m * 2 * bytes / 450e9;
  print_message("DataParallel %.4f s vs DDP %.4f s: +%.4f s, broadcast + reduce >= %.4f s\n",
                dpl.step, ddp.step, dpl.step - ddp.step, hand);
  assert_true(dpl.step - ddp.step >= hand);
  assert_true(dpl.part.dp >= hand);
  assert_true(dpl.part.dp < 3 * hand); /* the scatter of token ids and latencies are small */
  /* the same kernels and optimizer; the parts still add up */
  assert_close(dpl.part.compute, ddp.part.compute, 1e-12);
  assert_close(dpl.part.optimizer, ddp.part.optimizer, 1e-12);
  assert_close(dpl.part.compute + dpl.part.dp + dpl.part.optimizer, dpl.step, 1e-12);
  /* a per-thread attention graph rebuilt by each of the 8 replicas before each of the 4
   * micro-batches' forwards (host_attn_graph), one after the other: 4 x 8 x 1 ms more, as
   * DataParallel's own time; none for a workload without fused attention */
  const int flash = s.workload->flash_attention;
  s.workload->flash_attention = 1;
  struct cs_sim_result dpf = run_in(&in, 1);
  f.host_attn_graph = 1e-3;
  struct cs_sim_result dpg = run_in(&in, 1);
  assert_close(dpg.step - dpf.step, 4 * 8 * 1e-3, 1e-9);
  assert_close(dpg.part.dp - dpf.part.dp, 4 * 8 * 1e-3, 1e-9);
  s.workload->flash_attention = 0;
  struct cs_sim_result dpn = run_in(&in, 1);
  assert_close(dpn.step, dpl.step, 1e-12);
  f.host_attn_graph = 0;
  s.workload->flash_attention = flash;
  /* what DataParallel cannot run, with the reason */
  struct cs_sim *sim = NULL;
  struct cs_error err = {0};
  static const char *bad[] = {"dp=8,zero=1,mbs=8", "dp=4,tp=2,mbs=8", "dp=4,pp=2,mbs=8,gbs=64",
                              "dp=16,mbs=8"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(cs_plan_parse(bad[i], &s.base, &err), CS_OK);
    s.base.dp_mode = CS_DP_DATAPARALLEL;
    assert_int_equal(cs_sim_alloc(&in, &sim, &err), CS_ERR_USAGE);
    assert_null(sim);
    assert_non_null(strstr(err.msg, "dataparallel"));
    print_message("%s: %s\n", bad[i], err.msg);
  }
  assert_non_null(strstr(err.msg, "one node"));
  assert_int_equal(cs_plan_parse("dp=8,mbs=8,dp_mode=dataparallel", &s.base, &err), CS_OK);
  assert_int_equal(s.base.dp_mode, CS_DP_DATAPARALLEL);
  assert_int_equal(cs_plan_parse("dp_mode=fsdp", &s.base, &err), CS_ERR_USAGE);
  cs_scenario_fini(&s);
}

/* The fastest explained collective of sim of at most max_bytes, or fail. */
static struct cs_sim_coll_info find_coll(const struct cs_sim *sim, int group, int coll, int phase,
                                         double max_bytes) {
  struct cs_sim_coll_info info[64];
  int n = cs_sim_collectives(sim, info, 64), best = -1;
  for (int i = 0; i < n; i++)
    if (info[i].group == group && info[i].coll == coll && info[i].phase == phase &&
        info[i].bytes <= max_bytes && (best < 0 || info[i].time < info[best].time))
      best = i;
  if (best < 0) fail_msg("no such collective");
  return info[best];
}

/* Ring attention, Llama 3 8B (32 blocks, 8 KV heads of 128, sequence 8192) with tp=8 and cp=4 on
 * four DGX H100: each CP rank sends one block of its neighbour's keys and values per step,
 * 8192 x 2 x 1 x 128 x 2 bytes / 4 = 1 MiB per sequence (twice that in backward, with their
 * gradients), cp - 1 = 3 steps per pass, each against attention / 4 of compute. Exposed CP time
 * per step = 2 micro-batches x 32 blocks x 3 x (max(0, x_f - a_f / 4) + max(0, x_b - a_b / 4)). */
static void check_ring(int mbs, double nic_gbps, int expect_exposed) {
  struct cs_scenario s;
  setup_load(&s, "llama3-8b", "h100-sxm", "dgx-h100", "tp=8,cp=4,mbs=1,gbs=2");
  s.base.mbs = mbs, s.base.gbs = 2 * mbs;
  s.topo.net.nic_bw = nic_gbps * 1e9 / 8;
  struct cs_sim_inputs in = inputs(&s);
  struct cs_error err = {0};
  struct cs_sim *sim = NULL;
  if (cs_sim_alloc(&in, &sim, &err) != CS_OK) fail_msg("%s", err.msg);
  struct cs_sim_result r;
  cs_sim_set_nic_sharing(sim, 0); /* the CP group crosses nodes, and so does the dp*cp group */
  cs_sim_run(sim, &r);
  struct cs_sim_coll_info f = find_coll(sim, CS_GROUP_CP, CS_COLL_SEND_RECV, CS_PHASE_FWD, 1e15);
  struct cs_sim_coll_info b = find_coll(sim, CS_GROUP_CP, CS_COLL_SEND_RECV, CS_PHASE_BWD, 1e15);
  assert_close(f.bytes, mbs * 1048576.0, 1e-12);
  assert_close(b.bytes, mbs * 2 * 1048576.0, 1e-12);
  assert_int_equal(f.calls, 2 * 32 * 3);
  /* the attention kernels of one block, as the compute model prices them */
  struct cs_layer_cost lc;
  size_t blk = 1;
  assert_int_equal(s.workload->layer[blk].type, CS_LAYER_BLOCK);
  assert_int_equal(cs_workload_layer_cost(s.workload, &s.base, blk, &lc, &err), CS_OK);
  double af = 0, ab = 0;
  for (size_t k = 0; k < lc.nops; k++)
    if (lc.op[k].attention) {
      af += cs_compute_op_time(&s.compute, &lc.op[k], 0) * s.compute.scale;
      ab += cs_compute_op_time(&s.compute, &lc.op[k], 1) * s.compute.scale;
    }
  double ef = f.time - af / 4, eb = b.time - ab / 4;
  double hand = 2 * 32 * 3 * ((ef > 0 ? ef : 0) + (eb > 0 ? eb : 0));
  print_message("ring attention at %g Gb/s: step %.1f us, attention %.1f/%.1f us, steps %.1f/%.1f "
                "us, exposed CP %.4f ms (hand %.4f ms)\n",
                nic_gbps, f.time * 1e6, af * 1e6, ab * 1e6, f.time * 1e6, b.time * 1e6,
                r.part.cp * 1e3, hand * 1e3);
  assert_close(r.part.cp, hand, 1e-9);
  if (expect_exposed)
    assert_true(hand > 0);
  else
    assert_true(hand == 0);
  cs_sim_free(sim);
  cs_scenario_fini(&s);
}

static void test_cp_ring(void **state) {
  (void)state;
  check_ring(1, 400, 1);  /* NDR, 1 sequence: the steps outlast their blocks */
  check_ring(4, 3200, 0); /* 4 sequences (4x the bytes, 4x the attention), 3.2 Tb/s per GPU:
                             every step hides behind its block */
}

/* NIC sharing, GPT-3 1.3B with tp=8, pp=2, dp=2 on four DGX H100 (tp fills a node, so dp and pp
 * both cross nodes), one micro-batch and one bucket holding all gradients: the last stage ends its
 * backward, sends the input gradient to stage 0 and starts all-reducing its gradients at the same
 * moment. The send (x) is shorter than the all-reduce, so under the half-rate rule it takes 2x,
 * stage 0 starts its backward x later, and the last stage's all-reduce ends x later: whichever
 * stage is critical, the step grows by exactly x. */
static void test_nic_sharing(void **state) {
  (void)state;
  struct cs_scenario s;
  setup_load(&s, "gpt3-1.3b", "h100-sxm", "dgx-h100", "tp=8,pp=2,dp=2,mbs=1,gbs=2,bucket=900GB");
  struct cs_sim_inputs in = inputs(&s);
  in.interference = 1;
  struct cs_sim_result on = run_in(&in, 1), off = run_in(&in, 0);
  struct cs_error err = {0};
  struct cs_sim *sim = NULL;
  if (cs_sim_alloc(&in, &sim, &err) != CS_OK) fail_msg("%s", err.msg);
  struct cs_sim_coll_info x = find_coll(sim, CS_GROUP_PP, CS_COLL_SEND_RECV, CS_PHASE_FWD, 1e15);
  cs_sim_free(sim);
  /* a stage's gradients: at least 12 blocks of 12 h^2 parameters / tp, 2 bytes each, through
   * at most the node's 8 x 400 Gb/s */
  double g = 12 * 12.0 * 2048 * 2048 / 8 * 2 / (8 * 50e9);
  print_message("NIC sharing: step %.6f s, without %.6f s, send %.1f us, all-reduce > %.1f us\n",
                on.step, off.step, x.time * 1e6, g * 1e6);
  assert_int_equal(x.nodes, 2);
  assert_true(x.time < g);
  assert_close(on.step - off.step, x.time, 1e-6);
  double parts = on.part.compute + on.part.tp + on.part.cp + on.part.ep + on.part.dp + on.part.pp +
                 on.part.bubble + on.part.optimizer;
  assert_close(parts, on.step, 1e-9);
  /* doubling every NIC makes the shared step faster still */
  s.topo.net.nic_bw *= 2;
  struct cs_sim_result fast = run_in(&in, 1);
  assert_true(fast.step < on.step);
  /* nothing to share when the data-parallel group stays inside a node */
  cs_scenario_fini(&s);
  setup_load(&s, "gpt3-1.3b", "h100-sxm", "dgx-h100", "tp=4,pp=2,dp=2,mbs=1,gbs=2,bucket=900GB");
  in = inputs(&s);
  on = run_in(&in, 1), off = run_in(&in, 0);
  assert_true(on.step == off.step);
  cs_scenario_fini(&s);
}

/* VALIDATION.md section 6, as a property: whatever the magnitude (the case is a known miss in
 * validation/nvlink.yaml), NVLink must make the 2 x TITAN RTX DDP step faster than PCIe through
 * host memory. */
static void test_nvlink_faster(void **state) {
  (void)state;
  struct cs_scenario s;
  double t[2];
  static const char *topo[2] = {CS_TEST_DATA "/../validation/titan-rtx-nv2.yaml",
                                CS_TEST_DATA "/../validation/titan-rtx-p2p-off.yaml"};
  for (int i = 0; i < 2; i++) {
    setup_load(&s, "gpt2-124m", "titan-rtx", topo[i], "precision=fp32,mbs=4,dp=2");
    t[i] = predict(&s).step;
    cs_scenario_fini(&s);
  }
  assert_true(t[1] > t[0]);
}

/* Hybrid sharding on 8 nodes of 8 H100: with shard >= dp it is plain FSDP to the digit; on a slow
 * network (25 Gb/s per NIC) HSDP moves one all-reduce of an eighth of the gradients between
 * nodes where FSDP moves three full passes (two gathers and a reduce-scatter), so it is faster
 * by far; with a fast network neither waits much, so they stay close. */
static void test_hsdp(void **state) {
  (void)state;
  struct cs_scenario f, h, same;
  const char *base = "dp=64,zero=3,mbs=1,gbs=64,framework=fsdp2";
  setup_load(&f, "gpt3-6.7b", "h100-sxm", "dgx-h100", base);
  setup_load(&h, "gpt3-6.7b", "h100-sxm", "dgx-h100",
             "dp=64,zero=3,shard=8,mbs=1,gbs=64,framework=fsdp2");
  setup_load(&same, "gpt3-6.7b", "h100-sxm", "dgx-h100",
             "dp=64,zero=3,shard=64,mbs=1,gbs=64,framework=fsdp2");
  struct cs_scenario *all[3] = {&f, &h, &same};
  double slow[3], fast[3];
  for (int i = 0; i < 3; i++) {
    all[i]->topo.net.nodes = 0;
    all[i]->topo.net.nic_bw = 25e9 / 8;
    slow[i] = predict(all[i]).step;
    all[i]->topo.net.nic_bw = 3200e9 / 8;
    fast[i] = predict(all[i]).step;
  }
  print_message("6.7B on 64 H100, step at 25 / 3200 Gb/s per NIC: FSDP %.3f / %.3f s, HSDP "
                "(shard 8) %.3f / %.3f s\n",
                slow[0], fast[0], slow[1], fast[1]);
  assert_true(slow[2] == slow[0] && fast[2] == fast[0]);
  assert_true(slow[1] < 0.8 * slow[0]);
  assert_true(fast[1] > 0.9 * fast[0] && fast[1] < 1.1 * fast[0]);
  for (int i = 0; i < 3; i++)
    cs_scenario_fini(all[i]);
}

/* The shared collective-cost cache keys on what the topology sets: after a run on InfiniBand, a
 * run on the same shapes over a socket path (tcp: NCCL offers no LL128 across nodes there) gets
 * its own costs, not the InfiniBand run's. */
static double cached_step(struct cs_scenario *s, struct cs_sim_cache *c) {
  struct cs_error err = {0};
  struct cs_sim_inputs in = inputs(s);
  struct cs_sim *sim = NULL;
  if (cs_sim_alloc_cached(&in, c, &sim, &err) != CS_OK) fail_msg("%s", err.msg);
  struct cs_sim_result r;
  cs_sim_run(sim, &r);
  cs_sim_free(sim);
  return r.step;
}

/* The bundled DGX-1 topology with its network's transport replaced (and the efficiency that
 * depends on it given), written to path. */
static void topology_with_transport(const char *transport, char *path, size_t len) {
  FILE *f = fopen(CS_TEST_DATA "/../../topologies/dgx1-v100-edr.yaml", "r");
  assert_non_null(f);
  static char text[65536];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  const char *key = "  transport: infiniband\n";
  char *at = strstr(text, key);
  assert_non_null(at);
  static char out[65536 + 128];
  snprintf(out, sizeof out, "%.*s  transport: %s\n  efficiency: 0.9\n%s", (int)(at - text), text,
           transport, at + strlen(key));
  char name[64];
  snprintf(name, sizeof name, "dgx1-%s.yaml", transport);
  cs_test_tmp(name, path, len);
  cs_test_write_file(path, out);
}

static void test_cache_transport(void **state) {
  (void)state;
  char ib_path[512], tcp_path[512];
  topology_with_transport("infiniband", ib_path, sizeof ib_path);
  topology_with_transport("tcp", tcp_path, sizeof tcp_path);
  struct cs_scenario ib, tcp;
  const char *plan = "tp=16,mbs=1,gbs=8,precision=fp16";
  setup_load(&ib, "gpt2-355m", "v100-32gb", ib_path, plan);
  setup_load(&tcp, "gpt2-355m", "v100-32gb", tcp_path, plan);
  double t_ib = predict(&ib).step, t_tcp = predict(&tcp).step;
  /* the case has teeth: tree/LL128 carries the 2 MiB tp all-reduces across the two nodes on
   * InfiniBand, ring/Simple over tcp */
  assert_true(t_tcp > t_ib);
  struct cs_sim_cache *c = NULL;
  struct cs_error err = {0};
  assert_int_equal(cs_sim_cache_alloc(&c, &err), CS_OK);
  assert_true(cached_step(&ib, c) == t_ib);
  assert_true(cached_step(&tcp, c) == t_tcp);
  cs_sim_cache_free(c);
  cs_scenario_fini(&ib);
  cs_scenario_fini(&tcp);
}

/* ---- error paths -------------------------------------------------------------------------- */

static void test_errors(void **state) {
  (void)state;
  struct cs_scenario s;
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
  s.base.tp = 7; /* 96 heads do not divide by 7 */
  in = inputs(&s);
  assert_int_equal(cs_sim_alloc(&in, &sim, &err), CS_ERR_USAGE);
  s.base.tp = 8;
  s.base.bucket = 0;
  assert_int_equal(cs_sim_alloc(&in, &sim, &err), CS_ERR_USAGE);
  s.base.bucket = 25 * 1048576.0;
  s.base.vpp = 3;
  s.base.gbs = 2 * 12; /* 12 micro-batches: not a multiple of pp = 8 */
  assert_int_equal(cs_sim_alloc(&in, &sim, &err), CS_ERR_USAGE);
  cs_scenario_fini(&s);
  /* more nodes than the cluster has */
  setup_load(&s, "resnet50", "v100-16gb", "dgx1-v100-edr", "dp=64,mbs=32,precision=fp32");
  in = inputs(&s);
  assert_int_equal(cs_sim_alloc(&in, &sim, &err), CS_ERR_RANGE);
  assert_null(sim);
  cs_scenario_fini(&s);
  cs_sim_free(NULL);
  cs_sim_pipe_free(NULL);
}

/* The band of a host-bound step carries the host's spread: one GPU (no collectives, no
 * framework term), so the half-width is band_rel x (compute + optimizer) and band_host x the
 * host time in quadrature; the host time is what the layers take beyond their kernels, the same
 * step with no host model. A GPU-bound step has none. */
static void test_host_band(void **state) {
  (void)state;
  struct cs_scenario s;
  const char *plan = "dp=1,mbs=1,gbs=2,weight_bytes=4,grad_bytes=4,optim_bytes=8";
  setup_load(&s, "gpt2-124m", "h100-sxm", "dgx-h100", plan);
  s.compute.host_fwd_share = 0;
  s.compute.host_layer = 0;
  struct cs_sim_result g = predict(&s);
  assert_true(g.host == 0);
  s.compute.host_layer = 0.5; /* far above any layer's kernels: every layer waits */
  struct cs_sim_result h = predict(&s);
  double layers = (double)s.workload->nlayer;
  /* two micro-batches, each layer 0.5 s, less what its kernels took without the host */
  assert_close(h.host, 2 * (layers * 0.5 - (g.part.compute / 2)), 1e-9);
  assert_close(h.part.compute, 2 * layers * 0.5, 1e-9);
  double u = CS_COMPUTE_BAND_REL * (h.part.compute + h.part.optimizer);
  double v = CS_COMPUTE_BAND_HOST * h.host;
  assert_close(h.step_hi - h.step, sqrt(u * u + v * v), 1e-9);
  assert_close(h.step - h.step_lo, sqrt(u * u + v * v), 1e-9);
  /* the GPU-bound step: the compute term alone */
  double ug = CS_COMPUTE_BAND_REL * (g.part.compute + g.part.optimizer);
  assert_close(g.step_hi - g.step, ug, 1e-9);
  /* no host term where band_host is 0 (a steps calibration's residuals hold it) */
  s.compute.band_host = 0;
  struct cs_sim_result z = predict(&s);
  assert_close(z.step_hi - z.step, u, 1e-9);
  cs_scenario_fini(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pipe_bubble),
      cmocka_unit_test(test_pipe_transfers),
      cmocka_unit_test(test_pipe_lanes),
      cmocka_unit_test(test_step_bubble),
      cmocka_unit_test(test_more_bandwidth_never_slower),
      cmocka_unit_test(test_hidden_comm_scales),
      cmocka_unit_test(test_bucket_latency),
      cmocka_unit_test(test_bucket_calls),
      cmocka_unit_test(test_zero3_network),
      cmocka_unit_test(test_hsdp),
      cmocka_unit_test(test_cache_transport),
      cmocka_unit_test(test_nvlink_faster),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_gather_copy),
      cmocka_unit_test(test_grad_copies),
      cmocka_unit_test(test_dataparallel),
      cmocka_unit_test(test_cp_ring),
      cmocka_unit_test(test_nic_sharing),
      cmocka_unit_test(test_zero3_units),
      cmocka_unit_test(test_host_tp_call),
      cmocka_unit_test(test_zero3_reuse),
      cmocka_unit_test(test_framework_schedule),
      cmocka_unit_test(test_host_band),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
