/* framework.c — framework profiles; see framework.h.
 *
 * One schema table serves the files, the compiled-in default and --help-config. The default's
 * values are the table's own defaults (each cited in model/frameworks/pytorch-ddp.yaml), so the
 * table is the one place they are written in C.
 */
#include "framework.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "datadir.h"
#include "units.h"

static const char *const grad_names[] = {"overlap", "after_backward", NULL};
static const char *const unit_names[] = {"block", "module", NULL};
static const char *const ppsend_names[] = {"full", "split", NULL};
static const char *const rdtype_names[] = {"grad", "fp32", NULL};

#define F(key, type, field, size, unit, lo, hi, def, names, help)                                  \
  { key, type, offsetof(struct cs_framework, field), size, unit, lo, hi, def, names, help }

/* Defaults: PyTorch 2.x DDP (torch/nn/parallel/distributed.py) and FSDP2 (fully_shard) as
 * model/frameworks/pytorch-ddp.yaml cites them; host costs as measured there (DDP's per-gradient
 * work, FSDP2's calls and hooks, TP calls), 0 where not measured (docs/frameworks.md). */
static const struct cs_cfg_field fields[] = {
    F("version", CS_CFG_INT, version, 0, 0, 1, 1, NULL, NULL, "file format version: 1"),
    F("name", CS_CFG_STRING, name, 64, 0, 0, 0, NULL, NULL, "short name, e.g. pytorch-ddp"),
    F("release", CS_CFG_STRING, release, 128, 0, 0, 0, NULL, NULL,
      "the framework release whose defaults the profile holds"),
    F("description", CS_CFG_STRING, description, 256, 0, 0, 0, "\"\"", NULL, "one line"),
    F("grad_reduce", CS_CFG_ENUM, grad_reduce, 0, 0, 0, 0, "overlap", grad_names,
      "overlap: buckets reduced during backward; after_backward: all after it"),
    F("grad_bucket", CS_CFG_QTY, grad_bucket, 0, CS_UNIT_BYTES, 0, 1e13, "25MiB", NULL,
      "gradient bucket of the data-parallel reduction (0 = all in one call)"),
    F("bucket_params", CS_CFG_DOUBLE, bucket_params, 0, 0, 0, 1e13, "0", NULL,
      "params per gradient bucket (0 = grad_bucket bytes)"),
    F("bucket_params_rank", CS_CFG_DOUBLE, bucket_params_rank, 0, 0, 0, 1e13, "0", NULL,
      "params per bucket per data-parallel rank, when more than bucket_params"),
    F("first_bucket", CS_CFG_QTY, first_bucket, 0, CS_UNIT_BYTES, 0, 1e13, "1MiB", NULL,
      "first bucket (DDP); recorded, priced as grad_bucket"),
    F("reduce_dtype", CS_CFG_ENUM, reduce_dtype, 0, 0, 0, 0, "grad", rdtype_names,
      "gradients reduced in their own type (grad) or in fp32"),
    F("reduce_bucket", CS_CFG_DOUBLE, reduce_bucket, 0, 0, 0, 1e13, "0", NULL,
      "params per ZeRO reduce(-scatter) call (0 = grad_bucket)"),
    F("allgather_bucket", CS_CFG_DOUBLE, allgather_bucket, 0, 0, 0, 1e13, "0", NULL,
      "params per ZeRO-1/2 updated-weight all-gather (0 = one per layer)"),
    F("zero_reduce_scatter", CS_CFG_BOOL, zero_reduce_scatter, 0, 0, 0, 1, "true", NULL,
      "ZeRO-1/2 reduce-scatter their gradients (false: all-reduce them)"),
    F("unit", CS_CFG_ENUM, unit, 0, 0, 0, 0, "block", unit_names,
      "ZeRO-3/FSDP gather unit: block (transformer block) or module (one weight)"),
    F("persistence", CS_CFG_DOUBLE, persistence, 0, 0, 0, 1e13, "0", NULL,
      "params: weights this small are not sharded (ZeRO-3)"),
    F("prefetch_params", CS_CFG_DOUBLE, prefetch_params, 0, 0, 0, 1e13, "0", NULL,
      "params gathered ahead of the running unit (0 = one unit)"),
    F("max_live", CS_CFG_DOUBLE, max_live, 0, 0, 0, 1e15, "0", NULL,
      "params gathered at once (0 = no limit)"),
    F("max_reuse", CS_CFG_DOUBLE, max_reuse, 0, 0, 0, 1e15, "0", NULL,
      "a gathered weight reused within this many parameters is kept (0: always released)"),
    F("prefetch_depth", CS_CFG_INT, prefetch_depth, 0, 0, 0, 8, "1", NULL,
      "units whose gather is issued ahead of compute (0 = none)"),
    F("overlap_param", CS_CFG_BOOL, overlap_param, 0, 0, 0, 1, "true", NULL,
      "gathers run beside compute"),
    F("sync_per_fetch", CS_CFG_BOOL, sync_per_fetch, 0, 0, 0, 1, "false", NULL,
      "each fetch synchronises the device, so host work is exposed"),
    F("prefetch_implicit", CS_CFG_BOOL, prefetch_implicit, 0, 0, 0, 1, "true", NULL,
      "the next gather is issued when the host reaches its unit (overlaps the GPU's lag only)"),
    F("fetch_norm", CS_CFG_BOOL, fetch_norm, 0, 0, 0, 1, "false", NULL,
      "each fetch computes the norm of every fetched weight (a read of it, serialised)"),
    F("fetch_zero", CS_CFG_BOOL, fetch_zero, 0, 0, 0, 1, "false", NULL,
      "each gather first zero-fills its full-size buffer and synchronises the device"),
    F("reshard_after_forward", CS_CFG_BOOL, reshard_after_forward, 0, 0, 0, 1, "true", NULL,
      "weights freed after forward and gathered again for backward"),
    F("root_unit", CS_CFG_BOOL, root_unit, 0, 0, 0, 1, "true", NULL,
      "the layers outside the blocks are one unit gathered once per step (FSDP2's root)"),
    F("regather_recompute", CS_CFG_BOOL, regather_recompute, 0, 0, 0, 1, "false", NULL,
      "full recomputation gathers the weights once more"),
    F("overlap_tp", CS_CFG_BOOL, overlap_tp, 0, 0, 0, 1, "false", NULL,
      "TP collectives overlap the neighbouring GEMMs"),
    F("pp_send", CS_CFG_ENUM, pp_send, 0, 0, 0, 0, "full", ppsend_names,
      "pipeline activations: full from every TP rank, or split 1/tp and all-gathered"),
    F("dataparallel", CS_CFG_BOOL, dataparallel, 0, 0, 0, 1, "false", NULL,
      "single-process nn.DataParallel through GPU 0"),
    F("distributed_optimizer", CS_CFG_BOOL, distributed_optimizer, 0, 0, 0, 1, "false", NULL,
      "optimizer state sharded over data-parallel ranks (as ZeRO-1)"),
    F("fp32_logits", CS_CFG_BOOL, fp32_logits, 0, 0, 0, 1, "true", NULL,
      "the loss holds fp32 logits and their gradient"),
    F("grads_freed", CS_CFG_BOOL, grads_freed, 0, 0, 0, 1, "true", NULL,
      "gradients exist from backward to the optimizer step only (zero_grad(set_to_none=True))"),
    F("bucket_view", CS_CFG_BOOL, bucket_view, 0, 0, 0, 1, "false", NULL,
      "gradients are views into the reduction buckets (false: DDP buckets copy them)"),
    F("gather_copy", CS_CFG_BOOL, gather_copy, 0, 0, 0, 1, "true", NULL,
      "each ZeRO-3 gather's output is copied into the parameters on the compute stream"),
    F("grad_copies", CS_CFG_INT, grad_copies, 0, 0, 0, 4, "2", NULL,
      "copies of the gradients a bucketed reduction makes each step (into the buffer, back)"),
    F("host_call", CS_CFG_QTY, host_call, 0, CS_UNIT_TIME, 0, 1, "46us", NULL,
      "host time per collective call"),
    F("host_module", CS_CFG_QTY, host_module, 0, CS_UNIT_TIME, 0, 1, "2490us", NULL,
      "host time per hooked module per pass"),
    F("host_rank", CS_CFG_QTY, host_rank, 0, CS_UNIT_TIME, 0, 1, "0us", NULL,
      "host time per rank of a collective over a list of per-rank tensors"),
    F("rank_copies", CS_CFG_BOOL, rank_copies, 0, 0, 0, 1, "false", NULL,
      "a list-form collective copies each rank's tensor: one kernel per rank"),
    F("host_copy", CS_CFG_QTY, host_copy, 0, CS_UNIT_TIME, 0, 1, "0us", NULL,
      "host time to issue each of those per-rank copies (rank_copies)"),
    F("host_step_param", CS_CFG_QTY, host_step_param, 0, CS_UNIT_TIME, 0, 1, "0us", NULL,
      "host time per parameter tensor in the optimizer step (per-tensor checks with a sync)"),
    F("host_prefetch", CS_CFG_QTY, host_prefetch, 0, CS_UNIT_TIME, 0, 1, "0us", NULL,
      "host time per unit the prefetch looks ahead at, each fetch (until prefetch_params)"),
    F("host_tp_call", CS_CFG_QTY, host_tp_call, 0, CS_UNIT_TIME, 0, 1, "210us", NULL,
      "host time per tensor-parallel collective of a layer's pass (autograd function + call)"),
    F("host_attn_graph", CS_CFG_QTY, host_attn_graph, 0, CS_UNIT_TIME, 0, 10, "0us", NULL,
      "DataParallel: host time per replica and forward to rebuild a per-thread attention graph"),
    F("host_grad_param", CS_CFG_QTY, host_grad_param, 0, CS_UNIT_TIME, 0, 1, "19us", NULL,
      "host time per parameter tensor of the gradient reduction (in or after backward)"),
};
#undef F
#define NFIELDS (sizeof fields / sizeof fields[0])

const struct cs_cfg_field *cs_framework_fields(size_t *n) {
  *n = NFIELDS;
  return fields;
}

/* One default text converted as the schema's parser converts it, without that parser's round
 * trip through a one-scalar YAML document (which allocates): the default profile is built once,
 * under pthread_once, and copied, so that cs_framework_default cannot fail (as plan.c). */
static void set_default(const struct cs_cfg_field *fl, struct cs_framework *f) {
  void *dst = (char *)f + fl->offset;
  double v;
  switch (fl->type) {
  case CS_CFG_INT:
    *(int *)dst = (int)strtol(fl->def, NULL, 10);
    break;
  case CS_CFG_DOUBLE:
    *(double *)dst = strtod(fl->def, NULL);
    break;
  case CS_CFG_QTY:
    if (cs_units_parse_quantity(fl->def, fl->unit, &v, NULL) == CS_OK) *(double *)dst = v;
    break;
  case CS_CFG_BOOL:
    *(int *)dst = strcmp(fl->def, "true") == 0;
    break;
  case CS_CFG_ENUM:
    for (int i = 0; fl->names && fl->names[i]; i++)
      if (strcasecmp(fl->def, fl->names[i]) == 0) {
        *(int *)dst = i;
        break;
      }
    break;
  case CS_CFG_STRING:
    snprintf((char *)dst, fl->size, "%s", strcmp(fl->def, "\"\"") == 0 ? "" : fl->def);
    break;
  }
}

static struct cs_framework defaults;
static pthread_once_t defaults_once = PTHREAD_ONCE_INIT;

static void build_defaults(void) {
  memset(&defaults, 0, sizeof defaults);
  for (size_t i = 0; i < NFIELDS; i++)
    if (fields[i].def) set_default(&fields[i], &defaults);
  defaults.version = 1;
  snprintf(defaults.name, sizeof defaults.name, "%s", CS_FRAMEWORK_DEFAULT);
  snprintf(defaults.release, sizeof defaults.release, "PyTorch 2.5 DDP and FSDP2");
}

void cs_framework_default(struct cs_framework *f) {
  pthread_once(&defaults_once, build_defaults);
  *f = defaults;
}

static enum cs_status read_doc(const struct cs_yaml *d, struct cs_framework *f,
                               struct cs_error *err) {
  struct cs_framework tmp;
  memset(&tmp, 0, sizeof tmp);
  int root = cs_yaml_root(d);
  enum cs_status st = cs_cfg_read(d, root, fields, NFIELDS, &tmp, NULL, err);
  if (st != CS_OK) return st;
  *f = tmp;
  return CS_OK;
}

enum cs_status cs_framework_load(const char *path, struct cs_framework *f, struct cs_error *err) {
  struct cs_yaml *d = NULL;
  enum cs_status st = cs_yaml_load(path, &d, err);
  if (st == CS_OK) st = read_doc(d, f, err);
  cs_yaml_free(d);
  return st;
}

enum cs_status cs_framework_load_string(const char *text, const char *name, struct cs_framework *f,
                                        struct cs_error *err) {
  struct cs_yaml *d = NULL;
  enum cs_status st = cs_yaml_load_string(text, name, &d, err);
  if (st == CS_OK) st = read_doc(d, f, err);
  cs_yaml_free(d);
  return st;
}

static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cs_framework last;
static char last_name[4096];

enum cs_status cs_framework_find(const char *name, const char *exe, struct cs_framework *f,
                                 struct cs_error *err) {
  if (name == NULL || name[0] == '\0' || strcmp(name, CS_FRAMEWORK_DEFAULT) == 0) {
    cs_framework_default(f);
    return CS_OK;
  }
  /* the last profile found by name is kept: a search or a sweep finds the same one for every
   * candidate plan (memory and step), and parsing it each time would cost more than the step */
  pthread_mutex_lock(&last_lock);
  int hit = last_name[0] && strcmp(last_name, name) == 0;
  if (hit) *f = last;
  pthread_mutex_unlock(&last_lock);
  if (hit) return CS_OK;
  char path[4096];
  enum cs_status st =
      cs_datadir_find("frameworks", "model/frameworks", name, exe, path, sizeof path, err);
  if (st != CS_OK) return cs_error_prefix(err, "framework");
  struct cs_framework tmp;
  st = cs_framework_load(path, &tmp, err);
  if (st != CS_OK) return st;
  *f = tmp;
  pthread_mutex_lock(&last_lock);
  if (strlen(name) < sizeof last_name) {
    last = tmp;
    snprintf(last_name, sizeof last_name, "%s", name);
  }
  pthread_mutex_unlock(&last_lock);
  return CS_OK;
}

void cs_framework_apply(const struct cs_framework *f, struct cs_plan *p) {
  struct cs_plan d;
  cs_plan_init(&d);
  if (p->grad_bytes == d.grad_bytes && f->reduce_dtype == CS_FW_RD_FP32) p->grad_bytes = 4;
  if (p->bucket == d.bucket) {
    double wb, gb, ob;
    cs_plan_param_bytes(p, &wb, &gb, &ob);
    double n = f->bucket_params, r = f->bucket_params_rank * p->dp * p->cp;
    if (r > n) n = r;
    p->bucket = n > 0 ? n * gb : f->grad_bucket > 0 ? f->grad_bucket : 1e12;
  }
  if (p->overlap_grad == d.overlap_grad && f->grad_reduce == CS_FW_GRAD_AFTER_BACKWARD)
    p->overlap_grad = 0;
  if (p->overlap_param == d.overlap_param && !f->overlap_param) p->overlap_param = 0;
  if (p->overlap_tp == d.overlap_tp && f->overlap_tp) p->overlap_tp = 1;
  if (p->dp_mode == d.dp_mode && f->dataparallel) p->dp_mode = CS_DP_DATAPARALLEL;
  if (p->zero == 0 && f->distributed_optimizer) p->zero = 1;
}
