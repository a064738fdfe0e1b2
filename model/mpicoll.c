/* mpicoll.c — laws and default choice of Open MPI's all_reduce and all_gather algorithms
 * (mpicoll.h). */
#include "mpicoll.h"

#include <errno.h>
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

/* The index of s in names[0..n) (case-insensitive) or s as one digit below n; -1 otherwise. */
static int parse_name(const char *const *names, int n, const char *s) {
  if (s == NULL || *s == '\0') return -1;
  for (int i = 0; i < n; i++)
    if (strcasecmp(s, names[i]) == 0) return i;
  return s[0] >= '0' && s[0] < '0' + n && s[1] == '\0' ? s[0] - '0' : -1;
}

int cs_mpi_alg_parse(const char *s, enum cs_mpi_alg *out) {
  int a = parse_name(alg_names, CS_MPI_ALG_COUNT, s);
  if (a < 0) return -1;
  *out = (enum cs_mpi_alg)a;
  return 0;
}

static const char *const ag_names[CS_MPI_AG_COUNT] = {
    "auto", "linear", "bruck", "recursive_doubling", "ring", "neighbor", "two_proc"};

const char *cs_mpi_coll_alg_name(enum cs_coll c, int a) {
  if (c == CS_COLL_ALL_REDUCE) return cs_mpi_alg_name((enum cs_mpi_alg)a);
  return c == CS_COLL_ALL_GATHER && a >= 0 && a < CS_MPI_AG_COUNT ? ag_names[a] : "?";
}

int cs_mpi_coll_alg_parse(enum cs_coll c, const char *s, int *out) {
  int a = c == CS_COLL_ALL_REDUCE   ? parse_name(alg_names, CS_MPI_ALG_COUNT, s)
          : c == CS_COLL_ALL_GATHER ? parse_name(ag_names, CS_MPI_AG_COUNT, s)
                                    : -1;
  if (a < 0) return -1;
  *out = a;
  return 0;
}

int cs_mpi_tier_of(int nodes, int gpus_per_node) {
  if (nodes == 1) return CS_MPI_LOCAL;
  if (nodes > 1 && gpus_per_node == 1) return CS_MPI_NET;
  return -1;
}

/* Open MPI's fixed decisions (coll_tuned_decision_fixed.c, 4.1.0-5.0.9): for communicators below
 * `below` ranks (0: any), the first algorithm whose byte limit the message is under, else `last`.
 * A limit of 0 ends a bracket's list. all_reduce: commutative operations, bytes = the buffer;
 * all_gather: bytes = one rank's block. */
struct bracket {
  int below;
  struct {
    double under;
    int alg;
  } step[8];
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

static const struct bracket ompi41_allgather[] = {
    {3, {{0, 0}}, CS_MPI_AG_TWO_PROC},
    {32, {{0, 0}}, CS_MPI_AG_RECURSIVE_DOUBLING},
    {64, {{1024, 3}, {65536, 5}}, 4},
    {128, {{512, 3}, {65536, 5}}, 4},
    {256, {{512, 3}, {131072, 5}, {524288, 4}, {1048576, 5}}, 4},
    {512, {{32, 3}, {128, 2}, {1024, 3}, {131072, 5}, {524288, 4}, {1048576, 5}}, 4},
    {1024, {{64, 3}, {256, 2}, {2048, 3}}, 5},
    {2048, {{4, 3}, {8, 2}, {16, 3}, {32, 2}, {256, 3}, {512, 2}, {4096, 3}}, 5},
    {4096, {{32, 2}, {128, 3}, {512, 2}, {4096, 3}}, 5},
    {0, {{2, 3}, {8, 2}, {16, 3}, {512, 2}, {4096, 3}}, 5},
};

static int fixed_decision(const struct bracket *b, int p, double bytes) {
  while (b->below != 0 && p >= b->below)
    b++;
  for (int i = 0; i < 8 && b->step[i].under > 0; i++)
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
  if (a == CS_MPI_AUTO) a = (enum cs_mpi_alg)fixed_decision(ompi41_allreduce, p, bytes);
  double count = elem_size > 0 ? floor(bytes / elem_size) : bytes;
  /* segment size 0 (what the fixed decision passes): the segmented ring runs the ring */
  if (a == CS_MPI_SEGMENTED_RING) a = CS_MPI_RING;
  if (a == CS_MPI_RING && count < p) a = CS_MPI_RECURSIVE_DOUBLING;
  if (a == CS_MPI_RABENSEIFNER && count < (double)(1L << floor_log2(p))) a = CS_MPI_BASIC_LINEAR;
  return a;
}

/* Open MPI's all_gather choice and its fallbacks (coll_base_allgather.c, 4.1): recursive doubling
 * on a non-power-of-two count runs bruck, neighbor exchange on an odd count runs the ring, and
 * two_proc runs on 2 ranks only (-1 otherwise). */
static int allgather_choice(int a, int p, double block) {
  if (a == 0) a = fixed_decision(ompi41_allgather, p, block);
  if (a == CS_MPI_AG_RECURSIVE_DOUBLING && (p & (p - 1)) != 0) a = CS_MPI_AG_BRUCK;
  if (a == CS_MPI_AG_NEIGHBOR && p % 2) a = CS_MPI_AG_RING;
  if (a == CS_MPI_AG_TWO_PROC && p != 2) return -1;
  return a >= 1 && a < CS_MPI_AG_COUNT ? a : -1;
}

int cs_mpi_choice(enum cs_coll c, int a, int p, double bytes, int elem_size) {
  if (p < 1) return -1;
  if (c == CS_COLL_ALL_REDUCE)
    return a >= 0 && a < CS_MPI_ALG_COUNT
               ? (int)cs_mpi_ompi_choice((enum cs_mpi_alg)a, p, bytes, elem_size)
               : -1;
  if (c == CS_COLL_ALL_GATHER) return allgather_choice(a, p, bytes / p);
  return -1;
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

/* The steps of Open MPI's all_gather algorithm alg over p ranks, blocks of m bytes; -1 when it
 * has none. */
static int allgather_steps(struct law_acc *acc, int alg, int p, double m) {
  int L = floor_log2(p), l = L + ((1 << L) != p);
  switch (alg) {
  case CS_MPI_AG_LINEAR: /* gather to rank 0, then its linear broadcast of the whole buffer */
    acc->idle = 1;
    step(acc, p - 1, m, 0);
    acc->idle = 0;
    step(acc, p - 1, m * p, 0);
    return 0;
  case CS_MPI_AG_BRUCK: /* step k sends min(2^k, p - 2^k) blocks */
    for (int k = 0; k < l; k++)
      step(acc, 1, m * fmin((double)(1L << k), (double)(p - (1L << k))), 0);
    return 0;
  case CS_MPI_AG_RECURSIVE_DOUBLING: /* power-of-two p: 2^k blocks at step k */
    for (int k = 0; k < L; k++)
      step(acc, 1, m * (double)(1L << k), 0);
    return 0;
  case CS_MPI_AG_RING:
    step(acc, p - 1, m, 0);
    return 0;
  case CS_MPI_AG_NEIGHBOR: /* even p: one block, then p/2 - 1 exchanges of two */
    step(acc, 1, m, 0);
    step(acc, p / 2 - 1, 2 * m, 0);
    return 0;
  case CS_MPI_AG_TWO_PROC:
    step(acc, 1, m, 0);
    return 0;
  default:
    return -1;
  }
}

int cs_mpi_law(enum cs_coll c, int alg, int p, double bytes, enum cs_mpi_tier t,
               const struct cs_mpi_setup *setup, double x[CS_MPI_NPARAMS]) {
  for (int i = 0; i < CS_MPI_NPARAMS; i++)
    x[i] = 0;
  if ((c != CS_COLL_ALL_REDUCE && c != CS_COLL_ALL_GATHER) || p < 1 || (int)t < 0 ||
      t >= CS_MPI_TIER_COUNT)
    return -1;
  if (p == 1) return 0; /* a copy at most: nothing the laws price */
  int L = floor_log2(p), pp = 1 << L, e = p != pp;
  int l = L + e; /* ceil(log2 p) */
  double n = bytes;
  struct law_acc acc = {0, 0, 0, 0, 0, cs_mpi_eager_of(setup, t), 0};
  if (c == CS_COLL_ALL_GATHER) {
    if (allgather_steps(&acc, alg, p, n / p) != 0) return -1;
    alg = -1; /* skip the all_reduce switch */
  }
  switch (alg) {
  case -1:
    break;
  case CS_MPI_BASIC_LINEAR: /* linear reduce to rank 0 (it waits), then its linear broadcast */
    acc.idle = 1;
    step(&acc, p - 1, n, n);
    acc.idle = 0;
    step(&acc, p - 1, n, 0);
    break;
  case CS_MPI_NONOVERLAPPING: /* binomial reduce (rank 0 waits), then its binomial broadcast */
    acc.idle = 1;
    step(&acc, l, n, n);
    acc.idle = 0;
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

double cs_mpi_eager_of(const struct cs_mpi_setup *s, enum cs_mpi_tier t) {
  return s && s->eager[t] > 0 ? s->eager[t] : cs_mpi_eager_limit(t);
}

const char *cs_mpi_placement_name(int cyclic) {
  return cyclic ? "cyclic" : "block";
}

int cs_mpi_placement_parse(const char *s, int *cyclic) {
  if (s == NULL || (strcmp(s, "block") != 0 && strcmp(s, "cyclic") != 0)) return -1;
  *cyclic = strcmp(s, "cyclic") == 0;
  return 0;
}

const char *cs_mpi_setup_describe(const struct cs_mpi_setup *s, char *buf, size_t len) {
  int recorded = s && (s->eager[CS_MPI_LOCAL] > 0 || s->eager[CS_MPI_NET] > 0);
  snprintf(buf, len, "eager limits %.0f B across nodes, %.0f B within one (%s); ranks placed %s",
           cs_mpi_eager_of(s, CS_MPI_NET), cs_mpi_eager_of(s, CS_MPI_LOCAL),
           recorded ? "the run's" : "Open MPI's defaults: the run recorded none",
           s && s->cyclic ? "round robin over the nodes" : "in blocks");
  return buf;
}

int cs_mpi_eager_parse(const char *s, double eager[CS_MPI_TIER_COUNT]) {
  static const char *const key[CS_MPI_TIER_COUNT] = {"local=", "net="};
  for (int t = 0; t < CS_MPI_TIER_COUNT; t++)
    eager[t] = 0;
  if (s == NULL || *s == '\0') goto bad;
  while (*s) {
    int t = 0;
    while (t < CS_MPI_TIER_COUNT && strncmp(s, key[t], strlen(key[t])) != 0)
      t++;
    if (t == CS_MPI_TIER_COUNT) goto bad;
    s += strlen(key[t]);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno != 0 || !(v >= 1 && v <= 1e12) || v != floor(v)) goto bad;
    eager[t] = v;
    s = end;
    if (*s == ',')
      s++;
    else if (*s)
      goto bad;
  }
  return 0;
bad:
  for (int t = 0; t < CS_MPI_TIER_COUNT; t++)
    eager[t] = 0;
  return -1;
}

int cs_mpi_row_coll_alg(enum cs_coll c, const char *config) {
  if (config == NULL) return 0;
  char key[64];
  if (c != CS_COLL_ALL_REDUCE && c != CS_COLL_ALL_GATHER) return 0;
  snprintf(key, sizeof key, "OMPI_MCA_coll_tuned_%s_algorithm=",
           c == CS_COLL_ALL_REDUCE ? "allreduce" : "allgather");
  static const char dyn[] = "OMPI_MCA_coll_tuned_use_dynamic_rules=";
  size_t kl = strlen(key);
  int alg = 0, dynamic = 0;
  const char *s = config;
  while (*s) {
    size_t len = strcspn(s, ";");
    if (len > kl && strncmp(s, key, kl) == 0) {
      char buf[32];
      size_t vl = len - kl;
      snprintf(buf, sizeof buf, "%.*s", (int)(vl < sizeof buf ? vl : sizeof buf - 1), s + kl);
      if (cs_mpi_coll_alg_parse(c, buf, &alg) != 0) return -1;
    } else if (len > sizeof dyn - 1 && strncmp(s, dyn, sizeof dyn - 1) == 0) {
      const char *v = s + sizeof dyn - 1;
      size_t vl = len - (sizeof dyn - 1);
      dynamic = (vl == 1 && *v == '1') || (vl == 4 && strncasecmp(v, "true", 4) == 0);
    }
    s += len;
    if (*s == ';') s++;
  }
  return dynamic ? alg : 0;
}

int cs_mpi_row_alg(const char *config) {
  return cs_mpi_row_coll_alg(CS_COLL_ALL_REDUCE, config);
}

const char *cs_mpi_param_name(int i) {
  static const char *const n[CS_MPI_NPARAMS] = {"alpha.local",  "beta.local", "rndv.local",
                                                "beyond.local", "alpha.net",  "beta.net",
                                                "rndv.net",     "beyond.net", "gamma"};
  return i >= 0 && i < CS_MPI_NPARAMS ? n[i] : "?";
}

int cs_mpi_predict(const struct cs_mpi_fit *f, enum cs_coll c, int a, int nodes, int gpn,
                   double bytes, int *alg, double *t, double *lo, double *hi,
                   double xout[CS_MPI_NPARAMS], char *msg, size_t msglen) {
  if (c != CS_COLL_ALL_REDUCE && c != CS_COLL_ALL_GATHER) {
    snprintf(msg, msglen, "the MPI laws price all_reduce and all_gather only, not %s",
             cs_coll_name(c));
    return -1;
  }
  if (nodes < 1 || gpn < 1) {
    snprintf(msg, msglen, "no ranks to price (%d nodes x %d)", nodes, gpn);
    return -1;
  }
  /* the tiers the shape uses: the network across nodes, the node's own link within one */
  for (int tier = 0; tier < CS_MPI_TIER_COUNT; tier++) {
    int uses = tier == CS_MPI_NET ? nodes > 1 : gpn > 1;
    if (!uses || (f->fitted && (f->determined & (1u << CS_MPI_BETA(tier))))) continue;
    snprintf(msg, msglen,
             "the calibration never measured MPI %s (%s): measure %s with commscale-run "
             "--backend mpi",
             tier == CS_MPI_NET ? "across nodes" : "within one node",
             tier == CS_MPI_NET ? "one rank per node" : "several ranks of one node",
             tier == CS_MPI_NET ? "two or more nodes" : "one node");
    return -1;
  }
  int p = nodes * gpn;
  *alg = cs_mpi_choice(c, a, p, bytes, f->elem_size > 0 ? f->elem_size : 4);
  double x[CS_MPI_NPARAMS];
  if (*alg < 0 || cs_mpi_law_shape(c, *alg, nodes, gpn, bytes, &f->setup, x) != 0) {
    snprintf(msg, msglen, "Open MPI cannot run %s %s on %d ranks", cs_coll_name(c),
             cs_mpi_coll_alg_name(c, a), p);
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
  if (xout) memcpy(xout, x, sizeof x);
  return 0;
}
