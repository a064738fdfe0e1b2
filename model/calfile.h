/* calfile.h — calibration.yaml: writing and reading a struct cs_cal (schema in
 * docs/calibration.md).
 *
 * Written through a temporary file renamed into place. Read with libyaml's document API, so that
 * every error names "path:line:col" and what was expected. Unknown keys, a missing or different
 * `version`, bare numbers where a unit is required and non-finite values are errors.
 */
#ifndef CS_CALFILE_H
#define CS_CALFILE_H

#include "cal.h"

/* Writes cal to path ("-" for stdout) under wfile.h's rules: a file is replaced only once the whole
 * calibration is on disk, a symlink is kept and its target replaced, a device or FIFO is written
 * through. On error (CS_ERR_IO "PATH: cannot write: reason") the old file is untouched. */
enum cs_status cs_calfile_write(const char *path, const struct cs_cal *cal, struct cs_error *err);

/* Reads path into cal, which the caller has cs_cal_init()ed; on failure cal holds defaults and
 * owns nothing new. */
enum cs_status cs_calfile_read(const char *path, struct cs_cal *cal, struct cs_error *err);

#endif
