#!/usr/bin/env python3
"""A backward chain as one `dmlgrad batch` manifest, against the same four jobs on independent inputs.

The chain (each job's -g is the previous job's output, as in a backward pass):
    resample-grad  -g dy.npy  (1,C,4H,4W) -> t1 (1,C,2H,2W)   --torch-mode bilinear
    clip-grad      -x cx.npy -g t1        -> t2 (1,C,2H,2W)   --min -1 --max 1
    maxpool-grad   -x px.npy -g t2        -> t3 (1,C,4H,4W)   2x2 window, stride 2
    relu-grad      -x rx.npy -g t3        -> t4 (1,C,4H,4W)
The independent manifest runs the same jobs, each -g a file of its own holding the chain's intermediate (copied
from a first run), so both do the same work on the same bytes. In the chain each job waits for the one before it
to be written, and takes its -g from device memory (docs/BATCH.md: nothing uploaded); the independent jobs
upload every input and may overlap. The chain's -v log is checked for the three hand-overs. With --chains K, K chains are
interleaved in one manifest (the workers overlap the chains). Both results are checked against numpy.

    python3 bench/chain_bench.py --dmlgrad build/dmlgrad                      # C=16, H=W=512: 256 MiB tensors
    python3 bench/chain_bench.py --dmlgrad build/dmlgrad --channels 2 --size 64 --runs 2   # a quick check
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def chain_lines(k, c, h, w, inputs=None):
    """The four jobs of chain k; `inputs` replaces each job's -g by a file of its own (the independent form)."""
    g = inputs or [f"dy{k}.npy", f"t1_{k}.npy", f"t2_{k}.npy", f"t3_{k}.npy"]
    return [
        f"resample-grad -g {g[0]} -o t1_{k}.npy --output-sizes 1,{c},{2 * h},{2 * w} --torch-mode bilinear",
        f"clip-grad -x cx{k}.npy -g {g[1]} -o t2_{k}.npy --min -1 --max 1",
        f"maxpool-grad -x px{k}.npy -g {g[2]} -o t3_{k}.npy --window-size 2,2 --strides 2,2",
        f"relu-grad -x rx{k}.npy -g {g[3]} -o t4_{k}.npy",
    ]


def write_inputs(folder, chains, c, h, w, rng):
    for k in range(chains):
        np.save(f"{folder}/dy{k}.npy", rng.standard_normal((1, c, 4 * h, 4 * w), dtype=np.float32))
        np.save(f"{folder}/cx{k}.npy", rng.uniform(-2, 2, (1, c, 2 * h, 2 * w)).astype(np.float32))
        np.save(f"{folder}/px{k}.npy", rng.standard_normal((1, c, 4 * h, 4 * w), dtype=np.float32))
        np.save(f"{folder}/rx{k}.npy", rng.standard_normal((1, c, 4 * h, 4 * w), dtype=np.float32))


def interleaved(chains, make):
    per_chain = [make(k) for k in range(chains)]
    return [line for step in range(4) for line in (chain[step] for chain in per_chain)]


def run_batch(binary, folder, manifest, extra):
    outputs = [f for f in os.listdir(folder) if f.startswith("t")]
    for f in outputs:
        os.remove(os.path.join(folder, f))
    start = time.perf_counter()
    proc = subprocess.run([binary, "batch", manifest, "-q"] + extra, cwd=folder, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"dmlgrad batch {manifest} failed ({proc.returncode}): {proc.stderr}")
    return elapsed


def check_against_numpy(folder, chains):
    """The last two steps by hand (relu and max-pool are exact); resample and clip through their effect on them."""
    for k in range(chains):
        t2 = np.load(f"{folder}/t2_{k}.npy")
        cx = np.load(f"{folder}/cx{k}.npy")
        t1 = np.load(f"{folder}/t1_{k}.npy")
        assert np.array_equal(t2, np.where((cx > -1) & (cx < 1), t1, 0).astype(np.float32)), "clip-grad"
        t3 = np.load(f"{folder}/t3_{k}.npy")
        rx = np.load(f"{folder}/rx{k}.npy")
        assert np.array_equal(np.load(f"{folder}/t4_{k}.npy"), np.where(rx > 0, t3, 0).astype(np.float32)), "relu"
        dy = np.load(f"{folder}/dy{k}.npy")
        assert np.isclose(t1.sum(dtype=np.float64), dy.sum(dtype=np.float64), rtol=1e-4), "resample keeps the sum"
        assert np.isclose(t3.sum(dtype=np.float64), t2.sum(dtype=np.float64), rtol=1e-4), "max-pool keeps the sum"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dmlgrad", required=True)
    parser.add_argument("--channels", type=int, default=16)
    parser.add_argument("--size", type=int, default=512, help="H = W of the smallest tensor (t1 is 2x, dy 4x)")
    parser.add_argument("--chains", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", default="", help="batch --device list (default: one worker)")
    args = parser.parse_args()
    binary = os.path.abspath(args.dmlgrad)
    c, h, w = args.channels, args.size, args.size
    extra = ["--device", args.workers] if args.workers else []
    folder = tempfile.mkdtemp(prefix="dmlgrad-chain-")
    try:
        write_inputs(folder, args.chains, c, h, w, np.random.default_rng(7))
        with open(f"{folder}/chain.txt", "w") as f:
            f.write("\n".join(interleaved(args.chains, lambda k: chain_lines(k, c, h, w))) + "\n")
        run_batch(binary, folder, "chain.txt", extra)  # warm-up, and the intermediates
        check_against_numpy(folder, args.chains)
        log = subprocess.run([binary, "batch", "chain.txt", "-v"] + extra, cwd=folder, capture_output=True, text=True)
        handed_over = log.stderr.count("taken from device memory")
        if handed_over != 3 * args.chains:
            print(f"warning: {handed_over} hand-overs in device memory, expected {3 * args.chains}", file=sys.stderr)
        for k in range(args.chains):
            for step in (1, 2, 3):
                shutil.copyfile(f"{folder}/t{step}_{k}.npy", f"{folder}/g{step}_{k}.npy")
        with open(f"{folder}/independent.txt", "w") as f:
            make = lambda k: chain_lines(k, c, h, w, [f"dy{k}.npy", f"g1_{k}.npy", f"g2_{k}.npy", f"g3_{k}.npy"])
            f.write("\n".join(interleaved(args.chains, make)) + "\n")
        times = {"chain": [], "independent": []}
        for _ in range(args.runs):
            for name in times:
                times[name].append(run_batch(binary, folder, f"{name}.txt", extra))
        run_batch(binary, folder, "independent.txt", extra)
        check_against_numpy(folder, args.chains)

        big = c * 4 * h * 4 * w * 4  # bytes of dy, px, rx, t3, t4; cx, t1, t2 are a quarter of it
        # Inputs and output of each job: resample big + 1/4, clip 3/4, max-pool 2 + 1/4, relu 3.
        moved = args.chains * big * 6.25
        print(f"chain bench: {args.chains} chain(s) of 4 jobs, C={c}, largest tensor {big / 2**20:.1f} MiB fp32, "
              f"workers: {args.workers or 'default'}, {args.runs} runs; results checked against numpy; "
              f"{handed_over} inputs taken from device memory per chain run")
        print("| manifest | median s | runs s | GB/s of files (inputs + outputs) |")
        print("|---|---|---|---|")
        for name, t in times.items():
            med = statistics.median(t)
            print(f"| {name} | {med:.3f} | {', '.join(f'{x:.3f}' for x in t)} | {moved / med / 1e9:.1f} |")
        ratio = statistics.median(times["chain"]) / statistics.median(times["independent"])
        print(f"chain / independent: {ratio:.2f}x")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
