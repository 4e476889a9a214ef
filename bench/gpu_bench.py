#!/usr/bin/env python3
"""dmlgrad's GPU kernels against PyTorch CUDA and the copy ceiling, in one run on the GPU machine.

For every case: inputs are written once to a scratch folder; dmlgrad runs with `--repeat N --json` (it warms the
GPU up by time, then times N back-to-back dispatches with timestamp queries); PyTorch runs the equivalent op,
warmed up by time, timed with CUDA events (median of N); the copy ceiling is a 2 x 1 GiB device-to-device copy
timed the same way. dmlgrad's result is checked against PyTorch's. Prints one markdown table, then the
whole-command comparison (relu-grad on 1 GiB files against a numpy + PyTorch script) and a 1 MB phase breakdown.

    python3 bench/gpu_bench.py --dmlgrad build/dmlgrad [--repeat 50] [--only relu,maxpool]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

WARMUP_S = 0.3


def cuda_median_ms(fn, repeat):
    start = time.perf_counter()
    while time.perf_counter() - start < WARMUP_S:  # the H100 idles at a low clock: warm up by time
        fn()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(repeat)]
    for begin, end in events:
        begin.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(b.elapsed_time(e) for b, e in events)


def copy_ceiling_gbps(repeat):
    n = 1 << 28  # 1 GiB of float32 each way
    src = torch.rand(n, device="cuda")
    dst = torch.empty_like(src)
    ms = cuda_median_ms(lambda: dst.copy_(src), repeat)
    return 2 * n * 4 / (ms * 1e6)


def run_dmlgrad(binary, args, repeat):
    proc = subprocess.run([binary, *args, "--repeat", str(repeat), "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"dmlgrad {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return json.loads(proc.stdout)


class Case:
    def __init__(self, op, shape, dtype, args, torch_name, torch_fn, result_check):
        self.op, self.shape, self.dtype, self.args = op, shape, dtype, args
        self.torch_name, self.torch_fn, self.result_check = torch_name, torch_fn, result_check


def save(d, name, array):
    path = os.path.join(d, name)
    np.save(path, array)
    return path


def on_gpu(array):
    return torch.from_numpy(array).cuda()


def random_array(shape, dtype, rng):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape, dtype=np.float32).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)


def exact(ours, theirs):
    return np.array_equal(ours, theirs)


def close(ours, theirs):
    return np.allclose(ours, theirs, rtol=1e-4, atol=1e-5)


def close_half(ours, theirs):  # fp16 results: one rounding of the same float32 sum, up to an ulp apart
    return np.allclose(ours.astype(np.float32), theirs.astype(np.float32), rtol=1e-3, atol=1e-4)


def close_to_scale(ours, theirs):
    """Bilinear weights: docs/OPERATORS.md 5.4's u = (o + 0.5) / s - 0.5 and PyTorch's (o + 0.5) * (in / out) - 0.5 round
    differently in float32 and move a weight by an ulp or so, an error proportional to the gradients summed, not
    to their (possibly cancelling) sum: compared against the largest magnitude of the result."""
    return float(np.max(np.abs(ours - theirs))) <= 1e-4 * float(np.max(np.abs(theirs)))


def elementwise_cases(d, rng):
    n = 256 * 1024 * 1024
    for op, dtype in (("relu-grad", np.float32), ("relu-grad", np.float16), ("clip-grad", np.float32),
                      ("clip-grad", np.int8)):
        x, dy = random_array(n, dtype, rng), random_array(n, dtype, rng)
        xp, dyp = save(d, "x.npy", x), save(d, "dy.npy", dy)
        tx, tdy = on_gpu(x), on_gpu(dy)
        del x, dy
        args = [op, "-x", xp, "-g", dyp, "-o", os.path.join(d, "dx.npy")]
        if op == "relu-grad":
            yield Case(op, "256M", np.dtype(dtype).name, args, "threshold_backward",
                       lambda tx=tx, tdy=tdy: torch.ops.aten.threshold_backward(tdy, tx, 0), exact)
        else:
            lo, hi = (-1, 1) if dtype == np.float32 else (-40, 40)
            args += ["--min", str(lo), "--max", str(hi)]
            if dtype == np.float32:
                fn = lambda tx=tx, tdy=tdy: torch.ops.aten.hardtanh_backward(tdy, tx, lo, hi)
                name = "hardtanh_backward"
            else:  # hardtanh_backward has no int8 kernel: the same select written out
                fn = lambda tx=tx, tdy=tdy: torch.where((tx > lo) & (tx < hi), tdy, 0)
                name = "where((x>min)&(x<max), dy, 0)"
            yield Case(op, "256M", np.dtype(dtype).name, args, name, fn, exact)


def slice_cases(d, rng):
    for dtype in (np.float32, np.float16, np.int8):  # the case, then the same fraction for 2- and 1-byte
        dy = random_array((32, 64, 128, 128), dtype, rng)
        dyp = save(d, "dy.npy", dy)
        tdy = on_gpu(dy)
        del dy
        args = ["slice-grad", "-g", dyp, "-o", os.path.join(d, "dx.npy"), "--output-sizes", "32,64,256,256",
                "--input-window-offsets", "0,0,0,0", "--input-window-sizes", "32,64,255,255",
                "--input-window-strides", "1,1,2,2"]

        def torch_grad(tdy=tdy):
            dx = torch.zeros((32, 64, 256, 256), device="cuda", dtype=tdy.dtype)
            dx[:, :, ::2, ::2] = tdy
            return dx

        yield Case("slice-grad [:, :, ::2, ::2]", "dX 32x64x256x256", np.dtype(dtype).name, args,
                   "zeros + strided assign", torch_grad, exact)


def maxpool_cases(d, rng):
    x = random_array((32, 64, 256, 256), np.float32, rng)
    xp = save(d, "x.npy", x)
    tx = on_gpu(x)
    del x
    for k, s, p in ((2, 2, 0), (3, 1, 1), (3, 2, 1)):
        o = (256 + 2 * p - k) // s + 1
        dy = random_array((32, 64, o, o), np.float32, rng)
        dyp = save(d, "dy.npy", dy)
        tdy = on_gpu(dy)
        args = ["maxpool-grad", "-x", xp, "-g", dyp, "-o", os.path.join(d, "dx.npy"), "--window-size", f"{k},{k}",
                "--strides", f"{s},{s}", "--start-padding", f"{p},{p}", "--end-padding", f"{p},{p}"]

        def torch_grad(k=k, s=s, p=p, tdy=tdy):
            _, idx = F.max_pool2d(tx, k, s, p, return_indices=True)
            return torch.ops.aten.max_pool2d_with_indices_backward(tdy, tx, [k, k], [s, s], [p, p], [1, 1], False,
                                                                   idx)

        yield Case(f"maxpool-grad k{k} s{s} p{p}", "X 32x64x256x256", "float32", args, "max_pool2d fwd+idx + bwd",
                   torch_grad, close)


def resample_cases(d, rng):
    dx_shape = (16, 64, 256, 256)
    for mode, scale, dtype in (("linear", 2.0, np.float32), ("linear", 1.5, np.float32), ("linear", 0.5, np.float32),
                               ("nearest", 2.0, np.float32), ("nearest", 2.0, np.float16)):
        side = int(256 * scale)
        dy = random_array((16, 64, side, side), dtype, rng)
        dyp = save(d, "dy.npy", dy)
        tdy = on_gpu(dy)
        del dy
        args = ["resample-grad", "-g", dyp, "-o", os.path.join(d, "dx.npy"), "--output-sizes",
                ",".join(map(str, dx_shape)), "--interpolation-mode", mode, "--scales", f"1,1,{scale},{scale}"]
        if mode == "linear":  # PyTorch align_corners=False = half-pixel: grad offsets (-0.5, 0.5)
            args += ["--input-pixel-offsets", "0,0,-0.5,-0.5", "--output-pixel-offsets", "0,0,0.5,0.5"]
            fn = lambda tdy=tdy, side=side: torch.ops.aten.upsample_bilinear2d_backward(tdy, [side, side],
                                                                                      list(dx_shape), False)
            name = "upsample_bilinear2d_backward"
        else:  # PyTorch legacy nearest = floor(o * in / out): offsets (0, 0), rounding decreasing
            args += ["--input-pixel-offsets", "0,0,0,0", "--output-pixel-offsets", "0,0,0,0"]
            fn = lambda tdy=tdy, side=side: torch.ops.aten.upsample_nearest2d_backward(tdy, [side, side],
                                                                                     list(dx_shape))
            name = "upsample_nearest2d_backward"
        check = close_to_scale if mode == "linear" else close if dtype == np.float32 else close_half
        yield Case(f"resample-grad {mode} {scale:g}x", "dX 16x64x256x256", np.dtype(dtype).name, args, name, fn, check)


def whole_command(binary, d, rng):
    """relu-grad on 2 x 1 GiB fp32 files, end to end, against a numpy + PyTorch script doing the same."""
    n = 256 * 1024 * 1024
    xp, dyp = save(d, "x.npy", random_array(n, np.float32, rng)), save(d, "dy.npy", random_array(n, np.float32, rng))
    script = ("import numpy as np, torch, sys\n"
              "x = torch.from_numpy(np.load(sys.argv[1])).cuda(); dy = torch.from_numpy(np.load(sys.argv[2])).cuda()\n"
              "np.save(sys.argv[3], torch.ops.aten.threshold_backward(dy, x, 0).cpu().numpy())\n")
    rows = []
    for _ in range(3):
        start = time.perf_counter()
        report = run_dmlgrad(binary, ["relu-grad", "-x", xp, "-g", dyp, "-o", os.path.join(d, "dx.npy")], 1)
        ours = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", script, xp, dyp, os.path.join(d, "dx_torch.npy")], check=True)
        theirs = time.perf_counter() - start
        rows.append((ours, theirs, report))
    return rows


def small_command(binary, d, rng):
    """relu-grad on 2 x 1 MB: wall time, the report, and the set-up steps the Vulkan backend logs with -v."""
    n = 256 * 1024  # 1 MB of float32
    xp, dyp = save(d, "xs.npy", random_array(n, np.float32, rng)), save(d, "dys.npy", random_array(n, np.float32, rng))
    start = time.perf_counter()
    proc = subprocess.run([binary, "relu-grad", "-x", xp, "-g", dyp, "-o", os.path.join(d, "dxs.npy"), "--json",
                           "-v"], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    steps = [line.split("vulkan: ", 1)[1] for line in proc.stderr.splitlines() if "vulkan: " in line]
    return wall, json.loads(proc.stdout), steps


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dmlgrad", default="build/dmlgrad")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--only", default="", help="comma-separated: relu,clip,slice,maxpool,resample,command")
    parser.add_argument("--scratch", default=tempfile.gettempdir())
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    want = lambda name: not only or name in only
    rng = np.random.default_rng()

    ceiling = copy_ceiling_gbps(args.repeat)
    print(f"# {torch.cuda.get_device_name()}, copy ceiling {ceiling:.0f} GB/s (2 x 1 GiB device copy), "
          f"median of {args.repeat}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(dir=args.scratch) as d:
        groups = []
        if want("relu") or want("clip"):
            groups.append(elementwise_cases(d, rng))
        if want("slice"):
            groups.append(slice_cases(d, rng))
        if want("maxpool"):
            groups.append(maxpool_cases(d, rng))
        if want("resample"):
            groups.append(resample_cases(d, rng))
        for group in groups:
            for case in group:
                if only and not any(case.op.startswith(o) for o in only):
                    continue
                report = run_dmlgrad(args.dmlgrad, case.args, args.repeat)
                ours_ms = report["kernel_ms"]["median"]
                gbps = report["effective_gbps"]
                theirs_ms = cuda_median_ms(case.torch_fn, args.repeat)
                ours, theirs = np.load(os.path.join(d, "dx.npy")), case.torch_fn().cpu().numpy()
                ok = case.result_check(ours, theirs)
                if not ok:
                    diff = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
                    at = np.unravel_index(np.nanargmax(diff), diff.shape)
                    print(f"  {case.op}: max |difference| {diff[at]:.3g} at {at}: ours {ours[at]!r}, "
                          f"PyTorch {theirs[at]!r}", flush=True)
                rows.append((case.op, case.shape, case.dtype, ours_ms * 1e3, gbps, 100 * gbps / ceiling,
                             case.torch_name, theirs_ms * 1e3, theirs_ms / ours_ms, ok))
                print(f"  {case.op} {case.dtype}: {ours_ms * 1e3:.0f} us vs {theirs_ms * 1e3:.0f} us "
                      f"{'ok' if ok else 'RESULT DIFFERS'}", flush=True)
                torch.cuda.empty_cache()
        print("\n| operator | shape | dtype | dmlgrad median us | GB/s | % of ceiling | PyTorch op | PyTorch us | "
              "PyTorch / dmlgrad | same result |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print("| {} | {} | {} | {:.0f} | {:.0f} | {:.0f}% | {} | {:.0f} | {:.2f}x | {} |".format(*r[:9], "yes" if r[9] else "NO"))
        if want("command"):
            print("\n## relu-grad on 2 x 1 GiB float32 files, whole command (s)")
            print("| dmlgrad | numpy + PyTorch script | ratio | dmlgrad phases (ms) |")
            print("|---|---|---|---|")
            for ours, theirs, rep in whole_command(args.dmlgrad, d, rng):
                phases = ", ".join(f"{k[:-3]} {rep[k]:.0f}" for k in
                                   ("load_ms", "setup_ms", "upload_ms", "download_ms", "save_ms", "total_ms"))
                print(f"| {ours:.2f} | {theirs:.2f} | {theirs / ours:.2f}x | {phases}, kernel "
                      f"{rep['kernel_ms']['median']:.2f} |")
            print()
            for _ in range(3):
                wall, rep, steps = small_command(args.dmlgrad, d, rng)
                phases = ", ".join(f"{k[:-3]} {rep[k]:.2f}" for k in
                                   ("load_ms", "setup_ms", "upload_ms", "download_ms", "save_ms", "total_ms"))
                print(f"1 MB relu-grad: wall {wall * 1e3:.1f} ms; phases (ms): {phases}, kernel "
                      f"{rep['kernel_ms']['median']:.3f}; set-up: {'; '.join(steps)}")


if __name__ == "__main__":
    main()
