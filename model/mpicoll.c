/* mpicoll.c — laws and default choice of Open MPI's all_reduce algorithms (mpicoll.h). */
#include "mpicoll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const alg_names[CS_MPI_ALG_COUNT] = {
    "auto", "basic_linear",   "nonoverlapping", "recursive_doubling",
    "ring", "segmented_ring", "rabenseifner"};

const char *cs_mpi_alg_name(enum cs_mpi_alg a) {
  return (int)a >= 0 && a < CS_MPI_ALG_COUNT ? alg_names[a] : "?";
}

int cs_mpi_alg_parse(const char *s, enum cs_mpi_alg *out) {
  if (s == NULL || *s == '\0') return -1;
  for (int a = 0; a < CS_MPI_ALG_COUNT; a++)
    if (strcasecmp(s, alg_names[a]) == 0) {
      *out = (enum cs_mpi_alg)a;
      return 0;
    }
  if (s[0] >= '0' && s[0] < '0' + CS_MPI_ALG_COUNT && s[1] == '\0') {
    *out = (enum cs_mpi_alg)(s[0] - '0');
    return 0;
  }
  return -1;
}

int cs_mpi_tier_of(int nodes, int gpus_per_node) {
  if (nodes == 1) return CS_MPI_LOCAL;
  if (nodes > 1 && gpus_per_node == 1) return CS_MPI_NET;
  return -1;
}

/* Open MPI's fixed decision for commutative all_reduce (coll_tuned_decision_fixed.c, 4.1.0-5.0.9):
 * for communicators below `below` ranks, the first algorithm whose byte limit the message is under,
 * else `last`. A limit of 0 ends a bracket's list. */
struct bracket {
  int below;
  struct {
    double under;
    int alg;
  } step[6];
  int last;
};
static const struct bracket ompi41_allreduce[] = {
    {4, {{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}}, 6},
    {8, {{16, 4}, {8192, 3}}, 6},
    {16, {{8192, 3}}, 6},
    {32, {{64, 5}, {4096, 3}}, 6},
    {64, {{128, 5}}, 6},
    {128, {{262144, 3}}, 6},
    {256, {{131072, 2}, {262144, 3}}, 6},
    {512, {{4096, 2}}, 6},
    {2048, {{2048, 2}, {16384, 3}}, 6},
    {4096, {{2048, 2}, {4096, 5}, {16384, 3}}, 6},
    {0, {{2048, 2}, {16384, 5}, {32768, 3}}, 6},
};

static int fixed_decision(int p, double bytes) {
  const struct bracket *b = ompi41_allreduce;
  while (b->below != 0 && p >= b->below)
    b++;
  for (int i = 0; i < 6 && b->step[i].under > 0; i++)
    if (bytes < b->step[i].under) return b->step[i].alg;
  return b->last;
}

static int floor_log2(int p) {
  int l = 0;
  while ((2L << l) <= p)
    l++;
  return l;
}

enum cs_mpi_alg cs_mpi_ompi_choice(enum cs_mpi_alg a, int p, double bytes, int elem_size) {
  if (a == CS_MPI_AUTO) a = (enum cs_mpi_alg)fixed_decision(p, bytes);
  double count = elem_size > 0 ? floor(bytes / elem_size) : bytes;
  /* segment size 0 (what the fixed decision passes): the segmented ring runs the ring */
  if (a == CS_MPI_SEGMENTED_RING) a = CS_MPI_RING;
  if (a == CS_MPI_RING && count < p) a = CS_MPI_RECURSIVE_DOUBLING;
  if (a == CS_MPI_RABENSEIFNER && count < (double)(1L << floor_log2(p))) a = CS_MPI_BASIC_LINEAR;
  return a;
}

/* One step of a critical path: a message of `msg` bytes sent (and as many received), `red` bytes
 * reduced after it. */
struct law_acc {
  double a, b, r, o, c; /* messages, bytes sent, messages above the eager limit and their bytes
                         * beyond it, bytes reduced */
  double eager;
  int idle; /* the busiest rank only waits for this step's message */
};

static void step(struct law_acc *acc, double times, double msg, double red) {
  acc->a += times;
  acc->b += acc->idle ? 0 : times * msg;
  acc->r += msg > acc->eager ? times : 0;
  acc->o += msg > acc->eager ? times * (msg - acc->eager) : 0;
  acc->c += times * red;
}

int cs_mpi_law(enum cs_coll c, enum cs_mpi_alg alg, int p, double bytes, enum cs_mpi_tier t,
               double x[CS_MPI_NPARAMS]) {
  for (int i = 0; i < CS_MPI_NPARAMS; i++)
    x[i] = 0;
  if (c != CS_COLL_ALL_REDUCE || p < 1 || (int)t < 0 || t >= CS_MPI_TIER_COUNT) return -1;
  if (p == 1) return 0; /* a copy at most: nothing the laws price */
  int L = floor_log2(p), pp = 1 << L, e = p != pp;
  int l = L + e; /* ceil(log2 p) */
  double n = bytes;
  struct law_acc acc = {0, 0, 0, 0, 0, cs_mpi_eager_limit(t), 0};
  switch (alg) {
  case CS_MPI_BASIC_LINEAR: /* linear reduce to rank 0, then linear broadcast from it */
    step(&acc, p - 1, n, n);
    step(&acc, p - 1, n, 0);
    break;
  case CS_MPI_NONOVERLAPPING: /* binomial reduce, then binomial broadcast */
    step(&acc, l, n, n);
    step(&acc, l, n, 0);
    break;
  case CS_MPI_RECURSIVE_DOUBLING:
    acc.idle = 1;
    step(&acc, e, n, n); /* the extra ranks fold into their partners */
    acc.idle = 0;
    step(&acc, L, n, n);
    step(&acc, e, n, 0); /* and get the result back */
    break;
  case CS_MPI_RING:
  case CS_MPI_SEGMENTED_RING: /* reduce-scatter ring, then allgather ring, blocks of n/p */
    step(&acc, p - 1, n / p, n / p);
    step(&acc, p - 1, n / p, 0);
    break;
  case CS_MPI_RABENSEIFNER:
    step(&acc, e, n / 2, n / 2); /* halves exchanged with the extra rank ... */
    acc.idle = 1;
    step(&acc, e, n / 2, 0); /* ... and its reduced half sent back */
    acc.idle = 0;
    for (int k = 1; k <= L; k++) /* recursive halving, then recursive doubling */
      step(&acc, 1, n / (double)(1L << k), n / (double)(1L << k));
    for (int k = L; k >= 1; k--)
      step(&acc, 1, n / (double)(1L << k), 0);
    step(&acc, e, n, 0); /* the result to the extra rank */
    break;
  default:
    return -1;
  }
  x[CS_MPI_ALPHA(t)] = acc.a;
  x[CS_MPI_BETA(t)] = acc.b;
  x[CS_MPI_RNDV(t)] = acc.r;
  x[CS_MPI_BEYOND(t)] = acc.o;
  x[CS_MPI_GAMMA] = acc.c;
  return 0;
}

double cs_mpi_eager_limit(enum cs_mpi_tier t) {
  return t == CS_MPI_LOCAL ? 4096 : 65536;
}

int cs_mpi_row_alg(const char *config) {
  if (config == NULL) return CS_MPI_AUTO;
  static const char key[] = "OMPI_MCA_coll_tuned_allreduce_algorithm=";
  static const char dyn[] = "OMPI_MCA_coll_tuned_use_dynamic_rules=";
  int alg = CS_MPI_AUTO, dynamic = 0;
  const char *s = config;
  while (*s) {
    size_t len = strcspn(s, ";");
    if (len > sizeof key - 1 && strncmp(s, key, sizeof key - 1) == 0) {
      char buf[32];
      size_t vl = len - (sizeof key - 1);
      snprintf(buf, sizeof buf, "%.*s", (int)(vl < sizeof buf ? vl : sizeof buf - 1),
               s + sizeof key - 1);
      enum cs_mpi_alg a;
      if (cs_mpi_alg_parse(buf, &a) != 0) return -1;
      alg = (int)a;
    } else if (len > sizeof dyn - 1 && strncmp(s, dyn, sizeof dyn - 1) == 0) {
      const char *v = s + sizeof dyn - 1;
      size_t vl = len - (sizeof dyn - 1);
      dynamic = (vl == 1 && *v == '1') || (vl == 4 && strncasecmp(v, "true", 4) == 0);
    }
    s += len;
    if (*s == ';') s++;
  }
  return dynamic ? alg : CS_MPI_AUTO;
}

const char *cs_mpi_param_name(int i) {
  static const char *const n[CS_MPI_NPARAMS] = {"alpha.local",  "beta.local", "rndv.local",
                                                "beyond.local", "alpha.net",  "beta.net",
                                                "rndv.net",     "beyond.net", "gamma"};
  return i >= 0 && i < CS_MPI_NPARAMS ? n[i] : "?";
}

int cs_mpi_predict(const struct cs_mpi_fit *f, enum cs_coll c, enum cs_mpi_alg a, int nodes,
                   int gpn, double bytes, enum cs_mpi_alg *alg, double *t, double *lo, double *hi,
                   char *msg, size_t msglen) {
  int tier = cs_mpi_tier_of(nodes, gpn);
  if (c != CS_COLL_ALL_REDUCE) {
    snprintf(msg, msglen, "the MPI laws price all_reduce only, not %s", cs_coll_name(c));
    return -1;
  }
  if (tier < 0) {
    snprintf(msg, msglen,
             "the MPI laws price one rank per node or one node, not %d nodes x %d ranks", nodes,
             gpn);
    return -1;
  }
  if (!f->fitted || !(f->determined & (1u << CS_MPI_BETA(tier)))) {
    snprintf(msg, msglen,
             "the calibration never measured MPI %s (%s): measure %s with commscale-run "
             "--backend mpi",
             tier == CS_MPI_NET ? "across nodes" : "within one node",
             tier == CS_MPI_NET ? "one rank per node" : "several ranks of one node",
             tier == CS_MPI_NET ? "two or more nodes" : "one node");
    return -1;
  }
  int p = nodes * gpn;
  *alg = cs_mpi_ompi_choice(a, p, bytes, f->elem_size > 0 ? f->elem_size : 4);
  double x[CS_MPI_NPARAMS];
  if (cs_mpi_law(c, *alg, p, bytes, (enum cs_mpi_tier)tier, x) != 0) {
    snprintf(msg, msglen, "no law for %s", cs_mpi_alg_name(*alg));
    return -1;
  }
  double m = 0, var = 0;
  for (int i = 0; i < CS_MPI_NPARAMS; i++) {
    m += x[i] * f->theta[i];
    for (int j = 0; j < CS_MPI_NPARAMS; j++)
      var += x[i] * f->cov[i][j] * x[j];
  }
  double nz = f->noise_rel * m;
  double half = 1.96 * sqrt((var > 0 ? var : 0) + nz * nz);
  *t = m;
  *lo = m - half > 0 ? m - half : 0;
  *hi = m + half;
  return 0;
}
