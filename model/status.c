/* status.c — recording errors for the caller; see status.h. */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum cs_status cs_error_set(struct cs_error *err, enum cs_status st, const char *fmt, ...) {
  if (err == NULL) return st;
  err->status = st;
  err->msg[0] = '\0';
  if (st == CS_OK || fmt == NULL) return st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return st;
}

enum cs_status cs_error_at(struct cs_error *err, enum cs_status st, const char *file, long line,
                           long col, const char *fmt, ...) {
  if (err == NULL) return st;
  err->status = st;
  int n;
  if (line > 0 && col > 0)
    n = snprintf(err->msg, sizeof err->msg, "%s:%ld:%ld: ", file ? file : "-", line, col);
  else if (line > 0)
    n = snprintf(err->msg, sizeof err->msg, "%s:%ld: ", file ? file : "-", line);
  else
    n = snprintf(err->msg, sizeof err->msg, "%s: ", file ? file : "-");
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof err->msg) return st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
  va_end(ap);
  return st;
}

enum cs_status cs_error_prefix(struct cs_error *err, const char *prefix) {
  if (err == NULL) return CS_OK;
  char tmp[CS_ERROR_MSG_MAX];
  size_t n = strlen(prefix);
  if (n > sizeof tmp - 3) n = sizeof tmp - 3;
  memcpy(tmp, prefix, n);
  tmp[n++] = ':';
  tmp[n++] = ' ';
  size_t m = strlen(err->msg);
  if (m > sizeof tmp - 1 - n) m = sizeof tmp - 1 - n;
  memcpy(tmp + n, err->msg, m);
  tmp[n + m] = '\0';
  memcpy(err->msg, tmp, sizeof tmp);
  return err->status;
}

const char *cs_status_name(enum cs_status st) {
  switch (st) {
  case CS_OK:
    return "ok";
  case CS_ERR_USAGE:
    return "usage error";
  case CS_ERR_PARSE:
    return "parse error";
  case CS_ERR_IO:
    return "I/O error";
  case CS_ERR_NOMEM:
    return "out of memory";
  case CS_ERR_RANGE:
    return "value out of range";
  case CS_ERR_NUMERIC:
    return "numerical failure";
  case CS_ERR_UNSUPPORTED:
    return "unsupported";
  case CS_ERR_EXTERNAL:
    return "external library failure";
  }
  return "unknown error";
}

int cs_status_exit_code(enum cs_status st) {
  if (st == CS_OK) return 0;
  return st == CS_ERR_USAGE ? 2 : 1;
}
