/* mpisched.c — the laws of mpicoll.h from the algorithms' message schedules, for any shape of
 * nodes x ranks per node (cs_mpi_law_schedule).
 *
 * Ranks are placed by node in blocks (rank r on node r / g, mpirun's default --map-by slot) or,
 * where the run placed them round robin (--map-by node), rank r on node r % nodes. Each
 * algorithm is walked step by step as Open MPI 4.1's coll_base_allreduce.c and
 * coll_base_allgather.c exchange messages; every message is charged to the link it crosses: the
 * network when its ranks sit on two nodes, else the node's own. Per step: one message time on the
 * slowest link it uses (alpha of the network if any message of the step crosses nodes), the
 * rendezvous of its largest message above that link's eager limit, and the bytes beyond the limit
 * that the busiest NIC sends. Bytes: the most any NIC sends over the whole operation (all its
 * ranks' messages to other nodes: one NIC serves them all), and the most any rank sends within its
 * node; in a batch of back-to-back operations the busiest sender sets the pace, as for one rank per
 * node. Bytes reduced: those of the critical path, as mpicoll.h's steps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpicoll.h"

struct sched {
  int p, g, nodes;
  int cyclic; /* ranks placed round robin over the nodes (else in blocks) */
  double eager[CS_MPI_TIER_COUNT];
  double *nic_total; /* [nodes] bytes each NIC sends over the operation */
  double *nic_step;  /* [nodes] bytes each NIC sends in this step */
  double *nic_over;  /* [nodes] bytes beyond the eager limit each NIC sends in this step */
  double *loc_total; /* [p] bytes each rank sends within its node */
  int crossed, local;
  double max_cross, max_local; /* largest message of the step across nodes, within one */
  double a[CS_MPI_TIER_COUNT], r[CS_MPI_TIER_COUNT], o[CS_MPI_TIER_COUNT], c;
};

static int node_of(const struct sched *S, int r) {
  return S->cyclic ? r % S->nodes : r / S->g;
}

static void msg(struct sched *S, int src, int dst, double bytes) {
  src = ((src % S->p) + S->p) % S->p, dst = ((dst % S->p) + S->p) % S->p;
  if (src == dst || bytes <= 0) return;
  int ns = node_of(S, src);
  if (ns != node_of(S, dst)) {
    S->crossed = 1;
    S->nic_total[ns] += bytes;
    S->nic_step[ns] += bytes;
    S->nic_over[ns] += fmax(0, bytes - S->eager[CS_MPI_NET]);
    S->max_cross = fmax(S->max_cross, bytes);
  } else {
    S->local = 1;
    S->loc_total[src] += bytes;
    S->max_local = fmax(S->max_local, bytes);
  }
}

/* Ends a step whose critical path reduces `red` bytes. */
static void end_step(struct sched *S, double red) {
  if (S->crossed) {
    double over = 0;
    for (int n = 0; n < S->nodes; n++)
      over = fmax(over, S->nic_over[n]);
    S->a[CS_MPI_NET] += 1;
    S->r[CS_MPI_NET] += S->max_cross > S->eager[CS_MPI_NET];
    S->o[CS_MPI_NET] += over;
  } else if (S->local) {
    S->a[CS_MPI_LOCAL] += 1;
    S->r[CS_MPI_LOCAL] += S->max_local > S->eager[CS_MPI_LOCAL];
    S->o[CS_MPI_LOCAL] += fmax(0, S->max_local - S->eager[CS_MPI_LOCAL]);
  }
  if (S->crossed || S->local) S->c += red;
  memset(S->nic_step, 0, sizeof(double) * (size_t)S->nodes);
  memset(S->nic_over, 0, sizeof(double) * (size_t)S->nodes);
  S->crossed = S->local = 0;
  S->max_cross = S->max_local = 0;
}

static int ilog2(int p) {
  int l = 0;
  while ((2L << l) <= p)
    l++;
  return l;
}

static void recursive_doubling(struct sched *S, double n) {
  int p = S->p, pp = 1 << ilog2(p), extra = p - pp;
  for (int r = 0; r < 2 * extra; r += 2) /* the extra even ranks fold into the odd ones */
    msg(S, r, r + 1, n);
  end_step(S, n);
  for (int d = 1; d < pp; d <<= 1) {
    for (int r = 0; r < p; r++) {
      int v = r < 2 * extra ? (r % 2 ? r / 2 : -1) : r - extra;
      if (v < 0) continue;
      int w = v ^ d;
      msg(S, r, w < extra ? 2 * w + 1 : w + extra, n);
    }
    end_step(S, n);
  }
  for (int r = 1; r < 2 * extra; r += 2)
    msg(S, r, r - 1, n);
  end_step(S, 0);
}

static void rabenseifner(struct sched *S, double n) {
  int p = S->p, L = ilog2(p), pp = 1 << L, extra = p - pp;
  for (int r = 0; r < 2 * extra; r++) /* halves exchanged with the extra (odd) ranks */
    msg(S, r, r ^ 1, n / 2);
  end_step(S, n / 2);
  for (int r = 1; r < 2 * extra; r += 2) /* their reduced halves back */
    msg(S, r, r - 1, n / 2);
  end_step(S, 0);
  for (int k = 1; k <= 2 * L; k++) { /* recursive halving, then doubling back */
    int mask = k <= L ? 1 << (k - 1) : 1 << (2 * L - k);
    double m = n / (double)(1L << (k <= L ? k : 2 * L - k + 1));
    for (int r = 0; r < p; r++) {
      int v = r < 2 * extra ? (r % 2 ? -1 : r / 2) : r - extra;
      if (v < 0) continue;
      int w = v ^ mask;
      msg(S, r, w < extra ? 2 * w : w + extra, m);
    }
    end_step(S, k <= L ? m : 0);
  }
  for (int r = 0; r < 2 * extra; r += 2) /* the result to the extra ranks */
    msg(S, r, r + 1, n);
  end_step(S, 0);
}

static int allreduce(struct sched *S, int alg, double n) {
  int p = S->p;
  switch (alg) {
  case CS_MPI_BASIC_LINEAR: /* rank 0 receives, then sends, one rank at a time */
    for (int r = 1; r < p; r++)
      msg(S, r, 0, n), end_step(S, n);
    for (int r = 1; r < p; r++)
      msg(S, 0, r, n), end_step(S, 0);
    return 0;
  case CS_MPI_NONOVERLAPPING: { /* binomial reduce to rank 0, then binomial broadcast */
    int top = 1;
    for (int d = 1; d < p; d <<= 1, top = d) {
      for (int r = d; r < p; r += 2 * d)
        msg(S, r, r - d, n);
      end_step(S, n);
    }
    for (int d = top / 2; d >= 1; d >>= 1) {
      for (int r = 0; r + d < p; r += 2 * d)
        msg(S, r, r + d, n);
      end_step(S, 0);
    }
    return 0;
  }
  case CS_MPI_RECURSIVE_DOUBLING:
    recursive_doubling(S, n);
    return 0;
  case CS_MPI_RING:
  case CS_MPI_SEGMENTED_RING:
    for (int k = 0; k < 2 * (p - 1); k++) {
      for (int r = 0; r < p; r++)
        msg(S, r, r + 1, n / p);
      end_step(S, k < p - 1 ? n / p : 0);
    }
    return 0;
  case CS_MPI_RABENSEIFNER:
    rabenseifner(S, n);
    return 0;
  default:
    return -1;
  }
}

static int allgather(struct sched *S, int alg, double n) {
  int p = S->p;
  double m = n / p;
  switch (alg) {
  case CS_MPI_AG_LINEAR:
    for (int r = 1; r < p; r++)
      msg(S, r, 0, m), end_step(S, 0);
    for (int r = 1; r < p; r++)
      msg(S, 0, r, n), end_step(S, 0);
    return 0;
  case CS_MPI_AG_BRUCK:
    for (int d = 1; d < p; d <<= 1) {
      for (int r = 0; r < p; r++)
        msg(S, r, r - d, m * fmin(d, p - d));
      end_step(S, 0);
    }
    return 0;
  case CS_MPI_AG_RECURSIVE_DOUBLING:
    for (int d = 1; d < p; d <<= 1) {
      for (int r = 0; r < p; r++)
        msg(S, r, r ^ d, m * d);
      end_step(S, 0);
    }
    return 0;
  case CS_MPI_AG_RING:
    for (int k = 0; k < p - 1; k++) {
      for (int r = 0; r < p; r++)
        msg(S, r, r + 1, m);
      end_step(S, 0);
    }
    return 0;
  case CS_MPI_AG_NEIGHBOR: /* step 0 with the first neighbour, then alternating, 2 blocks */
    for (int i = 0; i < p / 2; i++) {
      for (int r = 0; r < p; r++) {
        int even = r % 2 == 0, right = i == 0 ? even : (i % 2 == 1) != even;
        msg(S, r, right ? r + 1 : r - 1, i == 0 ? m : 2 * m);
      }
      end_step(S, 0);
    }
    return 0;
  case CS_MPI_AG_TWO_PROC:
    msg(S, 0, 1, m), msg(S, 1, 0, m), end_step(S, 0);
    return 0;
  default:
    return -1;
  }
}

int cs_mpi_law_schedule(enum cs_coll c, int alg, int nodes, int gpn, double bytes,
                        const struct cs_mpi_setup *setup, double x[CS_MPI_NPARAMS]) {
  for (int i = 0; i < CS_MPI_NPARAMS; i++)
    x[i] = 0;
  if ((c != CS_COLL_ALL_REDUCE && c != CS_COLL_ALL_GATHER) || nodes < 1 || gpn < 1 ||
      nodes > (1 << 20) / gpn)
    return -1;
  struct sched S = {.p = nodes * gpn, .g = gpn, .nodes = nodes, .cyclic = setup && setup->cyclic};
  if (S.p == 1) return 0;
  S.eager[CS_MPI_LOCAL] = cs_mpi_eager_of(setup, CS_MPI_LOCAL);
  S.eager[CS_MPI_NET] = cs_mpi_eager_of(setup, CS_MPI_NET);
  S.nic_total = calloc((size_t)nodes, sizeof(double));
  S.nic_step = calloc((size_t)nodes, sizeof(double));
  S.nic_over = calloc((size_t)nodes, sizeof(double));
  S.loc_total = calloc((size_t)S.p, sizeof(double));
  int rc = -1;
  if (S.nic_total && S.nic_step && S.nic_over && S.loc_total)
    rc = c == CS_COLL_ALL_REDUCE ? allreduce(&S, alg, bytes) : allgather(&S, alg, bytes);
  if (rc == 0) {
    double nic = 0, loc = 0;
    for (int n = 0; n < nodes; n++)
      nic = fmax(nic, S.nic_total[n]);
    for (int r = 0; r < S.p; r++)
      loc = fmax(loc, S.loc_total[r]);
    for (int t = 0; t < CS_MPI_TIER_COUNT; t++) {
      x[CS_MPI_ALPHA(t)] = S.a[t];
      x[CS_MPI_RNDV(t)] = S.r[t];
      x[CS_MPI_BEYOND(t)] = S.o[t];
    }
    x[CS_MPI_BETA(CS_MPI_NET)] = nic;
    x[CS_MPI_BETA(CS_MPI_LOCAL)] = loc;
    x[CS_MPI_GAMMA] = S.c;
  }
  free(S.nic_total), free(S.nic_step), free(S.nic_over), free(S.loc_total);
  return rc;
}

int cs_mpi_law_shape(enum cs_coll c, int alg, int nodes, int gpn, double bytes,
                     const struct cs_mpi_setup *setup, double x[CS_MPI_NPARAMS]) {
  if (nodes == 1) return cs_mpi_law(c, alg, gpn, bytes, CS_MPI_LOCAL, setup, x);
  if (gpn == 1) return cs_mpi_law(c, alg, nodes, bytes, CS_MPI_NET, setup, x);
  return cs_mpi_law_schedule(c, alg, nodes, gpn, bytes, setup, x);
}
