/* nccltests.h — importing nccl-tests output (text and -J JSON) into measurement rows, and reading
 * NCCL's own tuning table from an NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING log.
 *
 * Text logs are read as users have them: several tests in one file (each may be preceded by a
 * "### command" line), single-process (-g N) and mpirun runs, lines prefixed by mpirun
 * --tag-output ("[1,0]<stdout>:"), NCCL INFO/WARN lines interleaved with (and even inside) data
 * rows, old and new column sets (with or without "root"; "error" or "#wrong"), out-of-place and
 * in-place columns, every collective nccl-tests has. Ranks, nodes and GPUs per node come from the
 * "#  Rank N Group G Pid P on HOST device D [...] NAME" lines; the launch is "thread" when one Pid
 * drives several ranks. NCCL_ALGO / NCCL_PROTO on the command line or in the environment set the
 * row's algorithm and protocol (else "auto"); every other performance-relevant NCCL_* setting
 * (NCCL_DEBUG only when INFO or TRACE, which log every call and slow it down) becomes the row's
 * configuration tag, sorted and ';'-joined.
 */
#ifndef CS_NCCLTESTS_H
#define CS_NCCLTESTS_H

#include "coll.h"
#include "meas.h"
#include "status.h"

/* Appends every data row found in path (text or JSON, detected from content) to set, and sets
 * provenance keys "gpu", "nccl" and "hosts" when the log names them (adding to a comma-separated
 * list when set already holds other values). One row per (size, in-place flag); sizes of 0 are
 * skipped. time_us is nccl-tests' time; the bandwidths are recomputed, and a printed busbw that
 * the rank count cannot explain is an error. source is "path:line" of the row's first fragment
 * ("path:line:col" of the result object for JSON). Errors: "path:line: what was expected" for a
 * malformed data row (truncated, non-numeric, NaN, negative), an unknown collective, a rank list
 * that contradicts itself; CS_ERR_PARSE when the file holds no nccl-tests result at all; CS_ERR_IO
 * when it cannot be opened or read. On error, rows already appended stay in set. */
enum cs_status cs_nccltests_import(const char *path, struct cs_meas_set *set, struct cs_error *err);

#define CS_NCCL_TUNING_MAX_CHOICES 512

/* NCCL's own model, as printed in its TUNING table: latency (us) and algorithm bandwidth (GB/s)
 * per collective, algorithm and protocol (0 where NCCL prints 0.0, i.e. disabled); plus the
 * (algorithm, protocol) NCCL chose per message size, from its "AllReduce: N Bytes -> Algo X proto
 * Y" lines. NCCL's algorithms map onto ours: CollNetDirect -> collnet, NVLS -> nvls, PAT -> pat
 * (CollNetChain and NVLSTree are not kept). */
struct cs_nccl_tuning {
  int present[CS_COLL_COUNT];
  double lat_us[CS_COLL_COUNT][CS_ALGO_COUNT][CS_PROTO_COUNT];
  double bw_GBps[CS_COLL_COUNT][CS_ALGO_COUNT][CS_PROTO_COUNT];
  int n_choices;
  struct {
    enum cs_coll coll;
    double bytes;
    enum cs_algo algo;
    enum cs_proto proto;
  } choice[CS_NCCL_TUNING_MAX_CHOICES];
};

/* Reads the first tuning table and the choice lines of path into t. CS_ERR_PARSE naming path
 * when the log has no tuning table. */
enum cs_status cs_nccltests_read_tuning(const char *path, struct cs_nccl_tuning *t,
                                        struct cs_error *err);

/* NCCL's predicted time (us) for coll at bytes, using its chosen (algo, proto) for that size when
 * the log recorded one, else the fastest pair of its table: lat + bytes / (1000 * bw). Returns a
 * negative value when the table has no usable entry. Writes the pair used to *a, *p if non-NULL. */
double cs_nccltests_tuning_time_us(const struct cs_nccl_tuning *t, enum cs_coll coll, double bytes,
                                   enum cs_algo *a, enum cs_proto *p);

#endif
