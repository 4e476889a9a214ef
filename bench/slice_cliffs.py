#!/usr/bin/env python3
"""Slice grad's cliffs of issue 23 (the fresh-seed sweep's slowest slice cases, docs/runs/
2026-11-27-h100-sweep-seed20261128.txt, and the earlier int16 [:, :, ::3, 1::3] and 16-bit step-2 odd rows) with
neighbours of each geometry class, bench rows that must not move, and the slow slices of the seed-20261201 sweep
(cases 22-29): a baseline dmlgrad, a new dmlgrad and PyTorch
CUDA in one run, on the GPU machine. Kernel medians of --repeat 30 (dmlgrad's own timestamps), PyTorch's (zeros,
then the strided assignment) by CUDA events after a warm-up by time (bench/gpu_bench.py's helpers); both binaries'
results checked against PyTorch's, bit for bit. "% of bound": writing dX once and reading dY once at the copy
ceiling, for the new binary.

    python3 bench/slice_cliffs.py BASE_DMLGRAD NEW_DMLGRAD [CASE,...]   # CASE: indices into CASES
"""
import json, os, subprocess, sys, tempfile
import numpy as np, torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_bench as gb

REPEAT = 30

# (dX shape, the slice as numpy writes it, dtype); the sweep's case number in the comment.
CASES = [((52, 17317, 7, 23), "[26::-4, :, :, :1:-1]", np.float32),  # 35
         ((16, 11, 57, 181, 15), "[::-3, :, -54::3, -168:112, -14::3]", np.float32),  # 15
         ((10, 23, 1, 13, 165, 483), "[::-1, :5:-4, :, :-3:2, 68:-155:-3, :]", np.float16),  # 36
         ((8, 19, 1, 7, 31, 13, 5, 13), "[:, 18:-6:-4, :, 0:-3, :7:4, 1::2, :, 1::4]", np.int8),  # 78
         ((29179906, 3, 1), "[27729770:21707819:-1, ::-4, :]", np.float32),  # 72
         ((31, 61, 11, 24, 779), "[:, -26::-3, :0:-4, 13::-2, -601::-3]", np.int8),  # 21
         ((4096, 32, 7, 37), "[693:2063:2, 11::3, :2, :]", np.uint32),  # 80
         ((1, 7, 18, 235397), "[0::2, 0::2, 2:6, 138085:194632]", np.float64),  # 18 (int64 there: the same bits)
         ((32, 64, 255, 255), "[:, :, ::3, 1::3]", np.int16),
         ((32, 64, 255, 255), "[:, :, :, ::2]", np.int16),
         ((32, 64, 255, 255), "[:, :, ::2, ::2]", np.float16),
         ((32, 64, 255, 255), "[:, :, ::-2, ::-2]", np.int8),
         ((32, 64, 255, 255), "[:, :, 3:250, 250:3:-1]", np.float16),
         ((64, 1024, 1023), "[:, 1:-1, 2:-3]", np.int8),
         ((8, 19, 3, 5, 4099), "[:, ::3, :, 1::2, 7:4000:3]", np.float64),
         # sweep cases the old kernels did well on (neighbours that must stay fast)
         ((5, 9364177), "[:, :]", np.uint32),  # 23
         ((1346, 987, 23), "[1154:-529:-1, :, :]", np.uint8),  # 25
         ((8, 4, 54627, 6), "[:, 0::-1, -41116:8919:-4, :]", np.float16),  # 73
         ((240031837,), "[::2]", np.int8),  # 38
         ((42, 7, 47, 11, 512, 1), "[:, ::-2, :0:-2, 7:11:2, 8::3, ::-2]", np.int32),  # 76 (rows kernel)
         # bench rows (rows kernel, unchanged)
         ((32, 64, 256, 256), "[:, :, ::2, ::2]", np.float32),
         ((32, 64, 256, 256), "[:, :, 8:248, 8:248]", np.float16)]
D3D12_TOO = {len(CASES) - 3, len(CASES) - 2, len(CASES) - 1}  # case 76 and the bench rows
# The slow slices of the seed-20261201 sweep (docs/runs/2026-11-27c-h100-sweep-seed20261201-discovery.txt), cases 22-29
# here (the sweep's case number in the comment); the first also on D3D12.
CASES += [((5974013, 11), "[:5090346:3, 10:3:-3]", np.float32),  # 35
          ((389, 41, 11, 13, 1, 16, 1, 9), "[:, ::-1, -5:10:3, 4::-3, ::2, :11:2, :, :]", np.int16),  # 37
          ((103, 7, 11, 59, 34, 8), "[20:39:2, 2:-4:2, :, -36:16:-3, :, 0:7:2]", np.float16),  # 73
          ((17, 3, 11, 5, 7, 23, 13, 8), "[-11:5:-4, :, -4::-2, :, -1::-1, 7:16:3, :, 6:2:-4]", np.float32),  # 92
          ((8, 4, 8959, 11, 3, 14), "[2:0:-2, :, :2274:3, 0::4, 0:, :]", np.int8),  # 135
          ((288637, 5, 8, 9), "[::-4, ::-3, ::-3, 2:4]", np.uint8),  # 139
          ((32768, 16, 19, 22), "[2207:-23735:3, :, :, ::-3]", np.float16),  # 150
          ((95891, 53, 5), "[59051:20656:-2, ::3, :]", np.int16)]  # 151
D3D12_TOO.add(23)


def positive_index(shape, expression):
    """The numpy index of `expression` with every negative step made positive, and the axes dY must be flipped on
    (PyTorch refuses negative steps)."""
    index = eval("np.s_" + expression)
    index = index if isinstance(index, tuple) else (index,)
    if Ellipsis in index:
        at = index.index(Ellipsis)
        index = index[:at] + (slice(None),) * (len(shape) - len(index) + 1) + index[at + 1:]
    out, flips = [], []
    for axis, (n, s) in enumerate(zip(shape, index)):
        picked = range(n)[s]
        if s.step is not None and s.step < 0 and len(picked) > 0:
            out.append(slice(picked[-1], picked[0] + 1, -s.step))
            flips.append(axis)
        else:
            out.append(s)
    return tuple(out), flips


def case(dx_shape, expression, dtype):
    index, flips = positive_index(dx_shape, expression)
    dy_shape = np.zeros(dx_shape, dtype=np.uint8)[eval("np.s_" + expression)].shape
    args = ["slice-grad", "-g", "{dy}", "-o", "{dx}", "--output-sizes", gb.csv(dx_shape), "--slice", expression]

    def fn(t):
        dx = torch.zeros(dx_shape, device="cuda", dtype=t["dy"].dtype)
        dx[index] = t["dy"].flip(flips) if flips else t["dy"]
        return dx

    name = f"{expression} {gb.dims(dx_shape)} {np.dtype(dtype).name}"
    bound_bytes = (np.prod(dx_shape) + np.prod(dy_shape)) * np.dtype(dtype).itemsize
    return name, {"dy": (tuple(dy_shape), dtype)}, args, fn, bound_bytes


def run(binary, args, extra=()):
    p = subprocess.run([binary, *args, *extra, "--repeat", str(REPEAT), "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()[:200]
    return json.loads(p.stdout), ""


def main():
    base, new = sys.argv[1], sys.argv[2]
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    ceiling = gb.copy_ceiling_gbps(REPEAT, "cuda")
    print(f"copy ceiling {ceiling:.0f} GB/s")
    print("| # | case | base us | base kernel | new us | new kernel | PyTorch us | base ok | new ok | "
          "PyTorch / new | new % of bound |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for i, spec in enumerate(CASES):
            if only and str(i) not in only:
                continue
            name, inputs, args, fn, bound_bytes = case(*spec)
            c = gb.Case("slice", name, "", "", inputs, args, "", fn, gb.exact, None)
            tensors, paths = gb.make_inputs(c, d, "cuda")
            a = [paths.get(x, x) for x in args]
            t_ms = gb.device_median_ms(lambda: gb.call_torch(fn, tensors, "cuda"), REPEAT, "cuda")
            theirs = gb.call_torch(fn, tensors, "cuda")
            cols = []
            # Rows of whole uint4s take the rows kernel on Vulkan and the walk on D3D12: the walk's time there too.
            runs = [(base, ()), (new, ())] + ([(new, ("--api", "d3d12"))] if i in D3D12_TOO else [])
            for binary, extra in runs:
                r, err = run(binary, a, extra)
                ok = bool(gb.exact(torch.from_numpy(np.load(paths["{dx}"])).cuda(), theirs)) if r else False
                us = r["kernel_ms"]["median"] * 1e3 if r else float("nan")
                cols.append((us, r.get("kernel") if r else err, ok))
            (bu, bk, bok), (nu, nk, nok) = cols[:2]
            bound_us = bound_bytes / (ceiling * 1e9) * 1e6
            print(f"| {i} | {name} | {bu:.1f} | {bk} | {nu:.1f} | {nk} | {t_ms * 1e3:.1f} | {bok} | {nok} | "
                  f"{t_ms * 1e3 / nu:.2f}x | {100 * bound_us / nu:.0f}% |", flush=True)
            for us, kernel, ok in cols[2:]:
                print(f"| {i} | (d3d12) {name} | | | {us:.1f} | {kernel} | | | {ok} | {t_ms * 1e3 / us:.2f}x | "
                      f"{100 * bound_us / us:.0f}% |", flush=True)
            del tensors, theirs
            for p in paths.values():
                if os.path.exists(p):
                    os.remove(p)


main()
