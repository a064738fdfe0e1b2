/* progress.h — how a long-running driver tells its caller how far it is. The library never
 * prints: the caller decides whether and where to show it (the verbs draw one line on stderr,
 * only when stderr is a terminal and --quiet is not given; cli/progress.c). */
#ifndef CS_SIM_PROGRESS_H
#define CS_SIM_PROGRESS_H

/* done of total units of the work called what ("family fsdp", "point 12"); done == total last. */
typedef void (*cs_progress_fn)(void *ctx, const char *what, int done, int total);

struct cs_progress {
  cs_progress_fn fn; /* NULL: nobody listens */
  void *ctx;
};

static inline void cs_progress_report(const struct cs_progress *p, const char *what, int done,
                                      int total) {
  if (p && p->fn) p->fn(p->ctx, what, done, total);
}

#endif
