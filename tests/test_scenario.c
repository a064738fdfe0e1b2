/* test_scenario.c — the scenario loader (sim/scenario.h), the single-GPU reference plan and the
 * median helper, against hand-derived values:
 * - cs_plan_single_gpu keeps everything but the parallel layout, ZeRO, sp and gbs;
 * - the probe file's interference median is the hand-computed (1.1564 + 1.18041) / 2 of its 8 rows
 *   (the same figure tests/cli/pipeline.sh uses), and an explicit interference wins over it;
 * - a measured single-GPU time scales the compute model so that one micro-batch of the reference
 *   plan takes exactly that time;
 * - relative paths resolve against base_dir, errors name file:line:col, the topology hook runs and
 *   its error ends the load, a failed load leaves nothing to free.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calfile.h"
#include "scenario.h"
#include "stats.h"
#include "testutil.h"

static void median(void **state) {
  (void)state;
  double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, one[] = {7};
  assert_close(cs_stats_median(odd, 3), 2, 0);
  assert_close(cs_stats_median(even, 4), 2.5, 0);
  assert_close(cs_stats_median(one, 1), 7, 0);
  assert_true(even[0] == 1 && even[3] == 4); /* sorted in place */
  assert_true(isnan(cs_stats_median(NULL, 0)));
}

static void single_gpu(void **state) {
  (void)state;
  struct cs_plan p, one;
  struct cs_error err = {0};
  assert_int_equal(cs_plan_parse("tp=8,pp=4,vpp=2,cp=2,ep=2,dp=4,zero=3,sp=true,mbs=2,gbs=512,"
                                 "recompute=full,precision=fp8,bucket=1MiB",
                                 &p, &err),
                   CS_OK);
  one = cs_plan_single_gpu(&p);
  assert_int_equal(one.dp + one.tp + one.pp + one.vpp + one.cp + one.ep, 6);
  assert_int_equal(one.zero, 0);
  assert_int_equal(one.sp, 0);
  assert_int_equal(one.gbs, 0);
  assert_int_equal(one.mbs, 2);
  assert_int_equal(one.recompute, CS_RECOMPUTE_FULL);
  assert_int_equal(one.precision, CS_PREC_FP8);
  assert_close(one.bucket, 1048576, 0);
  assert_int_equal(cs_plan_gpus(&one), 1);
  assert_int_equal(cs_plan_microbatches(&one), 1);
}

static void plan_keys(void **state) {
  (void)state;
  assert_string_equal(cs_plan_layout_key(" dp = 4,tp=8"), "dp");
  assert_null(cs_plan_layout_key("ddp=1,dpx=2"));
  assert_null(cs_plan_layout_key("precision=fp8,bucket=1MiB,overlap_tp=true"));
  assert_string_equal(cs_plan_layout_key("precision=fp8, zero=1,tp=2"), "zero");
  assert_null(cs_plan_layout_key(NULL));
  /* a plan text whose last value names a profile file is a text, not a plan file: the file
   * (absent here) is opened only when the framework is looked up */
  struct cs_plan p;
  struct cs_error err = {0};
  assert_int_equal(cs_scenario_plan("dp=2,framework=my-profile.yaml", &p, &err), CS_OK);
  assert_int_equal(p.dp, 2);
  assert_string_equal(p.framework, "my-profile.yaml");
  /* a name ending in .yaml with no key is a plan file */
  assert_int_equal(cs_scenario_plan("no-such-plan.yaml", &p, &err), CS_ERR_IO);
}

static void by_name(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_scenario s;
  struct cs_scenario_spec sp = {.workload = "gpt2-124m",
                                .gpu = "h100-sxm",
                                .topology = "dgx-h100",
                                .plan_text = "tp=2,mbs=4,precision=fp16",
                                .set = "seq=512,layers=6"};
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_OK);
  assert_string_equal(s.workload->name, "gpt2-124m");
  assert_int_equal(s.workload->seq, 512);
  assert_int_equal(s.workload->layers, 6);
  assert_string_equal(s.gpu.name, "h100-sxm");
  assert_true(s.has_topology);
  assert_int_equal(s.topo.node.gpus, 8);
  assert_int_equal(s.base.tp, 2);
  assert_int_equal(s.base.precision, CS_PREC_FP16);
  assert_close(s.compute.peak, s.gpu.peak_fp16, 0);
  assert_ptr_equal(s.calp, &s.cal);
  assert_close(s.interference, CS_SIM_DEFAULT_INTERFERENCE, 0);
  assert_null(s.gemm);
  struct cs_sim_inputs in = cs_scenario_sim_inputs(&s, &s.base);
  assert_ptr_equal(in.workload, s.workload);
  assert_ptr_equal(in.cal, s.calp);
  cs_scenario_fini(&s);
  cs_scenario_fini(&s); /* harmless twice */
  assert_null(s.workload);
}

static void probes(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_scenario s;
  struct cs_scenario_spec sp = {.workload = "gpt2-124m",
                                .gpu = "h200",
                                .probes = CS_TEST_DATA "/h200x2-commscale/probes.csv",
                                .probes_interference = 1};
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_OK);
  assert_close(s.interference, (1.1564 + 1.18041) / 2, 1e-12);
  assert_true(s.ngemm > 0);
  assert_ptr_equal(s.compute.table, s.gemm);
  assert_false(s.has_topology);
  cs_scenario_fini(&s);
  sp.interference = 1.07; /* given: the probes' median is not taken */
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_OK);
  assert_close(s.interference, 1.07, 0);
  assert_true(s.ngemm > 0);
  cs_scenario_fini(&s);
  sp.interference = 0.5;
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_ERR_RANGE);
  /* the same file without its fp16 rows: a fp16 plan has no measured GEMMs */
  char path[4096], line[1024];
  FILE *in = fopen(sp.probes, "r"),
       *out = fopen(cs_test_tmp("no-fp16.csv", path, sizeof path), "w");
  assert_true(in && out);
  while (fgets(line, sizeof line, in))
    if (strncmp(line, "gemm,fp16,", 10) != 0) fputs(line, out);
  fclose(in);
  fclose(out);
  sp.interference = 0;
  sp.probes = path;
  sp.plan_text = "precision=fp16";
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_ERR_UNSUPPORTED);
  assert_non_null(strstr(err.msg, "no-fp16.csv"));
  assert_null(s.workload);
  sp.plan_text = "precision=bf16";
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_OK);
  cs_scenario_fini(&s);
}

static void measured(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_scenario s;
  struct cs_scenario_spec sp = {.workload = "gpt2-124m",
                                .gpu = "h100-sxm",
                                .plan_text = "tp=2,pp=2,dp=4,mbs=4,zero=1",
                                .measured = 0.123};
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_OK);
  assert_true(s.compute.scale != 1);
  struct cs_plan one = cs_plan_single_gpu(&s.base);
  struct cs_layer_time t;
  assert_int_equal(cs_compute_microbatch(&s.compute, s.workload, &one, -1, NULL, &t, &err), CS_OK);
  assert_close(t.fwd + t.bwd + t.recompute, 0.123, 1e-9);
  assert_int_equal(cs_scenario_calibrate(&s, -1, &err), CS_ERR_RANGE);
  cs_scenario_fini(&s);
}

static int edits_called;
static enum cs_status edit(struct cs_topology *t, void *ctx, struct cs_error *err) {
  edits_called++;
  if (ctx) return cs_error_set(err, CS_ERR_USAGE, "edit refused");
  t->net.nic_bw = 1e9;
  return CS_OK;
}

static void paths_and_errors(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_scenario s;
  char path[4096];
  /* a relative workload path resolves against base_dir */
  cs_test_write_file(cs_test_tmp("scenario-w.yaml", path, sizeof path),
                     "version: 1\nname: tiny\ndescription: tiny\ntype: decoder\nlayers: 2\n"
                     "hidden: 64\nheads: 4\nvocab: 100\nseq: 16\n");
  struct cs_scenario_spec sp = {.workload = "scenario-w.yaml",
                                .gpu = "h100-sxm",
                                .topology = "dgx-h100",
                                .base_dir = CS_TEST_TMP,
                                .edit_topology = edit};
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_OK);
  assert_string_equal(s.workload->name, "tiny");
  assert_int_equal(edits_called, 1);
  assert_close(s.topo.net.nic_bw, 1e9, 0);
  cs_scenario_fini(&s);
  sp.edit_ctx = &s; /* refuse */
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_ERR_USAGE);
  assert_string_equal(err.msg, "edit refused");
  assert_null(s.workload);
  /* an unknown key is reported at its line and column */
  cs_test_write_file(cs_test_tmp("scenario-bad.yaml", path, sizeof path),
                     "version: 1\nname: bad\nbogus: 1\n");
  sp.workload = "scenario-bad.yaml";
  sp.edit_ctx = NULL;
  assert_int_not_equal(cs_scenario_load(&s, &sp, &err), CS_OK);
  assert_non_null(strstr(err.msg, "scenario-bad.yaml:3:1"));
  assert_null(s.workload);
  /* bundled names are not resolved against base_dir; a missing one lists the folders */
  sp.workload = "no-such-workload";
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_ERR_IO);
  assert_non_null(strstr(err.msg, "searched"));
  /* a plan error is prefixed with "plan" */
  sp.workload = "gpt2-124m";
  sp.plan_text = "tp=x";
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_ERR_USAGE);
  assert_true(strncmp(err.msg, "plan", 4) == 0);
  /* a bad override ends the load */
  sp.plan_text = NULL;
  sp.set = "nope=1";
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_ERR_USAGE);
  /* no workload: usage */
  sp.set = NULL;
  sp.workload = NULL;
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_ERR_USAGE);
}

static void shared_cal(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_cal cal;
  cs_cal_init(&cal);
  struct cs_scenario s;
  struct cs_scenario_spec sp = {
      .workload = "gpt2-124m", .gpu = "h100-sxm", .topology = "dgx-h100", .shared_cal = &cal};
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_OK);
  assert_ptr_equal(s.calp, &cal);
  assert_ptr_equal(cs_scenario_search_inputs(&s).cal, &cal);
  cs_scenario_fini(&s);
  sp.cal = "calibration.yaml";
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_ERR_USAGE);
  sp.shared_cal = NULL;
  sp.cal = "/nonexistent/calibration.yaml";
  assert_int_equal(cs_scenario_load(&s, &sp, &err), CS_ERR_IO);
  assert_non_null(strstr(err.msg, "/nonexistent/calibration.yaml"));
  cs_cal_fini(&cal);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(median),           cmocka_unit_test(single_gpu), cmocka_unit_test(plan_keys),
      cmocka_unit_test(by_name),          cmocka_unit_test(probes),     cmocka_unit_test(measured),
      cmocka_unit_test(paths_and_errors), cmocka_unit_test(shared_cal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
