#!/usr/bin/env python3
"""A randomized benchmark over each operator's whole valid parameter space (issue 23): no shape slower than PyTorch.

For each operator and dtype, cases are drawn with --seed from every valid parameter (bench/sweep_cases.py):
ranks, sizes (odd, prime, tiny, large, one-sized axes); max-pool windows 1-7, strides 1-4, dilations 1-3,
asymmetric padding, ceil mode, 2-D and 3-D; slices with steps -4..4 on any axis, offsets, every dtype; resample
nearest and linear at integer and fractional scales up and down, every offset convention (and --torch-mode), 1-4
resampled axes; relu and clip on odd lengths. A draw that breaks a validation rule is drawn again, never run.

Each case is measured as bench/gpu_bench.py measures a row (its helpers, imported): dmlgrad's kernel median
(`--repeat N --json`), PyTorch's median for the same op (max-pool: forward with indices + backward; fp16: the fp16
op is timed, its float32 gradient of the same data is the reference where PyTorch adds in half), the bound (the
fewest bytes at the copy ceiling measured at the start) and the result, checked against PyTorch where PyTorch
computes the same thing, otherwise against the CPU reference (`dmlgrad --cpu --compare`). The kernel is the
report's "kernel" field, else the pipelines `-v` logs. Cases run round-robin over the classes until --seconds is
spent (or --cases per class are done), so a short run still covers every class.

PyTorch runs in a worker process (bench/sweep_torch.py: started once, it redraws each case from the seed and reads
the inputs dmlgrad read). One PyTorch call may take --torch-timeout seconds (default 10; some take minutes and a
CUDA kernel cannot be cut short; the calls of the 0.3 s warm-up get that plus 0.3 s together): past that the
worker is killed, which frees the GPU, the case is marked "timed out" (JSON: torch_timeout_s) and has no PyTorch
time, the CPU reference checks it, and a fresh worker takes the next case. The summary counts such a case among the
cases timed (dmlgrad's time, % of bound) but not among those with a PyTorch time (the slower share, the speed-ups),
and says how many timed out. A case the device declines and says so ("run it with --cpu": lavapipe's limit on a
thread's loops) is counted as declined, not as failed.

Prints a table and a summary: the share of cases slower than PyTorch, the % of bound (median, 10th percentile),
the max-pool and linear-resample median speed-ups, the worst 10 cases with their kernels, and each target of issue
23 item 2, met or not. --json-out writes all of it (after every case, so a run cut short keeps its rows).

    python3 bench/sweep.py --dmlgrad build/dmlgrad --seed 1234 [--seconds 300] [--json-out sweep.json]
    python3 bench/sweep.py --dmlgrad build/dmlgrad --seed 1234 --total 180   # a run's first 180 cases again
    python3 bench/sweep.py --dmlgrad build/dmlgrad --seed 1234 --pick 37,42     # only a run's cases 37 and 42
    python3 bench/sweep.py --seed 1 --cases 2 --only maxpool,slice --dtypes float16 --list   # the draws, not run
    python3 bench/sweep.py --smoke --device cpu --seed 1 --cases 1           # tiny shapes: checks the script
    python3 bench/sweep.py --smoke --no-torch --seed 1 --cases 1             # without PyTorch: CPU checks only
    DMLGRAD_SWEEP_SLOW_TORCH_S=60 python3 bench/sweep.py --smoke --device cpu --seed 1 --total 2 --torch-timeout 1
                                                                  # PyTorch calls slow on purpose: the timeouts
"""
import argparse
import itertools
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import gpu_bench as gb
import sweep_cases as sc
import sweep_torch as st

torch = gb.torch
GIB = 1 << 30
MEMORY_BOUND_MEDIAN, MEMORY_BOUND_P10, SPEED_UP_MEDIAN = 80, 50, 2.0  # issue 23 item 2
# A PyTorch time this much above dmlgrad's is past the spread of medians between runs of one case on the H100.
CLEARLY = 0.03
REPEAT_TAPS, MIN_REPEAT = 10 ** 10, 5
# The most seconds one PyTorch call may take (docs/PERFORMANCE.md, "How to run the randomized sweep": the slow calls)
TORCH_TIMEOUT_S = 10


def repeat_for(case, repeat):
    """--repeat, or fewer (at least MIN_REPEAT) for a case of more than REPEAT_TAPS taps (3-D 7x7x7 windows on
    1 GiB: 9e10), so that a slow kernel on one such case cannot eat the time budget."""
    if case.taps <= REPEAT_TAPS:
        return repeat
    return max(MIN_REPEAT, int(repeat * REPEAT_TAPS / case.taps))


# Running one case -----------------------------------------------------------------------------------------------

def make_inputs(inputs, d, device, rng):
    """Random inputs (made on the device when there is PyTorch), saved as .npy for dmlgrad and PyTorch's worker:
    {"{name}": path}."""
    paths = {}
    for name, (shape, dtype) in inputs.items():
        paths["{" + name + "}"] = path = os.path.join(d, name + ".npy")
        array = (gb.random_array(shape, dtype, rng) if torch is None else
                 st.random_tensor(shape, dtype, device).cpu().numpy().view(dtype))
        np.save(path, array)
    return paths


def dmlgrad(binary, args, extra=()):
    return subprocess.run([binary, *args, *extra], capture_output=True, text=True)


def kernel_name(report, log):
    """The kernel dmlgrad chose: the report's "kernel" field, else the pipelines that -v says it created."""
    for key in ("kernel", "kernels"):
        if report.get(key):
            value = report[key]
            return value if isinstance(value, str) else "+".join(map(str, value))
    if report.get("backend") == "cpu":
        return "cpu"
    made = re.findall(r"vulkan: pipeline (\S+) created", log)
    return "+".join(dict.fromkeys(made)) or "?"


def check_with_cpu(case, paths, d, args):
    """dmlgrad --cpu on the same inputs, compared with dmlgrad's result by --compare (bits for relu, clip and slice;
    the summing operators' tolerance for the others): (same, how)."""
    ref = [paths.get(a, a) for a in case.args]
    ref[ref.index(paths["{dx}"])] = os.path.join(d, "reference.npy")
    proc = dmlgrad(args.dmlgrad, ref, ["--cpu", "--compare", paths["{dx}"], "-q"])
    if proc.returncode not in (0, 3):
        raise RuntimeError(f"dmlgrad --cpu failed ({proc.returncode}): {proc.stderr.strip()}")
    if proc.returncode == 3:
        print(f"  CPU reference differs: {proc.stderr.strip()[:400]}", flush=True)
    return proc.returncode == 0, "CPU reference"


def torch_side(number, case, paths, repeat, worker, row):
    """PyTorch's median in ms (None without it) and whether dmlgrad's result matches PyTorch's (None where PyTorch
    does not compute the same thing, timed out or failed), measured by the worker process (bench/sweep_torch.py);
    a call timed alone, a timeout or PyTorch's failure noted in the row."""
    if worker is None or case.torch_fn is None:
        return None, None
    try:
        result = worker.measure(number, case, paths, repeat)
    except st.TimedOut as e:  # no PyTorch time; the CPU reference checks the result
        row["torch_timeout_s"] = worker.timeout
        print(f"  PyTorch reference timed out after {worker.timeout:g} s (one call): its worker was stopped (in "
              f"{e.args[0]:.2f} s), a fresh one takes the next case", flush=True)
        return None, None
    except RuntimeError as e:  # the worker died
        result = {"torch_ms": None, "one_call": False, "same": None, "torch_error": str(e)}
    if result["one_call"]:
        row["torch_one_call"] = True  # timed once; the CPU reference checks the result (not another slow call)
    if result["torch_error"]:  # a PyTorch build without this op or too little memory: the case still counts
        row["torch_error"] = result["torch_error"]
        print(f"  PyTorch failed: {row['torch_error']}", flush=True)
    return result["torch_ms"], result["same"]


def run_case(number, case, d, args, ceiling, fixed_us, rng, worker):
    """The case's row; with "refused" when dmlgrad refused it (exit 2: the draw broke a rule after all), with
    "declined" when the device declined it and said so (exit 1, "run it with --cpu": lavapipe's loop limit, say; no
    wrong result, as bench/backend_check.py counts it), with "error" when it failed."""
    paths = make_inputs(case.inputs, d, args.device, rng)
    paths["{dx}"] = os.path.join(d, "dx.npy")
    dml_args = [paths.get(a, a) for a in case.args]
    repeat = repeat_for(case, args.repeat)
    proc = dmlgrad(args.dmlgrad, dml_args, ["--repeat", str(repeat), "--json", "-v", *args.dmlgrad_arg])
    row = {"class": case.cls, "dtype": case.dtype, "shapes": case.shapes(), "params": case.params,
           "command": "dmlgrad " + shlex.join(case.args), "torch_op": case.torch_name, "repeat": repeat}
    if proc.returncode == 2:
        return {**row, "refused": proc.stderr.strip()}
    if proc.returncode == 1 and "run it with --cpu" in proc.stderr:
        return {**row, "declined": proc.stderr.strip().splitlines()[-1]}  # the message, after -v's log
    if proc.returncode != 0:
        return {**row, "error": f"exit {proc.returncode}: {proc.stderr.strip()[-400:]}"}
    report = json.loads(proc.stdout)
    ours_ms, min_bytes = report["kernel_ms"]["median"], report["bytes"]
    theirs_ms, same = torch_side(number, case, paths, repeat, worker, row)
    against = "PyTorch"
    if not same:  # PyTorch's CUDA kernels have their own rare quirks (docs/OPERATORS.md 5.7): the CPU decides
        cpu_same, _ = check_with_cpu(case, paths, d, args)
        against = "CPU reference" if same is None else "CPU reference (PyTorch differs)"
        same = cpu_same
    bound_us = min_bytes / (ceiling * 1e3) if ceiling else None
    row.update({"kernel": kernel_name(report, proc.stderr), "dmlgrad_us": ours_ms * 1e3, "bytes": min_bytes,
                "torch_us": theirs_ms * 1e3 if theirs_ms else None,
                "speed_up": theirs_ms / ours_ms if theirs_ms else None, "bound_us": bound_us,
                "percent_of_bound": 100 * bound_us / (ours_ms * 1e3) if bound_us else None,
                "percent_of_bound_with_fixed": 100 * (bound_us + fixed_us) / (ours_ms * 1e3) if bound_us else None,
                "memory_bound": case.memory_bound, "checked_against": against, "same_result": same})
    return row


# Summary --------------------------------------------------------------------------------------------------------

def percentile(values, q):
    return float(np.percentile(values, q)) if values else None


def score(row):
    """How far a row is from its targets: the smallest of (speed-up / 1) and, memory-bound, (% of the bound with a
    dispatch's fixed cost / 80) or, otherwise, (speed-up / 2). Below 1 misses one. The fixed cost keeps tiny cases,
    whose time is the dispatch, from filling the list."""
    parts = []
    if row.get("speed_up") is not None:
        parts.append(row["speed_up"])
        if not row["memory_bound"]:
            parts.append(row["speed_up"] / SPEED_UP_MEDIAN)
    if row["memory_bound"] and row.get("percent_of_bound_with_fixed") is not None:
        parts.append(row["percent_of_bound_with_fixed"] / MEMORY_BOUND_MEDIAN)
    return min(parts) if parts else float("inf")


def summarize(rows):
    timed = [r for r in rows if "dmlgrad_us" in r]
    with_torch = [r for r in timed if r["speed_up"] is not None]
    slower = [r for r in with_torch if r["speed_up"] < 1]
    clearly_slower = [r for r in slower if r["speed_up"] < 1 - CLEARLY]
    memory = [r["percent_of_bound"] for r in timed if r["memory_bound"] and r["percent_of_bound"] is not None]
    every = [r["percent_of_bound"] for r in timed if r["percent_of_bound"] is not None]
    memory_fixed = [r["percent_of_bound_with_fixed"] for r in timed
                    if r["memory_bound"] and r["percent_of_bound_with_fixed"] is not None]
    speed_ups = lambda cls: [r["speed_up"] for r in with_torch if r["class"] == cls]
    median = lambda v: statistics.median(v) if v else None
    s = {"cases": len(timed), "with_pytorch": len(with_torch), "slower_than_pytorch": len(slower),
         "share_slower": len(slower) / len(with_torch) if with_torch else None,
         "clearly_slower_than_pytorch": len(clearly_slower),
         "slower": sorted((rows.index(r) for r in slower), key=lambda i: rows[i]["speed_up"]),
         "differ": sum(not r["same_result"] for r in timed),
         "differ_from_pytorch_only": sum(r["same_result"] and r["checked_against"].endswith("(PyTorch differs)")
                                         for r in timed),
         "refused": sum("refused" in r for r in rows), "declined": sum("declined" in r for r in rows),
         "errors": sum("error" in r for r in rows),
         "torch_timed_out": sum("torch_timeout_s" in r for r in timed),
         "percent_of_bound": {"median": median(every), "p10": percentile(every, 10)},
         "memory_bound_percent_of_bound": {"median": median(memory), "p10": percentile(memory, 10)},
         "memory_bound_percent_of_bound_with_fixed": {"median": median(memory_fixed),
                                                      "p10": percentile(memory_fixed, 10)},
         "maxpool_median_speed_up": median(speed_ups("maxpool")),
         "linear_median_speed_up": median(speed_ups("resample-linear")),
         "per_class": {}}
    for cls in dict.fromkeys(r["class"] for r in timed):
        mine = [r for r in timed if r["class"] == cls]
        pct = [r["percent_of_bound"] for r in mine if r["percent_of_bound"] is not None]
        ups = [r["speed_up"] for r in mine if r["speed_up"] is not None]
        s["per_class"][cls] = {"cases": len(mine), "percent_of_bound_median": median(pct),
                               "percent_of_bound_p10": percentile(pct, 10), "speed_up_median": median(ups),
                               "speed_up_min": min(ups) if ups else None}
    met = lambda ok, value: None if value is None else bool(ok)
    at_least = lambda value, goal: met(value is not None and value >= goal, value)
    mb, mf = s["memory_bound_percent_of_bound"], s["memory_bound_percent_of_bound_with_fixed"]
    s["targets"] = {
        "no case slower than PyTorch": met(not slower, with_torch or None),
        f"memory-bound >= {MEMORY_BOUND_MEDIAN}% of bound at the median": at_least(mb["median"], MEMORY_BOUND_MEDIAN),
        f"memory-bound >= {MEMORY_BOUND_P10}% of bound at the 10th percentile": at_least(mb["p10"], MEMORY_BOUND_P10),
        # the small draws (15%, up to 1 MiB) cannot beat a dispatch's fixed cost: the same with it in the bound
        f"(the same, with the fixed cost of a dispatch added to the bound) >= {MEMORY_BOUND_MEDIAN}% at the median":
            at_least(mf["median"], MEMORY_BOUND_MEDIAN),
        f"(the same, with the fixed cost of a dispatch added to the bound) >= {MEMORY_BOUND_P10}% at the 10th "
        "percentile": at_least(mf["p10"], MEMORY_BOUND_P10),
        f"max-pool >= {SPEED_UP_MEDIAN:g}x PyTorch at the median": met(
            (s["maxpool_median_speed_up"] or 0) >= SPEED_UP_MEDIAN, s["maxpool_median_speed_up"]),
        f"linear resample >= {SPEED_UP_MEDIAN:g}x PyTorch at the median": met(
            (s["linear_median_speed_up"] or 0) >= SPEED_UP_MEDIAN, s["linear_median_speed_up"]),
    }
    s["worst"] = sorted(range(len(rows)), key=lambda i: score(rows[i]) if "dmlgrad_us" in rows[i] else float("inf"))
    s["worst"] = [i for i in s["worst"][:10] if "dmlgrad_us" in rows[i]]
    return s


def fmt(value, pattern, missing="-"):
    return missing if value is None else pattern.format(value)


TABLE_HEADER = ("| # | class | dtype | shapes | parameters | kernel | dmlgrad us | PyTorch us | PyTorch / dmlgrad | "
                "bound us | % of bound | checked against | same |\n" + "|---" * 13 + "|")


def torch_cell(r):
    return f"timed out ({r['torch_timeout_s']:g} s)" if "torch_timeout_s" in r else fmt(r["torch_us"], "{:.1f}")


UNTIMED = ("refused", "declined", "error")  # a row without a time carries one of these


def untimed_cell(r):
    """What a row without a time says instead: "refused: ...", "declined: ..." or "ERROR: ..."."""
    key = next(k for k in UNTIMED if k in r)
    return ("ERROR" if key == "error" else key) + ": " + r[key]


def table_line(r):
    if "dmlgrad_us" not in r:
        return f"| {r['case']} | {r['class']} | {r['dtype']} | {r['shapes']} | {r['params']} | " + \
            untimed_cell(r).replace("|", "/") + \
            " | | | | | | | |"
    return (f"| {r['case']} | {r['class']} | {r['dtype']} | {r['shapes']} | {r['params']} | {r['kernel']} | "
            f"{r['dmlgrad_us']:.1f} | {torch_cell(r)} | {fmt(r['speed_up'], '{:.2f}x')} | "
            f"{fmt(r['bound_us'], '{:.1f}')} | {fmt(r['percent_of_bound'], '{:.0f}%')} | {r['checked_against']} | "
            f"{'yes' if r['same_result'] else '**NO**'} |")


def print_summary(s, rows):
    pct, mb = s["percent_of_bound"], s["memory_bound_percent_of_bound"]
    mf = s["memory_bound_percent_of_bound_with_fixed"]
    timed_out = (f"; {s['torch_timed_out']} of the others timed out in PyTorch: not in the slower share or the "
                 "speed-ups" if s["torch_timed_out"] else "")
    print(f"\n{s['cases']} cases timed ({s['with_pytorch']} with a PyTorch time{timed_out}); {s['differ']} differ "
          f"from their reference ({s['differ_from_pytorch_only']} more differ from PyTorch but match the CPU "
          f"reference); {s['refused']} refused by dmlgrad; {s['declined']} declined by the device (its limit, "
          f"said: run it with --cpu); {s['errors']} failed")
    print(f"Slower than PyTorch: {s['slower_than_pytorch']} of {s['with_pytorch']} "
          f"({fmt(s['share_slower'], '{:.1%}')}); {s['clearly_slower_than_pytorch']} of them by more than "
          f"{CLEARLY:.0%}")
    print(f"% of bound, every case: median {fmt(pct['median'], '{:.0f}%')}, 10th percentile "
          f"{fmt(pct['p10'], '{:.0f}%')}; memory-bound cases (relu, clip, slice, nearest): median "
          f"{fmt(mb['median'], '{:.0f}%')}, 10th percentile {fmt(mb['p10'], '{:.0f}%')}; with the fixed cost of a "
          f"dispatch added to the bound: median {fmt(mf['median'], '{:.0f}%')}, 10th percentile "
          f"{fmt(mf['p10'], '{:.0f}%')}")
    print(f"Median speed-up over PyTorch: max-pool {fmt(s['maxpool_median_speed_up'], '{:.2f}x')}, linear resample "
          f"{fmt(s['linear_median_speed_up'], '{:.2f}x')}")
    print("\n| class | cases | % of bound median | % of bound p10 | speed-up median | speed-up min |\n"
          "|---|---|---|---|---|---|")
    for cls, c in s["per_class"].items():
        print(f"| {cls} | {c['cases']} | {fmt(c['percent_of_bound_median'], '{:.0f}%')} | "
              f"{fmt(c['percent_of_bound_p10'], '{:.0f}%')} | {fmt(c['speed_up_median'], '{:.2f}x')} | "
              f"{fmt(c['speed_up_min'], '{:.2f}x')} |")
    print("\nThe worst 10 (smallest of speed-up, speed-up / 2 for max-pool and linear, % of bound / 80 for the "
          "memory-bound):\n\n" + TABLE_HEADER)
    for i in s["worst"]:
        print(table_line(rows[i]))
    if s["slower"]:
        print("\nEvery case slower than PyTorch, slowest first:\n\n" + TABLE_HEADER)
        for i in s["slower"]:
            print(table_line(rows[i]))
    print("\nIssue 23 item 2 targets:")
    for target, ok in s["targets"].items():
        print(f"- {target}: {'-' if ok is None else 'met' if ok else '**not met**'}")


# The run --------------------------------------------------------------------------------------------------------

def wanted_classes(only, dtypes):
    only, dtypes = set(filter(None, only.split(","))), set(filter(None, dtypes.split(",")))
    return lambda cls, dtype: (not only or any(cls.startswith(o) for o in only)) and (not dtypes or dtype in dtypes)


def write_json(path, header, rows, summary=None):
    gb.write_json(path, {**header, **({"summary": summary} if summary else {})}, rows)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dmlgrad", default="build/dmlgrad")
    parser.add_argument("--seed", type=int, required=True, help="the draws' seed (a fresh one for a final run)")
    parser.add_argument("--seconds", type=float, default=300, help="stop starting cases after this (default 300)")
    parser.add_argument("--cases", type=int, help="cases per operator and dtype (then --seconds only if given too)")
    parser.add_argument("--total", type=int, help="the first N cases of the run order, whatever the time: repeats a "
                                                  "time-budgeted run's cases exactly (on another card, say)")
    parser.add_argument("--pick", default="", help="comma-separated case numbers of the run order (as the table "
                                                   "numbers them): only those, e.g. an earlier run's slow cases")
    parser.add_argument("--only", default="", help="comma-separated classes or prefixes: relu, clip, slice, maxpool, "
                                                   "resample-nearest, resample-linear (resample: both)")
    parser.add_argument("--dtypes", default="", help="comma-separated dtypes, e.g. float16,int8")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--max-gib", type=float, default=1.0, help="largest tensor of a case (default 1 GiB)")
    parser.add_argument("--scratch", default=tempfile.gettempdir())
    parser.add_argument("--json-out", help="the rows, summary, ceiling and seed as JSON")
    parser.add_argument("--list", action="store_true", help="print the drawn cases and their commands; run nothing")
    parser.add_argument("--smoke", action="store_true", help="tiny shapes (up to 64 KiB): checks the script")
    parser.add_argument("--device", default="cuda", help="PyTorch's device (cpu where there is no CUDA)")
    parser.add_argument("--no-torch", action="store_true", help="no PyTorch: no PyTorch times, no bound, results "
                                                                "checked against dmlgrad --cpu")
    parser.add_argument("--dmlgrad-arg", action="append", default=[],
                        help="extra dmlgrad argument, as --dmlgrad-arg=--cpu (with '=': the value begins with a dash)")
    parser.add_argument("--torch-timeout", type=float, default=TORCH_TIMEOUT_S,
                        help="the most seconds one PyTorch call may take: past it the case has no PyTorch time and "
                             f"the CPU reference checks it (default {TORCH_TIMEOUT_S:g})")
    args = parser.parse_args()
    args.pick = sorted({int(i) for i in args.pick.split(",") if i})
    if args.pick:
        args.total = args.pick[-1] + 1
    if (args.cases is not None or args.total is not None) and "--seconds" not in sys.argv:
        args.seconds = float("inf")
    return args


def main():
    args = parse_args()
    global torch
    if args.no_torch:
        torch = sc.torch = gb.torch = None
    elif torch is None:
        sys.exit("sweep.py: PyTorch is missing (python3 -c 'import torch' fails): install it, or run with --no-torch")
    max_bytes = 64 * 1024 if args.smoke else int(args.max_gib * GIB)
    wanted = wanted_classes(args.only, args.dtypes)
    cases = itertools.islice(sc.schedule(args.seed, wanted, max_bytes, args.cases), args.total)
    cases = ((i, case, refused) for i, (case, refused) in enumerate(cases) if not args.pick or i in args.pick)
    if args.list:
        if args.cases is None and args.total is None:
            sys.exit("sweep.py: --list needs --cases or --total (the draws go on as long as the time budget lasts)")
        for i, case, refused in cases:
            print(f"{i} [{case.cls} {case.dtype}] {case.shapes()} | {case.params} | PyTorch: {case.torch_name} | "
                  f"checked against {'PyTorch' if case.check else 'CPU reference'} ({refused} draws refused)\n"
                  f"    dmlgrad {' '.join(case.args)}")
        return
    if torch is not None and args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("sweep.py: PyTorch sees no CUDA device: run with --device cpu (PyTorch on the CPU) or --no-torch")
    worker = None if torch is None else st.Worker(  # started before anything is timed, and waited for
        (args.seed, {(c, dt) for c, dt, _, _ in sc.classes() if wanted(c, dt)}, max_bytes, args.cases), args.device,
        args.torch_timeout)
    rng = np.random.default_rng(args.seed)
    device = "none" if torch is None else torch.cuda.get_device_name() if args.device == "cuda" else args.device
    ceiling = gb.copy_ceiling_gbps(args.repeat, args.device) if torch is not None else None
    version = dmlgrad(args.dmlgrad, ["--version"]).stdout.strip()
    print(f"# sweep, seed {args.seed}: {device}, copy ceiling {fmt(ceiling, '{:.0f} GB/s')}, median of "
          f"{args.repeat}; {version}", flush=True)
    header = {"device": device, "ceiling_gbps": ceiling, "seed": args.seed, "repeat": args.repeat,
              "smoke": args.smoke, "dmlgrad_version": version, "max_bytes": max_bytes}
    rows, redrawn, started, last = [], 0, time.perf_counter(), 0.0
    with tempfile.TemporaryDirectory(dir=args.scratch) as d:
        fixed_us = gb.fixed_cost_us(args.dmlgrad, d, rng, args.repeat, args.dmlgrad_arg)
        header["fixed_cost_us"] = fixed_us
        for number, case, refused in cases:
            elapsed = time.perf_counter() - started
            if elapsed + last > args.seconds:
                break
            redrawn += refused
            try:
                row = run_case(number, case, d, args, ceiling, fixed_us, rng, worker)
            except Exception as e:  # one broken case must not end a run on a lent machine
                row = {"class": case.cls, "dtype": case.dtype, "shapes": case.shapes(), "params": case.params,
                       "command": "dmlgrad " + shlex.join(case.args), "error": f"{type(e).__name__}: {e}"[:400]}
            row["case"] = number
            rows.append(row)
            last = time.perf_counter() - started - elapsed
            header["redrawn"] = redrawn
            write_json(args.json_out, header, rows)
            print(f"  {number} {row['class']} {row['dtype']} {row['shapes']} {row['params']}: " + (
                f"{row['dmlgrad_us']:.1f} us vs {fmt(row['torch_us'], '{:.1f} us')} [{row['kernel']}] "
                f"{'ok' if row['same_result'] else 'RESULT DIFFERS'}" if "dmlgrad_us" in row else
                untimed_cell(row)) +
                f" ({time.perf_counter() - started:.0f} s)", flush=True)
            if torch is not None and args.device == "cuda":
                torch.cuda.empty_cache()
    if worker is not None:
        worker.stop()
    print("\n" + TABLE_HEADER)
    for r in rows:
        print(table_line(r))
    summary = summarize(rows)
    summary["redrawn"] = redrawn
    print_summary(summary, rows)
    print(f"\n{redrawn} draws broke a validation rule and were drawn again; fixed cost of one dispatch "
          f"{fixed_us:.2f} us. The same cases again (another card): --seed {args.seed} --total {len(rows)}"
          + "".join(f" --{k} {v}" for k, v in (("only", args.only), ("dtypes", args.dtypes)) if v)
          + (f" --cases {args.cases}" if args.cases is not None else "")
          + (" --smoke" if args.smoke else f" --max-gib {args.max_gib:g}" if args.max_gib != 1 else ""))
    write_json(args.json_out, header, rows, summary)
    if summary["differ"] or summary["refused"] or summary["errors"]:
        sys.exit(3)


if __name__ == "__main__":
    main()
