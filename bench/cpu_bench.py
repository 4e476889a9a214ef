#!/usr/bin/python3
"""dmlgrad --cpu against PyTorch's CPU kernels, in one run on this machine (issue: CPU speed bar).

Each case writes its inputs to a scratch folder, times `dmlgrad --cpu --repeat N --json` (median kernel time,
after dmlgrad's own warm-up) and the equivalent PyTorch call (median of N after one warm-up, all cores), checks
that both give the same result, and prints one table. Needs numpy and torch (Debian: python3-numpy python3-torch).
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F


def median_ms(fn, repeat):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def run_dmlgrad(binary, args, repeat):
    # The inputs were just written: flush them first, or the kernel's write-back of them competes with dmlgrad
    # for this machine's two cores while it is timed (PyTorch, timed later, would not pay for it).
    os.sync()
    out = subprocess.run([binary, *args, "--cpu", "--repeat", str(repeat), "--json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["kernel_ms"]["median"]


def case_relu(d, binary, repeat, rng):
    n = 32 * 1024 * 1024
    x = rng.standard_normal(n, dtype=np.float32)
    dy = rng.standard_normal(n, dtype=np.float32)
    np.save(f"{d}/x.npy", x), np.save(f"{d}/dy.npy", dy)
    ours = run_dmlgrad(binary, ["relu-grad", "-x", f"{d}/x.npy", "-g", f"{d}/dy.npy", "-o", f"{d}/dx.npy"], repeat)
    tx, tdy = torch.from_numpy(x), torch.from_numpy(dy)
    ref = torch.ops.aten.threshold_backward(tdy, tx, 0)
    assert np.array_equal(np.load(f"{d}/dx.npy"), ref.numpy())
    theirs = median_ms(lambda: torch.ops.aten.threshold_backward(tdy, tx, 0), repeat)
    yield "relu-grad", "32M", "float32", ours, "threshold_backward", theirs
    # dmlgrad's timed runs write into an output that exists; PyTorch's plain call allocates (and faults in) its
    # own. The same kernel writing into a preallocated tensor, for an apples-to-apples view:
    out = torch.empty_like(tx)
    theirs = median_ms(lambda: torch.ops.aten.threshold_backward.grad_input(tdy, tx, 0, grad_input=out), repeat)
    yield "relu-grad", "32M", "float32", ours, "threshold_backward into a preallocated output", theirs


def case_maxpool(d, binary, repeat, rng):
    x = rng.standard_normal((8, 32, 128, 128), dtype=np.float32)
    dy = rng.standard_normal((8, 32, 64, 64), dtype=np.float32)
    np.save(f"{d}/x.npy", x), np.save(f"{d}/dy.npy", dy)
    ours = run_dmlgrad(binary, ["maxpool-grad", "-x", f"{d}/x.npy", "-g", f"{d}/dy.npy", "-o", f"{d}/dx.npy",
                                "--window-size", "3,3", "--strides", "2,2", "--start-padding", "1,1",
                                "--end-padding", "1,1"], repeat)
    tx, tdy = torch.from_numpy(x), torch.from_numpy(dy)

    def torch_grad():
        _, idx = F.max_pool2d(tx, 3, 2, 1, return_indices=True)
        return torch.ops.aten.max_pool2d_with_indices_backward(tdy, tx, [3, 3], [2, 2], [1, 1], [1, 1], False, idx)

    assert np.allclose(np.load(f"{d}/dx.npy"), torch_grad().numpy(), rtol=1e-5, atol=1e-5)
    theirs = median_ms(torch_grad, repeat)
    yield "maxpool-grad k3 s2 p1", "X 8x32x128x128", "float32", ours, "max_pool2d fwd+idx + backward", theirs


def case_resample(d, binary, repeat, rng):
    dy = rng.standard_normal((8, 32, 256, 256), dtype=np.float32)
    np.save(f"{d}/dy.npy", dy)
    ours = run_dmlgrad(binary, ["resample-grad", "-g", f"{d}/dy.npy", "-o", f"{d}/dx.npy", "--output-sizes",
                                "8,32,128,128", "--interpolation-mode", "linear", "--scales", "1,1,2,2",
                                "--input-pixel-offsets", "0,0,-0.5,-0.5", "--output-pixel-offsets", "0,0,0.5,0.5"],
                       repeat)
    tdy = torch.from_numpy(dy)

    def torch_grad():
        return torch.ops.aten.upsample_bilinear2d_backward(tdy, [256, 256], [8, 32, 128, 128], False)

    assert np.allclose(np.load(f"{d}/dx.npy"), torch_grad().numpy(), rtol=1e-5, atol=1e-5)
    theirs = median_ms(torch_grad, repeat)
    yield "resample-grad linear 2x", "dX 8x32x128x128", "float32", ours, "upsample_bilinear2d_backward", theirs


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dmlgrad", default="build/dmlgrad")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(os.cpu_count())
    rng = np.random.default_rng()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for case in (case_relu, case_maxpool, case_resample):
            rows.extend(case(d, args.dmlgrad, args.repeat, rng))
    print(f"CPU: {os.cpu_count()} cores, torch {torch.__version__} with {torch.get_num_threads()} threads, "
          f"median of {args.repeat}")
    print("| operator | shape | dtype | dmlgrad --cpu ms | PyTorch op | PyTorch ms | speed-up |")
    print("|---|---|---|---|---|---|---|")
    for op, shape, dtype, ours, their_op, theirs in rows:
        print(f"| {op} | {shape} | {dtype} | {ours:.2f} | {their_op} | {theirs:.2f} | {theirs / ours:.2f}x |")


if __name__ == "__main__":
    main()
