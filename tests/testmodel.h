/* testmodel.h — loading bundled model data in the tests of model/ (which do not link the scenario
 * loader of sim/scenario.h): a workload, a GPU and a plan by name, failing the test with the
 * loader's message. Header-only, so tests that do not use it need not link cs_model. */
#ifndef CS_TESTMODEL_H
#define CS_TESTMODEL_H

#include "datadir.h"
#include "gpu.h"
#include "plan.h"
#include "testutil.h"
#include "workload.h"

/* The bundled workload name (free it with cs_workload_free). */
static inline struct cs_workload *cs_test_workload(const char *name) {
  char path[4096];
  struct cs_error err = {0};
  if (cs_datadir_find("workloads", "model/workloads", name, NULL, path, sizeof path, &err) != CS_OK)
    fail_msg("%s", err.msg);
  struct cs_workload *w = NULL;
  if (cs_workload_load(path, &w, &err) != CS_OK) fail_msg("%s", err.msg);
  return w;
}

/* The bundled GPU name into g. */
static inline void cs_test_gpu(const char *name, struct cs_gpu *g) {
  char path[4096];
  struct cs_error err = {0};
  if (cs_datadir_find("gpus", "model/gpus", name, NULL, path, sizeof path, &err) != CS_OK)
    fail_msg("%s", err.msg);
  if (cs_gpu_load(path, g, &err) != CS_OK) fail_msg("%s", err.msg);
}

/* "key=value,..." into p on top of the defaults. */
static inline void cs_test_plan(const char *text, struct cs_plan *p) {
  struct cs_error err = {0};
  if (cs_plan_parse(text, p, &err) != CS_OK) fail_msg("%s", err.msg);
}

#endif
