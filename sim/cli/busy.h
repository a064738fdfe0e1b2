/* busy.h — the verbs' progress line: one line on stderr, redrawn in place, only when stderr is
 * a terminal and --quiet was not given; erased when the work ends. */
#ifndef CS_CLI_BUSY_H
#define CS_CLI_BUSY_H

#include "progress.h"

struct cli_progress {
  const char *verb;
  int on;
  double t0;
};

/* Sets p up for verb; on only when stderr is a terminal and quiet is 0. *out listens to it. */
void cli_progress_init(struct cli_progress *p, const char *verb, int quiet,
                       struct cs_progress *out);
/* Erases the line (when drawn). */
void cli_progress_end(struct cli_progress *p);

#endif
