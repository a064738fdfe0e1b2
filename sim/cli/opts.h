/* opts.h — the command-line front end's option tables: each verb describes its options once, as
 * data, and that table drives parsing (getopt_long), `commscale VERB --help` and the man page.
 */
#ifndef CS_CLI_OPTS_H
#define CS_CLI_OPTS_H

#include <stdio.h>

#include "status.h"

#define CLI_MAX_OPTS 40
#define CLI_MAX_POS 256
#define CLI_MAX_ARGS 1024 /* options, their values and arguments of one verb */

struct cli_opt {
  const char *name;    /* long name without "--" */
  char shortc;         /* short letter or 0 */
  const char *argname; /* NULL for a flag */
  const char *help;
};

/* The option rows of every verb that writes a table, CSV or JSON (cli_begin reads them). */
#define CLI_OUTPUT_OPTS                                                                            \
  {"format", 0, "FMT", "table (default), csv or json; -o FILE.csv/.json implies it"}, {            \
    "output", 'o', "FILE", "write to FILE instead of stdout"                                       \
  }

struct cli_verb {
  const char *name;
  const char *synopsis; /* "LOG... -o measurements.csv" */
  const char *summary;  /* one line */
  const char *details;  /* a paragraph printed after the options, may be NULL */
  const struct cli_opt *opts;
  int nopts;
  void (*more)(FILE *f); /* writes more help after the details (e.g. a file's keys), or NULL */
};

struct cli_args {
  const char *val[CLI_MAX_OPTS]; /* the value, or "1" for a given flag, NULL when absent */
  const char *pos[CLI_MAX_POS];
  int npos;
};

/* Parses argv[1..argc-1] (argv[0] is the verb) against v with getopt_long (long options may be
 * abbreviated to a unique prefix; options and arguments may come in any order; "--" ends the
 * options). Returns CS_OK, or CS_ERR_USAGE with a message for an unknown option, a missing value
 * or too many arguments. Sets *help when --help or -h was given (the caller prints cli_usage and
 * exits 0). */
enum cs_status cli_parse(const struct cli_verb *v, int argc, char **argv, struct cli_args *a,
                         int *help, struct cs_error *err);

/* The value of option `name` or NULL; aborts nothing: an unknown name is a programming error and
 * returns NULL. */
const char *cli_get(const struct cli_verb *v, const struct cli_args *a, const char *name);

/* The preamble of every table-driven verb: parses argv against v; prints the usage for --help
 * (returns 0); checks that the positional arguments number minpos to maxpos (else posmsg, or
 * "unexpected argument" naming the first extra one); when fmt is not NULL reads --format (or the
 * suffix of --output) into *fmt. A usage error is reported on stderr and its exit status
 * returned. Returns -1 when the verb goes on. */
int cli_begin(const struct cli_verb *v, int argc, char **argv, struct cli_args *a, int minpos,
              int maxpos, const char *posmsg, int *fmt);

/* Prints "usage: commscale VERB SYNOPSIS", the summary, the option table and the details; while
 * man-page mode is on (cli_set_man), the same table as a roff section of commscale(1) instead. */
void cli_usage(FILE *f, const struct cli_verb *v);

/* Turns man-page mode on (1) or off (0): `commscale --man` runs every verb's --help with it on, so
 * that the option tables that drive parsing and --help also write the man page. */
void cli_set_man(int on);
int cli_man(void);

/* Writes s to f escaped for roff text: backslashes doubled, '-' as \-, and a leading '.' or '\''
 * guarded, on every line. */
void cli_roff(FILE *f, const char *s);

/* Reports err on stderr as "commscale VERB: message" and returns the exit code for its status. */
int cli_fail(const char *verb, const struct cs_error *err);

/* Drops the input files given more than once (the same path, or two names of one file) from
 * paths[0..n-1], keeping the first, with a warning on stderr for each; returns the new count. */
int cli_unique_inputs(const char *verb, const char **paths, int n);

/* Parses a --format value: "table", "csv" or "json"; also infers it from the -o suffix when the
 * format is not given (".csv", ".json", else table). Returns 0..2, or -1 for an unknown name. */
enum cli_format { CLI_TABLE, CLI_CSV, CLI_JSON };
int cli_format(const char *format, const char *outpath);

/* Opens path for writing ("-" or NULL = stdout) under the rules of wfile.h: a file is written to a
 * temporary beside it and appears only at cli_close_out; a device, a FIFO or stdout is written
 * through. On error returns NULL and fills err ("PATH: cannot create: reason"). */
FILE *cli_open_out(const char *path, struct cs_error *err);

/* Finishes f: checks every write, flushes, syncs and renames it into place. On error fills err
 * with "PATH: cannot write: reason" (CS_ERR_IO) and leaves the old file as it was. f NULL is CS_OK.
 */
enum cs_status cli_close_out(FILE *f, struct cs_error *err);

/* Gives f up after an error: the old file stays as it was, the temporary is removed. NULL is
 * harmless. */
void cli_abort_out(FILE *f);

/* The usual ending of a verb: cli_close_out(f, err) when st is CS_OK, else cli_abort_out(f) and
 * st. Returns the verb's status. */
enum cs_status cli_end_out(FILE *f, enum cs_status st, struct cs_error *err);

#endif
