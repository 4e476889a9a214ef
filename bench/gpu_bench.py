#!/usr/bin/env python3
"""dmlgrad's GPU kernels against PyTorch CUDA and the copy ceiling, in one run on the GPU machine.

For every case: inputs are written once to a scratch folder; dmlgrad runs with `--repeat N --json` (it warms the
GPU up by time, then times N back-to-back dispatches with timestamp queries); PyTorch runs the equivalent op,
warmed up by time, timed with CUDA events (median of N); the copy ceiling is a 2 x 1 GiB device-to-device copy
timed the same way. dmlgrad's result is checked against PyTorch's. Prints one markdown table, then the
whole-command comparison (relu-grad on 1 GiB files against a numpy + PyTorch script) and a 1 MB phase breakdown.

Each row also gives its bound, the fewest bytes the operator must move at the copy ceiling (the fastest time
possible), and its target (issue 11), with whether it is met. After the table: the fixed cost of one dispatch
(dmlgrad's time for a kernel that moves next to nothing, through the same timestamps) and, for the rows it
matters to (under 100 us), each bound with that cost added; the JSON rows carry it as bound_with_fixed_us.
Targets:
- memory-bound rows (relu, clip, slice, nearest resample at integer factors): >= 90% of the copy ceiling;
- max-pool grad: >= 3x PyTorch's forward-with-indices + backward;
- resample linear: >= 4x PyTorch's backward at 2x and 1.5x, >= 2x at 0.5x;
- a ratio that would need more than the copy ceiling becomes >= 90% of the ceiling instead;
- every row: no slower than PyTorch.

    python3 bench/gpu_bench.py --dmlgrad build/dmlgrad [--repeat 50] [--only relu,maxpool] [--json-out rows.json]
    python3 bench/gpu_bench.py --api vulkan,d3d12 ...    # every row on both GPU APIs, side by side
    python3 bench/gpu_bench.py --list                    # the rows and their dmlgrad commands, nothing run
    python3 bench/gpu_bench.py --smoke --device cpu ...  # every row on tiny shapes (checks the script itself)

--only takes groups (relu, clip, slice, maxpool, resample, small, command) or prefixes of a row's operator name.
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

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # bench/sweep.py --no-torch still imports the helpers below; this script itself needs PyTorch
    torch = F = None

WARMUP_S = 0.3
TIMED_BUDGET_S, MIN_TIMED_CALLS = 3.0, 3
MEMORY_BOUND_PERCENT = 90  # issue 11: memory-bound rows, and ratios the copy ceiling cannot allow


def device_median_ms(fn, repeat, device, announce=lambda calls, more_s=0.0: None):
    """fn's median time in ms over `repeat` calls, or fewer (at least MIN_TIMED_CALLS) when one call is so slow that
    `repeat` of them would take more than TIMED_BUDGET_S, or the last warm-up call's time when that call alone took
    longer (PyTorch takes seconds to minutes on some sweep shapes). announce(n, s) is called before each stretch of
    n calls, plus those started in the next s seconds, that is then waited for (bench/sweep_torch.py: its parent
    allows each call a time limit); once before the warm-up, not before each of its calls, so that the calls run
    back to back as they do without it."""
    announce(1, WARMUP_S)
    start, call_s = time.perf_counter(), 0.0
    while time.perf_counter() - start < WARMUP_S:  # the H100 idles at a low clock: warm up by time
        begin = time.perf_counter()
        fn()
        if device == "cuda":  # one call at a time: queued calls of a slow op would run on far past WARMUP_S
            torch.cuda.synchronize()
        call_s = time.perf_counter() - begin
    if call_s > TIMED_BUDGET_S:  # seconds per call: that one call's time says enough
        return call_s * 1e3
    repeat = max(MIN_TIMED_CALLS, min(repeat, int(TIMED_BUDGET_S / max(call_s, 1e-9))))
    announce(repeat)
    if device != "cuda":
        times = []
        for _ in range(repeat):
            begin = time.perf_counter()
            fn()
            times.append((time.perf_counter() - begin) * 1e3)
        return statistics.median(times)
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(repeat)]
    for begin, end in events:
        begin.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(b.elapsed_time(e) for b, e in events)


def copy_ceiling_gbps(repeat, device):
    n = 1 << 28 if device == "cuda" else 1 << 22  # 1 GiB of float32 each way on the GPU
    src = torch.rand(n, device=device)
    dst = torch.empty_like(src)
    ms = device_median_ms(lambda: dst.copy_(src), repeat, device)
    return 2 * n * 4 / (ms * 1e6)


def run_dmlgrad(binary, args, repeat, extra=()):
    proc = subprocess.run([binary, *args, *extra, "--repeat", str(repeat), "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"dmlgrad {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return json.loads(proc.stdout)


def random_array(shape, dtype, rng):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape, dtype=np.float32).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)


def save(d, name, array):
    path = os.path.join(d, name)
    np.save(path, array)
    return path


def random_tensor(shape, dtype, device):
    """Made on the device (fast for the 1 GiB inputs), saved from there."""
    if np.dtype(dtype).kind == "f":
        return torch.randn(shape, device=device).to(torch.from_numpy(np.zeros(0, dtype)).dtype)
    info = np.iinfo(dtype)
    return torch.randint(int(info.min), int(info.max) + 1, shape, device=device,
                         dtype=torch.from_numpy(np.zeros(0, dtype)).dtype)


# Result checks, on the device: ours and theirs are tensors of the result's shape.
def exact(ours, theirs):
    return torch.equal(ours, theirs)


def close(ours, theirs):
    return torch.allclose(ours, theirs, rtol=1e-4, atol=1e-5)


def close_half(ours, theirs):  # fp16: theirs is the float32 sum, ours that sum rounded once to half (2^-11)
    return torch.allclose(ours.float(), theirs.float(), rtol=1e-3, atol=1e-4)


def close_to_scale(ours, theirs, tolerance=1e-4):
    """Bilinear weights: docs/OPERATORS.md 5.4's u = (o + 0.5) / s - 0.5 and PyTorch's (o + 0.5) * (in / out) - 0.5 round
    differently in float32 and move a weight by an ulp or so, an error proportional to the gradients summed, not
    to their (possibly cancelling) sum: compared against the largest magnitude of the result."""
    ours, theirs = ours.float(), theirs.float()
    return float((ours - theirs).abs().max()) <= tolerance * float(theirs.abs().max())


def close_to_scale_half(ours, theirs):  # fp16 bilinear: close_half's rounding plus close_to_scale's weights
    return close_to_scale(ours, theirs, 1e-3)


class Case:
    """One row. args name the inputs as {name} (replaced by their .npy paths) and the output as {dx};
    torch_fn(tensors) is the PyTorch op, timed and compared with (for fp16 floating-point rows, run on the same
    inputs converted to float32: PyTorch's fp16 kernels of 3-D max-pool and bilinear resample add with half
    atomics, in no fixed order, while dmlgrad rounds the float32 sum once); ratio is the target speed-up over
    PyTorch, None for a memory-bound row."""

    def __init__(self, group, op, shape, dtype, inputs, args, torch_name, torch_fn, check, ratio):
        self.group, self.op, self.shape, self.dtype, self.inputs, self.args = group, op, shape, dtype, inputs, args
        self.torch_name, self.torch_fn, self.check, self.ratio = torch_name, torch_fn, check, ratio


def dims(shape):
    return "x".join(map(str, shape))


def csv(values):
    return ",".join(map(str, values))


def elementwise_cases(n):
    size = f"{n >> 20}M"
    inputs = lambda dtype: {"x": ((n,), dtype), "dy": ((n,), dtype)}
    args = lambda op: [op, "-x", "{x}", "-g", "{dy}", "-o", "{dx}"]
    for dtype in (np.float32, np.float16):
        yield Case("relu", "relu-grad", size, np.dtype(dtype).name, inputs(dtype), args("relu-grad"),
                   "threshold_backward", lambda t: torch.ops.aten.threshold_backward(t["dy"], t["x"], 0), exact,
                   None)
    yield Case("clip", "clip-grad", size, "float32", inputs(np.float32), args("clip-grad") + ["--min", "-1",
               "--max", "1"], "hardtanh_backward",
               lambda t: torch.ops.aten.hardtanh_backward(t["dy"], t["x"], -1, 1), exact, None)
    # hardtanh_backward has no int8 kernel: the same select written out
    yield Case("clip", "clip-grad", size, "int8", inputs(np.int8), args("clip-grad") + ["--min", "-40", "--max", "40"],
               "where((x>min)&(x<max), dy, 0)", lambda t: torch.where((t["x"] > -40) & (t["x"] < 40), t["dy"], 0),
               exact, None)


def slice_case(dx_shape, dy_shape, dtype, expression, window, torch_name, place):
    """dX = zeros with dY placed by place(dx, dy) (PyTorch slicing refuses negative steps: flip, then assign).
    window: the explicit (offsets, sizes, strides) lists instead of --slice, as the first rows always ran."""
    args = ["slice-grad", "-g", "{dy}", "-o", "{dx}", "--output-sizes", csv(dx_shape)]
    if window:
        args += ["--input-window-offsets", csv(window[0]), "--input-window-sizes", csv(window[1]),
                 "--input-window-strides", csv(window[2])]
    else:
        args += ["--slice", expression]

    def torch_grad(t):
        dx = torch.zeros(dx_shape, device=t["dy"].device, dtype=t["dy"].dtype)
        place(dx, t["dy"])
        return dx

    return Case("slice", f"slice-grad {expression}", f"dX {dims(dx_shape)}", np.dtype(dtype).name,
                {"dy": (dy_shape, dtype)}, args, torch_name, torch_grad, exact, None)


def slice_cases(n, c):
    dx = (n, c, 256, 256)
    half = (n, c, 128, 128)
    def every_other(dx, dy):
        dx[:, :, ::2, ::2] = dy

    window = ((0, 0, 0, 0), (n, c, 255, 255), (1, 1, 2, 2))
    for dtype in (np.float32, np.float16, np.int8):  # the case, then the same fraction for 2- and 1-byte
        yield slice_case(dx, half, dtype, "[:, :, ::2, ::2]", window, "zeros + strided assign", every_other)

    def crop(dx, dy):
        dx[:, :, 8:248, 8:248] = dy

    def flip_rows(dx, dy):
        dx.copy_(dy.flip(2))

    def every_other_reversed(dx, dy):  # ::-2 of 256 visits 255, 253, ..., 1
        dx[:, :, 1::2, 1::2] = dy.flip((2, 3))

    for dtype in (np.float32, np.float16):
        yield slice_case(dx, (n, c, 240, 240), dtype, "[:, :, 8:248, 8:248]", None, "zeros + assign", crop)
    for dtype in (np.float32, np.float16):
        yield slice_case(dx, dx, dtype, "[:, :, ::-1, :]", None, "flip", flip_rows)
    yield slice_case(dx, half, np.float32, "[:, :, ::-2, ::-2]", None, "zeros + flipped strided assign",
                     every_other_reversed)


def maxpool_case(x_shape, k, s, p, dtype, group="maxpool"):
    rank = len(x_shape) - 2
    out = [(i + 2 * p - k) // s + 1 for i in x_shape[2:]]
    args = ["maxpool-grad", "-x", "{x}", "-g", "{dy}", "-o", "{dx}", "--window-size", csv([k] * rank), "--strides",
            csv([s] * rank), "--start-padding", csv([p] * rank), "--end-padding", csv([p] * rank)]
    pool = F.max_pool2d if rank == 2 else F.max_pool3d
    backward = (torch.ops.aten.max_pool2d_with_indices_backward if rank == 2 else
                torch.ops.aten.max_pool3d_with_indices_backward)

    def torch_grad(t):
        _, idx = pool(t["x"], k, s, p, return_indices=True)
        return backward(t["dy"], t["x"], [k] * rank, [s] * rank, [p] * rank, [1] * rank, False, idx)

    name = f"maxpool{'3d' if rank == 3 else ''}-grad k{k} s{s} p{p}"
    return Case(group, name, f"X {dims(x_shape)}", np.dtype(dtype).name,
                {"x": (x_shape, dtype), "dy": (tuple(x_shape[:2]) + tuple(out), dtype)}, args,
                f"max_pool{rank}d fwd+idx + bwd", torch_grad, close if dtype == np.float32 else close_half, 3.0)


def maxpool_cases(n, c):
    for dtype in (np.float32, np.float16):
        for k, s, p in ((2, 2, 0), (3, 1, 1), (3, 2, 1)):
            yield maxpool_case((n(32), c(64), 256, 256), k, s, p, dtype)
    for dtype in (np.float32, np.float16):
        for k, s, p in ((2, 2, 0), (3, 2, 1)):
            yield maxpool_case((n(16), c(32), 32, 64, 64), k, s, p, dtype)
    for x_shape in ((n(64), c(256), 56, 56), (n(128), c(256), 28, 28)):  # not powers of two, many channels
        yield maxpool_case(x_shape, 3, 2, 1, np.float32)


def resample_case(dx_shape, mode, scale, dtype, group="resample"):
    side = [int(i * scale) for i in dx_shape[2:]]
    dy_shape = tuple(dx_shape[:2]) + tuple(side)
    args = ["resample-grad", "-g", "{dy}", "-o", "{dx}", "--output-sizes", csv(dx_shape), "--interpolation-mode",
            mode, "--scales", f"1,1,{scale},{scale}"]
    half = dtype == np.float16
    if mode == "linear":  # PyTorch align_corners=False = half-pixel: grad offsets (-0.5, 0.5)
        args += ["--input-pixel-offsets", "0,0,-0.5,-0.5", "--output-pixel-offsets", "0,0,0.5,0.5"]
        fn = lambda t: torch.ops.aten.upsample_bilinear2d_backward(t["dy"], side, list(dx_shape), False)
        name, check = "upsample_bilinear2d_backward", close_to_scale_half if half else close_to_scale
        ratio = 4.0 if scale >= 1.5 else 2.0  # issue 11: 4x at 2x and 1.5x, 2x at 0.5x
    else:  # PyTorch legacy nearest = floor(o * in / out): offsets (0, 0), rounding decreasing
        args += ["--input-pixel-offsets", "0,0,0,0", "--output-pixel-offsets", "0,0,0,0"]
        fn = lambda t: torch.ops.aten.upsample_nearest2d_backward(t["dy"], side, list(dx_shape))
        name, check = "upsample_nearest2d_backward", close_half if half else close
        ratio = None if float(scale).is_integer() else 1.0  # integer factors are memory-bound
    return Case(group, f"resample-grad {mode} {scale:g}x", f"dX {dims(dx_shape)}", np.dtype(dtype).name,
                {"dy": (dy_shape, dtype)}, args, name, fn, check, ratio)


def resample_cases(n, c):
    dx = (n(16), c(64), 256, 256)
    for mode, scale, dtype in (("linear", 2.0, np.float32), ("linear", 1.5, np.float32), ("linear", 0.5, np.float32),
                               ("nearest", 2.0, np.float32), ("nearest", 2.0, np.float16),
                               ("linear", 2.0, np.float16), ("linear", 1.5, np.float16), ("linear", 0.5, np.float16),
                               ("nearest", 3.0, np.float16)):
        yield resample_case(dx, mode, scale, dtype)
    yield resample_case((n(64), c(128), 45, 45), "linear", 2.0, np.float32)  # not powers of two
    yield resample_case((n(64), c(128), 100, 100), "linear", 1.5, np.float32)


def small_cases(n, c):
    """1M-element tensors, where launch and set-up overhead show."""
    for case in elementwise_cases(1 << 20):
        if case.op == "relu-grad" and case.dtype == "float32":
            case.group = "small"
            yield case
    yield maxpool_case((n(4), c(16), 128, 128), 3, 2, 1, np.float32, "small")
    yield resample_case((n(4), c(16), 64, 64), "linear", 2.0, np.float32, "small")  # dY 4x16x128x128


def all_cases(smoke):
    """Every row in table order; smoke keeps the spatial shapes (they decide the kernels' paths) but takes batch 1
    and 2 channels, and 1M-element relu and clip inputs."""
    n = (lambda v: 1) if smoke else (lambda v: v)
    c = (lambda v: 2) if smoke else (lambda v: v)
    yield from elementwise_cases(1 << 20 if smoke else 256 << 20)
    yield from slice_cases(n(32), c(64))
    yield from maxpool_cases(n, c)
    yield from resample_cases(n, c)
    yield from small_cases(n, c)


def judge(ratio, bound_ms, ours_ms, theirs_ms):
    """The row's target (text), and whether it is met."""
    percent, speed_up = 100 * bound_ms / ours_ms, theirs_ms / ours_ms
    if ratio is None:
        goal, met = f">= {MEMORY_BOUND_PERCENT}% of ceiling", percent >= MEMORY_BOUND_PERCENT
    else:
        needed = 100 * bound_ms * ratio / theirs_ms  # % of the ceiling that ratio x PyTorch needs
        if needed > 100:
            goal = f">= {MEMORY_BOUND_PERCENT}% of ceiling ({ratio:g}x PyTorch needs {needed:.0f}%)"
            met = percent >= MEMORY_BOUND_PERCENT
        else:
            return f">= {ratio:g}x PyTorch", speed_up >= ratio
    return goal + ", >= 1x PyTorch", met and speed_up >= 1.0


def call_torch(fn, tensors, device, in_float=False):
    """fn on fp16 tensors, or with in_float on their float32 values (the reference of fp16 rows). PyTorch 1.13's
    CPU has no fp16 max-pool or upsampling kernels: on the CPU (--smoke only) fp16 always runs in float32."""
    half = any(t.dtype == torch.float16 for t in tensors.values())
    if not half or (device == "cuda" and not in_float):
        return fn(tensors)
    result = fn({k: t.float() if t.dtype == torch.float16 else t for k, t in tensors.items()})
    return result if in_float else result.half()


def make_inputs(case, d, device):
    tensors, paths = {}, {"{dx}": os.path.join(d, "dx.npy")}
    for name, (shape, dtype) in case.inputs.items():
        tensors[name] = random_tensor(shape, dtype, device)
        paths["{" + name + "}"] = os.path.join(d, name + ".npy")
        np.save(paths["{" + name + "}"], tensors[name].cpu().numpy())
    return tensors, paths


def report_difference(case, ours, theirs):
    diff = (ours.double() - theirs.double()).abs()
    at = np.unravel_index(int(torch.argmax(torch.nan_to_num(diff, nan=float("inf")))), tuple(diff.shape))
    print(f"  {case.op}: max |difference| {float(diff[at]):.3g} at {at}: ours {float(ours[at])!r}, "
          f"PyTorch {float(theirs[at])!r}", flush=True)


def run_case(case, d, args, ceiling):
    """One row per GPU API of --api (side by side: the same inputs, PyTorch timed once)."""
    tensors, paths = make_inputs(case, d, args.device)
    dml_args = [paths.get(a, a) for a in case.args]
    theirs_ms = device_median_ms(lambda: call_torch(case.torch_fn, tensors, args.device), args.repeat, args.device)
    theirs = call_torch(case.torch_fn, tensors, args.device, in_float=case.check in (close_half, close_to_scale_half))
    rows = []
    for api in args.apis:
        report = run_dmlgrad(args.dmlgrad, dml_args, args.repeat, [*args.dmlgrad_arg, "--api", api])
        ours_ms, min_bytes, gbps = report["kernel_ms"]["median"], report["bytes"], report["effective_gbps"]
        ours = torch.from_numpy(np.load(paths["{dx}"])).to(args.device)
        ok = bool(case.check(ours, theirs))
        if not ok:
            report_difference(case, ours, theirs)
        bound_ms = min_bytes / (ceiling * 1e6)
        goal, met = judge(case.ratio, bound_ms, ours_ms, theirs_ms)
        rows.append({"group": case.group, "op": case.op, "shape": case.shape, "dtype": case.dtype, "api": api,
                     "kernel": report.get("kernel"), "dmlgrad_us": ours_ms * 1e3, "bytes": min_bytes, "gbps": gbps,
                     "percent_of_ceiling": 100 * gbps / ceiling, "torch_op": case.torch_name,
                     "torch_us": theirs_ms * 1e3, "speed_up": theirs_ms / ours_ms, "same_result": ok,
                     "bound_us": bound_ms * 1e3, "target_ratio": case.ratio, "target": goal, "met": met})
    return rows


TABLE_HEADER = ("| operator | shape | dtype | API | dmlgrad median us | GB/s | % of ceiling | PyTorch op | PyTorch us | "
                "PyTorch / dmlgrad | same result | bound us | target | met |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def table_line(r):
    return (f"| {r['op']} | {r['shape']} | {r['dtype']} | {r['api']} | {r['dmlgrad_us']:.0f} | {r['gbps']:.0f} | "
            f"{r['percent_of_ceiling']:.0f}% | {r['torch_op']} | {r['torch_us']:.0f} | {r['speed_up']:.2f}x | "
            f"{'yes' if r['same_result'] else 'NO'} | {r['bound_us']:.1f} | {r['target']} | "
            f"{'yes' if r['met'] else '**no**'} |")


def list_cases(cases):
    for case in cases:
        inputs = ", ".join(f"{name} {dims(shape)} {np.dtype(dtype).name}" for name, (shape, dtype) in
                           case.inputs.items())
        goal = (f">= {MEMORY_BOUND_PERCENT}% of ceiling" if case.ratio is None else
                f">= {case.ratio:g}x PyTorch (or {MEMORY_BOUND_PERCENT}% of ceiling if that needs more)")
        print(f"[{case.group}] {case.op} | {case.shape} | {case.dtype} | {case.torch_name} | target {goal}\n"
              f"    inputs: {inputs}\n    dmlgrad {' '.join(case.args)}")


def selected(case, only):
    return not only or case.group in only or any(case.op.startswith(o) for o in only)


def fixed_cost_us(binary, d, rng, repeat, extra):
    """dmlgrad's median time for relu-grad on 16 float32 elements (one workgroup): what every dispatch costs besides
    its bytes (the launch, ramp-up and drain of a grid, the barrier before it, the timestamps around it)."""
    xp = save(d, "x_fixed.npy", random_array(16, np.float32, rng))
    dyp = save(d, "dy_fixed.npy", random_array(16, np.float32, rng))
    report = run_dmlgrad(binary, ["relu-grad", "-x", xp, "-g", dyp, "-o", os.path.join(d, "dx_fixed.npy")], repeat, extra)
    return report["kernel_ms"]["median"] * 1e3


SMALL_ROW_US = 100  # rows under this: the fixed cost is a visible part of them


def print_fixed_cost(fixed_us, rows, repeat):
    print(f"\nFixed cost of one dispatch (relu-grad on 16 float32 elements, one workgroup, median of {repeat}): "
          f"{fixed_us:.2f} us")
    small = [r for r in rows if r["dmlgrad_us"] < SMALL_ROW_US]
    if not small:
        return
    print("\n| operator | shape | dtype | dmlgrad median us | bound us | bound + fixed cost us | bound + fixed / dmlgrad |\n"
          "|---|---|---|---|---|---|---|")
    for r in small:
        print(f"| {r['op']} | {r['shape']} | {r['dtype']} | {r['dmlgrad_us']:.1f} | {r['bound_us']:.1f} | "
              f"{r['bound_with_fixed_us']:.1f} | {100 * r['bound_with_fixed_us'] / r['dmlgrad_us']:.0f}% |")


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


def write_json(path, header, rows):
    if path:
        with open(path + ".tmp", "w") as f:
            json.dump({**header, "rows": rows}, f, indent=1)
        os.replace(path + ".tmp", path)  # whole after every row: a run cut short still leaves its rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dmlgrad", default="build/dmlgrad")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--only", default="",
                        help="comma-separated groups or operator prefixes: relu,clip,slice,maxpool,resample,small,"
                             "command")
    parser.add_argument("--scratch", default=tempfile.gettempdir())
    parser.add_argument("--json-out", help="also write the rows, with the ceiling, as JSON (plot_performance.py)")
    parser.add_argument("--list", action="store_true", help="print the rows and their dmlgrad commands; run nothing")
    parser.add_argument("--smoke", action="store_true", help="tiny shapes: checks the script, times nothing real")
    parser.add_argument("--device", default="cuda", help="PyTorch's device (cpu with --smoke)")
    parser.add_argument("--dmlgrad-arg", action="append", default=[], help="extra dmlgrad argument, e.g. --cpu")
    parser.add_argument("--api", default="vulkan",
                        help="dmlgrad's GPU APIs, comma-separated: vulkan, d3d12, or vulkan,d3d12 (rows side by side)")
    args = parser.parse_args()
    if torch is None:
        sys.exit("gpu_bench.py: PyTorch is missing (python3 -c 'import torch' fails); it is the reference it times")
    args.apis = [a for a in args.api.split(",") if a]
    if not args.apis or any(a not in ("vulkan", "d3d12") for a in args.apis):
        parser.error(f"--api {args.api}: name vulkan, d3d12 or both, comma-separated")
    only = set(filter(None, args.only.split(",")))
    want = lambda name: not only or name in only
    cases = [case for case in all_cases(args.smoke) if selected(case, only)]
    if args.list:
        return list_cases(cases)
    rng = np.random.default_rng()

    ceiling = copy_ceiling_gbps(args.repeat, args.device)
    name = torch.cuda.get_device_name() if args.device == "cuda" else args.device
    print(f"# {name}, copy ceiling {ceiling:.0f} GB/s (2 x 1 GiB device copy), median of {args.repeat}", flush=True)
    header = {"device": name, "ceiling_gbps": ceiling, "repeat": args.repeat, "smoke": args.smoke}
    rows = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=args.scratch) as d:
        fixed_us = fixed_cost_us(args.dmlgrad, d, rng, args.repeat, args.dmlgrad_arg) if cases else None
        header["fixed_cost_us"] = fixed_us
        for case in cases:
            for r in run_case(case, d, args, ceiling):
                r["bound_with_fixed_us"] = r["bound_us"] + fixed_us
                rows.append(r)
                write_json(args.json_out, header, rows)
                print(f"  {r['op']} {r['shape']} {r['dtype']} {r['api']}: {r['dmlgrad_us']:.0f} us vs "
                      f"{r['torch_us']:.0f} us {'ok' if r['same_result'] else 'RESULT DIFFERS'} "
                      f"({time.perf_counter() - started:.0f} s)", flush=True)
            if args.device == "cuda":
                torch.cuda.empty_cache()
        print("\n" + TABLE_HEADER)
        for r in rows:
            print(table_line(r))
        met = sum(r["met"] for r in rows)
        print(f"\n{met} of {len(rows)} rows meet their target; {sum(not r['same_result'] for r in rows)} differ "
              "from PyTorch")
        if rows:
            print_fixed_cost(fixed_us, rows, args.repeat)
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
