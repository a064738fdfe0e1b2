/* test_drivers.c — the verbs' drivers in sim/ as library calls, against hand-derived relations:
 * - validate (sim/validate.h): the error is (predicted - published) / published outside a
 *   published range and zero inside it; the status follows the tolerance; the summary's mean is
 *   the mean of |error|; a section filter that keeps nothing and an unknown key are errors, the
 *   latter located at its file:line:col;
 * - sweep (sim/sweep.h): one record per nodes x batch x curve x speed in that nesting, dp filling
 *   the GPUs, the speedup over the smallest node count equal to the ratio of samples/s (1 at the
 *   smallest), and a plan that does not divide the GPUs a record with its reason;
 * - cs_plan_text_names (model/plan.h): a key named at the start of an item, spaces allowed;
 * - report (sim/report.h): every value checked at load: a target out of range and a missing key
 *   located at the scenario's file:line:col, the price file resolved against the scenario's folder.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "scenario.h"
#include "sweep.h"
#include "testutil.h"
#include "validate.h"

static const char cases_yaml[] = "version: 1\n"
                                 "source: hand-written cases of test_drivers.c\n"
                                 "assumptions: the default collective model\n"
                                 "section: T\n"
                                 "defaults:\n"
                                 "  metric: time\n"
                                 "  collective: all_reduce\n"
                                 "  size: 1MiB\n"
                                 "  nodes: 1\n"
                                 "  gpus_per_node: 8\n"
                                 "cases:\n"
                                 "  - name: inside a wide range\n"
                                 "    published: [1us, 1s]\n"
                                 "  - name: one microsecond\n"
                                 "    published: 1us\n";

static void validate_cases(void **state) {
  (void)state;
  char path[600];
  cs_test_write_file(cs_test_tmp("drivers_cases.yaml", path, sizeof path), cases_yaml);
  struct cs_error err = {0};
  struct cs_val *v = cs_val_alloc("");
  assert_non_null(v);
  assert_int_equal(cs_val_add(v, path, &err), CS_OK);
  assert_int_equal(cs_val_run(v, NULL, &err), CS_OK);
  size_t n;
  const struct cs_val_case *c = cs_val_cases(v, &n);
  assert_int_equal(n, 2);
  assert_string_equal(c[0].section, "T");
  assert_int_equal(c[0].metric, CS_VAL_TIME);
  /* the same collective: one prediction, a few microseconds at least and well under a second */
  assert_true(c[0].pred > 1e-6 && c[0].pred < 1.0);
  assert_close(c[1].pred, c[0].pred, 0);
  assert_close(c[0].err, 0, 0); /* inside [1us, 1s] */
  assert_int_equal(c[0].status, CS_VAL_OK);
  assert_close(c[1].pub_lo, 1e-6, 1e-12);
  assert_close(c[1].err, (c[1].pred - 1e-6) / 1e-6, 1e-12);
  assert_close(c[1].tolerance, 0.12, 0); /* the default */
  assert_int_equal(c[1].status, fabs(c[1].err) <= 0.12 ? CS_VAL_OK : CS_VAL_MISS);
  struct cs_val_summary sm;
  cs_val_summary(v, &sm);
  assert_int_equal(sm.n, 2);
  assert_close(sm.mean, (fabs(c[0].err) + fabs(c[1].err)) / 2, 1e-12);
  assert_close(sm.max, fabs(c[1].err), 1e-12);
  assert_int_equal(sm.over_tol, c[1].status != CS_VAL_OK);
  cs_val_free(v);

  /* a section filter that keeps no case */
  v = cs_val_alloc("");
  assert_int_equal(cs_val_add(v, path, &err), CS_OK);
  assert_int_equal(cs_val_run(v, "9", &err), CS_ERR_USAGE);
  assert_non_null(strstr(err.msg, "no validation case in those sections"));
  cs_val_free(v);

  /* an unknown key, located */
  char bad[600], text[1024];
  snprintf(text, sizeof text, "%s    bogus: 1\n", cases_yaml);
  cs_test_write_file(cs_test_tmp("drivers_bad.yaml", bad, sizeof bad), text);
  v = cs_val_alloc("");
  assert_int_equal(cs_val_add(v, bad, &err), CS_OK);
  assert_int_equal(cs_val_run(v, NULL, &err), CS_ERR_PARSE);
  assert_non_null(strstr(err.msg, "drivers_bad.yaml:16:5: unknown case key \"bogus\""));
  cs_val_free(v);
}

static void sweep_grid(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_scenario s;
  struct cs_scenario_spec spec = {
      .workload = "gpt2-124m", .gpu = "h100-sxm", .topology = "dgx-h100", .plan_text = ""};
  assert_int_equal(cs_scenario_load(&s, &spec, &err), CS_OK);
  const long nodes[] = {1, 2}, gbs[] = {64}, nets[] = {100, 400};
  struct cs_sweep_spec sp = {.nodes = nodes, .nn = 2, .gbs = gbs, .ng = 1, .nets = nets, .nnet = 2};
  assert_int_equal(cs_plan_parse("tp=2,mbs=1", &sp.plans[0], &err), CS_OK);
  assert_int_equal(cs_plan_parse("tp=3,mbs=1", &sp.plans[1], &err), CS_OK);
  sp.fam[0] = sp.fam[1] = -1;
  snprintf(sp.names[0], sizeof sp.names[0], "tp2");
  snprintf(sp.names[1], sizeof sp.names[1], "tp3");
  sp.ncurve = 2;
  struct cs_sweep_rec *r = NULL;
  size_t n = 0;
  assert_int_equal(cs_sweep_run(&s, &sp, &r, &n, &err), CS_OK);
  assert_int_equal(n, 2 * 1 * 2 * 2);
  for (size_t i = 0; i < n; i++) {
    /* nodes, then curve, then speed */
    assert_int_equal(r[i].nodes, nodes[i / 4]);
    assert_int_equal(r[i].curve, (int)(i / 2 % 2));
    assert_close(r[i].gbps_gpu, (double)nets[i % 2], 0);
    if (r[i].curve == 1) { /* 3 does not divide 8 or 16 GPUs */
      assert_false(r[i].ok);
      assert_non_null(strstr(r[i].reason, "not a multiple of tp*pp*cp"));
      continue;
    }
    assert_true(r[i].ok);
    char want[64];
    snprintf(want, sizeof want, "dp=%ld,", r[i].nodes * 8 / 2);
    assert_non_null(strstr(r[i].plan, want));
    assert_true(r[i].step > 0 && r[i].samples_per_s > 0);
    /* the record of the same curve and speed at 1 node */
    const struct cs_sweep_rec *ref = &r[i % 4];
    assert_close(r[i].speedup, r[i].samples_per_s / ref->samples_per_s, 1e-12);
    if (r[i].nodes == 1) assert_close(r[i].speedup, 1, 0);
  }
  free(r);
  cs_scenario_fini(&s);
}

static void report_load(void **state) {
  (void)state;
  static const char scen[] = "version: 1\n"
                             "workload: gpt2-124m\n"
                             "gpu: h100-sxm\n"
                             "topology: dgx-h100\n"
                             "nodes: 1\n"
                             "gbs: 16\n"
                             "target: eff=0.8\n"
                             "prices: p.yaml\n";
  char path[600], text[1024];
  struct cs_error err = {0};
  struct cs_report_scenario *s = malloc(sizeof *s);
  assert_non_null(s);
  cs_test_write_file(cs_test_tmp("drivers_scen.yaml", path, sizeof path), scen);
  assert_int_equal(cs_report_load(path, "", s, &err), CS_OK);
  assert_string_equal(s->target, "eff=0.8");
  char want[700];
  snprintf(want, sizeof want, "%s", path);
  snprintf(strrchr(want, '/') + 1, 16, "p.yaml");
  assert_string_equal(s->prices_path, want);
  assert_string_equal(s->cal_line, "");

  snprintf(text, sizeof text, "%s", scen);
  memcpy(strstr(text, "eff=0.8"), "eff=7.0", 7);
  cs_test_write_file(path, text);
  assert_int_equal(cs_report_load(path, "", s, &err), CS_ERR_PARSE);
  assert_non_null(strstr(err.msg, "drivers_scen.yaml:7:9: target: "));

  cs_test_write_file(path, "version: 1\nworkload: gpt2-124m\n");
  assert_int_equal(cs_report_load(path, "", s, &err), CS_ERR_PARSE);
  assert_non_null(strstr(err.msg, "drivers_scen.yaml:1:1: missing required key \"gpu\""));
  free(s);
}

/* Whether a plan text names a key (predict and the C API fill dp only when it does not). */
static void plan_text_names(void **state) {
  (void)state;
  assert_true(cs_plan_text_names("tp=2,dp=4", "dp"));
  assert_true(cs_plan_text_names("dp=4", "dp"));
  assert_true(cs_plan_text_names("tp=2, dp = 4", "dp"));
  assert_false(cs_plan_text_names("tp=2", "dp"));
  assert_false(cs_plan_text_names("xdp=4", "dp"));
  assert_false(cs_plan_text_names("dpx=4", "dp"));
  assert_false(cs_plan_text_names("", "dp"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plan_text_names),
      cmocka_unit_test(validate_cases),
      cmocka_unit_test(sweep_grid),
      cmocka_unit_test(report_load),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
