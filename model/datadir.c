/* datadir.c — bundled data files by name; see datadir.h. */
#define _GNU_SOURCE /* dladdr */
#include "datadir.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef CS_SOURCE_DIR
#define CS_SOURCE_DIR "."
#endif

/* The installed data folder relative to the installed library's folder ("../share/commscale"
 * for <prefix>/lib and <prefix>/share/commscale), set by the build from the install layout. */
#ifndef CS_LIB_TO_DATA
#define CS_LIB_TO_DATA "../share/commscale"
#endif

#define NDIRS 4

static int is_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static const char anchor; /* an address inside whatever object this code is linked into */

int cs_datadir_library(const char *kind, char *out, size_t len) {
  Dl_info info;
  if (dladdr(&anchor, &info) == 0 || info.dli_fname == NULL) return 0;
  const char *f = info.dli_fname, *slash = strrchr(f, '/');
  if (slash == NULL || strstr(slash, ".so") == NULL) return 0; /* not a shared library */
  int n = snprintf(out, len, "%.*s/%s/%s", (int)(slash - f), f, CS_LIB_TO_DATA, kind);
  return n > 0 && (size_t)n < len;
}

/* The candidate folders in search order; empty strings for those that do not apply. */
static void search_dirs(const char *kind, const char *src_subdir, const char *exe_path,
                        char dirs[NDIRS][1024]) {
  const char *env = getenv("COMMSCALE_DATA_DIR");
  dirs[0][0] = dirs[1][0] = dirs[2][0] = '\0';
  if (env && *env && snprintf(dirs[0], sizeof dirs[0], "%s/%s", env, kind) >= (int)sizeof dirs[0])
    dirs[0][0] = '\0';
  if (exe_path && *exe_path) {
    const char *slash = strrchr(exe_path, '/');
    if (slash && snprintf(dirs[1], sizeof dirs[1], "%.*s/../share/commscale/%s",
                          (int)(slash - exe_path), exe_path, kind) >= (int)sizeof dirs[1])
      dirs[1][0] = '\0';
  }
  if (!cs_datadir_library(kind, dirs[2], sizeof dirs[2])) dirs[2][0] = '\0';
  if (snprintf(dirs[3], sizeof dirs[3], "%s/%s", CS_SOURCE_DIR, src_subdir) >= (int)sizeof dirs[3])
    dirs[3][0] = '\0';
}

enum cs_status cs_datadir_find(const char *kind, const char *src_subdir, const char *name,
                               const char *exe_path, char *out, size_t len, struct cs_error *err) {
  if (strchr(name, '/') || ends_with(name, ".yaml") || ends_with(name, ".yml")) {
    if (strlen(name) >= len) return cs_error_set(err, CS_ERR_RANGE, "path too long: %s", name);
    snprintf(out, len, "%s", name);
    return CS_OK;
  }
  char dirs[NDIRS][1024];
  search_dirs(kind, src_subdir, exe_path, dirs);
  char tried[2048] = "";
  size_t used = 0;
  for (int i = 0; i < NDIRS; i++) {
    if (dirs[i][0] == '\0') continue;
    char path[4096];
    int w = snprintf(path, sizeof path, "%s/%s.yaml", dirs[i], name);
    if (w > 0 && (size_t)w < sizeof path && is_file(path)) {
      if (strlen(path) >= len) return cs_error_set(err, CS_ERR_RANGE, "path too long: %s", path);
      snprintf(out, len, "%s", path);
      return CS_OK;
    }
    int k = snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", dirs[i]);
    if (k > 0 && (size_t)k < sizeof tried - used) used += (size_t)k;
  }
  return cs_error_set(err, CS_ERR_IO, "no %s file named \"%s\" (searched %s)", kind, name, tried);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void cs_datadir_list_free(char **names, size_t n) {
  if (names == NULL) return;
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

enum cs_status cs_datadir_list(const char *kind, const char *src_subdir, const char *exe_path,
                               char ***names, size_t *n, struct cs_error *err) {
  char dirs[NDIRS][1024];
  search_dirs(kind, src_subdir, exe_path, dirs);
  char **v = NULL;
  size_t cnt = 0, cap = 0;
  for (int i = 0; i < NDIRS; i++) {
    if (dirs[i][0] == '\0') continue;
    DIR *d = opendir(dirs[i]);
    if (d == NULL) continue;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.' || !ends_with(e->d_name, ".yaml")) continue;
      if (cnt == cap) {
        size_t nc = cap ? 2 * cap : 32;
        char **nv = realloc(v, nc * sizeof *nv);
        if (nv == NULL) {
          closedir(d);
          cs_datadir_list_free(v, cnt);
          return cs_error_set(err, CS_ERR_NOMEM, "out of memory listing %s", kind);
        }
        v = nv;
        cap = nc;
      }
      size_t len = strlen(e->d_name) - 5;
      char *s = malloc(len + 1);
      if (s == NULL) {
        closedir(d);
        cs_datadir_list_free(v, cnt);
        return cs_error_set(err, CS_ERR_NOMEM, "out of memory listing %s", kind);
      }
      memcpy(s, e->d_name, len);
      s[len] = '\0';
      v[cnt++] = s;
    }
    closedir(d);
  }
  if (cnt > 1) qsort(v, cnt, sizeof *v, cmp_str);
  size_t k = 0;
  for (size_t i = 0; i < cnt; i++) {
    if (k > 0 && strcmp(v[k - 1], v[i]) == 0)
      free(v[i]);
    else
      v[k++] = v[i];
  }
  *names = v;
  *n = k;
  return CS_OK;
}
