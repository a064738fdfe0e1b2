/* mpicoll.h — MPI's own collective algorithms (all_reduce, all_gather): their cost laws, and the
 * algorithm Open MPI picks when the user forces none.
 *
 * NCCL's collectives are priced by costmodel.h; a CPU cluster measured with the MPI backend runs
 * Open MPI's coll/tuned algorithms instead, which switch by message size and rank count. Each is
 * priced along its critical path, step by step, for p ranks that all see the same link (one rank
 * per node across the network, or p ranks of one node), S bytes (the nccl-tests size: the
 * buffer) and five rates of that link:
 *
 *   t = a * alpha + b * beta + r * rndv + o * beyond + c * gamma
 *
 * a: messages on the critical path (alpha: seconds each); b: bytes the busiest rank sends (beta:
 * seconds per byte); r: messages on the path above the transport's eager limit (rndv: the
 * rendezvous handshake Open MPI's ob1 layer adds to each, seconds) and o: their bytes beyond it
 * (beyond: seconds per byte, what a synchronous transfer adds); c: bytes reduced (gamma: seconds
 * per byte). b counts the busiest rank's sends, not the path's: a send at or under the eager limit
 * returns once the transport holds it, so in a batch of back-to-back operations (what is timed
 * and what training loops issue) a rank that only waits for a message costs no link time of its
 * own (6 ranks on the 100 Mb/s namespace cluster: Rabenseifner's path moves 3.5 S, its busiest
 * rank sends 3 S, measured 3.1-3.2 S). With L = floor(log2 p), p' = 2^L, e = 1 when p != p' (else
 * 0) and l = ceil(log2 p), the steps of all_reduce (Open MPI's numbers; as
 * coll/base/coll_base_allreduce.c of Open MPI 4.1 runs them; Thakur, Rabenseifner and Gropp,
 * IJHPCA 19(1), 2005, give the same laws for power-of-two p), as (count x message bytes, bytes
 * reduced after each), [w] marking a step whose message the busiest rank only waits for:
 *
 *   1 basic_linear        [w] (p-1) x (S, S), then (p-1) x (S, 0)
 *   2 nonoverlapping      [w] l x (S, S), then l x (S, 0)   (binomial reduce, binomial bcast)
 *   3 recursive_doubling  [w] e x (S, S), L x (S, S), e x (S, 0)
 *   4 ring                (p-1) x (S/p, S/p), then (p-1) x (S/p, 0)
 *   5 segmented_ring      as ring (Open MPI's decision passes segment size 0: the plain ring runs)
 *   6 rabenseifner        e x (S/2, S/2), [w] e x (S/2, 0), S/2^k for k = 1..L reduced, then
 *                         k = L..1 not, then e x (S, 0)
 *
 * The eager limits are the run's (the runner reads btl_tcp_eager_limit and btl_vader_eager_limit,
 * or btl_sm_eager_limit in Open MPI 5, through MPI_T into its provenance; the fit keeps them in
 * the calibration); where a run did not record them, Open MPI 4.1's defaults: 64 KiB for TCP
 * across nodes, 4 KiB for shared memory within one (32 KiB where vader copies through XPMEM,
 * which only the recorded value tells).
 *
 * Open MPI itself falls back to recursive doubling when the element count is below p (ring), to
 * basic_linear when it is below p' (rabenseifner); the laws follow it. The nonoverlapping law
 * prices Open MPI's tuned reduce and broadcast as unsegmented binomial trees, which their own
 * decisions refine: an approximation, used by the default choice only at 128 ranks and more for
 * small messages.
 *
 * The default choice (cs_mpi_ompi_choice) is Open MPI's fixed decision for commutative operations
 * (coll/tuned/coll_tuned_decision_fixed.c, ompi_coll_tuned_allreduce_intra_dec_fixed: identical in
 * every release from 4.1.0 to 5.0.9), taken when coll_tuned_use_dynamic_rules is off or no
 * algorithm is forced. Rows measured with an algorithm forced carry it in their configuration tag,
 * "OMPI_MCA_coll_tuned_allreduce_algorithm=N" beside "OMPI_MCA_coll_tuned_use_dynamic_rules=1"
 * (cs_mpi_row_alg).
 *
 * all_gather (Open MPI's numbers; the runner's size S is the gathered buffer, m = S/p one rank's
 * block; coll_base_allgather.c of Open MPI 4.1):
 *
 *   1 linear              [w] (p-1) x m gathered to rank 0, then (p-1) x S broadcast from it
 *   2 bruck               min(2^k, p-2^k) blocks at step k = 0..l-1
 *   3 recursive_doubling  2^k blocks at step k = 0..L-1 (power-of-two p; else Open MPI runs bruck)
 *   4 ring                (p-1) x m
 *   5 neighbor            1 x m, then (p/2-1) x 2m (even p; else Open MPI runs the ring)
 *   6 two_proc            1 x m (2 ranks only)
 *
 * Its default choice keys on one rank's block: two_proc at 2 ranks, recursive doubling below 32,
 * then the table of ompi_coll_tuned_allgather_intra_dec_fixed (4.1.0-5.0.9). The other collectives
 * have no laws (cs_mpi_law returns -1).
 */
#ifndef CS_MPICOLL_H
#define CS_MPICOLL_H

#include <stddef.h>

#include "coll.h"

enum cs_mpi_alg {
  CS_MPI_AUTO = 0, /* the library's own choice */
  CS_MPI_BASIC_LINEAR = 1,
  CS_MPI_NONOVERLAPPING = 2,
  CS_MPI_RECURSIVE_DOUBLING = 3,
  CS_MPI_RING = 4,
  CS_MPI_SEGMENTED_RING = 5,
  CS_MPI_RABENSEIFNER = 6,
  CS_MPI_ALG_COUNT
};

/* Open MPI's all_gather algorithms (coll_tuned_allgather_algorithm). */
enum cs_mpi_ag_alg {
  CS_MPI_AG_LINEAR = 1,
  CS_MPI_AG_BRUCK = 2,
  CS_MPI_AG_RECURSIVE_DOUBLING = 3,
  CS_MPI_AG_RING = 4,
  CS_MPI_AG_NEIGHBOR = 5,
  CS_MPI_AG_TWO_PROC = 6,
  CS_MPI_AG_COUNT
};

/* The link all ranks of a shape see: one node (shared memory or loopback) or the network (one
 * rank per node). */
enum cs_mpi_tier { CS_MPI_LOCAL, CS_MPI_NET, CS_MPI_TIER_COUNT };

/* The parameters of the laws: alpha, beta and rndv of each tier, then gamma. */
#define CS_MPI_ALPHA(t) (4 * (int)(t))
#define CS_MPI_BETA(t) (4 * (int)(t) + 1)
#define CS_MPI_RNDV(t) (4 * (int)(t) + 2)
#define CS_MPI_BEYOND(t) (4 * (int)(t) + 3)
#define CS_MPI_GAMMA 8
#define CS_MPI_NPARAMS 9

/* The default eager limit of tier t's transport (bytes): messages above it pay the rendezvous. */
double cs_mpi_eager_limit(enum cs_mpi_tier t);

/* How a run of Open MPI was set up beyond its shape, as the runner records it; the laws price
 * with it. A zeroed struct (NULL where a pointer is taken) is Open MPI 4.1's default eager limits
 * with ranks placed in blocks. */
struct cs_mpi_setup {
  double eager[CS_MPI_TIER_COUNT]; /* the transports' eager limits, bytes; <= 0: the default */
  /* 1: ranks placed round robin over the nodes (mpirun --map-by node), communicator rank r on
   * node r % nodes; 0: in blocks (--map-by slot, core or socket: mpirun's default), rank r on
   * node r / ranks_per_node */
  int cyclic;
};

/* Tier t's eager limit under s (its eager[t], or the default above where s is NULL or eager[t] is
 * not positive). */
double cs_mpi_eager_of(const struct cs_mpi_setup *s, enum cs_mpi_tier t);

/* The placement's name, "block" or "cyclic" (as the runner's provenance, the calibration file and
 * `coll --placement` spell it), and its parse: 0 and *cyclic set for those two names, -1 (and
 * *cyclic untouched) for anything else. */
const char *cs_mpi_placement_name(int cyclic);
int cs_mpi_placement_parse(const char *s, int *cyclic);

/* One line on s for a header: the eager limits the laws use (and whether the run recorded them)
 * and the placement, "eager limits 65536 B across nodes, 4096 B within one (the run's); ranks
 * placed in blocks". Returns buf. */
const char *cs_mpi_setup_describe(const struct cs_mpi_setup *s, char *buf, size_t len);

/* Parses a provenance value "local=4096,net=65536" (the runner's "mpi_eager" line; either key may
 * be missing) into eager[CS_MPI_TIER_COUNT] (0 where absent). 0 on success, -1 on anything else
 * (eager then all 0). */
int cs_mpi_eager_parse(const char *s, double eager[CS_MPI_TIER_COUNT]);

/* Open MPI's name of algorithm a ("ring", "rabenseifner", "auto"); "?" out of range. */
const char *cs_mpi_alg_name(enum cs_mpi_alg a);

/* Parses a name ("recursive_doubling", case-insensitive) or Open MPI's number ("3"); 0 on success,
 * -1 otherwise (*out untouched). */
int cs_mpi_alg_parse(const char *s, enum cs_mpi_alg *out);

/* The same for collective c's own numbering (all_reduce: enum cs_mpi_alg; all_gather: enum
 * cs_mpi_ag_alg; 0 = "auto"); "?" and -1 for other collectives. */
const char *cs_mpi_coll_alg_name(enum cs_coll c, int a);
int cs_mpi_coll_alg_parse(enum cs_coll c, const char *s, int *out);

/* The tier of a shape: CS_MPI_LOCAL for one node, CS_MPI_NET for one rank per node; -1 for
 * several nodes of several ranks, which use both (cs_mpi_law_shape). */
int cs_mpi_tier_of(int nodes, int gpus_per_node);

/* The algorithm Open MPI runs for an all_reduce of `bytes` over p ranks when a is forced (a =
 * CS_MPI_AUTO: its fixed decision), after its own fallbacks for short vectors (elements = bytes /
 * elem_size). */
enum cs_mpi_alg cs_mpi_ompi_choice(enum cs_mpi_alg a, int p, double bytes, int elem_size);

/* The same for collective c (a and the answer in c's numbering; bytes the nccl-tests size): -1
 * for a collective without laws or an algorithm Open MPI cannot run on p ranks. */
int cs_mpi_choice(enum cs_coll c, int a, int p, double bytes, int elem_size);

/* The counts (a, b, r, c) of the law above for algorithm alg (as cs_mpi_ompi_choice returns it)
 * of collective c over p ranks at `bytes`, as x[CS_MPI_NPARAMS] coefficients of the parameters on
 * tier t (zero elsewhere), so that t = sum x[i] * theta[i]; messages above tier t's eager limit
 * (cs_mpi_eager_of(setup, t)) count as rendezvous. Returns 0, or -1 when c has no law
 * (all_reduce and all_gather have), alg is 0 ("auto") or p < 1. */
int cs_mpi_law(enum cs_coll c, int alg, int p, double bytes, enum cs_mpi_tier t,
               const struct cs_mpi_setup *setup, double x[CS_MPI_NPARAMS]);

/* The counts of the same law for `nodes` x `gpn` ranks placed as setup says (NULL: in blocks, as
 * mpirun's default): one node or one rank per node as cs_mpi_law; several of each from the
 * algorithm's message schedule (cs_mpi_law_schedule): a step that sends any message across nodes
 * costs the network's alpha, else the node's; beta.net counts the bytes the busiest NIC sends (all
 * its ranks' messages to other nodes), beta.local the most a rank sends within its node. Returns 0
 * or -1 as cs_mpi_law. */
int cs_mpi_law_shape(enum cs_coll c, int alg, int nodes, int gpn, double bytes,
                     const struct cs_mpi_setup *setup, double x[CS_MPI_NPARAMS]);

/* The schedule law for any shape (model/mpisched.c); for one node or one rank per node it gives
 * cs_mpi_law's counts (test_mpicoll checks that). */
int cs_mpi_law_schedule(enum cs_coll c, int alg, int nodes, int gpn, double bytes,
                        const struct cs_mpi_setup *setup, double x[CS_MPI_NPARAMS]);

/* The algorithm a measurement row's configuration tag forces: the N of
 * "OMPI_MCA_coll_tuned_allreduce_algorithm=N" when the tag also turns dynamic rules on
 * ("OMPI_MCA_coll_tuned_use_dynamic_rules=1" or "=true"), else CS_MPI_AUTO. -1 when the tag names
 * an algorithm number Open MPI does not have. */
int cs_mpi_row_alg(const char *config);

/* The same for collective c ("OMPI_MCA_coll_tuned_allgather_algorithm=N" for all_gather). */
int cs_mpi_row_coll_alg(enum cs_coll c, const char *config);

/* The parameter's name: "alpha.local", "rndv.net", "gamma". */
const char *cs_mpi_param_name(int i);

/* The laws fitted to measured rows (calibrate/fit/mpifit.h), as a calibration file keeps them
 * (its `mpi:` section). fitted == 0: none. */
struct cs_mpi_fit {
  int fitted;
  double theta[CS_MPI_NPARAMS];               /* s, s/byte: see CS_MPI_NPARAMS */
  double cov[CS_MPI_NPARAMS][CS_MPI_NPARAMS]; /* their covariance (s^2, ...); 0 where fixed */
  unsigned determined;       /* bit i set: theta[i] was fitted; else the data cannot tell it (0) */
  int elem_size;             /* bytes per element of the fitted rows (their dtype) */
  struct cs_mpi_setup setup; /* as the run recorded it; zero where it did not (the defaults) */
  int points;
  double noise_rel; /* robust scale of the relative residuals (1.4826 x their MAD) */
  double median_rel_err, max_rel_err, cv_median_rel_err; /* cv: held-out shapes, NAN if none */
  int max_nodes, max_ranks_local; /* most nodes, most ranks per node measured (0: that tier none) */
  char library[128];              /* the MPI library measured */
};

/* Predicts collective c with algorithm a (c's numbering; 0: Open MPI's choice) over `nodes` x `gpn`
 * ranks at `bytes` from f (under f's setup): *alg the algorithm that runs, *t the time,
 * [*lo, *hi] a ~95% band (1.96 sigma of the fitted parameters' covariance and, in quadrature, of
 * the residual scale), seconds; x (NULL: not wanted) the law's counts it priced. Errors (one line
 * in msg): no law for c, or a tier the shape uses whose parameters the data never determined.
 * Returns 0 or -1. */
int cs_mpi_predict(const struct cs_mpi_fit *f, enum cs_coll c, int a, int nodes, int gpn,
                   double bytes, int *alg, double *t, double *lo, double *hi,
                   double x[CS_MPI_NPARAMS], char *msg, size_t msglen);

#endif
