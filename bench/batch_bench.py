#!/usr/bin/env python3
"""`dmlgrad batch` against the ways people run many jobs today, in one run on the GPU machine.

Scenarios (relu-grad, fp32): 200 jobs on 1 MiB inputs and 16 jobs on 64 MiB inputs, each run as
  - one `dmlgrad batch` (1 worker, and 2 workers on the same GPU),
  - a shell loop of single `dmlgrad relu-grad` commands,
  - one Python process that imports numpy and torch once and loops (np.load, .cuda(), threshold_backward,
    .cpu(), np.save), its imports included;
then a mixed manifest of all five operators at realistic sizes. Every output is checked against numpy. The same
run measures what bounds the big case: reading the inputs from the page cache, writing outputs, and PCIe copies.

    python3 bench/batch_bench.py --dmlgrad build/dmlgrad
    python3 bench/batch_bench.py --dmlgrad build/dmlgrad --only small --runs 3 --no-loops --profile
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

PY_LOOP = r"""
import sys, time
t0 = time.perf_counter()
import numpy as np, torch
device = sys.argv[2]
torch.zeros(1, device=device)
t1 = time.perf_counter()
for line in open(sys.argv[1]):
    x, dy, out = line.split()
    X = torch.from_numpy(np.load(x)).to(device)
    DY = torch.from_numpy(np.load(dy)).to(device)
    np.save(out, torch.ops.aten.threshold_backward(DY, X, 0).cpu().numpy())
print(f"{t1 - t0:.3f}")
"""


TORCH_DEVICE = "cuda"
RUNS = 2  # timed runs of each dmlgrad batch
WORKERS = ("0", "0,0")  # --device lists to time ("default": no --device)
LOOPS = True  # also time the shell and Python loops
PROFILE = False  # also one untimed run with -v, its lines stamped as they arrive
BATCH_ARGS = []  # more flags for every dmlgrad batch


def wall(cmd, **kw):
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{cmd[:3]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def device_flag(workers):
    """`--device 0,0` for a list; nothing for "default" (the batch chooses its workers)."""
    return [] if workers == "default" else ["--device", workers]


def worker_label(workers, summary):
    ran = f"{len(summary['workers'])} worker(s)"
    return f"default ({ran} ran)" if workers == "default" else ran


def make_relu_jobs(folder, count, elements, rng):
    jobs = []
    for i in range(count):
        x = rng.standard_normal(elements, dtype=np.float32)
        dy = rng.standard_normal(elements, dtype=np.float32)
        np.save(f"{folder}/x{i}.npy", x)
        np.save(f"{folder}/dy{i}.npy", dy)
        jobs.append((f"{folder}/x{i}.npy", f"{folder}/dy{i}.npy", f"{folder}/out{i}.npy"))
    return jobs


def clear_outputs(jobs):
    for _, _, out in jobs:
        if os.path.exists(out):
            os.remove(out)


def check_relu_outputs(jobs):
    for x, dy, out in jobs:
        xv, dyv = np.load(x), np.load(dy)
        if not np.array_equal(np.load(out), np.where(xv > 0, dyv, np.float32(0))):
            sys.exit(f"wrong result in {out}")


def phase_sums(json_lines):
    sums = {}
    for line in json_lines.splitlines():
        row = json.loads(line)
        if row.get("status") != "ok":
            continue
        for key in ("load_ms", "upload_ms", "download_ms", "save_ms", "setup_ms"):
            sums[key] = sums.get(key, 0) + row[key]
        sums["kernel_ms"] = sums.get("kernel_ms", 0) + row["kernel_ms"]["median"]
    return sums


def profile(binary, manifest, label):
    """One run with -v: each stderr line with the time it arrived, so the log says where the time goes."""
    start = time.perf_counter()
    proc = subprocess.Popen([binary, "batch", manifest, "-v"] + BATCH_ARGS, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    stamped = [(time.perf_counter() - start, line.rstrip()) for line in proc.stderr]
    proc.wait()
    ended = time.perf_counter() - start
    print(f"profile of {label} (-v, exit {proc.returncode}, {ended:.3f} s; ms since start):")
    middle = len(stamped) // 2
    shown = stamped[:40] + [(None, "...")] + stamped[middle - 15:middle + 15] + [(None, "...")] + stamped[-25:]
    for t, line in shown if len(stamped) > 100 else stamped:
        print(f"  {'' if t is None else f'{t * 1e3:8.2f}'} {line}")
    print(f"  {ended * 1e3:8.2f} (process ended)")


def run_relu_scenario(binary, folder, count, elements, rng, rows):
    jobs = make_relu_jobs(folder, count, elements, rng)
    manifest = f"{folder}/jobs.txt"
    with open(manifest, "w") as f:
        for x, dy, out in jobs:
            f.write(f"relu-grad -x {x} -g {dy} -o {out}\n")
    mib = elements * 4 / 2**20
    label = f"{count} x relu-grad {mib:g} MiB fp32"
    for workers in WORKERS:
        for attempt in range(RUNS):
            clear_outputs(jobs)
            seconds, out = wall([binary, "batch", manifest, *device_flag(workers), "--json"] + BATCH_ARGS)
            check_relu_outputs(jobs)
            summary = json.loads(out.splitlines()[-1])["summary"]
            sums = phase_sums("\n".join(out.splitlines()[:-1]))
            sums["workers_busy_ms"] = 1e3 * sum(w["busy_s"] for w in summary["workers"])
            how = " ".join([f"dmlgrad batch, {worker_label(workers, summary)}"] + BATCH_ARGS)
            rows.append((label, f"{how}, run {attempt + 1}", seconds,
                         count / seconds, summary["exit_code"], sums))
    if PROFILE:
        clear_outputs(jobs)
        profile(binary, manifest, label)
    if not LOOPS:
        return jobs
    clear_outputs(jobs)
    script = f"{folder}/loop.sh"
    with open(script, "w") as f:
        for x, dy, out in jobs:
            f.write(f"'{binary}' relu-grad -x {x} -g {dy} -o {out} -q || exit 1\n")
    seconds, _ = wall(["bash", script])
    check_relu_outputs(jobs)
    rows.append((label, "shell loop of single dmlgrad commands", seconds, count / seconds, 0, {}))
    clear_outputs(jobs)
    listing = f"{folder}/pairs.txt"
    with open(listing, "w") as f:
        for job in jobs:
            f.write(" ".join(job) + "\n")
    seconds, out = wall([sys.executable, "-c", PY_LOOP, listing, TORCH_DEVICE])
    check_relu_outputs(jobs)
    rows.append((label, f"Python loop, numpy + torch CUDA (imports {float(out):.2f} s)", seconds, count / seconds,
                 0, {}))
    return jobs


def measure_bounds(folder, jobs):
    """What the 64 MiB scenario's data movement costs on this machine, each piece alone."""
    import torch
    inputs = [p for x, dy, _ in jobs for p in (x, dy)]
    total_in = sum(os.path.getsize(p) for p in inputs)
    start = time.perf_counter()
    for p in inputs:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass
    read_s = time.perf_counter() - start
    block = np.ones(total_in // 2 // 4, dtype=np.float32)
    start = time.perf_counter()
    for i in range(len(jobs)):
        np.save(f"{folder}/w{i}.npy", block[: block.size // len(jobs)])
    write_s = time.perf_counter() - start
    for i in range(len(jobs)):
        os.remove(f"{folder}/w{i}.npy")
    host = torch.empty(total_in // 4, dtype=torch.float32).pin_memory()
    dev = torch.empty_like(host, device="cuda")
    dev.copy_(host)
    torch.cuda.synchronize()
    start = time.perf_counter()
    dev.copy_(host)
    torch.cuda.synchronize()
    h2d_s = time.perf_counter() - start
    start = time.perf_counter()
    host[: host.numel() // 2].copy_(dev[: host.numel() // 2])
    torch.cuda.synchronize()
    d2h_s = time.perf_counter() - start
    gib = 2**30
    return [
        f"read {total_in / gib:.2f} GiB of inputs from the page cache (python read()): {read_s:.3f} s "
        f"({total_in / read_s / 1e9:.1f} GB/s)",
        f"write {total_in / 2 / gib:.2f} GiB of outputs (np.save): {write_s:.3f} s ({total_in / 2 / write_s / 1e9:.1f} GB/s)",
        f"PCIe host->device {total_in / gib:.2f} GiB pinned: {h2d_s:.3f} s ({total_in / h2d_s / 1e9:.1f} GB/s)",
        f"PCIe device->host {total_in / 2 / gib:.2f} GiB pinned: {d2h_s:.3f} s ({total_in / 2 / d2h_s / 1e9:.1f} GB/s)",
    ]


def run_mixed(binary, folder, rng, rows, scale):
    """All five operators at sizes people use, 8 jobs each."""
    r = lambda *shape: rng.standard_normal(shape, dtype=np.float32)
    n = 1 if scale > 1 else 8  # the batch axis: 1 in the smoke run
    lines = []
    for i in range(8):
        np.save(f"{folder}/mx{i}.npy", r((1 << 24) // scale))
        np.save(f"{folder}/mdy{i}.npy", r((1 << 24) // scale))
        np.save(f"{folder}/cx{i}.npy", r((1 << 24) // scale).astype(np.float16))
        np.save(f"{folder}/cdy{i}.npy", r((1 << 24) // scale).astype(np.float16))
        np.save(f"{folder}/sdy{i}.npy", r(n, 64, 64, 64))
        np.save(f"{folder}/px{i}.npy", r(n, 64, 112, 112))
        np.save(f"{folder}/pdy{i}.npy", r(n, 64, 56, 56))
        np.save(f"{folder}/rdy{i}.npy", r(n, 64, 128, 128))
        lines += [
            f"relu-grad -x {folder}/mx{i}.npy -g {folder}/mdy{i}.npy -o {folder}/o_relu{i}.npy",
            f"clip-grad -x {folder}/cx{i}.npy -g {folder}/cdy{i}.npy -o {folder}/o_clip{i}.npy --min -1 --max 1",
            f"slice-grad -g {folder}/sdy{i}.npy -o {folder}/o_slice{i}.npy --output-sizes {n},64,128,128 "
            f"--input-window-offsets 0,0,0,0 --input-window-sizes {n},64,127,127 --input-window-strides 1,1,2,2",
            f"maxpool-grad -x {folder}/px{i}.npy -g {folder}/pdy{i}.npy -o {folder}/o_pool{i}.npy --window-size 3,3 "
            "--strides 2,2 --start-padding 1,1 --end-padding 0,0",
            f"resample-grad -g {folder}/rdy{i}.npy -o {folder}/o_resample{i}.npy --output-sizes {n},64,64,64 "
            "--interpolation-mode linear --scales 1,1,2,2 --input-pixel-offsets 0,0,-0.5,-0.5 "
            "--output-pixel-offsets 0,0,0.5,0.5",
        ]
    manifest = f"{folder}/mixed.txt"
    with open(manifest, "w") as f:
        f.write("\n".join(lines) + "\n")
    for workers in WORKERS:
        seconds, out = wall([binary, "batch", manifest, *device_flag(workers), "--json"])
        summary = json.loads(out.splitlines()[-1])["summary"]
        sums = phase_sums("\n".join(out.splitlines()[:-1]))
        rows.append((f"mixed: {len(lines)} jobs, all five operators", f"dmlgrad batch, {worker_label(workers, summary)}",
                     seconds, len(lines) / seconds, summary["exit_code"], sums))


def main():
    global TORCH_DEVICE, RUNS, WORKERS, LOOPS, PROFILE, BATCH_ARGS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dmlgrad", required=True)
    parser.add_argument("--folder", default=None, help="scratch folder (default: a temporary one)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, torch on the CPU: checks the script")
    parser.add_argument("--only", default="small,big,mixed", help="scenarios to run, of small,big,mixed")
    parser.add_argument("--runs", type=int, default=RUNS, help="timed runs of each dmlgrad batch")
    parser.add_argument("--workers", default="1,2", help="worker counts to time (workers on device 0), or "
                        "'default' (no --device: the batch's own choice)")
    parser.add_argument("--no-loops", action="store_true", help="skip the shell and Python loops")
    parser.add_argument("--profile", action="store_true", help="one more run of each relu scenario with -v, "
                        "its log lines stamped with their arrival time")
    parser.add_argument("--batch-args", default="",
                        help="more flags for every dmlgrad batch, e.g. '--max-in-flight 16'")
    args = parser.parse_args()
    BATCH_ARGS = args.batch_args.split()
    RUNS, LOOPS, PROFILE = args.runs, not args.no_loops, args.profile
    WORKERS = tuple(n if n == "default" else ",".join(["0"] * int(n)) for n in args.workers.split(","))
    only = set(args.only.split(","))
    scale = 1
    if args.smoke:
        TORCH_DEVICE, scale = "cpu", 64
    binary = os.path.abspath(args.dmlgrad)
    rng = np.random.default_rng(1)
    rows, bounds = [], []
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        small = f"{folder}/small"
        big = f"{folder}/big"
        mixed = f"{folder}/mixed"
        for d in (small, big, mixed):
            os.makedirs(d)
        if "small" in only:
            run_relu_scenario(binary, small, 200 // scale * 4 if args.smoke else 200, (1 << 18) // scale, rng, rows)
            shutil.rmtree(small)
        if "big" in only:
            jobs = run_relu_scenario(binary, big, 16, (1 << 24) // scale, rng, rows)
            if not args.smoke and LOOPS:
                bounds = measure_bounds(big, jobs)
            shutil.rmtree(big)
        if "mixed" in only:
            run_mixed(binary, mixed, rng, rows, scale)
    print("| jobs | how | wall s | jobs/s | exit | sum of phases over jobs (ms) |")
    print("|---|---|---|---|---|---|")
    for label, how, seconds, rate, code, sums in rows:
        phases = ", ".join(f"{k[:-3]} {v:.0f}" for k, v in sums.items())
        print(f"| {label} | {how} | {seconds:.3f} | {rate:.1f} | {code} | {phases} |")
    if bounds:
        print()
        print("Bounds of the 16 x 64 MiB case, each measured alone:")
    for line in bounds:
        print(f"- {line}")


if __name__ == "__main__":
    main()
