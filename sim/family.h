/* family.h — plan families as data: a family is a name and a filter over the plan space, written
 * as the plan keys it fixes or bounds, e.g.
 *
 *   fsdp=zero=3,tp=1,pp=1,cp=1        plain ZeRO-3 / FSDP: every GPU one data-parallel shard
 *   zero3-tp8=zero=3,tp=8             ZeRO-3 across nodes, tensor parallelism inside the node
 *   tp+pp=tp=8,pp=8                   Megatron's TP-in-node + PP, dp over the rest
 *   big-pp=tp=node,pp>=8,zero<3       "node" is the GPUs of one node
 *   ds3=zero=3,tp=1,framework=deepspeed-zero3   a family costed with a framework profile
 *
 * Keys: tp, pp, cp, ep, vpp, dp, zero, mbs (integers or "node" for tp/cp/ep), sp (true/false),
 * recompute (none/selective/full) with =, and the integers also with <, >, <=, >=, !=.
 * framework=NAME is not a filter: the family's plans are costed with that framework profile
 * (model/frameworks/NAME.yaml; default: the scenario's plan's). Nor is shard=N (or shard=node):
 * the family's ZeRO-3 plans shard over groups of N data-parallel ranks and all-reduce across the
 * replicas (hybrid sharding, plan key shard), where N divides their dp (else they shard fully). The
 * bundled families (cs_family_bundled) are the four built-in classes of search.h (zero3, dp+tp,
 * tp+pp, 3d) and the named filters fsdp (alias zero3-tp1; framework fsdp2), fsdp-hsdp (fsdp2,
 * shard=node), zero3-tp8 (deepspeed-zero3) and mcore (megatron-core).
 *
 * A list is "NAME=KEYS;NAME=KEYS;NAME" (';' between families, a bundled name alone) or, with no
 * '=' anywhere, bundled names separated by ',' (the old --family zero3,tp+pp).
 */
#ifndef CS_SIM_FAMILY_H
#define CS_SIM_FAMILY_H

#include <stddef.h>

#include "plan.h"
#include "status.h"

#define CS_FAMILY_SPEC_MAX 16
#define CS_FAMILY_COND_MAX 12

struct cs_family_cond {
  int key;   /* index into the key list of family.c */
  int op;    /* '=', '<', '>', 'l' (<=), 'g' (>=), '!' (!=) */
  int value; /* -1: "node" (the GPUs of one node) */
};

struct cs_family_spec {
  char name[64];
  char def[256];  /* the filter as text, for the outputs */
  char what[128]; /* one line for people ("" for user families) */
  int builtin;    /* >= 0: plans of search.h's family `builtin` only; -1: any */
  int n;
  struct cs_family_cond c[CS_FAMILY_COND_MAX];
  char framework[64]; /* "" = the scenario's */
  int shard;          /* hybrid sharding of its ZeRO-3 plans: 0 none, -1 the node's GPUs, or N */
};

/* The shard a family gives plans on nodes of gpus_per_node GPUs (plan key shard; 0 = none). */
int cs_family_shard(const struct cs_family_spec *f, int gpus_per_node);

struct cs_family_set {
  int n;
  struct cs_family_spec f[CS_FAMILY_SPEC_MAX];
};

/* Parses a list (syntax above) into s. Errors: CS_ERR_USAGE naming the item and what was
 * expected (unknown bundled name, unknown key, bad value, duplicate name, too many families). */
enum cs_status cs_family_set_parse(const char *text, struct cs_family_set *s, struct cs_error *err);
/* The default set of size-network and report: fsdp, zero3-tp8, mcore, zero3, dp+tp, tp+pp, 3d. */
void cs_family_set_default(struct cs_family_set *s);
/* The bundled family called name (case-insensitive), or NULL. */
const struct cs_family_spec *cs_family_bundled(const char *name);
/* The bundled families, *n of them (for --help and docs). */
const struct cs_family_spec *cs_family_bundled_all(size_t *n);
/* 1 when plan p (on nodes of gpus_per_node GPUs) belongs to family f. */
int cs_family_match(const struct cs_family_spec *f, const struct cs_plan *p, int gpus_per_node);

#endif
