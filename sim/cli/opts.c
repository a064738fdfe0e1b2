/* opts.c — option-table parsing and help for the front end; see opts.h. */
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wfile.h"

/* The value getopt_long returns for option k of a table (above every short letter). */
#define LONGVAL(k) (256 + (k))
#define HELPVAL 'h'

/* The index of the option getopt_long returned as c (a short letter or LONGVAL), or -1. */
static int opt_index(const struct cli_verb *v, int c) {
  if (c >= LONGVAL(0) && c < LONGVAL(v->nopts)) return c - LONGVAL(0);
  for (int k = 0; c > 0 && k < v->nopts; k++)
    if (v->opts[k].shortc == c) return k;
  return -1;
}

enum cs_status cli_parse(const struct cli_verb *v, int argc, char **argv, struct cli_args *a,
                         int *help, struct cs_error *err) {
  memset(a, 0, sizeof *a);
  *help = 0;
  struct option lo[CLI_MAX_OPTS + 2];
  char shorts[2 * CLI_MAX_OPTS + 3] = ":h"; /* ':' first: a missing value returns ':' */
  size_t ns = 2;
  int n = v->nopts < CLI_MAX_OPTS ? v->nopts : CLI_MAX_OPTS;
  for (int k = 0; k < n; k++) {
    const struct cli_opt *o = &v->opts[k];
    lo[k] =
        (struct option){o->name, o->argname ? required_argument : no_argument, NULL, LONGVAL(k)};
    if (o->shortc) {
      shorts[ns++] = o->shortc;
      if (o->argname) shorts[ns++] = ':';
    }
  }
  shorts[ns] = '\0';
  lo[n] = (struct option){"help", no_argument, NULL, HELPVAL};
  lo[n + 1] = (struct option){NULL, 0, NULL, 0};
  /* getopt_long permutes the vector it parses: it works on a copy, so that argv stays as the
   * user wrote it (the JSON outputs quote it) */
  char *av[CLI_MAX_ARGS + 1];
  if (argc > CLI_MAX_ARGS)
    return cs_error_set(err, CS_ERR_USAGE, "too many arguments (at most %d)", CLI_MAX_ARGS);
  memcpy(av, argv, (size_t)argc * sizeof *av);
  av[argc] = NULL;
  argv = av;
  opterr = 0;
  optind = 0; /* 0: a full reset (glibc and musl), since verbs parse again in-process */
  int c;
  while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
    if (c == HELPVAL) {
      *help = 1;
      return CS_OK;
    }
    int k = opt_index(v, c == ':' || c == '?' ? optopt : c);
    if (c == ':' && k >= 0)
      return cs_error_set(err, CS_ERR_USAGE, "option --%s expects %s", v->opts[k].name,
                          v->opts[k].argname);
    if (c == '?' && k >= 0 && optopt >= LONGVAL(0))
      return cs_error_set(err, CS_ERR_USAGE, "option --%s takes no value", v->opts[k].name);
    if (c == '?' || c == ':' || k < 0) {
      char shortname[3] = {'-', (char)optopt, '\0'};
      const char *s = optopt > 0 && optopt < 256 ? shortname : argv[optind - 1];
      return cs_error_set(err, CS_ERR_USAGE, "unknown option \"%s\" (see commscale %s --help)", s,
                          v->name);
    }
    a->val[k] = v->opts[k].argname ? optarg : "1";
  }
  for (int i = optind; i < argc; i++) {
    if (a->npos >= CLI_MAX_POS)
      return cs_error_set(err, CS_ERR_USAGE, "too many arguments (at most %d)", CLI_MAX_POS);
    a->pos[a->npos++] = argv[i];
  }
  return CS_OK;
}

const char *cli_get(const struct cli_verb *v, const struct cli_args *a, const char *name) {
  for (int k = 0; k < v->nopts; k++)
    if (strcmp(v->opts[k].name, name) == 0) return a->val[k];
  return NULL;
}

static int man_mode;

void cli_set_man(int on) {
  man_mode = on;
}
int cli_man(void) {
  return man_mode;
}

void cli_roff(FILE *f, const char *s) {
  int bol = 1;
  for (; *s; s++) {
    if (bol && (*s == '.' || *s == '\'')) fputs("\\&", f);
    bol = *s == '\n';
    if (*s == '\\')
      fputs("\\\\", f);
    else if (*s == '-')
      fputs("\\-", f);
    else
      fputc(*s, f);
  }
}

/* The option table as a roff subsection of commscale(1). */
/* How a LIST option's ranges read, for every verb that has one (--help and --man). */
static const char list_note[] =
    "LIST: comma-separated items; a range a:b doubles from a and ends at b (1:400 is 1, 2,\n"
    "4, ..., 256, 400), a:b:+k steps by k (50:400:+50), a:b:xf multiplies by f (1:64:x4).";

static int has_list(const struct cli_verb *v) {
  for (int k = 0; k < v->nopts; k++)
    if (v->opts[k].argname && strcmp(v->opts[k].argname, "LIST") == 0) return 1;
  return 0;
}

static void usage_man(FILE *f, const struct cli_verb *v) {
  fprintf(f, ".SS \"%s\"\n.B commscale %s\n", v->name, v->name);
  cli_roff(f, v->synopsis);
  fputs("\n.PP\n", f);
  cli_roff(f, v->summary);
  fputc('\n', f);
  for (int k = 0; k < v->nopts; k++) {
    const struct cli_opt *o = &v->opts[k];
    fputs(".TP\n.B ", f);
    if (o->shortc) fprintf(f, "\\-%c, ", o->shortc);
    fputs("\\-\\-", f);
    cli_roff(f, o->name);
    if (o->argname) {
      fputs(" \\fI", f);
      cli_roff(f, o->argname);
      fputs("\\fR", f);
    }
    fputc('\n', f);
    cli_roff(f, o->help);
    fputc('\n', f);
  }
  if (has_list(v)) {
    fputs(".PP\n", f);
    cli_roff(f, list_note);
    fputc('\n', f);
  }
  if (v->details) {
    fputs(".PP\n", f);
    cli_roff(f, v->details);
    fputc('\n', f);
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *m = v->more ? open_memstream(&buf, &len) : NULL;
  if (m) {
    v->more(m);
    if (fclose(m) == 0) {
      fputs(".nf\n", f);
      cli_roff(f, buf);
      fputs(".fi\n", f);
    }
    free(buf);
  }
}

void cli_usage(FILE *f, const struct cli_verb *v) {
  if (man_mode) {
    usage_man(f, v);
    return;
  }
  fprintf(f, "usage: commscale %s %s\n\n%s\n\noptions:\n", v->name, v->synopsis, v->summary);
  for (int k = 0; k < v->nopts; k++) {
    const struct cli_opt *o = &v->opts[k];
    char left[64];
    if (o->shortc)
      snprintf(left, sizeof left, "-%c, --%s%s%s", o->shortc, o->name, o->argname ? " " : "",
               o->argname ? o->argname : "");
    else
      snprintf(left, sizeof left, "    --%s%s%s", o->name, o->argname ? " " : "",
               o->argname ? o->argname : "");
    fprintf(f, "  %-30s %s\n", left, o->help);
  }
  fprintf(f, "  %-30s %s\n", "-h, --help", "print this help");
  if (has_list(v)) fprintf(f, "\n%s\n", list_note);
  if (v->details) fprintf(f, "\n%s\n", v->details);
  if (v->more) v->more(f);
}

int cli_unique_inputs(const char *verb, const char **paths, int n) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    struct stat si, sj;
    int have = strcmp(paths[i], "-") != 0 && stat(paths[i], &si) == 0;
    int dup = -1;
    for (int j = 0; j < k && dup < 0; j++)
      if (strcmp(paths[i], paths[j]) == 0 ||
          (have && strcmp(paths[j], "-") != 0 && stat(paths[j], &sj) == 0 &&
           si.st_dev == sj.st_dev && si.st_ino == sj.st_ino))
        dup = j;
    if (dup < 0)
      paths[k++] = paths[i];
    else if (strcmp(paths[i], paths[dup]) == 0)
      fprintf(stderr, "commscale %s: warning: %s given twice: read once\n", verb, paths[i]);
    else
      fprintf(stderr, "commscale %s: warning: %s is the same file as %s: read once\n", verb,
              paths[i], paths[dup]);
  }
  return k;
}

int cli_fail(const char *verb, const struct cs_error *err) {
  fprintf(stderr, "commscale %s: %s\n", verb, err->msg[0] ? err->msg : cs_status_name(err->status));
  return cs_status_exit_code(err->status == CS_OK ? CS_ERR_EXTERNAL : err->status);
}

int cli_format(const char *format, const char *outpath) {
  if (format) {
    if (strcmp(format, "table") == 0) return CLI_TABLE;
    if (strcmp(format, "csv") == 0) return CLI_CSV;
    if (strcmp(format, "json") == 0) return CLI_JSON;
    return -1;
  }
  if (outpath) {
    size_t n = strlen(outpath);
    if (n > 4 && strcmp(outpath + n - 4, ".csv") == 0) return CLI_CSV;
    if (n > 5 && strcmp(outpath + n - 5, ".json") == 0) return CLI_JSON;
  }
  return CLI_TABLE;
}

/* The outputs open now: cli_open_out hands out the stream, cli_close_out and cli_abort_out find
 * its cs_wfile again. A verb has one or two open at a time; report runs verbs inside a verb. */
#define MAX_OPEN_OUT 16
static struct {
  FILE *f;
  struct cs_wfile *w;
} open_out[MAX_OPEN_OUT];

FILE *cli_open_out(const char *path, struct cs_error *err) {
  int slot = -1;
  for (int i = 0; i < MAX_OPEN_OUT && slot < 0; i++)
    if (open_out[i].w == NULL) slot = i;
  if (slot < 0) {
    cs_error_set(err, CS_ERR_NOMEM, "%s: too many outputs open at once", path ? path : "-");
    return NULL;
  }
  struct cs_wfile *w;
  if (cs_wfile_open(path, &w, err) != CS_OK) return NULL;
  open_out[slot].w = w;
  open_out[slot].f = cs_wfile_fp(w);
  return open_out[slot].f;
}

/* Takes f's cs_wfile out of the table; NULL when f was not opened by cli_open_out. The newest
 * entry wins, so that stdout opened twice (report inside report) pairs up. */
static struct cs_wfile *take(FILE *f) {
  for (int i = MAX_OPEN_OUT - 1; i >= 0; i--)
    if (open_out[i].w && open_out[i].f == f) {
      struct cs_wfile *w = open_out[i].w;
      open_out[i].w = NULL;
      open_out[i].f = NULL;
      return w;
    }
  return NULL;
}

enum cs_status cli_close_out(FILE *f, struct cs_error *err) {
  if (f == NULL) return CS_OK;
  struct cs_wfile *w = take(f);
  if (w) return cs_wfile_commit(w, err);
  /* a stream the caller opened otherwise (stdout): flush and check it */
  errno = 0;
  if (fflush(f) != 0 || ferror(f))
    return cs_error_set(err, CS_ERR_IO, "%s: cannot write: %s",
                        f == stdout ? "standard output" : "output", strerror(errno ? errno : EIO));
  return CS_OK;
}

void cli_abort_out(FILE *f) {
  if (f == NULL) return;
  struct cs_wfile *w = take(f);
  if (w)
    cs_wfile_abort(w);
  else
    fflush(f);
}

enum cs_status cli_end_out(FILE *f, enum cs_status st, struct cs_error *err) {
  if (st == CS_OK) return cli_close_out(f, err);
  cli_abort_out(f);
  return st;
}

int cli_begin(const struct cli_verb *v, int argc, char **argv, struct cli_args *a, int minpos,
              int maxpos, const char *posmsg, int *fmt) {
  struct cs_error err = {0};
  int help;
  if (cli_parse(v, argc, argv, a, &help, &err) != CS_OK) return cli_fail(v->name, &err);
  if (help) {
    cli_usage(stdout, v);
    return 0;
  }
  if ((a->npos < minpos || a->npos > maxpos) && posmsg)
    cs_error_set(&err, CS_ERR_USAGE, "%s (see commscale %s --help)", posmsg, v->name);
  else if (a->npos > maxpos)
    cs_error_set(&err, CS_ERR_USAGE, "unexpected argument \"%s\" (see commscale %s --help)",
                 a->pos[maxpos], v->name);
  else if (fmt && (*fmt = cli_format(cli_get(v, a, "format"), cli_get(v, a, "output"))) < 0)
    cs_error_set(&err, CS_ERR_USAGE, "--format expects table, csv or json");
  return err.status != CS_OK ? cli_fail(v->name, &err) : -1;
}
