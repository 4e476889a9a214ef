#!/usr/bin/env python3
"""dmlgrad's GPU results against its CPU reference, bit for bit, on random and boundary cases of every operator
(bench/backend_check_cases.py's generators), on Vulkan and Direct3D 12 (vkd3d). A correctness check, not a benchmark:
each backend runs all the cases of a seed as one `dmlgrad batch` manifest (one device set-up; device buffers reused
from job to job, so a kernel that leaves an element unwritten shows an earlier job's bits), then every GPU output is
compared with the `--cpu` output as bits (slices also with numpy's `zeros; dx[window] = dy`), and every job's
status with the CPU's (a shape the CPU refuses, the GPU must refuse alike). Prints each case that differs, fails or
is refused differently, a summary line and the kernels each API chose (a GPU that declines a plan with "run it with
--cpu", e.g. lavapipe's loop budget, is counted there, not as wrong); exit 1 when any case is wrong.

    python3 bench/backend_check.py --dmlgrad build/dmlgrad --seed 7001 --cases 200
    python3 bench/backend_check.py --dmlgrad build/dmlgrad --seed 7002 --cases 60 --generators linear_planes,slice_big
    python3 bench/backend_check.py --dmlgrad build/dmlgrad --seed 7003 --cases 100 --apis vulkan-workers,d3d12-workers

Inputs are drawn from the seed (floats with ties, -0, NaN, infinities, subnormals; slices any bits). The folder of a
seed (--scratch) is removed when every case is right and kept otherwise, with its manifests, for a repro.
"""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys

import numpy as np

import backend_check_cases as cases

API_FLAGS = {"vulkan": [], "d3d12": ["--api", "d3d12"], "vulkan-workers": ["--device", "0,0,0"],
             "d3d12-workers": ["--api", "d3d12", "--device", "0,0"]}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dmlgrad", default="build/dmlgrad")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--generators", default=",".join(cases.RANDOM),
                        help=f"comma-separated, drawn in turn (default: the random ones); all: {', '.join(cases.ALL)}")
    parser.add_argument("--apis", default="vulkan,d3d12", help=f"comma-separated: {', '.join(API_FLAGS)}")
    parser.add_argument("--scratch", default="/tmp/dmlgrad_backend_check")
    return parser.parse_args()


def random_array(rng, shape, dtype, kind):
    """kind: "bits" (any bit pattern), "ties" (small integers), "extreme" (subnormals, values whose sums overflow,
    specials), "nonan" (normal values, -0), "random" (normal values, -0, NaN and infinities)."""
    dt, n = np.dtype(dtype), int(np.prod(shape))
    if kind == "bits":
        return rng.integers(0, 256, size=n * dt.itemsize, dtype=np.uint8).view(dt).reshape(shape)
    if dt.kind != "f":
        info = np.iinfo(dt)
        low, high = (max(info.min, -3), 4) if kind == "ties" else (info.min, int(info.max) + 1)
        a = rng.integers(low, high, size=n, dtype=np.int64 if kind == "ties" else dt).astype(dt)
    elif kind == "extreme":
        fi = np.finfo(dt)
        pools = [fi.tiny * rng.uniform(-1, 1, n), fi.tiny * rng.uniform(-4, 4, n), fi.max * rng.uniform(-0.7, 0.7, n),
                 rng.standard_normal(n), rng.standard_normal(n) * 1e-3, np.full(n, -0.0)]
        a = np.choose(rng.integers(0, len(pools), n), pools).astype(dt)
        with_specials(a, rng, 0.003)
    else:
        a = (rng.integers(-3, 4, size=n) if kind == "ties" else rng.standard_normal(n)).astype(dt)
        a[rng.random(n) < 0.01] = -0.0
        if kind != "nonan":
            with_specials(a, rng, 0.003)
    if a.size and not np.any(a):
        a.flat[0] = 1
    return a.reshape(shape)


def with_specials(a, rng, share):
    r = rng.random(a.size)
    a[r < share] = np.nan
    a[(r >= share) & (r < 2 * share)] = np.inf
    a[(r >= 2 * share) & (r < 3 * share)] = -np.inf


def draw_cases(rng, names, count, d):
    """`count` cases, the generators in turn (a draw that breaks a rule is drawn again), inputs saved in `d`."""
    drawn, tries = [], 0
    while len(drawn) < count and tries < 50 * count:
        tries += 1
        case = getattr(cases, names[len(drawn) % len(names)])(rng)
        if case is None:
            continue
        i = len(drawn)
        case["files"] = {name: f"c{i}_{name}.npy" for name in case["inputs"]}
        for name, (shape, dtype, kind) in case["inputs"].items():
            np.save(os.path.join(d, case["files"][name]), random_array(rng, shape, dtype, kind))
        case["args"] = [case["files"].get(a[1:-1], a) if a.startswith("{") else a for a in case["args"]]
        drawn.append(case)
    return drawn


def quoted(word):
    return word if word and all(ch.isalnum() or ch in "-_.,/=:+" for ch in word) else "'" + word + "'"


def run_batch(binary, d, backend, flags, drawn):
    """Each case's JSON report (by manifest line) from one `dmlgrad batch` on `backend`."""
    manifest = f"m_{backend}.txt"
    with open(os.path.join(d, manifest), "w") as f:
        for i, case in enumerate(drawn):
            f.write(" ".join(quoted(a) for a in case["args"] + ["-o", f"c{i}_{backend}.npy"]) + "\n")
    proc = subprocess.run([os.path.abspath(binary), "batch", manifest, "--json", *flags], cwd=d,
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1, 2, 3):
        print(f"batch on {backend}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    reports = {}
    for line in proc.stdout.splitlines():
        report = json.loads(line)
        if "line" in report:
            reports[report["line"]] = report
    return reports


def same_bits(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    return bool(np.array_equal(np.ascontiguousarray(a).view(unsigned), np.ascontiguousarray(b).view(unsigned)))


def status(report):
    return "no report" if report is None else f"{report.get('status')} {str(report.get('error', ''))[:200]}"


def check_case(i, case, d, reports, apis, kernels):
    """The case's problems, as lines; its kernels counted per API."""
    problems = []
    what = f"case {i} {case['desc']} :: {' '.join(case['args'])}"
    cpu = reports["cpu"].get(i + 1)
    if cpu is None or cpu.get("status") != "ok":
        for api in apis:
            gpu = reports[api].get(i + 1)
            if status(gpu).split()[0] != status(cpu).split()[0]:
                problems.append(f"STATUS {api} {what}: cpu {status(cpu)}, gpu {status(gpu)}")
        return problems
    reference = np.load(os.path.join(d, f"c{i}_cpu.npy"))
    if "numpy" in case:
        inputs = {name: np.load(os.path.join(d, f)) for name, f in case["files"].items()}
        if not same_bits(case["numpy"](inputs), reference):
            problems.append(f"CPU-VS-NUMPY {what}")
    for api in apis:
        gpu = reports[api].get(i + 1)
        if gpu is not None and "run it with --cpu" in str(gpu.get("error", "")):
            kernels[(api, "(declined: run it with --cpu)")] += 1  # a limit of this device, said, not a wrong result
            continue
        if gpu is None or gpu.get("status") != "ok":
            problems.append(f"GPU-FAILED {api} {what}: {status(gpu)}")
            continue
        kernels[(api, gpu.get("kernel"))] += 1
        if not same_bits(np.load(os.path.join(d, f"c{i}_{api}.npy")), reference):
            problems.append(f"DIFFERS {api} kernel {gpu.get('kernel')} {what}")
    return problems


def main():
    args = parse_args()
    names, apis = args.generators.split(","), args.apis.split(",")
    d = os.path.join(args.scratch, str(args.seed))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    drawn = draw_cases(np.random.default_rng(args.seed), names, args.cases, d)
    reports = {backend: run_batch(args.dmlgrad, d, backend, ["--cpu"] if backend == "cpu" else API_FLAGS[backend],
                                  drawn) for backend in ["cpu"] + apis}
    kernels, problems = collections.Counter(), []
    for i, case in enumerate(drawn):
        problems += check_case(i, case, d, reports, apis, kernels)
    refused = sum(1 for i in range(len(drawn)) if status(reports["cpu"].get(i + 1)).split()[0] != "ok")
    for line in problems:
        print(line)
    print(f"seed {args.seed}: {len(drawn)} cases on {', '.join(apis)}: {len(problems)} wrong, {refused} refused by "
          f"the CPU reference too")
    for (api, kernel), n in sorted(kernels.items()):
        print(f"  {api} {kernel} {n}")
    if problems:
        print(f"inputs and manifests kept in {d}")
        sys.exit(1)
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
