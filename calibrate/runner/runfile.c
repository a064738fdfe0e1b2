/* runfile.c — opening the runner's CSVs; see runfile.h. */
#include "runfile.h"

#include <sys/stat.h>

#include "wfile.h"

enum cs_status cs_runfile_open(const struct cs_runfile *spec, FILE **f, struct cs_error *err) {
  *f = NULL;
  if (spec->path == NULL) return CS_OK;
  struct stat sb;
  int exists = stat(spec->path, &sb) == 0 && sb.st_size > 0;
  if (exists && spec->refuse && !spec->continue_it && !spec->overwrite)
    return cs_error_set(err, CS_ERR_USAGE,
                        "%s exists: pass --resume to continue it or --overwrite to replace it",
                        spec->path);
  int keep = exists && spec->continue_it && !spec->overwrite;
  if (keep) {
    enum cs_status st = spec->scan(spec->ctx, spec->path, err);
    if (st != CS_OK) return st;
  }
  if (spec->dry_run) return CS_OK;
  /* continued: locked, appended to; new: locked first, then emptied (one runner per file) */
  *f = cs_wfile_open_append(spec->path, !keep, err);
  if (*f == NULL) return CS_ERR_IO;
  if (keep) return CS_OK;
  enum cs_status st = spec->header(spec->ctx, *f, err);
  if (st == CS_OK && fflush(*f) != 0)
    st = cs_error_set(err, CS_ERR_IO, "%s: cannot write the header", spec->path);
  if (st != CS_OK) {
    fclose(*f);
    *f = NULL;
  }
  return st;
}
