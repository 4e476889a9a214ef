#!/usr/bin/env python3
"""The cliff cases of issue 23 (and neighbours of their fixes): a baseline dmlgrad, a new dmlgrad and PyTorch CUDA
in one run, on the GPU machine. Kernel medians of --repeat 30 (dmlgrad's own timestamps), PyTorch's by CUDA events
after a warm-up by time (bench/gpu_bench.py's helpers); the new binary's result checked against PyTorch's.

    python3 bench/cliffs.py BASE_DMLGRAD NEW_DMLGRAD [CASE,...]   # CASE: indices into CASES
"""
import json, os, subprocess, sys, tempfile
import numpy as np, torch, torch.nn.functional as F
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_bench as gb

REPEAT = 30
def run(binary, args):
    p = subprocess.run([binary, *args, "--repeat", str(REPEAT), "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()[:200]
    return json.loads(p.stdout), ""

def pool_case(x_shape, k, s, p, d, dtype):
    rank = len(x_shape) - 2
    out = [(i + 2 * p - d * (k - 1) - 1) // s + 1 for i in x_shape[2:]]
    args = ["maxpool-grad", "-x", "{x}", "-g", "{dy}", "-o", "{dx}", "--window-size", gb.csv([k] * rank),
            "--strides", gb.csv([s] * rank), "--start-padding", gb.csv([p] * rank), "--end-padding",
            gb.csv([p] * rank), "--dilations", gb.csv([d] * rank)]
    pool = F.max_pool2d if rank == 2 else F.max_pool3d
    bw = (torch.ops.aten.max_pool2d_with_indices_backward if rank == 2 else
          torch.ops.aten.max_pool3d_with_indices_backward)
    def fn(t):
        _, idx = pool(t["x"], k, s, p, dilation=d, return_indices=True)
        return bw(t["dy"], t["x"], [k] * rank, [s] * rank, [p] * rank, [d] * rank, False, idx)
    name = f"maxpool{rank}d k{k} s{s} p{p} d{d} {gb.dims(x_shape)} {np.dtype(dtype).name}"
    return name, {"x": (x_shape, dtype), "dy": (tuple(x_shape[:2]) + tuple(out), dtype)}, args, fn, \
        gb.close if dtype == np.float32 else gb.close_half

def slice_case(dx_shape, expression, index, dtype):
    """dX = zeros with dY at dx[index]; `expression` the same slice as --slice takes."""
    dy_shape = torch.zeros(dx_shape, device="meta")[index].shape
    args = ["slice-grad", "-g", "{dy}", "-o", "{dx}", "--output-sizes", gb.csv(dx_shape), "--slice", expression]
    def fn(t):
        dx = torch.zeros(dx_shape, device="cuda", dtype=t["dy"].dtype)
        dx[index] = t["dy"]
        return dx
    name = f"slice {expression} {gb.dims(dx_shape)} {np.dtype(dtype).name}"
    return name, {"dy": (tuple(dy_shape), dtype)}, args, fn, gb.exact

S = slice(None)
CASES = [pool_case((8, 64, 96, 96), 3, 1, 1, 2, np.float32),
         pool_case((4, 16, 15, 63, 63), 2, 2, 0, 1, np.float16),
         slice_case((32, 64, 255, 255), "[:, :, ::3, 1::3]", (S, S, slice(None, None, 3), slice(1, None, 3)),
                    np.int16),
         pool_case((2, 32, 16, 56, 56), 3, 1, 1, 1, np.float16),
         # neighbours of the fp16 non-overlapping fix (odd rows, odd strides, 2-D and 3-D)
         pool_case((8, 64, 127, 127), 2, 2, 0, 1, np.float16),
         pool_case((4, 16, 31, 63, 63), 3, 3, 1, 1, np.float16),
         pool_case((8, 64, 128, 128), 2, 3, 0, 1, np.float16),
         pool_case((4, 16, 15, 63, 63), 2, 2, 0, 1, np.float32),
         # 8-: what the unfixed cliffs cost, by neighbours that take other kernels
         slice_case((32, 64, 256, 256), "[:, :, ::3, 1::3]", (S, S, slice(None, None, 3), slice(1, None, 3)),
                    np.int16),
         slice_case((32, 64, 255, 255), "[:, :, ::3, :]", (S, S, slice(None, None, 3), S), np.int16),
         slice_case((32, 64, 255, 255), "[:, :, ::3, 1::3]", (S, S, slice(None, None, 3), slice(1, None, 3)),
                    np.int32),
         slice_case((32, 64, 255, 255), "[:, :, :, 1::3]", (S, S, S, slice(1, None, 3)), np.int16),
         pool_case((8, 64, 96, 96), 3, 1, 1, 1, np.float32),
         pool_case((8, 64, 96, 96), 2, 1, 1, 2, np.float32)]

def main():
    base, new = sys.argv[1], sys.argv[2]
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    print("| case | base us | base kernel | new us | new kernel | PyTorch us | new same as PyTorch | PyTorch / new |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for i, (name, inputs, args, fn, check) in enumerate(CASES):
            if only and str(i) not in only: continue
            case = gb.Case("x", name, "", "", inputs, args, "", fn, check, None)
            tensors, paths = gb.make_inputs(case, d, "cuda")
            a = [paths.get(x, x) for x in args]
            rb, eb = run(base, a)
            rn, en = run(new, a)
            ours = torch.from_numpy(np.load(paths["{dx}"])).cuda() if rn else None
            t_ms = gb.device_median_ms(lambda: gb.call_torch(fn, tensors, "cuda"), REPEAT, "cuda")
            theirs = gb.call_torch(fn, tensors, "cuda", in_float=check is gb.close_half)
            ok = bool(check(ours, theirs)) if rn else False
            bu = rb["kernel_ms"]["median"] * 1e3 if rb else float("nan")
            nu = rn["kernel_ms"]["median"] * 1e3 if rn else float("nan")
            print(f"| {name} | {bu:.1f} | {rb.get('kernel') if rb else eb} | {nu:.1f} | "
                  f"{rn.get('kernel') if rn else en} | {t_ms*1e3:.1f} | {ok} | {t_ms*1e3/nu:.2f}x |", flush=True)

main()
