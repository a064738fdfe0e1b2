/* measread.h — reading measurement inputs (for the verbs that take them and for validate's fitted
 * calibrations): a measurements CSV or an nccl-tests log (text or JSON), told apart by content. */
#ifndef CS_SIM_MEASREAD_H
#define CS_SIM_MEASREAD_H

#include "meas.h"
#include "status.h"

/* Appends the rows of path to set: read as a measurements CSV when its first line is the
 * commscale magic line or a CSV header starting "collective,", else imported as nccl-tests output.
 */
enum cs_status cs_meas_read_any(const char *path, struct cs_meas_set *set, struct cs_error *err);

#endif
