/* predict_step.c — predicts one training step through the public C API (commscale.h).
 *
 *   cc predict_step.c $(pkg-config --cflags --libs commscale) -o predict_step
 *   ./predict_step gpt3-175b h100-sxm dgx-h100 "tp=8,pp=8,zero=1,mbs=1,gbs=3200" 16 [cal.yaml]
 *
 * Prints one "key value" line per result; step_s is the step time `commscale predict` prints
 * for the same inputs. Exit status 0, 2 for bad usage, 1 when the prediction fails.
 */
#include <commscale.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc < 6 || argc > 7) {
    fprintf(stderr, "usage: %s WORKLOAD GPU TOPOLOGY PLAN NODES [CALIBRATION.yaml]\n", argv[0]);
    return 2;
  }
  char err[1024];
  commscale *h = NULL;
  if (commscale_open(argc == 7 ? argv[6] : NULL, &h, err, sizeof err) != COMMSCALE_OK) {
    fprintf(stderr, "predict_step: %s\n", err);
    return 1;
  }
  commscale_step_query q = {0};
  q.workload = argv[1];
  q.gpu = argv[2];
  q.topology = argv[3];
  q.plan = argv[4];
  q.nodes = atol(argv[5]);
  commscale_step r;
  commscale_status st = commscale_predict_step(h, &q, &r, err, sizeof err);
  commscale_close(h);
  if (st != COMMSCALE_OK) {
    fprintf(stderr, "predict_step: %s: %s\n", commscale_status_name(st), err);
    return 1;
  }
  printf("plan %s\n", r.plan);
  printf("gpus %ld\n", r.gpus);
  printf("step_s %.6g\n", r.step);
  printf("step_lo_s %.6g\n", r.step_lo);
  printf("step_hi_s %.6g\n", r.step_hi);
  printf("samples_per_s %.6g\n", r.samples_per_s);
  printf("tflops_per_gpu %.6g\n", r.tflops_per_gpu);
  printf("mfu %.6g\n", r.mfu);
  printf("memory_GiB %.4g (%s)\n", r.memory / 1073741824.0, r.fits ? "fits" : "does not fit");
  return 0;
}
