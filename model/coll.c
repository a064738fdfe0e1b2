/* coll.c — names and nccl-tests conventions; see coll.h. */
#include "coll.h"

#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

static const char *const coll_names[CS_COLL_COUNT] = {
    "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all", "send_recv"};
static const char *const algo_names[CS_ALGO_COUNT + 1] = {"ring",    "tree", "hier", "nvls",
                                                          "collnet", "pat",  "p2p",  "auto"};
static const char *const proto_names[CS_PROTO_COUNT + 1] = {"ll", "ll128", "simple", "auto"};

const char *cs_coll_name(enum cs_coll c) {
  return (c >= 0 && c < CS_COLL_COUNT) ? coll_names[c] : "?";
}
const char *cs_algo_name(enum cs_algo a) {
  return (a >= 0 && a <= CS_ALGO_AUTO) ? algo_names[a] : "?";
}
const char *cs_proto_name(enum cs_proto p) {
  return (p >= 0 && p <= CS_PROTO_AUTO) ? proto_names[p] : "?";
}

/* Lower-cases name without '_' and '-' into buf, dropping a "_perf" suffix. */
static void squash(const char *name, char *buf, size_t len) {
  size_t k = 0;
  for (const char *p = name; *p && k + 1 < len; p++)
    if (*p != '_' && *p != '-' && *p != ' ') buf[k++] = (char)tolower((unsigned char)*p);
  buf[k] = '\0';
  if (k > 4 && strcmp(buf + k - 4, "perf") == 0) buf[k - 4] = '\0';
}

/* One alias table type for collectives and algorithms: a squashed name and the enum value. */
struct alias {
  const char *s;
  int v;
};

/* Looks name up (squashed: case, '_', '-', ' ' and a "perf" suffix ignored) in a[0..n); the
 * value, or -1 when name is NULL or unknown. */
static int lookup(const char *name, const struct alias *a, size_t n) {
  if (name == NULL) return -1;
  char buf[64];
  squash(name, buf, sizeof buf);
  for (size_t i = 0; i < n; i++)
    if (strcmp(buf, a[i].s) == 0) return a[i].v;
  return -1;
}

int cs_coll_parse(const char *name, enum cs_coll *out) {
  static const struct alias alias[] = {{"allreduce", CS_COLL_ALL_REDUCE},
                                       {"allgather", CS_COLL_ALL_GATHER},
                                       {"reducescatter", CS_COLL_REDUCE_SCATTER},
                                       {"broadcast", CS_COLL_BROADCAST},
                                       {"bcast", CS_COLL_BROADCAST},
                                       {"reduce", CS_COLL_REDUCE},
                                       {"alltoall", CS_COLL_ALL_TO_ALL},
                                       {"sendrecv", CS_COLL_SEND_RECV},
                                       {"p2p", CS_COLL_SEND_RECV}};
  int v = lookup(name, alias, sizeof alias / sizeof alias[0]);
  if (v < 0) return -1;
  *out = (enum cs_coll)v;
  return 0;
}

int cs_algo_parse(const char *name, enum cs_algo *out) {
  static const struct alias alias[] = {{"ring", CS_ALGO_RING},
                                       {"tree", CS_ALGO_TREE},
                                       {"hier", CS_ALGO_HIER},
                                       {"hierarchical", CS_ALGO_HIER},
                                       {"nvls", CS_ALGO_NVLS},
                                       {"nvlstree", CS_ALGO_NVLS},
                                       {"collnet", CS_ALGO_COLLNET},
                                       {"collnetdirect", CS_ALGO_COLLNET},
                                       {"collnetchain", CS_ALGO_COLLNET},
                                       {"sharp", CS_ALGO_COLLNET},
                                       {"pat", CS_ALGO_PAT},
                                       {"p2p", CS_ALGO_P2P},
                                       {"auto", CS_ALGO_AUTO}};
  int v = lookup(name, alias, sizeof alias / sizeof alias[0]);
  if (v < 0) return -1;
  *out = (enum cs_algo)v;
  return 0;
}

int cs_proto_parse(const char *name, enum cs_proto *out) {
  if (name == NULL) return -1;
  if (strcasecmp(name, "ll") == 0)
    *out = CS_PROTO_LL;
  else if (strcasecmp(name, "ll128") == 0)
    *out = CS_PROTO_LL128;
  else if (strcasecmp(name, "simple") == 0)
    *out = CS_PROTO_SIMPLE;
  else if (strcasecmp(name, "auto") == 0)
    *out = CS_PROTO_AUTO;
  else
    return -1;
  return 0;
}

double cs_coll_busbw_factor(enum cs_coll c, int n) {
  if (n < 1) return 0.0;
  switch (c) {
  case CS_COLL_ALL_REDUCE:
    return 2.0 * (n - 1) / n;
  case CS_COLL_ALL_GATHER:
  case CS_COLL_REDUCE_SCATTER:
  case CS_COLL_ALL_TO_ALL:
    return (double)(n - 1) / n;
  case CS_COLL_BROADCAST:
  case CS_COLL_REDUCE:
  case CS_COLL_SEND_RECV:
    return 1.0;
  case CS_COLL_COUNT:
    break;
  }
  return 0.0;
}

int cs_coll_algo_valid(enum cs_coll c, enum cs_algo a) {
  switch (c) {
  case CS_COLL_ALL_REDUCE:
    return a == CS_ALGO_RING || a == CS_ALGO_TREE || a == CS_ALGO_HIER || a == CS_ALGO_NVLS ||
           a == CS_ALGO_COLLNET;
  case CS_COLL_ALL_GATHER:
  case CS_COLL_REDUCE_SCATTER:
    /* CollNet/SHARP reduces in the switch: it serves all_reduce (NCCL's CollNet all-gather and
     * reduce-scatter of 2.18+ move the same bytes over the same NICs, and the NCCL of the
     * published runs had none), so these stay on ring, PAT or NVLS */
    return a == CS_ALGO_RING || a == CS_ALGO_PAT || a == CS_ALGO_NVLS;
  case CS_COLL_BROADCAST:
  case CS_COLL_REDUCE:
    return a == CS_ALGO_RING;
  case CS_COLL_ALL_TO_ALL:
  case CS_COLL_SEND_RECV:
    return a == CS_ALGO_P2P;
  case CS_COLL_COUNT:
    break;
  }
  return 0;
}

double cs_nccl_tree_correction(enum cs_proto p, double bytes) {
  static const double corr[CS_PROTO_COUNT][23] = {
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
       .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
       .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
  if (p < 0 || p >= CS_PROTO_COUNT || !(bytes >= 64)) return 1.0;
  int log_size = -1;
  for (double v = floor(bytes / 64); v >= 1 && log_size < 23; v = floor(v / 2))
    log_size++;
  return log_size < 23 ? corr[p][log_size] : 1.0;
}

static const struct {
  const char *name;
  size_t size;
} dtypes[CS_DTYPE_COUNT] = {
    [CS_DTYPE_INT8] = {"int8", 1},     [CS_DTYPE_UINT8] = {"uint8", 1},
    [CS_DTYPE_INT32] = {"int32", 4},   [CS_DTYPE_UINT32] = {"uint32", 4},
    [CS_DTYPE_INT64] = {"int64", 8},   [CS_DTYPE_UINT64] = {"uint64", 8},
    [CS_DTYPE_HALF] = {"half", 2},     [CS_DTYPE_FLOAT] = {"float", 4},
    [CS_DTYPE_DOUBLE] = {"double", 8}, [CS_DTYPE_BFLOAT16] = {"bfloat16", 2},
};

const char *cs_dtype_name(enum cs_dtype d) {
  return (unsigned)d < CS_DTYPE_COUNT ? dtypes[d].name : "?";
}

size_t cs_dtype_size(enum cs_dtype d) {
  return (unsigned)d < CS_DTYPE_COUNT ? dtypes[d].size : 0;
}

int cs_dtype_parse(const char *name, enum cs_dtype *out) {
  static const struct {
    const char *s;
    enum cs_dtype d;
  } alias[] = {
      {"char", CS_DTYPE_INT8},         {"int8", CS_DTYPE_INT8},     {"uint8", CS_DTYPE_UINT8},
      {"int", CS_DTYPE_INT32},         {"int32", CS_DTYPE_INT32},   {"uint32", CS_DTYPE_UINT32},
      {"int64", CS_DTYPE_INT64},       {"uint64", CS_DTYPE_UINT64}, {"half", CS_DTYPE_HALF},
      {"fp16", CS_DTYPE_HALF},         {"float16", CS_DTYPE_HALF},  {"float", CS_DTYPE_FLOAT},
      {"fp32", CS_DTYPE_FLOAT},        {"f32", CS_DTYPE_FLOAT},     {"float32", CS_DTYPE_FLOAT},
      {"double", CS_DTYPE_DOUBLE},     {"fp64", CS_DTYPE_DOUBLE},   {"float64", CS_DTYPE_DOUBLE},
      {"bfloat16", CS_DTYPE_BFLOAT16}, {"bf16", CS_DTYPE_BFLOAT16}};
  if (name == NULL) return -1;
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
    if (strcasecmp(name, alias[i].s) == 0) {
      *out = alias[i].d;
      return 0;
    }
  return -1;
}
