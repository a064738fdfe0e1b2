/* csv.h — the framing that commscale's CSV files share (the measurements CSV, meas.h, and the
 * compute-probe CSV, probe.h): RFC 4180 fields, "# key: value" provenance lines, a header line
 * that names the columns, and a reader that checks that framing and hands each data row to the
 * caller by column.
 *
 * A file reads:
 *   # commscale <what> v1         <- the magic line (a file may also start with the header)
 *   # key: value                  <- provenance lines, any number
 *   name,name,...                 <- the header: columns are found by name, extra ones ignored
 *   field,"quoted, field",...     <- data rows, as many fields as the header
 * Blank lines are skipped; lines may be of any length and end in "\n" or "\r\n".
 *
 * Like its users, this module needs nothing but the C library: the measurement runner that writes
 * these files builds on GPU nodes that have only CUDA, NCCL and MPI.
 */
#ifndef CS_CSV_H
#define CS_CSV_H

#include <stddef.h>
#include <stdio.h>

#include "status.h"

/* The most columns a header may name (or a row hold); further ones are ignored. */
#define CS_CSV_MAX_FIELDS 64

/* One provenance key/value from a "# key: value" line. */
struct cs_csv_meta {
  char key[64];
  char value[256];
};

/* Makes room for one more element in *items, an array of *cap elements of `size` bytes of which n
 * are in use: the capacity doubles (to `first` when it is 0). 0 on success (*items and *cap
 * updated), -1 when memory runs out (the array is unchanged). */
int cs_csv_grow(void **items, size_t *cap, size_t n, size_t size, size_t first);

/* Appends the `size` bytes at row to the array (*items, *n, *cap), growing it as cs_csv_grow does
 * (64 rows first): the push of every typed row set (meas.h, probe.h). CS_ERR_NOMEM "out of memory
 * storing WHAT" when memory runs out (nothing changed). */
enum cs_status cs_csv_push(void **items, size_t *n, size_t *cap, size_t size, const void *row,
                           const char *what, struct cs_error *err);

/* Adds key with value to the provenance array (*meta, *n, *cap), or replaces the value of an
 * existing key; both are truncated to fit. CS_ERR_NOMEM when memory runs out (nothing changed). */
enum cs_status cs_csv_meta_set(struct cs_csv_meta **meta, size_t *n, size_t *cap, const char *key,
                               const char *value, struct cs_error *err);

/* The value for key among the n entries of meta, or NULL. */
const char *cs_csv_meta_get(const struct cs_csv_meta *meta, size_t n, const char *key);

/* Writes the magic line, one "# key: value" line per entry of meta (line breaks inside a value
 * become spaces) and the header line to f, then flushes f. CS_ERR_IO "cannot write <what>: ..."
 * when the write fails. */
enum cs_status cs_csv_write_header(FILE *f, const char *magic, const struct cs_csv_meta *meta,
                                   size_t n, const char *header, const char *what,
                                   struct cs_error *err);

/* Writes s as one CSV field: as is, or double-quoted (inner quotes doubled) when it holds a
 * comma, a quote or a line break; line breaks become spaces, so a row stays one line. */
void cs_csv_put_field(FILE *f, const char *s);

/* Reads field s as a finite number >= 0 written without letters but an exponent ("1e3"; not
 * "inf", "nan" or "0x10"). An empty field gives NAN when opt, and is refused otherwise. 0 on
 * success, -1 when s is not such a number (*out untouched). */
int cs_csv_number(const char *s, int opt, double *out);

/* Splits line into at most max fields in place, RFC 4180 quoting undone. cols[i] receives the
 * 1-based column of field i's first character. Returns the field count, or -1 when a quote is not
 * closed. */
int cs_csv_split(char *line, char **fields, long *cols, int max);

/* What a reader expects of a file. */
struct cs_csv_format {
  const char *magic;          /* the first line, e.g. "# commscale measurements v1" */
  const char *first_column;   /* a file may start with its header: "collective," */
  const char *noun;           /* "not a commscale <noun> file" */
  const char *no_header;      /* the message when no header line came */
  const char *const *columns; /* the known column names, in the caller's order */
  const int *required;        /* [ncolumns] 1 for the columns a header must name */
  int ncolumns;               /* at most CS_CSV_MAX_FIELDS */
};

/* One data row as the reader hands it over. */
struct cs_csv_row {
  const char *path;
  long line;
  const struct cs_csv_format *format;
  const char *field[CS_CSV_MAX_FIELDS]; /* by the caller's column: "" when the file lacks it */
  long col[CS_CSV_MAX_FIELDS];          /* 1-based column of each field; 1 when absent */
  int present[CS_CSV_MAX_FIELDS];       /* 1 when the header names the column */
};

/* Records "path:line:col: column <name>: expected <expected>, got "<text>"" for the caller's
 * column c of row in err and returns CS_ERR_PARSE. */
enum cs_status cs_csv_reject(const struct cs_csv_row *row, int c, const char *expected,
                             struct cs_error *err);

/* Reads path: checks the magic line (or header), passes each provenance line to meta(ctx, key,
 * value, err), finds the columns of fmt in the header and passes each data row to row(ctx, r,
 * err). The first error a callback returns ends the read and is returned as it is. The reader's
 * own errors are CS_ERR_IO ("path: cannot open: ...", "path: read error: ...") and CS_ERR_PARSE
 * "path:line:col: expected ...". */
enum cs_status cs_csv_read(const char *path, const struct cs_csv_format *fmt,
                           enum cs_status (*meta)(void *ctx, const char *key, const char *value,
                                                  struct cs_error *err),
                           enum cs_status (*row)(void *ctx, const struct cs_csv_row *r,
                                                 struct cs_error *err),
                           void *ctx, struct cs_error *err);

#endif
