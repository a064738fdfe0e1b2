/* runfile.h — how the runner opens the CSVs it appends to (the measurements of runner.c and the
 * compute probes of probe_cuda.c): one decision for both.
 *
 * A non-empty file that exists is continued when the run says so (--resume, or the probe CSV's
 * append-by-default): the caller's scan reads it and marks the points it already holds, and the
 * file is opened for appending under an advisory lock (wfile.h), never truncated. Otherwise the
 * file is locked first, then emptied, and the caller's header writes the provenance and the
 * column header. A dry run scans but opens nothing. The rows are then appended and flushed one by
 * one, so a run killed at any point leaves every finished row whole.
 */
#ifndef CS_RUNFILE_H
#define CS_RUNFILE_H

#include <stdio.h>

#include "status.h"

struct cs_runfile {
  const char *path;   /* NULL: no file */
  const char *option; /* the option that names it, for messages ("--output") */
  int continue_it;    /* an existing file is continued (scan, append) */
  int overwrite;      /* an existing file is replaced */
  int refuse;         /* an existing file neither continued nor replaced is a usage error */
  int dry_run;        /* scan only */
  /* Reads the existing file and marks the points it holds; a failure ends the run. */
  enum cs_status (*scan)(void *ctx, const char *path, struct cs_error *err);
  /* Writes the provenance and the column header to the emptied file. */
  enum cs_status (*header)(void *ctx, FILE *f, struct cs_error *err);
  void *ctx;
};

/* Opens spec->path as above; *f receives the locked append stream (NULL when there is no file or
 * on a dry run; the caller fcloses it). CS_ERR_USAGE "PATH exists: pass --resume ... or
 * --overwrite ..." when refused; the scan's, the lock's or the header's error otherwise, with *f
 * NULL. */
enum cs_status cs_runfile_open(const struct cs_runfile *spec, FILE **f, struct cs_error *err);

#endif
