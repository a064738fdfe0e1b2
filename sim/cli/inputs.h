/* inputs.h — reading measurement inputs for the verbs that take them: a measurements CSV or an
 * nccl-tests log (text or JSON), told apart by content. */
#ifndef CS_CLI_INPUTS_H
#define CS_CLI_INPUTS_H

#include "meas.h"
#include "status.h"

/* Drops the input files given more than once (the same path, or two names of one file) from
 * paths[0..n-1], keeping the first, with a warning on stderr for each; returns the new count. */
int cli_unique_inputs(const char *verb, const char **paths, int n);

/* Appends the rows of path to set: read as a measurements CSV when its first line is the
 * commscale magic line or a CSV header starting "collective,", else imported as nccl-tests output.
 */
enum cs_status cli_read_measurements(const char *path, struct cs_meas_set *set,
                                     struct cs_error *err);

#endif
