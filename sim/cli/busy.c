/* busy.c — see busy.h. */
#include "busy.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void draw(void *ctx, const char *what, int done, int total) {
  struct cli_progress *p = ctx;
  if (!p->on) return;
  fprintf(stderr, "\r\033[K%s: %d/%d %s (%.0f s)", p->verb, done, total, what, now() - p->t0);
  fflush(stderr);
}

void cli_progress_init(struct cli_progress *p, const char *verb, int quiet,
                       struct cs_progress *out) {
  p->verb = verb;
  p->on = !quiet && isatty(2);
  p->t0 = now();
  out->fn = draw;
  out->ctx = p;
}

void cli_progress_end(struct cli_progress *p) {
  if (p->on) fputs("\r\033[K", stderr);
  p->on = 0;
}
