#!/usr/bin/env python3
"""predict_step.py: predicts one training step through libcommscale with ctypes (standard
library only). The structures below mirror commscale.h; keep them in step with it.

    python3 predict_step.py [--lib PATH/libcommscale.so] WORKLOAD GPU TOPOLOGY PLAN NODES [CAL]

Prints the same "key value" lines as predict_step.c.
"""
import ctypes
import ctypes.util
import sys


class StepQuery(ctypes.Structure):
    _fields_ = [("workload", ctypes.c_char_p), ("gpu", ctypes.c_char_p),
                ("topology", ctypes.c_char_p), ("plan", ctypes.c_char_p),
                ("framework", ctypes.c_char_p), ("nodes", ctypes.c_long),
                ("gpus", ctypes.c_long), ("interference", ctypes.c_double),
                ("measured", ctypes.c_double)]


class Step(ctypes.Structure):
    _fields_ = [("step", ctypes.c_double), ("step_lo", ctypes.c_double),
                ("step_hi", ctypes.c_double), ("samples_per_s", ctypes.c_double),
                ("tokens_per_s", ctypes.c_double), ("tflops_per_gpu", ctypes.c_double),
                ("hw_tflops_per_gpu", ctypes.c_double), ("mfu", ctypes.c_double),
                ("speedup", ctypes.c_double), ("efficiency", ctypes.c_double),
                ("memory", ctypes.c_double), ("fits", ctypes.c_int),
                ("gpus", ctypes.c_long), ("nodes", ctypes.c_long),
                ("microbatches", ctypes.c_long), ("plan", ctypes.c_char * 256)]


def load(path):
    lib = ctypes.CDLL(path or ctypes.util.find_library("commscale") or "libcommscale.so.0")
    lib.commscale_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                                   ctypes.c_char_p, ctypes.c_size_t]
    lib.commscale_close.argtypes = [ctypes.c_void_p]
    lib.commscale_close.restype = None
    lib.commscale_predict_step.argtypes = [ctypes.c_void_p, ctypes.POINTER(StepQuery),
                                           ctypes.POINTER(Step), ctypes.c_char_p, ctypes.c_size_t]
    lib.commscale_status_name.restype = ctypes.c_char_p
    return lib


def main(argv):
    path = None
    if len(argv) > 1 and argv[0] == "--lib":
        path, argv = argv[1], argv[2:]
    if len(argv) not in (5, 6):
        sys.stderr.write(__doc__)
        return 2
    lib = load(path)
    err = ctypes.create_string_buffer(1024)
    handle = ctypes.c_void_p()
    cal = argv[5].encode() if len(argv) == 6 else None
    if lib.commscale_open(cal, ctypes.byref(handle), err, len(err)) != 0:
        sys.stderr.write("predict_step.py: %s\n" % err.value.decode())
        return 1
    q = StepQuery(workload=argv[0].encode(), gpu=argv[1].encode(), topology=argv[2].encode(),
                  plan=argv[3].encode(), nodes=int(argv[4]))
    r = Step()
    st = lib.commscale_predict_step(handle, ctypes.byref(q), ctypes.byref(r), err, len(err))
    lib.commscale_close(handle)
    if st != 0:
        sys.stderr.write("predict_step.py: %s: %s\n"
                         % (lib.commscale_status_name(st).decode(), err.value.decode()))
        return 1
    g = "%.6g"
    print("plan", r.plan.decode())
    print("gpus", r.gpus)
    for key, value in (("step_s", r.step), ("step_lo_s", r.step_lo), ("step_hi_s", r.step_hi),
                       ("samples_per_s", r.samples_per_s),
                       ("tflops_per_gpu", r.tflops_per_gpu), ("mfu", r.mfu)):
        print(key, g % value)
    print("memory_GiB %.4g (%s)" % (r.memory / 1073741824.0,
                                    "fits" if r.fits else "does not fit"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
