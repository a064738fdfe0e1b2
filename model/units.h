/* units.h — quantities with units in the text, message-size lists and number lists.
 *
 * Inside commscale every quantity is an SI double: seconds, bytes, bytes per second, FLOP per
 * second. Units appear only at the edges, in files and on the command line, and this module is
 * where they are read and written. Conventions (DESIGN.md): GB = 1e9 bytes, GiB = 2^30 bytes,
 * "bps" counts bits and "Bps" bytes per second. Message sizes follow nccl-tests: a bare count of
 * bytes or a K/M/G/T suffix that is binary (64K = 65536).
 */
#ifndef CS_UNITS_H
#define CS_UNITS_H

#include <stddef.h>

#include "status.h"

enum cs_unit_kind {
  CS_UNIT_TIME,      /* s, ms, us, ns -> seconds */
  CS_UNIT_BANDWIDTH, /* bps Kbps Mbps Gbps Tbps (bits), Bps KBps MBps GBps TBps, GB/s, Gb/s ->
                        bytes/s */
  CS_UNIT_BYTES,     /* B KB MB GB TB (decimal), KiB MiB GiB TiB (binary) -> bytes */
  CS_UNIT_FLOPS      /* FLOPS GFLOPS TFLOPS PFLOPS -> FLOP/s */
};

/* Parses a quantity such as "400Gbps", "1.2us" or "80GiB" into SI units. A bare number, an unknown
 * unit, a negative, non-finite or trailing-garbage value is CS_ERR_PARSE with a message saying
 * what was expected (the caller adds the location). A value beyond any real system is CS_ERR_RANGE:
 * a time over 10^6 s, a bandwidth over 10^15 bytes/s (1000TBps), a size over 2^60 bytes or a
 * compute rate over 10^21 FLOP/s. */
enum cs_status cs_units_parse_quantity(const char *text, enum cs_unit_kind kind, double *si,
                                       struct cs_error *err);

/* Parses one message size as nccl-tests does: "8", "64K", "8G" (binary K/M/G/T, case-insensitive,
 * optional trailing "B"), or with explicit binary/decimal units "1MiB", "1MB". The result is a
 * whole number of bytes in [0, 2^50]. */
enum cs_status cs_units_parse_size(const char *text, double *bytes, struct cs_error *err);

/* Parses a size list: comma-separated items, each a size or a range "a:b" (a, 2a, 4a, ... up to b)
 * or "a:b:f" (factor f >= 2); empty items are errors. On success *sizes is a malloc'd array the
 * caller frees and *n its length (at most 4096 entries). On failure nothing is allocated. */
enum cs_status cs_units_parse_sizes(const char *text, double **sizes, size_t *n,
                                    struct cs_error *err);

/* Parses a list of integers within [min, max]: "1,4,16", a doubling range "1:400" (1, 2, 4, ...,
 * 256, 400: the end point is always included), a range with a factor "1:400:x4" or "1:400:4"
 * (1, 4, 16, 64, 256, 400) or with a step "50:400:+50" (50, 100, ..., 400). Empty items ("1,,4")
 * are errors. *vals is malloc'd for the caller (at most 4096). */
enum cs_status cs_units_parse_ints(const char *text, long min, long max, long **vals, size_t *n,
                                   struct cs_error *err);

/* Writes bytes as nccl-tests would name it: "8", "64K", "1M", "8G" when exact, else decimal bytes.
 */
void cs_units_format_size(double bytes, char *buf, size_t len);

/* Writes a quantity with the given unit kind in a readable unit ("400Gbps" style is not used:
 * bandwidths are written in GBps, times in us, bytes in B). Used for calibration-file values. */
void cs_units_format_quantity(double si, enum cs_unit_kind kind, char *buf, size_t len);

#endif
