#!/usr/bin/env python3
"""`dmlgrad batch` over several GPUs of one host: the same manifest of heavy jobs on 1 GPU and on all of them.

The manifest: max-pool grads (k3 s2 p1) on 32x64x256x256 fp32 and bilinear 2x resample grads on dX
16x64x256x256 fp32, inputs on the local disk (a few distinct input sets, each job its own output). Reports wall
time and throughput per device list, each worker's share of the jobs and busy time (from --json), and checks that
every output of the multi-GPU runs is bit-identical to the one-GPU run's.

    python3 bench/multi_gpu_bench.py --dmlgrad build/dmlgrad [--jobs 32] [--devices 0 all 0,0,1,1]
"""
import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np


def write_inputs(folder, rng, sets):
    for i in range(sets):
        np.save(f"{folder}/px{i}.npy", rng.standard_normal((32, 64, 256, 256), dtype=np.float32))
        np.save(f"{folder}/pdy{i}.npy", rng.standard_normal((32, 64, 128, 128), dtype=np.float32))
        np.save(f"{folder}/rdy{i}.npy", rng.standard_normal((16, 64, 512, 512), dtype=np.float32))


def manifest(folder, out, jobs, sets):
    lines = []
    for j in range(jobs):
        s = j % sets
        lines.append(f"maxpool-grad -x {folder}/px{s}.npy -g {folder}/pdy{s}.npy -o {out}/pool{j}.npy "
                     "--window-size 3,3 --strides 2,2 --start-padding 1,1 --end-padding 0,0")
        lines.append(f"resample-grad -g {folder}/rdy{s}.npy -o {out}/resample{j}.npy --output-sizes 16,64,256,256 "
                     "--interpolation-mode linear --scales 1,1,2,2 --input-pixel-offsets 0,0,-0.5,-0.5 "
                     "--output-pixel-offsets 0,0,0.5,0.5")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dmlgrad", required=True)
    parser.add_argument("--jobs", type=int, default=32, help="jobs of each operator")
    parser.add_argument("--sets", type=int, default=2, help="distinct input sets")
    parser.add_argument("--devices", nargs="+", default=["0", "all"])
    args = parser.parse_args()
    binary = os.path.abspath(args.dmlgrad)
    print(subprocess.run([binary, "devices"], capture_output=True, text=True).stdout)
    rng = np.random.default_rng(3)
    with tempfile.TemporaryDirectory(dir=os.getcwd()) as folder:
        start = time.perf_counter()
        write_inputs(folder, rng, args.sets)
        print(f"inputs written in {time.perf_counter() - start:.1f} s")
        reference = None
        rows = []
        for run, devices in enumerate(args.devices):
            out = f"{folder}/out{run}_{devices.replace(',', '_')}"
            os.makedirs(out)
            with open(f"{folder}/jobs.txt", "w") as f:
                f.write(manifest(folder, out, args.jobs, args.sets))
            start = time.perf_counter()
            proc = subprocess.run([binary, "batch", f"{folder}/jobs.txt", "--device", devices, "--json"],
                                  capture_output=True, text=True)
            seconds = time.perf_counter() - start
            if proc.returncode != 0:
                sys.exit(f"batch --device {devices} failed ({proc.returncode}): {proc.stderr[-2000:]}")
            summary = json.loads(proc.stdout.splitlines()[-1])["summary"]
            jobs = [json.loads(l) for l in proc.stdout.splitlines()[:-1]]
            gb = sum(j["bytes"] for j in jobs) / 1e9
            same = "reference"
            if reference is None:
                reference = out
            else:
                names = sorted(os.listdir(reference))
                match, mismatch, errors = filecmp.cmpfiles(reference, out, names, shallow=False)
                same = "yes" if not mismatch and not errors and len(match) == len(names) else \
                    f"NO: {mismatch[:3]} {errors[:3]}"
                shutil.rmtree(out)
            shares = ", ".join(f"device {w['device']}: {w['jobs']} jobs, busy {w['busy_s']:.2f} s"
                               for w in summary["workers"])
            rows.append((devices, len(jobs), seconds, len(jobs) / seconds, gb / seconds, shares, same))
            print(f"--device {devices}: {seconds:.2f} s", flush=True)
        base = rows[0][2]
        print("\n| --device | jobs | wall s | jobs/s | GB/s (min bytes) | speed-up | workers: share, busy | bit-identical to the first row |")
        print("|---|---|---|---|---|---|---|---|")
        for devices, n, seconds, rate, gbps, shares, same in rows:
            print(f"| {devices} | {n} | {seconds:.2f} | {rate:.2f} | {gbps:.1f} | {base / seconds:.2f}x | {shares} | {same} |")


if __name__ == "__main__":
    main()
