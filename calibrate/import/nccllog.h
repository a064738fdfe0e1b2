/* nccllog.h — what nccl-tests and NCCL write into a log, read the same way by the text importer
 * (nccltests.c), the JSON importer (nccltests_json.c) and the tuning-table reader (nccl_tuning.c):
 * the line normaliser (launcher tags, NCCL debug output glued into data rows), NCCL_* settings
 * and the configuration tag they make, program names, version codes and provenance lists.
 *
 * Private to calibrate/import: no caller outside this folder.
 */
#ifndef CS_NCCLLOG_H
#define CS_NCCLLOG_H

#include <stddef.h>
#include <stdio.h>

#include "coll.h"
#include "meas.h"
#include "status.h"

#define CS_NCCLLOG_MAX_SETTINGS 64

/* The collectives an nccl-tests program can name, for error messages. */
extern const char cs_nccllog_known_colls[];

/* One NCCL_NAME=VALUE setting, and the effective set of a run (later ones replace earlier ones). */
struct cs_nccllog_setting {
  char name[64];
  char value[192];
};

struct cs_nccllog_settings {
  int n;
  struct cs_nccllog_setting s[CS_NCCLLOG_MAX_SETTINGS];
};

/* The hosts seen so far in a log; h is freed by the caller with free(). */
struct cs_nccllog_hosts {
  char (*h)[64];
  size_t n, cap;
};

/* snprintf(dst, len, "%s", src), src NULL reading as "". */
void cs_nccllog_copy(char *dst, size_t len, const char *src);
/* s without leading and trailing white space (trailing space is cut in place). */
char *cs_nccllog_trim(char *s);
/* Splits s in place at whitespace into at most max tokens; returns the count. */
int cs_nccllog_split_ws(char *s, char **tok, int max);
/* As cs_nccllog_split_ws, but white space inside '...' or "..." does not split (a command line's
 * NCCL_NET="AWS Libfabric" stays one token; the quotes stay in it). */
int cs_nccllog_split_words(char *s, char **tok, int max);
/* A whole token as a double (nan/inf accepted: the caller checks); 0 on success, else -1. */
int cs_nccllog_double(const char *s, double *out);
/* A whole token as a long; 0 on success, else -1. */
int cs_nccllog_long(const char *s, long *out);
/* A message size: a whole number of bytes from 0 to 2^50; 0 on success, else -1. */
int cs_nccllog_size(const char *s, double *out);
/* Adds item to the comma-separated provenance list under key unless it is there already. */
enum cs_status cs_nccllog_meta_add(struct cs_meas_set *set, const char *key, const char *item,
                                   struct cs_error *err);
/* NCCL's INIT line "comm 0x.. rank R nRanks N nNodes M ..." (msg: the text after "NCCL INFO",
 * trimmed): the ranks and the nodes NCCL counted. Returns 1 when msg is one, with 0 < M <= N. */
int cs_nccllog_comm_shape(const char *msg, int *ranks, int *nodes);
/* NCCL's version code (22803, 2708) as "2.28.3", "2.7.8". */
void cs_nccllog_version_string(long code, char *buf, size_t len);
/* Sets name to value in st (ignored past CS_NCCLLOG_MAX_SETTINGS). */
void cs_nccllog_settings_put(struct cs_nccllog_settings *st, const char *name, const char *value);
/* Finds NCCL_NAME=VALUE in one command-line token; returns 1 when found. */
int cs_nccllog_assignment(const char *tok, char *name, size_t nlen, char *value, size_t vlen);
/* A row's algorithm, protocol and configuration tag from the settings; -1 when the tag does not
 * fit in cfg. */
int cs_nccllog_settings_apply(const struct cs_nccllog_settings *st, enum cs_algo *algo,
                              enum cs_proto *proto, char *cfg, size_t cfglen);
/* Adds host unless present; -1 when out of memory. */
int cs_nccllog_hosts_add(struct cs_nccllog_hosts *hl, const char *host);
/* Strips an mpirun --tag-output or srun --label prefix from *line; returns the rank it names, or 0.
 */
long cs_nccllog_strip_tag(char **line);
/* Splits NCCL debug output off line in place: *info is the text after "NCCL INFO" (NULL when
 * none) and who, when not NULL, receives its "HOST:PID:TID". */
void cs_nccllog_split_debug(char *line, const struct cs_nccllog_hosts *hl, char **info, char *who,
                            size_t wholen);
/* The collective named by "./build/all_reduce_perf" ("all_reduce_perf"); 1 when tok is such a name.
 */
int cs_nccllog_perf_name(const char *tok, char *out, size_t len);
/* 1 when a printed bus bandwidth agrees with the recomputed one, within its rounding. */
int cs_nccllog_busbw_agrees(double printed, double derived);

#endif
