/* test_framework.c — framework profiles: every bundled profile loads, the compiled-in default is
 * the bundled pytorch-ddp.yaml, bad files fail with their line, and a profile reaches the plan
 * fields as each framework's own code would set them (values from the sources the YAML cites,
 * written again here). The step simulator then prices what the profile says: ZeRO-3 per module
 * with the gather cost of a ring over many ranks, and Megatron-LM's after-backward reduction. */
#include <string.h>

#include "datadir.h"
#include "framework.h"
#include "plan.h"
#include "testutil.h"

static const char *const bundled_names[] = {"pytorch-ddp",
                                            "fsdp2",
                                            "fsdp2-noreshard",
                                            "dataparallel",
                                            "deepspeed-zero0-v0.3",
                                            "deepspeed-zero1-v0.3",
                                            "deepspeed-zero2-v0.3",
                                            "deepspeed-zero3-v0.3",
                                            "deepspeed-zero1",
                                            "deepspeed-zero2",
                                            "deepspeed-zero3",
                                            "megatron-lm-2021",
                                            "megatron-core",
                                            "horovod",
                                            "apex-ddp",
                                            "megatron-lm-2021-03",
                                            "deepspeed-zero1-v0.3.0"};

static void load(const char *name, struct cs_framework *f) {
  char path[4096];
  struct cs_error err = {0};
  if (cs_datadir_find("frameworks", "model/frameworks", name, NULL, path, sizeof path, &err) !=
      CS_OK)
    fail_msg("%s", err.msg);
  if (cs_framework_load(path, f, &err) != CS_OK) fail_msg("%s", err.msg);
}

static void every_profile_loads(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof bundled_names / sizeof bundled_names[0]; i++) {
    struct cs_framework f;
    load(bundled_names[i], &f);
    assert_string_equal(f.name, bundled_names[i]); /* the file's name is its key */
    assert_true(f.release[0] != '\0');
  }
}

static void default_is_the_file(void **state) {
  (void)state;
  struct cs_framework file, built;
  load(CS_FRAMEWORK_DEFAULT, &file);
  cs_framework_default(&built);
  size_t n;
  const struct cs_cfg_field *fl = cs_framework_fields(&n);
  for (size_t i = 0; i < n; i++) {
    if (strcmp(fl[i].key, "description") == 0 || strcmp(fl[i].key, "release") == 0) continue;
    const char *a = (const char *)&file + fl[i].offset, *b = (const char *)&built + fl[i].offset;
    size_t len = fl[i].type == CS_CFG_STRING                               ? fl[i].size
                 : fl[i].type == CS_CFG_DOUBLE || fl[i].type == CS_CFG_QTY ? sizeof(double)
                                                                           : sizeof(int);
    if (memcmp(a, b, len) != 0) fail_msg("%s differs between the file and the default", fl[i].key);
  }
  /* the default plan names it and finding it reads no file */
  struct cs_plan p;
  cs_plan_init(&p);
  assert_string_equal(p.framework, CS_FRAMEWORK_DEFAULT);
  struct cs_framework f;
  struct cs_error err = {0};
  assert_int_equal(cs_framework_find(p.framework, NULL, &f, &err), CS_OK);
  assert_int_equal(f.grad_reduce, CS_FW_GRAD_OVERLAP);
}

static void bad_files(void **state) {
  (void)state;
  struct cs_framework f;
  struct cs_error err = {0};
  const char *unknown = "version: 1\nname: x\nrelease: y\nbucket_cap_mb: 25\n";
  assert_int_equal(cs_framework_load_string(unknown, "x.yaml", &f, &err), CS_ERR_PARSE);
  assert_non_null(strstr(err.msg, "x.yaml:4:"));
  assert_non_null(strstr(err.msg, "bucket_cap_mb"));
  const char *v2 = "version: 2\nname: x\nrelease: y\n";
  assert_int_equal(cs_framework_load_string(v2, "x.yaml", &f, &err) == CS_OK, 0);
  assert_non_null(strstr(err.msg, "x.yaml:1:"));
  const char *unitless = "version: 1\nname: x\nrelease: y\ngrad_bucket: 25\n";
  assert_int_equal(cs_framework_load_string(unitless, "x.yaml", &f, &err) == CS_OK, 0);
  const char *badenum = "version: 1\nname: x\nrelease: y\ngrad_reduce: sometimes\n";
  assert_int_equal(cs_framework_load_string(badenum, "x.yaml", &f, &err) == CS_OK, 0);
  assert_non_null(strstr(err.msg, "grad_reduce"));
  assert_int_equal(cs_framework_find("no-such-framework", NULL, &f, &err), CS_ERR_IO);
}

static void applied_to_plans(void **state) {
  (void)state;
  struct cs_framework f;
  struct cs_plan p;
  struct cs_error err = {0};
  /* Megatron-Core: bucket max(4e7, 1e6 dp) parameters (distributed_data_parallel.py), fp32
   * gradients under bf16, distributed optimizer as ZeRO-1, TP overlap */
  load("megatron-core", &f);
  assert_int_equal(cs_plan_parse("dp=8", &p, &err), CS_OK);
  cs_framework_apply(&f, &p);
  assert_close(p.bucket, 4e7 * 4, 1e-12);
  assert_int_equal(p.zero, 1);
  assert_int_equal(p.overlap_tp, 1);
  assert_close(p.grad_bytes, 4, 0);
  assert_int_equal(cs_plan_parse("dp=128", &p, &err), CS_OK);
  cs_framework_apply(&f, &p);
  assert_close(p.bucket, 128e6 * 4, 1e-12);
  /* a plan key set away from its default wins over the profile */
  assert_int_equal(cs_plan_parse("dp=128,bucket=8MiB,overlap_tp=false", &p, &err), CS_OK);
  cs_framework_apply(&f, &p);
  assert_close(p.bucket, 8 * 1048576.0, 0);
  /* Megatron-LM 2021: one all-reduce of every gradient after backward */
  load("megatron-lm-2021", &f);
  assert_int_equal(cs_plan_parse("dp=8", &p, &err), CS_OK);
  cs_framework_apply(&f, &p);
  assert_int_equal(p.overlap_grad, 0);
  assert_true(p.bucket >= 1e12);
  /* Megatron-LM commit 8aa4619 (DLPerf's): the same after-backward reduction, but every TP rank
   * sends its whole activation to the next stage (training.py communicate); v2.5 splits it */
  load("megatron-lm-2021-03", &f);
  assert_int_equal(f.pp_send, CS_FW_PP_FULL);
  assert_int_equal(cs_plan_parse("dp=8", &p, &err), CS_OK);
  cs_framework_apply(&f, &p);
  assert_int_equal(p.overlap_grad, 0);
  load("megatron-lm-2021", &f);
  assert_int_equal(f.pp_send, CS_FW_PP_SPLIT);
  /* DeepSpeed v0.3 ZeRO-0: 5e8-element buckets of fp16 gradients after backward */
  load("deepspeed-zero0-v0.3", &f);
  assert_int_equal(cs_plan_parse("dp=8,precision=fp16", &p, &err), CS_OK);
  cs_framework_apply(&f, &p);
  assert_close(p.bucket, 5e8 * 2, 1e-12);
  assert_int_equal(p.overlap_grad, 0);
  /* DeepSpeed 0.3.0+7d4d742 (DLPerf's) ZeRO-1 reduce-scatters (reduce_scatter defaulted to True);
   * v0.3.16 all-reduces */
  load("deepspeed-zero1-v0.3.0", &f);
  assert_int_equal(f.zero_reduce_scatter, 1);
  load("deepspeed-zero1-v0.3", &f);
  assert_int_equal(f.zero_reduce_scatter, 0);
  /* apex DDP: buckets of at least message_size = 1e7 elements of the gradients' own type,
   * overlapped (apex/parallel/distributed.py); a script's message_size comes as the plan's bucket
   */
  load("apex-ddp", &f);
  assert_int_equal(cs_plan_parse("dp=8,precision=fp16,grad_bytes=2", &p, &err), CS_OK);
  cs_framework_apply(&f, &p);
  assert_close(p.bucket, 1e7 * 2, 1e-12);
  assert_int_equal(p.overlap_grad, 1);
  assert_int_equal(cs_plan_parse("dp=8,precision=fp32,bucket=1GB", &p, &err), CS_OK);
  cs_framework_apply(&f, &p);
  assert_close(p.bucket, 1e9, 1e-12);
  /* DataParallel */
  load("dataparallel", &f);
  assert_int_equal(cs_plan_parse("dp=4", &p, &err), CS_OK);
  cs_framework_apply(&f, &p);
  assert_int_equal(p.dp_mode, CS_DP_DATAPARALLEL);
  /* the default changes nothing */
  struct cs_plan d, q;
  cs_plan_init(&d);
  q = d;
  cs_framework_default(&f);
  cs_framework_apply(&f, &q);
  assert_memory_equal(&d, &q, sizeof d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_profile_loads),
      cmocka_unit_test(default_is_the_file),
      cmocka_unit_test(bad_files),
      cmocka_unit_test(applied_to_plans),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
