/* stats.h — the median the tools without GSL share (the measurement runner builds on GPU nodes
 * with nothing but libc, CUDA, NCCL and MPI). Code that links GSL uses gsl_stats_median*.
 */
#ifndef CS_STATS_H
#define CS_STATS_H

#include <stddef.h>

/* Sorts v[0..n) ascending in place and returns its median: the middle value for odd n, the mean
 * of the two middle values for even n; NAN for n == 0. After the call v[0] is the minimum and
 * v[n - 1] the maximum. NaNs in v sort to no defined place: callers pass finite values. */
double cs_stats_median(double *v, size_t n);

/* The robust scale of deviations whose absolute values are a[0..n): 1.4826 x their median, the
 * median absolute deviation scaled to estimate a normal distribution's standard deviation
 * (1 / 0.6745, the normal's third quartile). a is sorted as cs_stats_median sorts it; NAN for
 * n == 0. */
double cs_stats_robust_scale(double *a, size_t n);

#endif
