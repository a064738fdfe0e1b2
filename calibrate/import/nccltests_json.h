/* nccltests_json.h — importing the JSON that nccl-tests writes with -J into measurement rows.
 *
 * Private to calibrate/import: cs_nccltests_import (nccltests.h) calls it when a file starts with
 * '{'; the rows, provenance and errors follow that function's contract.
 */
#ifndef CS_NCCLTESTS_JSON_H
#define CS_NCCLTESTS_JSON_H

#include <stdio.h>

#include "meas.h"
#include "status.h"

/* Reads the JSON document in f (opened from path, at its start) and appends its rows to set;
 * results whose "nwrong" is positive are left out: counted into *wrong, the first described in
 * first (len bytes) when *wrong was 0. */
enum cs_status cs_nccltests_json_import(const char *path, FILE *f, struct cs_meas_set *set,
                                        long *wrong, char *first, size_t len, struct cs_error *err);

#endif
