/* plan.c — parallel plans: the schema table, "key=value,..." parsing and the divisibility
 * checks; see plan.h.
 *
 * Parsing goes item by item through cs_cfg_assign, so a plan string, a plan file and --set share
 * one table and one set of messages; this file only adds which item failed.
 */
#include "plan.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"

static const char *const recompute_names[] = {"none", "selective", "full", NULL};
static const char *const precision_names[] = {"fp32", "tf32", "fp16", "bf16", "fp8", NULL};
static const char *const dp_mode_names[] = {"ddp", "dataparallel", NULL};

#define F(key, type, field, size, unit, lo, hi, def, names, help)                                  \
  { key, type, offsetof(struct cs_plan, field), size, unit, lo, hi, def, names, help }

static const struct cs_cfg_field fields[] = {
    F("dp", CS_CFG_INT, dp, 0, 0, 1, 1 << 20, "1", NULL, "data-parallel degree"),
    F("tp", CS_CFG_INT, tp, 0, 0, 1, 1024, "1", NULL, "tensor-parallel degree"),
    F("pp", CS_CFG_INT, pp, 0, 0, 1, 4096, "1", NULL, "pipeline-parallel stages"),
    F("vpp", CS_CFG_INT, vpp, 0, 0, 1, 256, "1", NULL,
      "virtual stages per GPU (interleaved 1F1B when > 1)"),
    F("cp", CS_CFG_INT, cp, 0, 0, 1, 1024, "1", NULL, "context-parallel degree (sequence split)"),
    F("ep", CS_CFG_INT, ep, 0, 0, 1, 4096, "1", NULL, "expert-parallel degree (within dp*cp)"),
    F("zero", CS_CFG_INT, zero, 0, 0, 0, 3, "0", NULL,
      "ZeRO stage: 1 optimizer state, 2 + gradients, 3 + weights sharded over dp*cp"),
    F("shard", CS_CFG_INT, shard, 0, 0, 0, 1 << 20, "0", NULL,
      "hybrid sharding (HSDP): ZeRO-3 over groups of this many dp ranks, gradients all-reduced "
      "across the dp/shard replicas (0 = over all dp*cp; needs zero=3)"),
    F("mbs", CS_CFG_INT, mbs, 0, 0, 1, 1 << 20, "1", NULL, "micro-batch, samples per GPU"),
    F("gbs", CS_CFG_INT, gbs, 0, 0, 0, 1 << 30, "0", NULL,
      "global batch in samples (0 = mbs*dp); accumulation = gbs/(mbs*dp)"),
    F("recompute", CS_CFG_ENUM, recompute, 0, 0, 0, 0, "none", recompute_names,
      "activation recomputation: none, selective (attention core) or full"),
    F("sp", CS_CFG_BOOL, sp, 0, 0, 0, 1, "false", NULL,
      "sequence parallelism (norms, dropout split over tp)"),
    F("precision", CS_CFG_ENUM, precision, 0, 0, 0, 0, "bf16", precision_names,
      "GEMM precision: fp32, tf32, fp16, bf16 or fp8 (mixed precision below fp32)"),
    F("bucket", CS_CFG_QTY, bucket, 0, CS_UNIT_BYTES, 1, 1e12, "25MiB", NULL,
      "DDP gradient bucket"),
    F("overlap_grad", CS_CFG_BOOL, overlap_grad, 0, 0, 0, 1, "true", NULL,
      "overlap DP gradient reduction with backward"),
    F("overlap_param", CS_CFG_BOOL, overlap_param, 0, 0, 0, 1, "true", NULL,
      "prefetch ZeRO parameter all-gathers one layer ahead"),
    F("overlap_tp", CS_CFG_BOOL, overlap_tp, 0, 0, 0, 1, "false", NULL,
      "overlap TP collectives with the neighbouring GEMMs"),
    F("weight_bytes", CS_CFG_DOUBLE, weight_bytes, 0, 0, 0, 64, "0", NULL,
      "bytes per parameter of weights (0 = from precision)"),
    F("grad_bytes", CS_CFG_DOUBLE, grad_bytes, 0, 0, 0, 64, "0", NULL,
      "bytes per parameter of gradients (0 = from precision)"),
    F("optim_bytes", CS_CFG_DOUBLE, optim_bytes, 0, 0, 0, 64, "0", NULL,
      "bytes per parameter of optimizer state, K of the ZeRO paper (0 = from precision)"),
    F("reserve", CS_CFG_QTY, reserve, 0, CS_UNIT_BYTES, 0, 1e15, "1GiB", NULL,
      "memory per GPU held back (CUDA context, allocator, workspaces)"),
    F("dp_mode", CS_CFG_ENUM, dp_mode, 0, 0, 0, 0, "ddp", dp_mode_names,
      "data parallelism: ddp, or dataparallel (one process, one node: no overlap)"),
    F("framework", CS_CFG_STRING, framework, 64, 0, 0, 0, "pytorch-ddp", NULL,
      "framework profile (model/frameworks/NAME.yaml): buckets, overlap, ZeRO-3 gathers"),
    F("loader", CS_CFG_DOUBLE, loader, 0, 0, 0, 1e12, "0", NULL,
      "samples/s one node's input pipeline (data loader) sustains; a cap on throughput (0 = none)"),
};
#undef F
#define NFIELDS (sizeof fields / sizeof fields[0])

const struct cs_cfg_field *cs_plan_fields(size_t *n) {
  *n = NFIELDS;
  return fields;
}

/* One default text converted the way the schema's parser converts it (strtol, strtod, the name
 * list, true/false, cs_units_parse_quantity), but without that parser's round trip through a
 * one-scalar YAML document, which allocates. The texts are this table's own constants; fuzz_plan
 * checks once per run that the result equals cs_cfg_defaults' byte for byte. */
static void set_default(const struct cs_cfg_field *f, struct cs_plan *p) {
  void *dst = (char *)p + f->offset;
  double v;
  switch (f->type) {
  case CS_CFG_INT:
    *(int *)dst = (int)strtol(f->def, NULL, 10);
    break;
  case CS_CFG_DOUBLE:
    *(double *)dst = strtod(f->def, NULL);
    break;
  case CS_CFG_QTY:
    if (cs_units_parse_quantity(f->def, f->unit, &v, NULL) == CS_OK) *(double *)dst = v;
    break;
  case CS_CFG_BOOL:
    *(int *)dst = strcmp(f->def, "true") == 0 || strcmp(f->def, "yes") == 0;
    break;
  case CS_CFG_ENUM:
    for (int i = 0; f->names && f->names[i]; i++)
      if (strcasecmp(f->def, f->names[i]) == 0) {
        *(int *)dst = i;
        break;
      }
    break;
  case CS_CFG_STRING:
    snprintf((char *)dst, f->size, "%s", f->def);
    break;
  }
}

/* The defaults are built once and copied: plans are initialised for every candidate of a search
 * and every input of the fuzzer. Building needs no memory, so it cannot fail, and pthread_once
 * makes the first build safe from several threads. The plan holds only numbers and fixed arrays
 * (no pointers), so a copy is a full plan. */
static struct cs_plan defaults;
static pthread_once_t defaults_once = PTHREAD_ONCE_INIT;

static void build_defaults(void) {
  memset(&defaults, 0, sizeof defaults);
  for (size_t i = 0; i < NFIELDS; i++)
    if (fields[i].def) set_default(&fields[i], &defaults);
}

static enum cs_status plan_defaults(struct cs_plan *p, struct cs_error *err) {
  (void)err;
  pthread_once(&defaults_once, build_defaults);
  memcpy(p, &defaults, sizeof *p);
  return CS_OK;
}

void cs_plan_init(struct cs_plan *p) {
  (void)plan_defaults(p, NULL);
}

enum cs_status cs_plan_parse(const char *text, struct cs_plan *p, struct cs_error *err) {
  enum cs_status st = plan_defaults(p, err);
  if (st != CS_OK) return st;
  if (text == NULL) return CS_OK;
  size_t len = strlen(text);
  char *buf = malloc(len + 1);
  if (buf == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory parsing a plan");
  memcpy(buf, text, len + 1);
  int item = 0, nkeys = 0;
  const char *keys[64]; /* the keys given so far: a key given twice is an error, as in a file */
  size_t klen[64];
  char *s = buf;
  while (st == CS_OK) {
    char *comma = strchr(s, ',');
    if (comma) *comma = '\0';
    while (isspace((unsigned char)*s))
      s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
      s[--n] = '\0';
    item++;
    if (n == 0) {
      if (comma || item > 1)
        st = cs_error_set(err, CS_ERR_USAGE, "plan item %d is empty (expected key=value)", item);
    } else {
      char *eq = strchr(s, '=');
      if (eq) { /* tolerate "tp = 8" */
        char *ke = eq;
        while (ke > s && isspace((unsigned char)ke[-1]))
          ke--;
        char *v = eq + 1;
        while (isspace((unsigned char)*v))
          v++;
        memmove(ke + 1, v, strlen(v) + 1);
        *ke = '=';
      }
      size_t kl = eq ? strcspn(s, "=") : n;
      for (int k = 0; k < nkeys && st == CS_OK; k++)
        if (klen[k] == kl && strncmp(keys[k], s, kl) == 0)
          st = cs_error_set(err, CS_ERR_USAGE, "plan item %d \"%s\": %.*s given twice", item, s,
                            (int)kl, s);
      if (nkeys < 64) keys[nkeys] = s, klen[nkeys++] = kl;
      struct cs_error e2 = {0};
      if (st == CS_OK && cs_cfg_assign(fields, NFIELDS, p, s, &e2) != CS_OK)
        st = cs_error_set(err, e2.status == CS_ERR_NOMEM ? CS_ERR_NOMEM : CS_ERR_USAGE,
                          "plan item %d \"%s\": %s", item, s, e2.msg);
    }
    if (comma == NULL) break;
    s = comma + 1;
  }
  free(buf);
  return st;
}

enum cs_status cs_plan_read(const struct cs_yaml *doc, int map, struct cs_plan *p,
                            struct cs_error *err) {
  cs_plan_init(p);
  return cs_cfg_read(doc, map, fields, NFIELDS, p, NULL, err);
}

/* The key of the item at t of "key=value,..." text (spaces around it trimmed): *k and its length.
 */
static size_t item_key(const char *t, const char **k) {
  size_t n = strcspn(t, "=,");
  while (n > 0 && (*t == ' ' || *t == '\t'))
    t++, n--;
  while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t'))
    n--;
  *k = t;
  return n;
}

const char *cs_plan_layout_key(const char *text) {
  static const char *const layout[] = {"dp",   "tp",  "pp",  "vpp",       "cp", "ep",
                                       "zero", "mbs", "gbs", "recompute", "sp", "shard"};
  const char *k;
  for (const char *t = text; t && *t; t += strcspn(t, ","), t += *t == ',') {
    size_t n = item_key(t, &k);
    for (size_t i = 0; i < sizeof layout / sizeof layout[0]; i++)
      if (n == strlen(layout[i]) && strncmp(k, layout[i], n) == 0) return layout[i];
  }
  return NULL;
}

int cs_plan_fit_shard(const struct cs_plan *p, int shard) {
  if (shard <= 0 || p->zero != 3 || p->cp > 1 || p->ep > 1 || shard >= p->dp || p->dp % shard != 0)
    return 0;
  return shard;
}

int cs_plan_hybrid_shard(const struct cs_plan *p) {
  return p->shard > 0 && p->shard < p->dp ? p->shard : 0;
}

struct cs_plan cs_plan_single_gpu(const struct cs_plan *p) {
  struct cs_plan one = *p;
  one.dp = one.tp = one.pp = one.vpp = one.cp = one.ep = 1;
  one.sp = 0;
  one.zero = 0;
  one.shard = 0;
  one.gbs = 0;
  return one;
}

long cs_plan_gpus(const struct cs_plan *p) {
  return (long)p->dp * p->tp * p->pp * p->cp;
}

long cs_plan_microbatches(const struct cs_plan *p) {
  if (p->gbs == 0) return 1;
  return p->gbs / ((long)p->mbs * p->dp);
}

void cs_plan_param_bytes(const struct cs_plan *p, double *weight, double *grad, double *optim) {
  int full = p->precision == CS_PREC_FP32 || p->precision == CS_PREC_TF32;
  *weight = p->weight_bytes > 0 ? p->weight_bytes : full ? 4 : 2;
  *grad = p->grad_bytes > 0 ? p->grad_bytes : full ? 4 : 2;
  *optim = p->optim_bytes > 0 ? p->optim_bytes : full ? 8 : 12;
}

double cs_plan_act_bytes(const struct cs_plan *p) {
  return p->precision == CS_PREC_FP32 || p->precision == CS_PREC_TF32 ? 4 : 2;
}

const char *cs_recompute_name(int r) {
  return r >= 0 && r <= CS_RECOMPUTE_FULL ? recompute_names[r] : "?";
}

const char *cs_precision_name(int prec) {
  return prec >= 0 && prec <= CS_PREC_FP8 ? precision_names[prec] : "?";
}

void cs_plan_format(const struct cs_plan *p, char *buf, size_t len) {
  /* items at their defaults are left out (plan.h lists them; no table lookup, which could fail) */
  int n = snprintf(buf, len, "dp=%d,tp=%d,pp=%d", p->dp, p->tp, p->pp);
  size_t used = n > 0 ? (size_t)n : 0;
#define ADD(...)                                                                                   \
  do {                                                                                             \
    if (used < len) {                                                                              \
      int k = snprintf(buf + used, len - used, __VA_ARGS__);                                       \
      if (k > 0) used += (size_t)k;                                                                \
    }                                                                                              \
  } while (0)
  if (p->vpp != 1) ADD(",vpp=%d", p->vpp);
  if (p->cp != 1) ADD(",cp=%d", p->cp);
  if (p->ep != 1) ADD(",ep=%d", p->ep);
  if (p->zero != 0) ADD(",zero=%d", p->zero);
  if (p->shard != 0) ADD(",shard=%d", p->shard);
  ADD(",mbs=%d,gbs=%ld", p->mbs, p->gbs ? (long)p->gbs : (long)p->mbs * p->dp);
  if (p->recompute != CS_RECOMPUTE_NONE) ADD(",recompute=%s", cs_recompute_name(p->recompute));
  if (p->sp) ADD(",sp=true");
  if (p->precision != CS_PREC_BF16) ADD(",precision=%s", cs_precision_name(p->precision));
  if (strcmp(p->framework, "pytorch-ddp") != 0) ADD(",framework=%s", p->framework);
#undef ADD
}

enum cs_status cs_plan_check_self(const struct cs_plan *p, struct cs_error *err) {
  if (p->gbs != 0 && p->gbs % ((long)p->mbs * p->dp) != 0)
    return cs_error_set(err, CS_ERR_USAGE, "plan: gbs=%d is not a multiple of mbs*dp = %d*%d = %ld",
                        p->gbs, p->mbs, p->dp, (long)p->mbs * p->dp);
  if (p->vpp > 1 && p->pp == 1)
    return cs_error_set(err, CS_ERR_USAGE, "plan: vpp=%d needs pipeline parallelism (pp > 1)",
                        p->vpp);
  if (p->shard > 0 && p->zero != 3)
    return cs_error_set(err, CS_ERR_USAGE,
                        "plan: shard=%d needs zero=3 (hybrid sharding shards ZeRO-3 over groups of "
                        "shard ranks)",
                        p->shard);
  if (p->shard > 0 && (p->cp > 1 || p->ep > 1))
    return cs_error_set(err, CS_ERR_USAGE,
                        "plan: shard=%d is modelled without context or expert parallelism "
                        "(cp=%d, ep=%d)",
                        p->shard, p->cp, p->ep);
  if (p->shard > 0 && p->shard < p->dp && p->dp % p->shard != 0)
    return cs_error_set(err, CS_ERR_USAGE, "plan: shard=%d must divide dp=%d", p->shard, p->dp);
  if (((long)p->dp * p->cp) % p->ep != 0)
    return cs_error_set(err, CS_ERR_USAGE,
                        "plan: ep=%d must divide dp*cp = %ld (experts are spread over the ranks "
                        "that hold the same dense weights)",
                        p->ep, (long)p->dp * p->cp);
  return CS_OK;
}

int cs_plan_text_names(const char *text, const char *key) {
  size_t k = strlen(key);
  for (const char *s = text; (s = strstr(s, key)) != NULL; s += k) {
    int start = s == text || s[-1] == ',' || s[-1] == ' ';
    const char *e = s + k;
    while (*e == ' ')
      e++;
    if (start && *e == '=') return 1;
  }
  return 0;
}
