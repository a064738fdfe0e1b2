/* opts.c — option-table parsing and help for the front end; see opts.h. */
#include "opts.h"

#include <errno.h>
#include <string.h>

enum cs_status cli_parse(const struct cli_verb *v, int argc, char **argv, struct cli_args *a,
                         int *help, struct cs_error *err) {
  memset(a, 0, sizeof *a);
  *help = 0;
  int only_pos = 0;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!only_pos && strcmp(s, "--") == 0) {
      only_pos = 1;
      continue;
    }
    if (!only_pos && (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0)) {
      *help = 1;
      return CS_OK;
    }
    if (only_pos || s[0] != '-' || s[1] == '\0') {
      if (a->npos >= CLI_MAX_POS)
        return cs_error_set(err, CS_ERR_USAGE, "too many arguments (at most %d)", CLI_MAX_POS);
      a->pos[a->npos++] = s;
      continue;
    }
    int found = -1;
    const char *inline_val = NULL;
    if (s[1] == '-') {
      const char *name = s + 2;
      const char *eq = strchr(name, '=');
      size_t len = eq ? (size_t)(eq - name) : strlen(name);
      for (int k = 0; k < v->nopts; k++)
        if (strlen(v->opts[k].name) == len && strncmp(v->opts[k].name, name, len) == 0) found = k;
      if (eq) inline_val = eq + 1;
    } else if (s[2] == '\0') {
      for (int k = 0; k < v->nopts; k++)
        if (v->opts[k].shortc == s[1]) found = k;
    } else {
      /* -b8 style: short option with its value attached */
      for (int k = 0; k < v->nopts; k++)
        if (v->opts[k].shortc == s[1] && v->opts[k].argname) found = k, inline_val = s + 2;
    }
    if (found < 0)
      return cs_error_set(err, CS_ERR_USAGE, "unknown option \"%s\" (see commscale %s --help)", s,
                          v->name);
    const struct cli_opt *o = &v->opts[found];
    if (o->argname == NULL) {
      if (inline_val) return cs_error_set(err, CS_ERR_USAGE, "option --%s takes no value", o->name);
      a->val[found] = "1";
      continue;
    }
    if (inline_val == NULL) {
      if (i + 1 >= argc)
        return cs_error_set(err, CS_ERR_USAGE, "option --%s expects %s", o->name, o->argname);
      inline_val = argv[++i];
    }
    a->val[found] = inline_val;
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
  if (v->details) {
    fputs(".PP\n", f);
    cli_roff(f, v->details);
    fputc('\n', f);
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
  for (int k = 0; k < v->nopts; k++)
    if (v->opts[k].argname && strcmp(v->opts[k].argname, "LIST") == 0) {
      fputs(
          "\nLIST: comma-separated items; a range a:b doubles from a and ends at b (1:400 is 1, "
          "2,\n"
          "4, ..., 256, 400), a:b:+k steps by k (50:400:+50), a:b:xf multiplies by f (1:64:x4).\n",
          f);
      break;
    }
  if (v->details) fprintf(f, "\n%s\n", v->details);
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

FILE *cli_open_out(const char *path, struct cs_error *err) {
  if (path == NULL || strcmp(path, "-") == 0) return stdout;
  FILE *f = fopen(path, "w");
  if (f == NULL) cs_error_set(err, CS_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
  return f;
}

void cli_close_out(FILE *f) {
  if (f && f != stdout)
    fclose(f);
  else
    fflush(stdout);
}
