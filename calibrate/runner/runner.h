/* runner.h — the measurement runner: one harness, pluggable backends (MPI on CPUs, NCCL on GPUs).
 *
 * The harness owns everything that is the same for every backend: the list of message sizes
 * (nccl-tests flags -b -e -f), the scaling shapes (1..N nodes x 1, 2, 4, .. G ranks per node, all
 * cut from one launch with MPI_Comm_split / ncclCommSplit), the timing discipline (warm-up, then
 * trials of back-to-back operations repeated until their spread is small; the figure kept is the
 * median trial, each trial's time being the maximum over the group's ranks), the measurements CSV
 * (rows appended and flushed as they complete, by world rank 0 only; --resume skips the rows a
 * file already holds) and the nccl-tests-style table on stdout.
 *
 * A backend is a table of function pointers (struct cs_backend), as nccl-tests plugs collectives
 * into its harness: it creates communicators for a set of ranks, issues operations, starts and
 * reads its clock, takes a maximum over a group, and says what it knows about the machine. The
 * timed batch itself (warm-up, clock, timed operations, clock, maximum over the ranks) is the
 * harness's, the same for every backend. Backends are compiled in when their dependency was found
 * at build time (CS_HAVE_MPI, CS_HAVE_NCCL); cs_backend_find() names what this build has.
 *
 * The null backend (backend_null.c) measures nothing: a timing model stands in for the library, in
 * one process that simulates N nodes of G ranks, so that the harness runs under test anywhere.
 *
 * Processes and ranks. Under MPI every process drives one rank (one CPU process or one GPU).
 * Without MPI the NCCL backend drives every local GPU from one process (ncclCommInitAll), and the
 * launch is recorded as "thread". A "node" is the set of ranks sharing a node key: --node-id, else
 * $CS_NODE_ID, else $NCCL_HOSTID, else the MPI processor name (or the host name). Nodes are
 * numbered in the order of their lowest world rank, so world rank 0 is rank 0 of node 0 and belongs
 * to every shape. Shapes take the first n nodes and the first g ranks of each.
 *
 * Failure is bounded: the harness calls opts->progress before and after every blocking step, so the
 * executable can run a watchdog that ends the process when a peer is dead or hung; backends that
 * can poll (NCCL) also give up by themselves after opts->timeout_s and abort their communicator.
 *
 * Fault injection for the tests: $CS_RUN_FAIL_AFTER=N makes the run fail after N rows were written
 * (as a killed run would leave them); $CS_RUN_STOP_RANK=P freezes process P (SIGSTOP) before its
 * first measurement, as a hung rank would.
 */
#ifndef CS_RUNNER_H
#define CS_RUNNER_H

#include <stddef.h>
#include <stdio.h>

#include "coll.h"
#include "meas.h"
#include "runner_opts.h"
#include "status.h"

/* The launch as the harness sees it, after the node keys were exchanged. */
struct cs_run_world {
  int nranks;        /* measured ranks in the launch (GPUs or CPU processes) */
  int nprocs, proc;  /* processes in the launch, and this one's index (MPI rank) */
  int first, nlocal; /* this process drives ranks first .. first + nlocal - 1 */
  int nnodes;
  int max_gpn;           /* G: the fewest ranks any node has */
  int *node_of;          /* [nranks] node index of each rank */
  int *local_of;         /* [nranks] the rank's index within its node */
  char (*node_name)[64]; /* [nnodes] the node keys */
  void *mpi_world;       /* MPI_Comm * of MPI_COMM_WORLD when built with MPI and launched by it */
};

/* A backend: created once per process, then asked for groups and timings. Every function that
 * says "collective" must be called by every process of the launch (or of the group) in the same
 * order; errors that depend on the machine (an algorithm the library cannot run) must come out the
 * same on every rank so that all ranks skip together. */
struct cs_backend {
  const char *name;
  /* The default (algorithm, protocol) pairs and, for --algos all, every pair worth forcing. */
  const struct cs_run_variant *variants_default;
  int nvariants_default;
  const struct cs_run_variant *variants_all;
  int nvariants_all;

  /* Creates the per-process state; *nlocal is the number of ranks this process will drive
   * (1 under MPI). *launch says how they are started. */
  enum cs_status (*init)(const struct cs_run_opts *o, int launched_by_mpi, void **state,
                         int *nlocal, enum cs_launch *launch, struct cs_error *err);
  /* Collective over all processes, once the world is known: picks devices, creates the world
   * communicator. */
  enum cs_status (*start)(void *state, const struct cs_run_world *w, struct cs_error *err);
  /* Collective over all processes: creates the communicator of the ranks with members[r] != 0
   * with variant v forced; buffers hold max_bytes. *grp is NULL in a process that drives none of
   * them. */
  enum cs_status (*group_open)(void *state, const int *members, struct cs_run_variant v,
                               double max_bytes, void **grp, struct cs_error *err);
  /* A timed batch is, in this order: prepare, issue(warm-up count), clock_start, issue(timed
   * count), clock_stop, group_max; each is collective over the group. */
  /* Readies the group for operations of c on `bytes` (the nccl-tests size, see coll.h) in dtype d,
   * in place or not; the group keeps them for the calls below. CS_ERR_UNSUPPORTED or CS_ERR_RANGE
   * when the library or the group's buffers cannot do it (the same on every rank; the group stays
   * usable). */
  enum cs_status (*prepare)(void *grp, enum cs_coll c, enum cs_dtype d, double bytes, int in_place,
                            struct cs_error *err);
  /* Issues k prepared operations back to back (a library with streams queues them); k may be 0.
   * CS_ERR_UNSUPPORTED when the library refuses the combination (same on every rank). */
  enum cs_status (*issue)(void *grp, int k, struct cs_error *err);
  /* Starts the clock once the warm-up operations were issued, so that they are not timed. */
  enum cs_status (*clock_start)(void *grp, struct cs_error *err);
  /* Waits for the operations issued since clock_start; *sec is the seconds they took in this
   * process (the longest of its ranks). */
  enum cs_status (*clock_stop)(void *grp, double *sec, struct cs_error *err);
  /* Replaces *t by the maximum of *t over the group's processes (the same on every rank). */
  enum cs_status (*group_max)(void *grp, double *t, struct cs_error *err);
  /* Collective over the group: one small all_reduce whose sum is checked. */
  enum cs_status (*check)(void *grp, struct cs_error *err);
  void (*group_close)(void *grp);
  /* Adds provenance (library versions, device, environment) to set; may be NULL. */
  void (*describe)(void *state, struct cs_meas_set *set);
  void (*fini)(void *state);
  /* The node key of local rank `rank` (0 .. nlocal - 1) for a backend that simulates several nodes
   * in one process (the null backend); NULL: every rank of a process is on the process's node. */
  void (*rank_node)(void *state, int rank, char *key, size_t len);
};

/* The backend called name in this build, or NULL. */
const struct cs_backend *cs_backend_find(const char *name);
/* The backends compiled in (NULL-terminated). */
extern const struct cs_backend *const cs_backends[];

/* Sets the library's environment so that the next communicator forces v (NCCL_ALGO, NCCL_PROTO
 * for NCCL; nothing for MPI), restoring the user's own values for CS_ALGO_AUTO/CS_PROTO_AUTO. */
void cs_run_force_env(struct cs_run_variant v);

/* The row's configuration tag: the sorted NCCL_* settings of the environment, without the ones
 * that only select what the runner measures or how it logs (NCCL_ALGO, NCCL_PROTO, NCCL_DEBUG*,
 * NCCL_HOSTID, NCCL_NVLS_ENABLE, NCCL_SOCKET_IFNAME, NCCL_IB_HCA, NCCL_COMM_ID, and NCCL_VERSION
 * which NVIDIA's containers set); for the mpi backend (backend "mpi") the sorted OMPI_MCA_coll_*
 * settings instead, which choose Open MPI's collective algorithms. */
void cs_run_config_tag(char *buf, size_t len, const char *backend);

/* Sets key=value in the sorted ';'-separated tag buf (replacing key's value if present). */
void cs_run_tag_set(char *buf, size_t len, const char *key, const char *value);

/* The whole run, collective over every process of the launch: exchanges node keys, plans shapes x
 * variants x collectives x sizes, skips what out_path holds (with resume), measures the rest and
 * writes rows and the table (rank 0). Requires MPI_Init to have been called when the build has MPI
 * and the process was started by an MPI launcher. Returns the first error; rows finished before it
 * stay in the CSV. */
enum cs_status cs_run(const struct cs_run_opts *o, struct cs_error *err);

/* The compute probes (probe_cuda.c; the rows and their CSV are calibrate/meas/probe.h). Runs the
 * probes selected in o (o->probes, o->probe_dtypes) on this process's GPUs and appends one row per
 * point to o->probe_out (rank `proc` 0 only; the other processes of an MPI launch return at once):
 * gemm and membw on the first GPU, interference on all local GPUs (at least 2, one process: skipped
 * with a note on o->log otherwise). o->resume skips the points the file already holds; o->overwrite
 * replaces it; otherwise rows are appended to an existing probe file. Rows finished before an error
 * stay in the file. CS_ERR_UNSUPPORTED in a build without CUDA. */
enum cs_status cs_probe_run(const struct cs_run_opts *o, int nprocs, int proc,
                            struct cs_error *err);

#endif
