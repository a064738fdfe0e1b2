/* fuzz_plan.c — `--plan` strings and plan YAML: the same input is tried as both. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzinput.h"
#include "plan.h"
#include "yamlcfg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void use(const struct cs_plan *p) {
  struct cs_error err = {0};
  char buf[512];
  if (cs_plan_check_self(p, &err) != CS_OK && !err.msg[0]) abort();
  (void)cs_plan_gpus(p);
  (void)cs_plan_microbatches(p);
  double w, g, o;
  cs_plan_param_bytes(p, &w, &g, &o);
  (void)cs_plan_act_bytes(p);
  cs_plan_format(p, buf, sizeof buf);
}

/* cs_plan_init's defaults (converted once, without the YAML parser) must equal the schema's. */
static void check_defaults(void) {
  struct cs_plan a, b;
  size_t n;
  const struct cs_cfg_field *f = cs_plan_fields(&n);
  memset(&b, 0, sizeof b);
  if (cs_cfg_defaults(f, n, &b, NULL) != CS_OK) return; /* out of memory: nothing to compare */
  cs_plan_init(&a);
  if (memcmp(&a, &b, sizeof a) != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int checked;
  if (!checked) {
    checked = 1;
    check_defaults();
  }
  char *text = cs_fuzz_string(data, size);
  struct cs_error err = {0};
  struct cs_plan p;
  cs_plan_init(&p);
  enum cs_status st = cs_plan_parse(text, &p, &err);
  if (st != CS_OK && !err.msg[0]) abort();
  if (st == CS_OK) use(&p);

  struct cs_yaml *doc = NULL;
  if (cs_yaml_load_string(text, "fuzz.yaml", &doc, &err) == CS_OK) {
    cs_plan_init(&p);
    int root = cs_yaml_root(doc);
    if (cs_yaml_kind(doc, root) == CS_YAML_MAP && cs_plan_read(doc, root, &p, &err) == CS_OK)
      use(&p);
    cs_yaml_free(doc);
  }
  free(text);
  return 0;
}
