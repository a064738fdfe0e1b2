/* calmpi.c — the `mpi:` section of calibration.yaml (calmpi.h). */
#include "calmpi.h"

#include <math.h>
#include <string.h>

static void num(FILE *f, double v) {
  if (isfinite(v))
    fprintf(f, "%.9g", v);
  else
    fputs("null", f);
}

void cs_calmpi_emit(FILE *f, const struct cs_mpi_fit *m) {
  if (!m->fitted) return;
  fputs("mpi:\n  library: ", f);
  cs_yaml_write_string(f, m->library);
  fprintf(f, "\n  elem_size: %d\n  points: %d\n  noise_rel: ", m->elem_size, m->points);
  num(f, m->noise_rel);
  fputs("\n  median_rel_err: ", f);
  num(f, m->median_rel_err);
  fputs("\n  max_rel_err: ", f);
  num(f, m->max_rel_err);
  fputs("\n  cv_median_rel_err: ", f);
  num(f, m->cv_median_rel_err);
  fprintf(f, "\n  max_nodes: %d\n  max_ranks_local: %d\n", m->max_nodes, m->max_ranks_local);
  /* the run's eager limits, where it recorded them (absent: the laws use Open MPI's defaults),
   * and how its ranks were placed */
  const struct cs_mpi_setup *su = &m->setup;
  if (su->eager[CS_MPI_LOCAL] > 0) fprintf(f, "  eager_local: %.0f\n", su->eager[CS_MPI_LOCAL]);
  if (su->eager[CS_MPI_NET] > 0) fprintf(f, "  eager_net: %.0f\n", su->eager[CS_MPI_NET]);
  fprintf(f, "  placement: %s\n", cs_mpi_placement_name(su->cyclic));
  fputs("  parameters:\n", f);
  for (int i = 0; i < CS_MPI_NPARAMS; i++) {
    fprintf(f, "    %s: ", cs_mpi_param_name(i));
    num(f, m->determined & (1u << i) ? m->theta[i] : NAN);
    fputc('\n', f);
  }
  fputs("  covariance:\n", f);
  for (int i = 0; i < CS_MPI_NPARAMS; i++) {
    fputs("    - [", f);
    for (int j = 0; j < CS_MPI_NPARAMS; j++) {
      fputs(j ? ", " : "", f);
      num(f, m->cov[i][j]);
    }
    fputs("]\n", f);
  }
}

static int is_null(const struct cs_yaml *d, int node) {
  const char *s = cs_yaml_scalar(d, node);
  return s && (strcmp(s, "null") == 0 || strcmp(s, "~") == 0 || s[0] == '\0');
}

/* A number in [0, max] or null (NAN). */
static enum cs_status nullable(const struct cs_yaml *d, int node, double max, double *out,
                               struct cs_error *err) {
  if (is_null(d, node)) {
    *out = NAN;
    return CS_OK;
  }
  return cs_yaml_double(d, node, 0, max, out, err);
}

static enum cs_status read_params(const struct cs_yaml *d, int map, struct cs_mpi_fit *m,
                                  struct cs_error *err) {
  if (cs_yaml_kind(d, map) != CS_YAML_MAP)
    return cs_yaml_error(d, map, err, CS_ERR_PARSE,
                         "mpi.parameters: expected a mapping such as {beta.net: 8e-08}");
  for (size_t k = 0; k < cs_yaml_len(d, map); k++) {
    const char *name = cs_yaml_scalar(d, cs_yaml_key(d, map, k));
    int i = 0;
    while (i < CS_MPI_NPARAMS && !(name && strcmp(name, cs_mpi_param_name(i)) == 0))
      i++;
    if (i == CS_MPI_NPARAMS)
      return cs_yaml_error(d, cs_yaml_key(d, map, k), err, CS_ERR_PARSE,
                           "mpi.parameters: expected alpha.net, beta.net, rndv.net, beyond.net, "
                           "their .local twins or gamma, got \"%.40s\"",
                           name ? name : "?");
    double v;
    enum cs_status st = nullable(d, cs_yaml_value(d, map, k), 1, &v, err);
    if (st != CS_OK) return st;
    m->theta[i] = isfinite(v) ? v : 0;
    if (isfinite(v)) m->determined |= 1u << i;
  }
  return CS_OK;
}

static enum cs_status read_cov(const struct cs_yaml *d, int seq, struct cs_mpi_fit *m,
                               struct cs_error *err) {
  if (cs_yaml_kind(d, seq) != CS_YAML_SEQ || cs_yaml_len(d, seq) != CS_MPI_NPARAMS)
    return cs_yaml_error(d, seq, err, CS_ERR_PARSE,
                         "mpi.covariance: expected %d rows of %d numbers", CS_MPI_NPARAMS,
                         CS_MPI_NPARAMS);
  for (int i = 0; i < CS_MPI_NPARAMS; i++) {
    int row = cs_yaml_item(d, seq, (size_t)i);
    if (cs_yaml_kind(d, row) != CS_YAML_SEQ || cs_yaml_len(d, row) != CS_MPI_NPARAMS)
      return cs_yaml_error(d, row, err, CS_ERR_PARSE,
                           "mpi.covariance: expected a row of %d numbers", CS_MPI_NPARAMS);
    for (int j = 0; j < CS_MPI_NPARAMS; j++) {
      enum cs_status st =
          cs_yaml_double(d, cs_yaml_item(d, row, (size_t)j), -1, 1, &m->cov[i][j], err);
      if (st != CS_OK) return st;
    }
  }
  for (int i = 0; i < CS_MPI_NPARAMS; i++)
    if (m->cov[i][i] < 0)
      return cs_yaml_error(d, cs_yaml_item(d, seq, (size_t)i), err, CS_ERR_PARSE,
                           "mpi.covariance: expected a variance >= 0 on the diagonal");
  return CS_OK;
}

enum cs_status cs_calmpi_read(const struct cs_yaml *d, int map, struct cs_mpi_fit *m,
                              struct cs_error *err) {
  static const char *const keys[] = {
      "library",     "elem_size",         "points",    "noise_rel",       "median_rel_err",
      "max_rel_err", "cv_median_rel_err", "max_nodes", "max_ranks_local", "parameters",
      "covariance",  "eager_local",       "eager_net", "placement"};
  memset(m, 0, sizeof *m);
  if (cs_yaml_kind(d, map) != CS_YAML_MAP)
    return cs_yaml_error(d, map, err, CS_ERR_PARSE, "mpi: expected a mapping of the MPI fit");
  double *dbl[] = {&m->noise_rel, &m->median_rel_err, &m->max_rel_err, &m->cv_median_rel_err};
  int *ints[] = {&m->elem_size, &m->points, NULL,          NULL,
                 NULL,          NULL,       &m->max_nodes, &m->max_ranks_local};
  enum cs_status st = CS_OK;
  int have_params = 0;
  for (size_t k = 0; st == CS_OK && k < cs_yaml_len(d, map); k++) {
    int key = cs_yaml_key(d, map, k), val = cs_yaml_value(d, map, k);
    const char *name = cs_yaml_scalar(d, key);
    size_t i = 0;
    while (i < sizeof keys / sizeof keys[0] && !(name && strcmp(name, keys[i]) == 0))
      i++;
    long l;
    if (i == 0) {
      const char *s = cs_yaml_scalar(d, val);
      if (s == NULL)
        st = cs_yaml_error(d, val, err, CS_ERR_PARSE, "mpi.library: expected a string");
      else
        snprintf(m->library, sizeof m->library, "%s", s);
    } else if (i >= 3 && i <= 6) {
      st = nullable(d, val, 1e6, dbl[i - 3], err);
    } else if (i < 9) {
      st = cs_yaml_int(d, val, 0, 1L << 30, &l, err);
      if (st == CS_OK) *ints[i - 1] = (int)l;
    } else if (i == 9) {
      st = read_params(d, val, m, err);
      have_params = 1;
    } else if (i == 10) {
      st = read_cov(d, val, m, err);
    } else if (i == 11 || i == 12) {
      st = cs_yaml_int(d, val, 1, 1L << 40, &l, err);
      if (st == CS_OK) m->setup.eager[i == 11 ? CS_MPI_LOCAL : CS_MPI_NET] = (double)l;
    } else if (i == 13) {
      const char *s = cs_yaml_scalar(d, val);
      if (cs_mpi_placement_parse(s, &m->setup.cyclic) != 0)
        st = cs_yaml_error(d, val, err, CS_ERR_PARSE,
                           "mpi.placement: expected block or cyclic, got \"%.40s\"", s ? s : "?");
    } else {
      st = cs_yaml_error(d, key, err, CS_ERR_PARSE,
                         "mpi: unknown key \"%.40s\"; expected library, elem_size, points, "
                         "noise_rel, median_rel_err, max_rel_err, cv_median_rel_err, max_nodes, "
                         "max_ranks_local, eager_local, eager_net, placement, parameters or "
                         "covariance",
                         name ? name : "?");
    }
  }
  if (st == CS_OK && !have_params)
    st = cs_yaml_error(d, map, err, CS_ERR_PARSE, "mpi: missing required key \"parameters\"");
  if (st == CS_OK) {
    if (!isfinite(m->noise_rel)) m->noise_rel = 0;
    m->fitted = 1;
  } else {
    memset(m, 0, sizeof *m);
  }
  return st;
}
