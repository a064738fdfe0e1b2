/* meas.h — the measurements CSV: one row per measured (collective, algorithm, protocol, dtype,
 * ranks, nodes, GPUs per node, bytes, in-place) point.
 *
 * This module depends on nothing but the C library (and model/coll, model/status), because the
 * measurement runner that writes it must build on GPU nodes that have only CUDA, NCCL and MPI.
 *
 * File format (documented for users in docs/measurements.md):
 *   # commscale measurements v1             <- first line
 *   # key: value                            <- provenance lines, any number (gpu, nccl, hosts, ...)
 *   collective,algorithm,protocol,...       <- the header, exactly CS_MEAS_HEADER
 *   all_reduce,auto,auto,float,2,1,2,8,15.84,...
 * Fields holding a comma or a double quote are quoted as RFC 4180 says. Unknown time statistics
 * are written as empty fields. Rows are appended one at a time and flushed, so a killed writer
 * leaves every finished row in place.
 */
#ifndef CS_MEAS_H
#define CS_MEAS_H

#include <stddef.h>
#include <stdio.h>

#include "coll.h"
#include "csv.h"
#include "status.h"

#define CS_MEAS_MAGIC "# commscale measurements v1"
#define CS_MEAS_HEADER                                                                             \
  "collective,algorithm,protocol,dtype,ranks,nodes,gpus_per_node,bytes,time_us,time_min_us,"       \
  "time_max_us,trials,algbw_GBps,busbw_GBps,in_place,launch,config,source"

/* How the ranks were started: one process per GPU (mpirun, srun, torchrun) or one process driving
 * several GPUs from threads (nccl-tests -g N / -t N). Their small-message latencies differ, so a
 * fit never mixes them unless asked to. */
enum cs_launch { CS_LAUNCH_PROCESS, CS_LAUNCH_THREAD };

struct cs_meas_row {
  enum cs_coll coll;
  enum cs_algo algo;   /* CS_ALGO_AUTO when NCCL chose */
  enum cs_proto proto; /* CS_PROTO_AUTO when NCCL chose */
  char dtype[16];      /* "float", "bfloat16", ... as nccl-tests prints it */
  int ranks, nodes, gpus_per_node;
  double bytes;       /* nccl-tests "size" (see coll.h) */
  double time_us;     /* the figure to fit: median of trials, or nccl-tests' average */
  double time_min_us; /* NAN when unknown */
  double time_max_us; /* NAN when unknown */
  int trials;         /* 0 when unknown */
  double algbw_GBps, busbw_GBps;
  int in_place; /* 1 for nccl-tests' in-place columns */
  enum cs_launch launch;
  char config[256]; /* sorted NCCL_* settings "NCCL_MAX_NCHANNELS=4;NCCL_MIN_NCHANNELS=4", "" =
                       default */
  char source[256]; /* "file:line" of the data, or the runner's run id */
};

/* A growing set of rows plus provenance. Initialise with cs_meas_set_init(), release with
 * cs_meas_set_fini(); the set owns its arrays. */
struct cs_meas_set {
  struct cs_meas_row *rows;
  size_t n, cap;
  struct cs_csv_meta *meta; /* provenance, from the "# key: value" lines */
  size_t n_meta, cap_meta;
};

void cs_meas_set_init(struct cs_meas_set *set);
void cs_meas_set_fini(struct cs_meas_set *set);

/* Appends a copy of row. CS_ERR_NOMEM on allocation failure (the set is unchanged). */
enum cs_status cs_meas_set_push(struct cs_meas_set *set, const struct cs_meas_row *row,
                                struct cs_error *err);

/* Adds or replaces provenance key (truncated to fit). */
enum cs_status cs_meas_set_meta(struct cs_meas_set *set, const char *key, const char *value,
                                struct cs_error *err);

/* The value for key, or NULL. */
const char *cs_meas_get_meta(const struct cs_meas_set *set, const char *key);

/* Fills the derived fields of row from the others: algbw = bytes / time, busbw = algbw x factor. */
void cs_meas_row_derive(struct cs_meas_row *row);

/* Writes the magic line, one "# key: value" line per meta entry and the header line to f. */
enum cs_status cs_meas_write_header(FILE *f, const struct cs_meas_set *meta_from,
                                    struct cs_error *err);

/* Writes one row and flushes f. A row whose bytes, time or bandwidths are not finite is refused
 * with CS_ERR_NUMERIC and nothing is written. */
enum cs_status cs_meas_write_row(FILE *f, const struct cs_meas_row *row, struct cs_error *err);

/* Writes the whole set to path under wfile.h's rules (a temporary renamed into place, so that a
 * failure never leaves a truncated file; a symlink kept; a device or FIFO written through); "-"
 * writes to stdout. */
enum cs_status cs_meas_write_file(const char *path, const struct cs_meas_set *set,
                                  struct cs_error *err);

/* Reads a measurements CSV and appends its rows and provenance to set. Errors name
 * "path:line:col" and the expected field; on error the rows read so far stay in set. */
enum cs_status cs_meas_read_file(const char *path, struct cs_meas_set *set, struct cs_error *err);

/* Parses one "launch" name ("process" or "thread"); 0 on success, -1 otherwise. */
int cs_meas_launch_parse(const char *name, enum cs_launch *out);
const char *cs_meas_launch_name(enum cs_launch l);

#endif
