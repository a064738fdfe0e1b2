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
 *
 * Files: nccltests.c (text), nccltests_json.c (-J JSON), nccllog.c (the line normaliser and
 * settings both share), nccl_tuning.c (NCCL's tuning table).
 */
#ifndef CS_NCCLTESTS_H
#define CS_NCCLTESTS_H

#include "coll.h"
#include "meas.h"
#include "status.h"

/* NCCL's tuning table (cs_nccltests_read_tuning) is declared in nccl_tuning.h, included here for
 * the callers that know it from this header. */
#include "nccl_tuning.h"

/* Appends every data row found in path (text or JSON, detected from content) to set, and sets
 * provenance keys "gpu", "nccl" and "hosts" when the log names them (adding to a comma-separated
 * list when set already holds other values). One row per (size, in-place flag); sizes of 0 are
 * skipped. time_us is nccl-tests' time; the bandwidths are recomputed, and a printed busbw that
 * the rank count cannot explain is an error. source is "path:line" of the row's first fragment
 * ("path:line:col" of the result object for JSON). Errors: "path:line: what was expected" for a
 * malformed data row (truncated, non-numeric, NaN, negative), an unknown collective, a rank list
 * that contradicts itself; CS_ERR_PARSE when the file holds no nccl-tests result at all; CS_ERR_IO
 * when it cannot be opened or read. On error, rows already appended stay in set. A result whose
 * check counted wrong elements is left out (cs_nccltests_import_left tells which). */
enum cs_status cs_nccltests_import(const char *path, struct cs_meas_set *set, struct cs_error *err);

/* What an import left out: the timed results (out-of-place or in-place) whose own check counted
 * wrong elements (#wrong > 0, JSON "nwrong" > 0): a run that returned wrong data measured no
 * collective, and such rows are also outliers in time. How many, and the first one as
 * "path:line (out-of-place|in-place, #wrong N)". Old logs' "error" column (the largest
 * deviation, not a count) leaves nothing out. */
struct cs_nccltests_left {
  long wrong;
  char first[320];
};

/* cs_nccltests_import, also saying what it left out into *left (zeroed first). Both add an item
 * "N with wrong elements from PATH:LINE (...)" to the set's provenance key "left_out". */
enum cs_status cs_nccltests_import_left(const char *path, struct cs_meas_set *set,
                                        struct cs_nccltests_left *left, struct cs_error *err);

/* What a log may not say, given by the caller (commscale import --coll). */
struct cs_nccltests_hint {
  /* the collective of a text log's tests that name none (no "# Collective test starting:" or
   * "### ... NAME_perf" line): a name cs_coll_parse takes, or NULL. The log's own lines win;
   * a name in the file's name ("all_reduce_perf.log") comes after it. */
  const char *coll;
};

/* cs_nccltests_import_left with a hint (NULL: none). */
enum cs_status cs_nccltests_import_hinted(const char *path, struct cs_meas_set *set,
                                          const struct cs_nccltests_hint *hint,
                                          struct cs_nccltests_left *left, struct cs_error *err);

#endif
