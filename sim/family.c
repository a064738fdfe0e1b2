/* family.c — see family.h. */
#include "family.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "search.h"

enum { K_TP, K_PP, K_CP, K_EP, K_VPP, K_DP, K_ZERO, K_MBS, K_SP, K_RECOMPUTE, K_COUNT };
static const char *const keys[K_COUNT] = {"tp", "pp",   "cp",  "ep", "vpp",
                                          "dp", "zero", "mbs", "sp", "recompute"};
static const char *const recompute_names[] = {"none", "selective", "full"};

/* The framework of a bundled family is the framework that runs that layout in practice
 * (model/frameworks/: fsdp2 = PyTorch 2.5 FSDP2, deepspeed-zero3 = DeepSpeed ZeRO-3,
 * megatron-core = Megatron-Core); the four classes of search.h keep the scenario's. */
static const struct cs_family_spec bundled[] = {
    {"fsdp",
     "zero=3,tp=1,pp=1,cp=1,framework=fsdp2",
     "plain ZeRO-3 / FSDP: weights, gradients and optimizer sharded over every GPU, no TP or PP",
     -1,
     4,
     {{K_ZERO, '=', 3}, {K_TP, '=', 1}, {K_PP, '=', 1}, {K_CP, '=', 1}},
     "fsdp2",
     0},
    {"zero3-tp1",
     "zero=3,tp=1,pp=1,cp=1,framework=fsdp2",
     "the same as fsdp",
     -1,
     4,
     {{K_ZERO, '=', 3}, {K_TP, '=', 1}, {K_PP, '=', 1}, {K_CP, '=', 1}},
     "fsdp2",
     0},
    {"fsdp-hsdp",
     "zero=3,tp=1,pp=1,cp=1,shard=node,framework=fsdp2",
     "hybrid-sharded FSDP (HSDP): ZeRO-3 inside each node, gradient shards all-reduced across "
     "nodes",
     -1,
     4,
     {{K_ZERO, '=', 3}, {K_TP, '=', 1}, {K_PP, '=', 1}, {K_CP, '=', 1}},
     "fsdp2",
     -1},
    {"zero3-tp8",
     "zero=3,tp=8,pp=1,framework=deepspeed-zero3",
     "ZeRO-3 across nodes, 8-way tensor parallelism in the node",
     -1,
     3,
     {{K_ZERO, '=', 3}, {K_TP, '=', 8}, {K_PP, '=', 1}},
     "deepspeed-zero3",
     0},
    {"mcore",
     "tp=node,pp>1,cp=1,zero<3,framework=megatron-core",
     "Megatron-Core: TP filling the node, PP, DP (distributed optimizer) over the rest",
     -1,
     4,
     {{K_TP, '=', -1}, {K_PP, '>', 1}, {K_CP, '=', 1}, {K_ZERO, '<', 3}},
     "megatron-core",
     0},
    {"zero3",
     "zero=3",
     "ZeRO-3 with the fastest TP/PP split (before 2026-11 the only ZeRO-3)",
     CS_FAMILY_ZERO3,
     0,
     {{0, 0, 0}},
     "",
     0},
    {"dp+tp",
     "pp=1,zero<3",
     "data parallel (replicated or ZeRO-1/2) with or without TP",
     CS_FAMILY_DPTP,
     0,
     {{0, 0, 0}},
     "",
     0},
    {"tp+pp",
     "tp=node,pp>1,cp=1,zero<3",
     "Megatron's layout: TP filling the node, PP, DP over the rest",
     CS_FAMILY_TPPP,
     0,
     {{0, 0, 0}},
     "",
     0},
    {"3d",
     "pp>1,zero<3 (other splits)",
     "every other pipeline split (TP smaller than the node, CP)",
     CS_FAMILY_3D,
     0,
     {{0, 0, 0}},
     "",
     0},
};
enum { NBUNDLED = sizeof bundled / sizeof bundled[0] };

const struct cs_family_spec *cs_family_bundled_all(size_t *n) {
  *n = NBUNDLED;
  return bundled;
}

const struct cs_family_spec *cs_family_bundled(const char *name) {
  for (int i = 0; i < NBUNDLED; i++)
    if (name && strcasecmp(name, bundled[i].name) == 0) return &bundled[i];
  return NULL;
}

void cs_family_set_default(struct cs_family_set *s) {
  static const char *const names[] = {"fsdp",  "zero3-tp8", "mcore", "zero3",
                                      "dp+tp", "tp+pp",     "3d"};
  s->n = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    s->f[s->n++] = *cs_family_bundled(names[i]);
}

int cs_family_shard(const struct cs_family_spec *f, int gpus_per_node) {
  return f->shard < 0 ? gpus_per_node : f->shard;
}

static int plan_value(const struct cs_plan *p, int key) {
  switch (key) {
  case K_TP:
    return p->tp;
  case K_PP:
    return p->pp;
  case K_CP:
    return p->cp;
  case K_EP:
    return p->ep;
  case K_VPP:
    return p->vpp;
  case K_DP:
    return p->dp;
  case K_ZERO:
    return p->zero;
  case K_MBS:
    return p->mbs;
  case K_SP:
    return p->sp != 0;
  default:
    return p->recompute;
  }
}

int cs_family_match(const struct cs_family_spec *f, const struct cs_plan *p, int gpus_per_node) {
  if (f->builtin >= 0 && cs_plan_family(p, gpus_per_node) != f->builtin) return 0;
  for (int i = 0; i < f->n; i++) {
    const struct cs_family_cond *c = &f->c[i];
    int v = plan_value(p, c->key), w = c->value < 0 ? gpus_per_node : c->value;
    int ok = c->op == '='   ? v == w
             : c->op == '<' ? v < w
             : c->op == '>' ? v > w
             : c->op == 'l' ? v <= w
             : c->op == 'g' ? v >= w
                            : v != w;
    if (!ok) return 0;
  }
  return 1;
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
    s[--n] = '\0';
  return s;
}

static int good_name(const char *s) {
  if (!*s || strlen(s) > 63) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          strchr("+-_.", *s)))
      return 0;
  return 1;
}

/* One condition "key OP value" into f. */
static enum cs_status parse_cond(char *t, struct cs_family_spec *f, struct cs_error *err) {
  size_t k = strcspn(t, "=<>!");
  if (!t[k])
    return cs_error_set(err, CS_ERR_USAGE,
                        "family \"%s\": \"%s\": expected KEY=VALUE (or <, >, <=, >=, !=)", f->name,
                        t);
  char key[32];
  snprintf(key, sizeof key, "%.*s", (int)(k < 31 ? k : 31), t);
  char *op = t + k, *val;
  int o;
  if (op[0] == '<' && op[1] == '=')
    o = 'l', val = op + 2;
  else if (op[0] == '>' && op[1] == '=')
    o = 'g', val = op + 2;
  else if (op[0] == '!' && op[1] == '=')
    o = '!', val = op + 2;
  else if (op[0] == '!')
    return cs_error_set(err, CS_ERR_USAGE, "family \"%s\": \"%s\": expected != ", f->name, t);
  else
    o = op[0], val = op + 1;
  char *kk = trim(key);
  val = trim(val);
  if (strcmp(kk, "shard") == 0) {
    char *end;
    long x = strtol(val, &end, 10);
    if (o != '=' || (strcmp(val, "node") != 0 && (!*val || *end || x < 1 || x > 1 << 20)))
      return cs_error_set(err, CS_ERR_USAGE,
                          "family \"%s\": shard expects =N (a whole number >= 1) or =node",
                          f->name);
    f->shard = strcmp(val, "node") == 0 ? -1 : (int)x;
    return CS_OK;
  }
  if (strcmp(kk, "framework") == 0) {
    if (o != '=' || !good_name(val) || strlen(val) >= sizeof f->framework)
      return cs_error_set(err, CS_ERR_USAGE,
                          "family \"%s\": framework expects =NAME (a profile of model/frameworks)",
                          f->name);
    snprintf(f->framework, sizeof f->framework, "%s", val);
    return CS_OK;
  }
  int key_i = -1;
  for (int i = 0; i < K_COUNT; i++)
    if (strcmp(kk, keys[i]) == 0) key_i = i;
  if (key_i < 0)
    return cs_error_set(err, CS_ERR_USAGE,
                        "family \"%s\": unknown key \"%s\" (tp, pp, cp, ep, vpp, dp, zero, mbs, "
                        "sp, recompute, framework, shard)",
                        f->name, kk);
  if (f->n == CS_FAMILY_COND_MAX)
    return cs_error_set(err, CS_ERR_USAGE, "family \"%s\": at most %d conditions", f->name,
                        CS_FAMILY_COND_MAX);
  int v = 0;
  if (key_i == K_SP || key_i == K_RECOMPUTE) {
    if (o != '=' && o != '!')
      return cs_error_set(err, CS_ERR_USAGE, "family \"%s\": %s takes = or != only", f->name, kk);
    v = -2;
    if (key_i == K_SP)
      v = strcmp(val, "true") == 0 || strcmp(val, "1") == 0    ? 1
          : strcmp(val, "false") == 0 || strcmp(val, "0") == 0 ? 0
                                                               : -2;
    else
      for (int i = 0; i < 3; i++)
        if (strcmp(val, recompute_names[i]) == 0) v = i;
    if (v == -2)
      return cs_error_set(err, CS_ERR_USAGE, "family \"%s\": %s: bad value \"%s\" (%s)", f->name,
                          kk, val, key_i == K_SP ? "true or false" : "none, selective or full");
  } else if (strcmp(val, "node") == 0 && (key_i == K_TP || key_i == K_CP || key_i == K_EP)) {
    v = -1;
  } else {
    char *end;
    long x = strtol(val, &end, 10);
    if (!*val || *end || x < 0 || x > 1 << 24)
      return cs_error_set(err, CS_ERR_USAGE,
                          "family \"%s\": %s: expected a whole number%s, got \"%s\"", f->name, kk,
                          key_i == K_TP || key_i == K_CP || key_i == K_EP ? " or node" : "", val);
    v = (int)x;
  }
  f->c[f->n++] = (struct cs_family_cond){key_i, o, v};
  return CS_OK;
}

static enum cs_status add(struct cs_family_set *s, const struct cs_family_spec *f,
                          struct cs_error *err) {
  for (int i = 0; i < s->n; i++)
    if (strcasecmp(s->f[i].name, f->name) == 0)
      return cs_error_set(err, CS_ERR_USAGE, "family \"%s\" given twice", f->name);
  if (s->n == CS_FAMILY_SPEC_MAX)
    return cs_error_set(err, CS_ERR_USAGE, "at most %d families", CS_FAMILY_SPEC_MAX);
  s->f[s->n++] = *f;
  return CS_OK;
}

static enum cs_status bundled_item(char *t, struct cs_family_set *s, struct cs_error *err) {
  const struct cs_family_spec *b = cs_family_bundled(t);
  if (!b) {
    char list[512] = "";
    size_t len = 0;
    for (int i = 0; i < NBUNDLED && len < sizeof list; i++)
      len +=
          (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", bundled[i].name);
    return cs_error_set(err, CS_ERR_USAGE,
                        "unknown family \"%s\" (bundled: %s; or define one as NAME=KEY=VALUE,...)",
                        t, list);
  }
  return add(s, b, err);
}

enum cs_status cs_family_set_parse(const char *text, struct cs_family_set *s,
                                   struct cs_error *err) {
  s->n = 0;
  char buf[4096];
  if (!text || strlen(text) >= sizeof buf)
    return cs_error_set(err, CS_ERR_USAGE, "a family list of at most %zu characters",
                        sizeof buf - 1);
  snprintf(buf, sizeof buf, "%s", text);
  const char *seps = strchr(buf, '=') ? ";" : ",;";
  enum cs_status st = CS_OK;
  char *save = NULL;
  for (char *it = strtok_r(buf, seps, &save); it && st == CS_OK; it = strtok_r(NULL, seps, &save)) {
    it = trim(it);
    if (!*it) continue;
    char *eq = strchr(it, '=');
    if (!eq) {
      st = bundled_item(it, s, err);
      continue;
    }
    struct cs_family_spec f;
    memset(&f, 0, sizeof f);
    f.builtin = -1;
    *eq = '\0';
    char *name = trim(it);
    if (!good_name(name)) {
      st = cs_error_set(err, CS_ERR_USAGE,
                        "family name \"%s\": letters, digits, + - _ . (at most 63)", name);
      break;
    }
    snprintf(f.name, sizeof f.name, "%s", name);
    char *def = trim(eq + 1);
    snprintf(f.def, sizeof f.def, "%s", def);
    char *s2 = NULL;
    for (char *c = strtok_r(def, ",", &s2); c && st == CS_OK; c = strtok_r(NULL, ",", &s2))
      st = parse_cond(trim(c), &f, err);
    if (st == CS_OK && f.n == 0 && !f.framework[0])
      st = cs_error_set(err, CS_ERR_USAGE, "family \"%s\": no condition", f.name);
    if (st == CS_OK) st = add(s, &f, err);
  }
  if (st == CS_OK && s->n == 0) st = cs_error_set(err, CS_ERR_USAGE, "no family given");
  return st;
}
