/* yamlcfg.h — reading YAML files with positions, and schema tables that map YAML keys onto C
 * struct fields.
 *
 * Every input file commscale reads (topologies, workloads, GPUs, plans, scenarios) goes through
 * here, so all of them report errors the same way — one line "path:line:col: expected ..." — and
 * all of them reject unknown keys. A schema is a table of struct cs_cfg_field, one row per key:
 * the same table parses the file, applies `--set key=value` overrides, fills defaults, prints
 * `--help-config` and dumps the resolved configuration (STYLE.md, "Config").
 *
 * Documents are loaded with libyaml's document API; aliases and anchors are refused (they make
 * hostile files explode), as are documents nested deeper than 64 levels.
 */
#ifndef CS_YAMLCFG_H
#define CS_YAMLCFG_H

#include <stddef.h>
#include <stdio.h>

#include "status.h"
#include "units.h"

/* ---- documents --------------------------------------------------------------------------- */

struct cs_yaml; /* opaque: a loaded document and its path */

enum cs_yaml_kind { CS_YAML_NONE, CS_YAML_SCALAR, CS_YAML_SEQ, CS_YAML_MAP };

/* Loads path. On success *doc is allocated (free with cs_yaml_free). Errors: CS_ERR_IO when the
 * file cannot be read; CS_ERR_PARSE "path:line:col: <libyaml's problem>" for syntax errors, an
 * empty document, aliases or nesting deeper than 64. */
enum cs_status cs_yaml_load(const char *path, struct cs_yaml **doc, struct cs_error *err);

/* Parses text (for tests and for --set values); name stands in for the path in messages. */
enum cs_status cs_yaml_load_string(const char *text, const char *name, struct cs_yaml **doc,
                                   struct cs_error *err);

void cs_yaml_free(struct cs_yaml *doc);

/* Node ids are positive ints; 0 means "no node". */
int cs_yaml_root(const struct cs_yaml *doc);
enum cs_yaml_kind cs_yaml_kind(const struct cs_yaml *doc, int node);
const char *cs_yaml_path(const struct cs_yaml *doc);
/* The scalar's text, or NULL when node is not a scalar. */
const char *cs_yaml_scalar(const struct cs_yaml *doc, int node);
/* Sequence length and items; mapping length, keys (scalar nodes) and values. */
size_t cs_yaml_len(const struct cs_yaml *doc, int node);
int cs_yaml_item(const struct cs_yaml *doc, int seq, size_t i);
int cs_yaml_key(const struct cs_yaml *doc, int map, size_t i);
int cs_yaml_value(const struct cs_yaml *doc, int map, size_t i);
/* The value for key in map, or 0. */
int cs_yaml_get(const struct cs_yaml *doc, int map, const char *key);
/* 1-based line and column of node's start. */
void cs_yaml_mark(const struct cs_yaml *doc, int node, long *line, long *col);

/* Records "path:line:col: message" for node in err; returns st. */
enum cs_status cs_yaml_error(const struct cs_yaml *doc, int node, struct cs_error *err,
                             enum cs_status st, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Typed scalar readers: each fails with a located CS_ERR_PARSE naming what was expected. */
enum cs_status cs_yaml_int(const struct cs_yaml *doc, int node, long min, long max, long *out,
                           struct cs_error *err);
enum cs_status cs_yaml_double(const struct cs_yaml *doc, int node, double min, double max,
                              double *out, struct cs_error *err);
enum cs_status cs_yaml_quantity(const struct cs_yaml *doc, int node, enum cs_unit_kind kind,
                                double *out, struct cs_error *err);
enum cs_status cs_yaml_bool(const struct cs_yaml *doc, int node, int *out, struct cs_error *err);

/* ---- schema tables ----------------------------------------------------------------------- */

enum cs_cfg_type {
  CS_CFG_INT,    /* int field; min/max bound it */
  CS_CFG_DOUBLE, /* double, dimensionless; min/max bound it */
  CS_CFG_QTY,    /* double in SI units, written with a unit of kind `unit`; min/max in SI */
  CS_CFG_BOOL,   /* int field, 0 or 1; YAML true/false */
  CS_CFG_STRING, /* char[size] field */
  CS_CFG_ENUM    /* int field holding the index into names[] */
};

struct cs_cfg_field {
  const char *key;
  enum cs_cfg_type type;
  size_t offset;            /* offsetof(struct x, field) */
  size_t size;              /* CS_CFG_STRING: the buffer size */
  enum cs_unit_kind unit;   /* CS_CFG_QTY */
  double min, max;          /* inclusive bounds for numbers */
  const char *def;          /* default, as file text; NULL = the key is required */
  const char *const *names; /* CS_CFG_ENUM: NULL-terminated */
  const char *help;
};

/* Sets every field of obj that has a default to that default. */
enum cs_status cs_cfg_defaults(const struct cs_cfg_field *f, size_t n, void *obj,
                               struct cs_error *err);

/* Sets one field from text (as in a file): "400Gbps", "8", "true", "ring". Errors name the key. */
enum cs_status cs_cfg_set_text(const struct cs_cfg_field *f, void *obj, const char *text,
                               struct cs_error *err);

/* Reads mapping node `map` into obj: defaults first, then each key. A key not in the table is an
 * error unless it is listed in `extra` (NULL-terminated; the caller reads those itself); a
 * required key that is absent is an error located at the mapping. */
enum cs_status cs_cfg_read(const struct cs_yaml *doc, int map, const struct cs_cfg_field *f,
                           size_t n, void *obj, const char *const *extra, struct cs_error *err);

/* Applies "key=value" to obj (for --set). Unknown key or bad value: CS_ERR_USAGE; CS_ERR_NOMEM
 * when memory runs out. */
enum cs_status cs_cfg_assign(const struct cs_cfg_field *f, size_t n, void *obj,
                             const char *assignment, struct cs_error *err);

/* Writes s as a YAML double-quoted scalar that reads back byte for byte: printable ASCII as it is,
 * '"' and '\\' and every other character escaped (\xXX, \uXXXX, \UXXXXXXXX), so that the output is
 * plain ASCII. Bytes that are not valid UTF-8 cannot be represented in YAML and are written as
 * '?'. */
void cs_yaml_write_string(FILE *out, const char *s);

/* Writes obj as YAML "key: value" lines with units (the resolved-configuration dump); strings
 * through cs_yaml_write_string(). */
void cs_cfg_dump(FILE *out, const struct cs_cfg_field *f, size_t n, const void *obj, int indent);

/* Writes one line per key: key, type/unit, default, range, help (for --help-config). */
void cs_cfg_help(FILE *out, const struct cs_cfg_field *f, size_t n);

#endif
