#!/usr/bin/env python3
"""check_api.py LIB COMMSCALE CAL EXAMPLES_DIR: the public API against the command line.

- commscale_predict_collective gives `commscale coll`'s time, band and algorithm (CSV) for the
  same collective, size, shape and topology;
- commscale_search gives `commscale search`'s best plans and step times (CSV), in order;
- the error contract: statuses, messages, a NULL handle, an unknown name (the message lists the
  installed data folder), a bad plan, an unknown framework, a missing calibration;
- a framework profile gives `commscale predict`'s step for the plan with framework=NAME.
Standard library only. Exit status 0 when every check passes.
"""
import csv
import ctypes
import io
import subprocess
import sys

LIB, CS, CAL, EXAMPLES = sys.argv[1:5]
sys.path.insert(0, EXAMPLES)
import predict_step  # noqa: E402  (the example's mirrors of the structs)


class Coll(ctypes.Structure):
    _fields_ = [("time", ctypes.c_double), ("time_lo", ctypes.c_double),
                ("time_hi", ctypes.c_double), ("latency", ctypes.c_double),
                ("algbw", ctypes.c_double), ("busbw", ctypes.c_double),
                ("ranks", ctypes.c_int), ("nodes", ctypes.c_int),
                ("gpus_per_node", ctypes.c_int), ("algorithm", ctypes.c_char * 16),
                ("protocol", ctypes.c_char * 16)]


lib = predict_step.load(LIB)
lib.commscale_libversion.restype = ctypes.c_char_p
lib.commscale_predict_collective.argtypes = [
    ctypes.c_void_p, ctypes.c_char_p, ctypes.c_double, ctypes.c_int, ctypes.c_int, ctypes.c_int,
    ctypes.c_char_p, ctypes.POINTER(Coll), ctypes.c_char_p, ctypes.c_size_t]
lib.commscale_search.argtypes = [
    ctypes.c_void_p, ctypes.POINTER(predict_step.StepQuery), ctypes.c_int,
    ctypes.POINTER(predict_step.Step), ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t),
    ctypes.c_char_p, ctypes.c_size_t]

fails = 0


def check(ok, what):
    global fails
    print(("ok: " if ok else "FAIL: ") + what)
    fails += 0 if ok else 1


def close(a, text):  # the CLI prints %.6g: the API's value printed so is the same text
    return "%.6g" % a == text


def cli_csv(*args):
    out = subprocess.run([CS, *args, "--format", "csv"], check=True, capture_output=True,
                         text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


err = ctypes.create_string_buffer(1024)
h = ctypes.c_void_p()
check(lib.commscale_open(CAL.encode(), ctypes.byref(h), err, len(err)) == 0 and h.value,
      "commscale_open(%s)" % CAL)
check(lib.commscale_libversion().decode().count(".") == 2, "commscale_libversion")

for coll, nodes, size, topo in (("all_reduce", 1, 8 << 20, None),
                                ("all_gather", 4, 1 << 20, "dgx-h100"),
                                ("reduce_scatter", 16, 1 << 30, "dgx-h100"),
                                ("all_reduce", 400, 1 << 30, "dgx-h100")):
    r = Coll()
    st = lib.commscale_predict_collective(h, coll.encode(), float(size), 0, nodes, 0,
                                          topo.encode() if topo else None, ctypes.byref(r), err,
                                          len(err))
    args = ["coll", "--cal", CAL, "--coll", coll, "--nodes", str(nodes), "--sizes", str(size)]
    if topo:
        args += ["-t", topo]
    row = cli_csv(*args)[0]
    same = (st == 0 and close(r.time * 1e6, row["time_us"]) and
            close(r.time_lo * 1e6, row["time_lo_us"]) and
            close(r.time_hi * 1e6, row["time_hi_us"]) and
            r.algorithm.decode() == row["algorithm"] and r.protocol.decode() == row["protocol"] and
            r.ranks == int(row["ranks"]))
    check(same, "%s %d nodes %d B %s: API %.6g us [%.6g, %.6g] %s/%s, coll %s us [%s, %s] %s/%s"
          % (coll, nodes, size, topo, r.time * 1e6, r.time_lo * 1e6, r.time_hi * 1e6,
             r.algorithm.decode(), r.protocol.decode(), row["time_us"], row["time_lo_us"],
             row["time_hi_us"], row["algorithm"], row["protocol"]))

q = predict_step.StepQuery(workload=b"gpt3-13b", gpu=b"h100-sxm", topology=b"dgx-h100", nodes=2)
top = (predict_step.Step * 3)()
found = ctypes.c_size_t()
st = lib.commscale_search(h, ctypes.byref(q), 64, top, 3, ctypes.byref(found), err, len(err))
rows = cli_csv("search", "-w", "gpt3-13b", "--gpu", "h100-sxm", "-t", "dgx-h100", "--cal", CAL,
               "--nodes", "2", "--gbs", "64")
check(st == 0 and found.value >= 3, "commscale_search: %d feasible plans (%s)" % (
    found.value, err.value.decode()))
for i in range(3):
    ok = (top[i].plan.decode() == rows[i]["plan"] and
          close(top[i].step, rows[i]["step_s"]))
    check(ok, "search rank %d: API %s %.6g s, CLI %s %s s" % (
        i + 1, top[i].plan.decode(), top[i].step, rows[i]["plan"], rows[i]["step_s"]))

# a framework profile, as the plan's framework=NAME of commscale predict
for fw, plan, nodes in ((b"megatron-core", b"tp=8,mbs=1,gbs=64", 2),
                        (b"deepspeed-zero3", b"zero=3,mbs=1,gbs=64", 2)):
    q = predict_step.StepQuery(workload=b"gpt3-13b", gpu=b"h100-sxm", topology=b"dgx-h100",
                               plan=plan, framework=fw, nodes=nodes)
    r = predict_step.Step()
    st = lib.commscale_predict_step(h, ctypes.byref(q), ctypes.byref(r), err, len(err))
    row = cli_csv("predict", "-w", "gpt3-13b", "--gpu", "h100-sxm", "-t", "dgx-h100", "--cal", CAL,
                  "--plan", (plan + b",framework=" + fw).decode(), "--nodes", str(nodes))[0]
    check(st == 0 and close(r.step, row["step_s"]) and r.plan.decode() == row["plan"],
          "framework %s: API %s %.6g s, predict %s %s s (%s)" % (
              fw.decode(), r.plan.decode(), r.step, row["plan"], row["step_s"],
              err.value.decode()))

# the error contract
r = predict_step.Step()
q = predict_step.StepQuery(workload=b"gpt3-13b", gpu=b"h100-sxm", topology=b"dgx-h100", nodes=2)
check(lib.commscale_predict_step(None, ctypes.byref(q), ctypes.byref(r), err, len(err)) == 9,
      "NULL handle: COMMSCALE_MISUSE (%s)" % err.value.decode())
q.workload = b"no-such-workload"
st = lib.commscale_predict_step(h, ctypes.byref(q), ctypes.byref(r), err, len(err))
check(st == 3 and b"share/commscale/workloads" in err.value,
      "unknown workload: COMMSCALE_IO naming the installed folder (%s)" % err.value.decode())
q.workload, q.plan = b"gpt3-13b", b"tp=x"
st = lib.commscale_predict_step(h, ctypes.byref(q), ctypes.byref(r), err, len(err))
check(st == 1 and err.value.startswith(b"plan"), "bad plan: COMMSCALE_USAGE (%s)"
      % err.value.decode())
q.plan, q.framework = b"tp=8", b"no-such-framework"
st = lib.commscale_predict_step(h, ctypes.byref(q), ctypes.byref(r), err, len(err))
check(st == 3 and b"share/commscale/frameworks" in err.value,
      "unknown framework: COMMSCALE_IO naming the installed folder (%s)" % err.value.decode())
q.framework, q.plan = None, b"tp=3"
st = lib.commscale_predict_step(h, ctypes.byref(q), ctypes.byref(r), err, len(err))
check(st == 1, "16 GPUs and tp=3: COMMSCALE_USAGE (%s)" % err.value.decode())
st = lib.commscale_search(h, ctypes.byref(q), 0, None, 0, None, err, len(err))
check(st == 1, "search with gbs 0: COMMSCALE_USAGE (%s)" % err.value.decode())
st = lib.commscale_search(h, ctypes.byref(q), 64, None, 0, None, err, len(err))
check(st == 1 and b"tp" in err.value, "search with tp in the plan: COMMSCALE_USAGE (%s)"
      % err.value.decode())
h2 = ctypes.c_void_p(1)
st = lib.commscale_open(b"/nonexistent/cal.yaml", ctypes.byref(h2), err, len(err))
check(st == 3 and not h2.value and b"/nonexistent/cal.yaml" in err.value,
      "missing calibration: COMMSCALE_IO, no handle (%s)" % err.value.decode())
lib.commscale_close(h)
lib.commscale_close(None)
sys.exit(1 if fails else 0)
