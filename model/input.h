/* input.h — bounded reading of input files, shared by every reader (CSV, nccl-tests logs and
 * JSON, YAML, nvidia-smi matrices).
 *
 * No input may take unbounded memory or time: a line is at most CS_INPUT_LINE_MAX bytes, a
 * line-oriented input at most CS_INPUT_SIZE_MAX bytes, a document read whole (YAML, JSON, smi) at
 * most CS_INPUT_DOC_MAX bytes. Past a cap the reader stops at once with one located line:
 * "PATH:LINE: line longer than N bytes", "PATH: input larger than N bytes" or "PATH: more than N
 * lines", so `commscale
 * import /dev/zero` ends in milliseconds. The path "-" is standard input: it is read whole (up to
 * CS_INPUT_DOC_MAX) the first time it is opened and every open of "-" reads that copy, so a reader
 * may look at the start and open it again.
 */
#ifndef CS_INPUT_H
#define CS_INPUT_H

#include <stddef.h>
#include <stdio.h>

#include "status.h"

/* 1 MiB: the longest line of any text input; commscale's CSV rows are under 1 KiB and nccl-tests
 * lines under 300 bytes, so this leaves room for long provenance fields only. */
#define CS_INPUT_LINE_MAX ((size_t)1 << 20)
/* 256 MiB: the largest line-oriented input (a measurements CSV of about two million rows; a
 * 327-point calibration run writes 60 KiB). */
#define CS_INPUT_SIZE_MAX ((size_t)256 << 20)
/* 4 Mi lines: the most lines of a line-oriented input, so that an endless stream of empty lines
 * is refused within seconds too. */
#define CS_INPUT_LINES_MAX (4L << 20)
/* 64 MiB: the largest document read whole (YAML, JSON, nvidia-smi output) and standard input. */
#define CS_INPUT_DOC_MAX ((size_t)64 << 20)

/* Opens path for reading ("-": standard input, see above). NULL with err set (CS_ERR_IO, "PATH:
 * cannot open: reason"; CS_ERR_RANGE when standard input is over CS_INPUT_DOC_MAX). */
FILE *cs_input_open(const char *path, struct cs_error *err);

/* Looks at the start of f without losing it: reads bytes while they are white space (at most
 * CS_INPUT_LINE_MAX of them) and one more, and sets *first to that byte (EOF when there is none).
 * Returns a stream that reads f from its start again: f itself, rewound, when it can seek; else
 * (a pipe, `<(cat file)`) a stream that gives the bytes looked at, then the rest of f, and closes
 * f when it is closed. On no memory or a read error, NULL with err set and f closed. */
FILE *cs_input_peek(FILE *f, const char *path, int *first, struct cs_error *err);

/* Reads lines of at most CS_INPUT_LINE_MAX bytes from an input of at most CS_INPUT_SIZE_MAX.
 * Initialise as {.f = f, .path = path}, call cs_lines_next until it returns < 0, free buf after. */
struct cs_lines {
  FILE *f;
  const char *path;
  char *buf;         /* the current line, its line break removed; NUL bytes inside are kept */
  size_t cap;        /* bytes allocated at buf */
  size_t total;      /* bytes read so far */
  long line;         /* number of the current line, from 1 */
  enum cs_status st; /* CS_OK, or why cs_lines_next returned -2 */
};

/* The next line's length, -1 at the end of the input, -2 on an error (err set: a line over the
 * cap, the input over the cap, a read error or no memory). */
long cs_lines_next(struct cs_lines *l, struct cs_error *err);

/* Reads all of f (named path in messages) into a NUL-terminated buffer of at most max bytes;
 * *len (may be NULL) gets the length. The caller frees *text. */
enum cs_status cs_input_read_all(FILE *f, const char *path, size_t max, char **text, size_t *len,
                                 struct cs_error *err);

#endif
