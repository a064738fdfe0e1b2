/* output.c — see output.h. */
#include "output.h"

#include <math.h>
#include <string.h>

#include "yamlcfg.h"

void cli_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      fprintf(f, "\\u%04x", *s);
    else
      fputc(*s, f);
  }
  fputc('"', f);
}

void cli_csv_field(FILE *f, const char *s) {
  if (s == NULL) return;
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

void cli_json_num(FILE *f, const char *fmt, double x) {
  if (isfinite(x))
    fprintf(f, fmt, x);
  else
    fputs("null", f);
}

void cli_json_head(FILE *f, int argc, char **argv) {
  fprintf(f, "{\"tool\": \"commscale %s\", \"arguments\": [", CS_VERSION);
  for (int i = 0; i < argc; i++) {
    if (i) fputs(", ", f);
    cli_json_string(f, argv[i]);
  }
  fputc(']', f);
}

void cli_json_plan(FILE *f, const struct cs_plan *plan) {
  size_t nf;
  const struct cs_cfg_field *pf = cs_plan_fields(&nf);
  fputc('{', f);
  for (size_t i = 0; i < nf; i++) {
    const void *ptr = (const char *)plan + pf[i].offset;
    fprintf(f, "%s\"%s\": ", i ? ", " : "", pf[i].key);
    if (pf[i].type == CS_CFG_ENUM)
      cli_json_string(f, pf[i].names[*(const int *)ptr]);
    else if (pf[i].type == CS_CFG_BOOL)
      fputs(*(const int *)ptr ? "true" : "false", f);
    else if (pf[i].type == CS_CFG_INT)
      fprintf(f, "%d", *(const int *)ptr);
    else if (pf[i].type == CS_CFG_STRING)
      cli_json_string(f, (const char *)ptr);
    else
      cli_json_num(f, "%.10g", *(const double *)ptr);
  }
  fputc('}', f);
}
