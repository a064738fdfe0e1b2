/* test_runner.c — the measurement harness (calibrate/runner/runner.c) under the null backend: no
 * MPI, no GPU, a timing model t = lat + bytes / bw (backend_null.c) whose rows the tests derive by
 * hand.
 *
 * In process: the time kept per point and the trials until the spread is small, the shapes cut
 * from one launch of N nodes x G ranks, the options that choose shapes, --check and bad settings.
 * Through the commscale-run executable (CS_RUNNER_EXE): a run killed with SIGKILL keeps every row
 * it finished, --resume continues it without repeating one and ends with the rows of an
 * uninterrupted run, and a hung step is ended by the watchdog with a message naming the step.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "meas.h"
#include "runner.h"
#include "testutil.h"

/* The CSV keeps 6 significant digits: what a read-back time can differ from the model's. */
#define CSV_REL 5e-6

/* Runs the harness in this process with the null backend set by model and the options args
 * (space-separated); returns its status, err filled. */
static enum cs_status run_null(const char *model, const char *args, struct cs_error *err) {
  char buf[1024];
  snprintf(buf, sizeof buf, "commscale-run %s", args);
  char *argv[64];
  int argc = 0;
  char *save = NULL;
  for (char *t = strtok_r(buf, " ", &save); t && argc < 63; t = strtok_r(NULL, " ", &save))
    argv[argc++] = t;
  argv[argc] = NULL;
  setenv("CS_NULL_BACKEND", model, 1);
  unsetenv("CS_RUN_FAIL_AFTER");
  unsetenv("CS_RUN_STOP_RANK");
  struct cs_run_opts o;
  cs_run_opts_init(&o);
  int help = 0;
  enum cs_status st = cs_run_opts_parse(argc, argv, &o, &help, err);
  assert_int_equal(st, CS_OK);
  o.quiet = 1;
  st = cs_run(&o, err);
  cs_run_opts_fini(&o);
  return st;
}

static void read_rows(const char *path, struct cs_meas_set *set) {
  struct cs_error err = {0};
  cs_meas_set_init(set);
  if (cs_meas_read_file(path, set, &err) != CS_OK) {
    print_error("%s\n", err.msg);
    fail();
  }
}

/* ---- timing and trials ---------------------------------------------------------------------- */

/* Without noise every trial is the model's time: the row is lat + bytes / bw exactly and the run
 * stops at the fewest trials. */
static void model_time_min_trials(void **state) {
  (void)state;
  char path[512], args[800];
  struct cs_error err = {0};
  cs_test_tmp("runner_exact.csv", path, sizeof path);
  snprintf(args, sizeof args,
           "--backend null --colls all_reduce,all_gather --sizes 1K:1M --trials 3:10 "
           "--overwrite -o %s",
           path);
  assert_int_equal(run_null("nodes=1,gpus=2,lat_us=7,bw_GBps=40", args, &err), CS_OK);
  struct cs_meas_set set;
  read_rows(path, &set);
  assert_int_equal(set.n, 2 * 11);
  for (size_t i = 0; i < set.n; i++) {
    const struct cs_meas_row *r = &set.rows[i];
    assert_close(r->time_us, 7 + r->bytes / 40e9 * 1e6, CSV_REL);
    assert_close(r->time_min_us, r->time_us, CSV_REL);
    assert_close(r->time_max_us, r->time_us, CSV_REL);
    assert_int_equal(r->trials, 3);
    assert_int_equal(r->ranks, 2);
    assert_int_equal(r->launch, CS_LAUNCH_THREAD);
  }
  cs_meas_set_fini(&set);
}

/* With noise F each trial is the model's time times (1 + F u), u in [-1, 1): a spread far above
 * the tolerance runs every point to the most trials; a spread of at most 2F / (1 - F) below it
 * stops every point at the fewest; in between some points need more. The kept time is the median
 * trial, inside [min, max] and inside the noise band; the same seed gives the same rows. */
static void trials_until_stable(void **state) {
  (void)state;
  char path[512], args[800];
  struct cs_error err = {0};
  struct cs_meas_set set;
  static const struct {
    const char *model, *tol;
    int all_min, all_max; /* every row at the fewest / at the most trials */
  } cases[] = {
      {"lat_us=10,bw_GBps=50,noise=0.3,seed=5", "0.01", 0, 1},
      {"lat_us=10,bw_GBps=50,noise=0.02,seed=5", "0.05", 1, 0},
      {"lat_us=10,bw_GBps=50,noise=0.1,seed=5", "0.05", 0, 0},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    cs_test_tmp("runner_noise.csv", path, sizeof path);
    snprintf(args, sizeof args,
             "--backend null --colls all_reduce --sizes 1K:1M --trials 3:10 --tol %s "
             "--overwrite -o %s",
             cases[c].tol, path);
    char model[128];
    snprintf(model, sizeof model, "nodes=1,gpus=2,%s", cases[c].model);
    assert_int_equal(run_null(model, args, &err), CS_OK);
    read_rows(path, &set);
    assert_int_equal(set.n, 11);
    double noise = c == 0 ? 0.3 : c == 1 ? 0.02 : 0.1;
    int more = 0;
    for (size_t i = 0; i < set.n; i++) {
      const struct cs_meas_row *r = &set.rows[i];
      double t = 10 + r->bytes / 50e9 * 1e6;
      assert_true(r->time_min_us <= r->time_us && r->time_us <= r->time_max_us);
      assert_true(r->time_min_us >= t * (1 - noise) * (1 - CSV_REL));
      assert_true(r->time_max_us <= t * (1 + noise) * (1 + CSV_REL));
      assert_true(r->trials >= 3 && r->trials <= 10);
      if (cases[c].all_min) assert_int_equal(r->trials, 3);
      if (cases[c].all_max) assert_int_equal(r->trials, 10);
      if (r->trials < 10) /* stopped early: its spread was within the tolerance */
        assert_true((r->time_max_us - r->time_min_us) / r->time_us <=
                    atof(cases[c].tol) + 2 * CSV_REL);
      more += r->trials > 3;
    }
    if (c == 2) assert_true(more > 0 && more < (int)set.n + 1);
    if (c == 2) {
      /* the same seed again: the same rows */
      struct cs_meas_set again;
      assert_int_equal(run_null(model, args, &err), CS_OK);
      read_rows(path, &again);
      assert_int_equal(again.n, set.n);
      for (size_t i = 0; i < set.n; i++) {
        assert_true(again.rows[i].time_us == set.rows[i].time_us);
        assert_int_equal(again.rows[i].trials, set.rows[i].trials);
      }
      cs_meas_set_fini(&again);
    }
    cs_meas_set_fini(&set);
  }
}

/* ---- shapes --------------------------------------------------------------------------------- */

/* One launch of 3 nodes x 4 ranks gives every documented shape: node counts 1..3, ranks per node
 * 1, 2, 4 (powers of two and G), at least 2 ranks; groups that span nodes run at the inter-node
 * bandwidth. */
static void shapes_from_one_launch(void **state) {
  (void)state;
  char path[512], args[800];
  struct cs_error err = {0};
  cs_test_tmp("runner_shapes.csv", path, sizeof path);
  snprintf(args, sizeof args, "--backend null --colls all_reduce --sizes 1M --overwrite -o %s",
           path);
  assert_int_equal(run_null("nodes=3,gpus=4,lat_us=2,bw_GBps=100,net_bw_GBps=10", args, &err),
                   CS_OK);
  struct cs_meas_set set;
  read_rows(path, &set);
  int want[4][5] = {{0}}, got[4][5] = {{0}};
  for (int n = 1; n <= 3; n++)
    for (int g = 1; g <= 4; g++)
      if ((g == 1 || g == 2 || g == 4) && n * g >= 2) want[n][g] = 1;
  for (size_t i = 0; i < set.n; i++) {
    const struct cs_meas_row *r = &set.rows[i];
    assert_true(r->nodes >= 1 && r->nodes <= 3 && r->gpus_per_node >= 1 && r->gpus_per_node <= 4);
    assert_int_equal(r->ranks, r->nodes * r->gpus_per_node);
    got[r->nodes][r->gpus_per_node]++;
    double bw = r->nodes > 1 ? 10e9 : 100e9;
    assert_close(r->time_us, 2 + 1048576 / bw * 1e6, CSV_REL);
  }
  for (int n = 1; n <= 3; n++)
    for (int g = 1; g <= 4; g++)
      assert_int_equal(got[n][g], want[n][g]);
  assert_int_equal(set.n, 8);
  cs_meas_set_fini(&set);

  /* --nodes and --gpus-per-node pick shapes; asking for more than the launch has is a usage error
   */
  snprintf(args, sizeof args,
           "--backend null --colls all_reduce --sizes 1M --nodes 2,3 --gpus-per-node 3 "
           "--overwrite -o %s",
           path);
  assert_int_equal(run_null("nodes=3,gpus=4", args, &err), CS_OK);
  read_rows(path, &set);
  assert_int_equal(set.n, 2);
  assert_int_equal(set.rows[0].ranks, 6);
  assert_int_equal(set.rows[1].ranks, 9);
  cs_meas_set_fini(&set);
  snprintf(args, sizeof args, "--backend null --sizes 1M --nodes 4 --overwrite -o %s", path);
  assert_int_equal(run_null("nodes=3,gpus=4", args, &err), CS_ERR_USAGE);
  assert_non_null(strstr(err.msg, "4 nodes asked for, the launch has 3"));
}

/* --check verifies an all_reduce over every simulated rank and prints the nodes. */
static void check_all_ranks(void **state) {
  (void)state;
  char path[512];
  cs_test_tmp("runner_check.txt", path, sizeof path);
  FILE *t = fopen(path, "w+");
  assert_non_null(t);
  setenv("CS_NULL_BACKEND", "nodes=2,gpus=3", 1);
  struct cs_run_opts o;
  cs_run_opts_init(&o);
  char *argv[] = {"commscale-run", "--backend", "null", "--check", NULL};
  int help = 0;
  struct cs_error err = {0};
  assert_int_equal(cs_run_opts_parse(4, argv, &o, &help, &err), CS_OK);
  o.table = t;
  assert_int_equal(cs_run(&o, &err), CS_OK);
  cs_run_opts_fini(&o);
  rewind(t);
  char text[4096];
  size_t n = fread(text, 1, sizeof text - 1, t);
  text[n] = '\0';
  fclose(t);
  assert_non_null(strstr(text, "6 ranks in 1 process on 2 nodes, thread launch"));
  assert_non_null(strstr(text, "all_reduce over all 6 ranks verified"));
}

/* --ranks-per-node is the long alias of --gpus-per-node: the same list is parsed. */
static void ranks_per_node_alias(void **state) {
  (void)state;
  const char *const names[] = {"--gpus-per-node", "--ranks-per-node"};
  for (size_t i = 0; i < 2; i++) {
    struct cs_run_opts o;
    cs_run_opts_init(&o);
    char *argv[] = {"commscale-run", (char *)names[i], "1,3", NULL};
    int help = 0;
    struct cs_error err = {0};
    assert_int_equal(cs_run_opts_parse(3, argv, &o, &help, &err), CS_OK);
    assert_int_equal(o.ngpn, 2);
    assert_int_equal(o.gpn[0], 1);
    assert_int_equal(o.gpn[1], 3);
    cs_run_opts_fini(&o);
  }
}

/* --probe-settle: 1 s by default, a time otherwise, 0 turns it off; a negative or unreadable value
 * is a usage error naming the option (a time needs its unit). */
static void probe_settle(void **state) {
  (void)state;
  struct cs_run_opts o;
  cs_run_opts_init(&o);
  assert_true(o.probe_settle_s == 1.0);
  cs_run_opts_fini(&o);
  const char *const good[] = {"250ms", "0s", "2s"};
  const double want[] = {0.25, 0.0, 2.0};
  for (size_t i = 0; i < 3; i++) {
    cs_run_opts_init(&o);
    char *argv[] = {"commscale-run", "--probe-settle", (char *)good[i], NULL};
    int help = 0;
    struct cs_error err = {0};
    assert_int_equal(cs_run_opts_parse(3, argv, &o, &help, &err), CS_OK);
    assert_true(fabs(o.probe_settle_s - want[i]) < 1e-12);
    cs_run_opts_fini(&o);
  }
  const char *const bad[] = {"-1s", "soon", "1000s", "1"};
  for (size_t i = 0; i < 4; i++) {
    cs_run_opts_init(&o);
    char *argv[] = {"commscale-run", "--probe-settle", (char *)bad[i], NULL};
    int help = 0;
    struct cs_error err = {0};
    assert_int_equal(cs_run_opts_parse(3, argv, &o, &help, &err), CS_ERR_USAGE);
    assert_non_null(strstr(err.msg, "--probe-settle"));
    cs_run_opts_fini(&o);
  }
}

/* Every option whose value does not read is a usage error (exit 2) naming the option, whichever
 * value parser refused it (times and counts once came back as parse errors, exit 1). */
static void bad_values_are_usage(void **state) {
  (void)state;
  static const char *const bad[][2] = {
      {"--trial-time", "abc"}, {"--trial-time", "-1s"}, {"--timeout", "abc"},
      {"--timeout", "0.5s"},   {"--nodes", "x"},        {"--gpus-per-node", "0"},
      {"--tol", "x"},          {"--trials", "0"},       {"--min-bytes", "zz"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct cs_run_opts o;
    cs_run_opts_init(&o);
    char *argv[] = {"commscale-run", (char *)bad[i][0], (char *)bad[i][1], NULL};
    int help = 0;
    struct cs_error err = {0};
    assert_int_equal(cs_run_opts_parse(3, argv, &o, &help, &err), CS_ERR_USAGE);
    assert_int_equal(err.status, CS_ERR_USAGE);
    if (strstr(err.msg, bad[i][0]) == NULL) fail_msg("%s %s: %s", bad[i][0], bad[i][1], err.msg);
    cs_run_opts_fini(&o);
  }
}

/* A wrong $CS_NULL_BACKEND is a usage error naming the item. */
static void bad_settings(void **state) {
  (void)state;
  static const char *const bad[] = {"nodes=0", "gpus=x", "color=2", "noise=1", "lat_us"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct cs_error err = {0};
    assert_int_equal(run_null(bad[i], "--backend null --sizes 1K", &err), CS_ERR_USAGE);
    assert_non_null(strstr(err.msg, "CS_NULL_BACKEND"));
    assert_non_null(strstr(err.msg, bad[i]));
  }
}

/* ---- through the executable: kill, resume, hang --------------------------------------------- */

/* Starts commscale-run with args (space-separated) and the null model; stdout and stderr go to
 * log. Returns its pid. */
static pid_t spawn_runner(const char *model, const char *args, const char *log) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", args);
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)CS_RUNNER_EXE;
    char *save = NULL;
    for (char *t = strtok_r(buf, " ", &save); t && argc < 63; t = strtok_r(NULL, " ", &save))
      argv[argc++] = t;
    argv[argc] = NULL;
    setenv("CS_NULL_BACKEND", model, 1);
    unsetenv("CS_RUN_FAIL_AFTER");
    if (freopen(log, "w", stdout) == NULL || dup2(fileno(stdout), 2) < 0) _exit(126);
    execv(CS_RUNNER_EXE, argv);
    _exit(127);
  }
  return pid;
}

/* Waits at most limit_s for pid and returns its wait status (-1 when it had to be killed). */
static int wait_runner(pid_t pid, double limit_s) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int status = 0;
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) return status;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if ((double)(t1.tv_sec - t0.tv_sec) > limit_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
  }
}

static int exec_runner(const char *model, const char *args, const char *log, double limit_s) {
  return wait_runner(spawn_runner(model, args, log), limit_s);
}

static size_t file_text(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  size_t n = fread(buf, 1, len - 1, f);
  buf[n] = '\0';
  fclose(f);
  return n;
}

static int same_ident(const struct cs_meas_row *a, const struct cs_meas_row *b) {
  return a->coll == b->coll && a->ranks == b->ranks && a->nodes == b->nodes &&
         a->gpus_per_node == b->gpus_per_node && a->bytes == b->bytes && a->algo == b->algo &&
         a->proto == b->proto;
}

/* A run killed (SIGKILL) after 7 points keeps 7 whole rows; without --resume or --overwrite the
 * file is not touched; --resume measures only what is missing, and the file ends with exactly the
 * points of an uninterrupted run, each once, the first 7 rows as they were. */
static void kill_then_resume(void **state) {
  (void)state;
  char full[512], part[512], log[512], args[900];
  cs_test_tmp("runner_full.csv", full, sizeof full);
  cs_test_tmp("runner_part.csv", part, sizeof part);
  cs_test_tmp("runner_exec.log", log, sizeof log);
  unlink(part);
  const char *common = "--backend null --colls all_reduce,all_gather --sizes 1K:64K -q";
  snprintf(args, sizeof args, "%s --overwrite -o %s", common, full);
  int st = exec_runner("nodes=2,gpus=2", args, log, 60);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);

  snprintf(args, sizeof args, "%s -o %s", common, part);
  st = exec_runner("nodes=2,gpus=2,die_after=7", args, log, 60);
  assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  struct cs_meas_set a, b, c;
  read_rows(part, &a);
  assert_int_equal(a.n, 7);
  static char before[1 << 16], after[1 << 16];
  size_t nb = file_text(part, before, sizeof before);
  assert_true(nb > 0 && before[nb - 1] == '\n'); /* every row whole */

  st = exec_runner("nodes=2,gpus=2", args, log, 60); /* neither --resume nor --overwrite */
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 2);
  file_text(part, after, sizeof after);
  assert_string_equal(after, before);

  snprintf(args, sizeof args, "%s --resume -o %s", common, part);
  st = exec_runner("nodes=2,gpus=2", args, log, 60);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  file_text(part, after, sizeof after);
  assert_memory_equal(after, before, nb);
  read_rows(full, &b);
  read_rows(part, &c);
  assert_int_equal(c.n, b.n);
  for (size_t i = 0; i < b.n; i++) {
    int found = 0;
    for (size_t j = 0; j < c.n; j++)
      found += same_ident(&b.rows[i], &c.rows[j]);
    assert_int_equal(found, 1);
  }
  cs_meas_set_fini(&a);
  cs_meas_set_fini(&b);
  cs_meas_set_fini(&c);
}

/* A step that never returns (a hung peer) is ended by the watchdog after --timeout: exit 1, a
 * message naming the step, and the rows finished before it in the file. */
static void hang_watchdog(void **state) {
  (void)state;
  char path[512], log[512], args[900];
  cs_test_tmp("runner_hang.csv", path, sizeof path);
  cs_test_tmp("runner_hang.log", log, sizeof log);
  snprintf(args, sizeof args,
           "--backend null --colls all_reduce --sizes 1K:64K -q --timeout 5s --overwrite -o %s",
           path);
  /* 5 s, not 1 s: the watchdog measures wall time, and on a loaded machine a descheduled process
   * may see a healthy point take over a second; the hang itself is certain (hang_after) */
  int st = exec_runner("nodes=1,gpus=4,hang_after=4", args, log, 60);
  assert_true(st != -1);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
  char text[8192];
  file_text(log, text, sizeof text);
  if (strstr(text, "no progress for 5 s while all_reduce") == NULL) {
    print_error("log: %s\n", text);
    fail();
  }
  struct cs_meas_set set;
  read_rows(path, &set);
  assert_int_equal(set.n, 4);
  cs_meas_set_fini(&set);
}

/* Two runs on one file: while a hung run holds it, a second one (--overwrite or --resume) is
 * refused with exit 1 and the path, and the rows of the first stay as they were. */
static void second_run_refused(void **state) {
  (void)state;
  char path[512], log[512], log2[512], args[900];
  cs_test_tmp("runner_lock.csv", path, sizeof path);
  cs_test_tmp("runner_lock.log", log, sizeof log);
  cs_test_tmp("runner_lock2.log", log2, sizeof log2);
  unlink(path);
  snprintf(args, sizeof args, "--backend null --colls all_reduce --sizes 1K:64K -q -o %s", path);
  pid_t first = spawn_runner("nodes=1,gpus=2,hang_after=3", args, log);
  /* wait until the first run has written its 3 rows and hangs, holding the lock */
  struct cs_meas_set set;
  for (int i = 0; i < 500; i++) {
    struct cs_error e = {0};
    cs_meas_set_init(&set);
    int ok = cs_meas_read_file(path, &set, &e) == CS_OK && set.n == 3;
    cs_meas_set_fini(&set);
    if (ok) break;
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
  }
  static char before[1 << 14], after[1 << 14];
  file_text(path, before, sizeof before);
  for (int mode = 0; mode < 2; mode++) {
    snprintf(args, sizeof args, "--backend null --colls all_reduce --sizes 1K:64K -q %s -o %s",
             mode ? "--resume" : "--overwrite", path);
    int st = exec_runner("nodes=1,gpus=2", args, log2, 60);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    char text[4096];
    file_text(log2, text, sizeof text);
    assert_non_null(strstr(text, "another run is writing it"));
    file_text(path, after, sizeof after);
    assert_string_equal(after, before);
  }
  read_rows(path, &set);
  assert_int_equal(set.n, 3);
  cs_meas_set_fini(&set);
  kill(first, SIGKILL); /* the hung run (its watchdog would end it after 60 s) */
  assert_int_equal(wait_runner(first, 60), SIGKILL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(model_time_min_trials),  cmocka_unit_test(trials_until_stable),
      cmocka_unit_test(shapes_from_one_launch), cmocka_unit_test(check_all_ranks),
      cmocka_unit_test(bad_settings),           cmocka_unit_test(ranks_per_node_alias),
      cmocka_unit_test(probe_settle),           cmocka_unit_test(bad_values_are_usage),
      cmocka_unit_test(kill_then_resume),       cmocka_unit_test(hang_watchdog),
      cmocka_unit_test(second_run_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
