/* status.h — the error convention every commscale module follows.
 *
 * A function that can fail returns enum cs_status and, when the caller passed a struct cs_error,
 * records one line of explanation in it: "file:line:col: what was expected" for input errors,
 * a plain sentence otherwise. Libraries never print, exit or abort; the command-line front end
 * prints err->msg and picks the exit status with cs_status_exit_code().
 */
#ifndef CS_STATUS_H
#define CS_STATUS_H

#include <stddef.h>

enum cs_status {
  CS_OK = 0,
  CS_ERR_USAGE,       /* a bad command-line argument or option value */
  CS_ERR_PARSE,       /* malformed input file */
  CS_ERR_IO,          /* a file could not be opened, read or written */
  CS_ERR_NOMEM,       /* an allocation failed */
  CS_ERR_RANGE,       /* a value outside what is physically meaningful */
  CS_ERR_NUMERIC,     /* a fit did not converge, a result was not finite */
  CS_ERR_UNSUPPORTED, /* a combination the model or this build does not provide */
  CS_ERR_EXTERNAL     /* a foreign library (CUDA, NCCL, MPI, GSL, libyaml, gnuplot) failed */
};

#define CS_ERROR_MSG_MAX 1024

/* One recorded failure. Zero-initialise it (struct cs_error err = {0}) before use. */
struct cs_error {
  enum cs_status status;
  char msg[CS_ERROR_MSG_MAX];
};

/* Records status st and the printf-style message in err (err may be NULL) and returns st. A second
 * call overwrites the first. Passing CS_OK clears err. */
enum cs_status cs_error_set(struct cs_error *err, enum cs_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like cs_error_set, with the location prefixed: "file:line:col: message". line and col count from
 * 1; a col of 0 prints "file:line: message", a line of 0 prints "file: message". */
enum cs_status cs_error_at(struct cs_error *err, enum cs_status st, const char *file, long line,
                           long col, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Prefixes the message already in err with "prefix: " (truncating if needed); returns err->status.
 */
enum cs_status cs_error_prefix(struct cs_error *err, const char *prefix);

/* A short English name of st ("parse error", ...). Never NULL. */
const char *cs_status_name(enum cs_status st);

/* The process exit status for st: 0 for CS_OK, 2 for CS_ERR_USAGE, 1 otherwise. */
int cs_status_exit_code(enum cs_status st);

#endif
