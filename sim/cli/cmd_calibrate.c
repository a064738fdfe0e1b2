/* cmd_calibrate.c — `commscale calibrate`: measure on the nodes at hand, then fit.
 *
 * The measuring is done by commscale-run, the small executable that builds where the GPUs are
 * (CUDA, NCCL and MPI only; calibrate/runner/runner.h). This verb starts it as a child process with
 * the arguments it does not know itself, waits, and then runs the fit on the measurements CSV in
 * this process (the `fit` verb, so the output is the same as `commscale fit`). A child rather than
 * a linked-in runner keeps this executable free of CUDA, NCCL and MPI: under `mpirun -np N
 * commscale calibrate ...` every rank starts its own commscale-run, which inherits the launcher's
 * environment and joins the MPI job, and only rank 0 (OMPI_COMM_WORLD_RANK, PMI_RANK or
 * SLURM_PROCID) fits afterwards.
 *
 * commscale-run is looked for in --runner, then $CS_RUNNER, then next to this executable, then in
 * ../calibrate/ beside it (the build tree), then on $PATH.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "opts.h"

#define MAXARGS 512

static const char usage_text[] =
    "usage: commscale calibrate [--cal calibration.yaml] [--no-fit] [--runner PATH]\n"
    "                           [RUNNER OPTIONS] [-o measurements.csv]\n\n"
    "Measure collectives on this launch's GPUs (nccl) or CPU processes (mpi) with\n"
    "commscale-run, on sub-groups of 1..N nodes and 1, 2, 4, .. G ranks per node, then fit\n"
    "the cost model to the measurements.\n\n"
    "options of this verb:\n"
    "  --cal FILE          calibration file to write [calibration.yaml beside the CSV]\n"
    "  --no-fit            measure only\n"
    "  --fit-args ARGS     extra arguments for the fit, one string (\"--config X --report\")\n"
    "  --runner PATH       the commscale-run executable to use [$CS_RUNNER, beside commscale]\n"
    "  -o FILE             measurements CSV [measurements.csv]; add --resume to continue it\n"
    "  --probes LIST       also GEMM, memory and interference probes (--probe-output FILE);\n"
    "                      --probes-only measures them alone and fits nothing\n\n"
    "Every other option goes to commscale-run; its options follow.\n\n";

static void usage(FILE *f) {
  if (cli_man()) { /* commscale --man: this verb's text as a roff subsection */
    fputs(".SS \"calibrate\"\n.nf\n", f);
    cli_roff(f, usage_text);
    fputs(".fi\n.PP\nThe runner's options: \\fBcommscale\\-run \\-\\-help\\fR.\n", f);
    return;
  }
  fputs(usage_text, f);
}

static int executable(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 && S_ISREG(sb.st_mode) && access(p, X_OK) == 0;
}

/* Finds commscale-run; fills buf and returns 0, or -1. */
static int find_runner(const char *given, char *buf, size_t len) {
  if (given) {
    snprintf(buf, len, "%s", given);
    return executable(buf) ? 0 : -1;
  }
  const char *env = getenv("CS_RUNNER");
  if (env && *env) {
    snprintf(buf, len, "%s", env);
    return executable(buf) ? 0 : -1;
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) {
      *slash = '\0';
      if (snprintf(buf, len, "%s/commscale-run", self) < (int)len && executable(buf)) return 0;
      if (snprintf(buf, len, "%s/../calibrate/commscale-run", self) < (int)len && executable(buf))
        return 0;
    }
  }
  const char *path = getenv("PATH");
  if (path) {
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    char *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
      if (snprintf(buf, len, "%s/commscale-run", d) < (int)len && executable(buf)) return 0;
    }
  }
  return -1;
}

/* Runs argv as a child and returns its exit status (128 + signal when killed), or -1. */
static int run_child(char **argv) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execv(argv[0], argv);
    fprintf(stderr, "commscale calibrate: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

/* This process's rank under an MPI launcher, 0 when there is none. */
static int launcher_rank(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                     "SLURM_PROCID"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) return atoi(v);
  }
  return 0;
}

/* The fit after a measurement run, as `commscale fit OUT -o CAL [FIT-ARGS]`; CAL defaults to
 * calibration.yaml beside OUT. */
static int fit_measurements(const char *out, const char *cal, const char *fit_args) {
  char calbuf[PATH_MAX];
  if (cal == NULL) {
    snprintf(calbuf, sizeof calbuf, "%s", out);
    char *slash = strrchr(calbuf, '/');
    char *base = slash ? slash + 1 : calbuf;
    snprintf(base, sizeof calbuf - (size_t)(base - calbuf), "calibration.yaml");
    if (strcmp(calbuf, out) == 0) snprintf(calbuf, sizeof calbuf, "%s.yaml", out);
    cal = calbuf;
  }
  char *fargv[64];
  int nf = 0;
  static char fit_name[] = "fit", dash_o[] = "-o";
  fargv[nf++] = fit_name;
  fargv[nf++] = (char *)out;
  fargv[nf++] = dash_o;
  fargv[nf++] = (char *)cal;
  char fa[1024];
  if (fit_args) {
    snprintf(fa, sizeof fa, "%s", fit_args);
    char *save = NULL;
    for (char *t = strtok_r(fa, " \t", &save); t && nf < 62; t = strtok_r(NULL, " \t", &save))
      fargv[nf++] = t;
  }
  fargv[nf] = NULL;
  fprintf(stderr, "commscale calibrate: measurements in %s; fitting into %s\n", out, cal);
  return cs_cmd_fit(nf, fargv);
}

int cs_cmd_calibrate(int argc, char **argv) {
  const char *cal = NULL, *runner = NULL, *out = NULL, *fit_args = NULL;
  int no_fit = 0, help = 0, dry = 0, check = 0, probes_only = 0;
  char *child[MAXARGS];
  int nc = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int more = i + 1 < argc;
    if (strcmp(a, "--cal") == 0 && more)
      cal = argv[++i];
    else if (strcmp(a, "--no-fit") == 0)
      no_fit = 1;
    else if (strcmp(a, "--runner") == 0 && more)
      runner = argv[++i];
    else if (strcmp(a, "--fit-args") == 0 && more)
      fit_args = argv[++i];
    else if ((strcmp(a, "--cal") == 0 || strcmp(a, "--runner") == 0 ||
              strcmp(a, "--fit-args") == 0)) {
      fprintf(stderr, "commscale calibrate: %s needs a value\n", a);
      return 2;
    } else {
      if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) help = 1;
      if (strcmp(a, "--dry-run") == 0) dry = 1;
      if (strcmp(a, "--check") == 0) check = 1;
      if (strcmp(a, "--probes-only") == 0) probes_only = 1;
      if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && more)
        out = argv[i + 1];
      else if (strncmp(a, "--output=", 9) == 0)
        out = a + 9;
      else if (strncmp(a, "-o", 2) == 0 && a[2])
        out = a + 2;
      if (nc >= MAXARGS - 4) {
        fprintf(stderr, "commscale calibrate: too many arguments\n");
        return 2;
      }
      child[nc++] = argv[i];
    }
  }
  char path[PATH_MAX];
  if (find_runner(runner, path, sizeof path) != 0) {
    if (help) {
      usage(stdout);
      return 0;
    }
    fprintf(stderr,
            "commscale calibrate: commscale-run not found (%s); build it (cmake --build BUILD "
            "--target commscale-run), or name it with --runner or $CS_RUNNER\n",
            runner ? runner : "looked beside commscale and on $PATH");
    return 1;
  }
  if (help && cli_man()) {
    usage(stdout);
    return 0;
  }
  if (help) {
    usage(stdout);
    char *h[] = {path, "--help", NULL};
    return run_child(h) == 0 ? 0 : 1;
  }
  static char dflt_out[] = "measurements.csv", oflag[] = "-o";
  if (out == NULL && !check && !probes_only) {
    out = dflt_out;
    child[nc++] = oflag;
    child[nc++] = dflt_out;
  }
  child[0] = path;
  child[nc] = NULL;
  int rc = run_child(child);
  if (rc != 0) {
    if (rc < 0)
      fprintf(stderr, "commscale calibrate: cannot start %s\n", path);
    else
      fprintf(stderr, "commscale calibrate: %s ended with status %d\n", path, rc);
    return rc == 2 ? 2 : 1;
  }
  if (no_fit || dry || check || probes_only || launcher_rank() != 0) return 0;

  return fit_measurements(out, cal, fit_args);
}
