/* datadir.h — finding the bundled data files (workloads, GPUs, ...) by name.
 *
 * A bundled file "<kind>/<name>.yaml" is searched in, first found wins:
 *   1. $COMMSCALE_DATA_DIR/<kind>
 *   2. <directory of the executable>/../share/commscale/<kind>   (an installed tree)
 *   3. <directory of libcommscale.so>/../share/commscale/<kind>  (the installed library, when
 *      this code runs from it: the public API in another program)
 *   4. <source tree>/<src_subdir>                                 (a build that is not installed)
 * so a user can shadow a bundled file with their own by setting COMMSCALE_DATA_DIR. A name that
 * contains '/' or ends in ".yaml"/".yml" is a path and is returned as it is.
 */
#ifndef CS_DATADIR_H
#define CS_DATADIR_H

#include <stddef.h>

#include "status.h"

/* Writes the file for name into out. kind is the installed folder ("workloads"), src_subdir its
 * place in the source tree ("model/workloads"), exe_path the executable's path (may be NULL).
 * CS_ERR_IO naming the folders searched when there is no such file; CS_ERR_RANGE when the path
 * does not fit in len. */
enum cs_status cs_datadir_find(const char *kind, const char *src_subdir, const char *name,
                               const char *exe_path, char *out, size_t len, struct cs_error *err);

/* Writes folder 3 above for kind into out and returns 1, or returns 0 when this code is not
 * running from a shared library (or the path does not fit in len). */
int cs_datadir_library(const char *kind, char *out, size_t len);

/* The names (file names without ".yaml") of every bundled file of kind, sorted and without
 * duplicates. *names is malloc'd: free it with cs_datadir_list_free(*names, *n). */
enum cs_status cs_datadir_list(const char *kind, const char *src_subdir, const char *exe_path,
                               char ***names, size_t *n, struct cs_error *err);
void cs_datadir_list_free(char **names, size_t n);

/* Writes ' (did you mean "h100-sxm", "h100-pcie"?)' into buf for the names (at most three) that
 * start with name or are within two edits of it; "" when none is. */
void cs_datadir_suggest(const char *const *names, size_t n, const char *name, char *buf,
                        size_t len);

#endif
