"""The cases of bench/backend_check.py: each generator draws one case from `rng` and returns
dict(inputs={name: (shape, dtype, kind)}, args=[dmlgrad's words, "{name}" for an input's file], desc=text,
numpy=optional fn(inputs) -> the expected dX), or None where the draw breaks a rule (it is drawn again). The random
ones cover each operator's whole parameter space on small tensors; the others build shapes just inside and outside the
newest kernels' rules (src/gpu/ops/*_dispatch.cpp) and past lavapipe's 128 MiB binding and 65535 workgroups."""
import numpy as np

import sweep_cases

SLICE_DTYPES = ("float32", "float16", "float64", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16",
                "uint8")
FLOAT = ("float32", "float16")


def csv(v):
    return ",".join(str(int(x)) for x in v)


def fcsv(v):
    return ",".join(repr(float(x)) for x in v)


def size(rng, hi, special=True):
    r = rng.random()
    if special and r < 0.15:
        return 1
    if special and r < 0.3:
        return int(rng.choice([2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65]))
    return int(rng.integers(1, hi + 1))


def shape_under(rng, rank, max_elems, hi=64):
    for _ in range(20):
        s = [size(rng, hi) for _ in range(rank)]
        if np.prod(s) <= max_elems:
            return s
    return [1] * rank


def prod(s):
    return int(np.prod(s))


# ---- relu / clip ----

def relu(rng):
    """Odd shapes of rank 1-4, every ReLU dtype, X with ties at 0 or specials."""
    dtype = str(rng.choice(["float32", "float16", "int32", "int16", "int8"]))
    shp = shape_under(rng, int(rng.integers(1, 5)), 300000, 200)
    kind = "ties" if rng.random() < 0.5 else "random"
    return dict(inputs={"x": (shp, dtype, kind), "dy": (shp, dtype, "random")},
                args=["relu-grad", "-x", "{x}", "-g", "{dy}"], desc=f"relu {dtype} {shp}")


def clip(rng):
    """Every clip dtype, bounds among X's small integers (ties at both bounds, min = max too)."""
    dtype = str(rng.choice(["float32", "float16", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16",
                            "uint8"]))
    shp = shape_under(rng, int(rng.integers(1, 5)), 300000, 200)
    if dtype.startswith("float"):
        lo, hi = sorted(rng.integers(-3, 4, size=2))
        lo, hi = f"{lo}", f"{hi}"
    else:
        lo, hi = sorted(rng.integers(-3 if dtype[0] == "i" else 0, 4, size=2))
        lo, hi = str(lo), str(hi)
    return dict(inputs={"x": (shp, dtype, "ties"), "dy": (shp, dtype, "random")},
                args=["clip-grad", "-x", "{x}", "-g", "{dy}", f"--min={lo}", f"--max={hi}"],
                desc=f"clip {dtype} {shp} [{lo},{hi}]")


# ---- slice ----

def slice_item(rng, n):
    """An axis' numpy slice of an axis of n: whole, or a step of either sign with optional bounds. (text, slice)"""
    if rng.random() < 0.25:
        return ":", slice(None)
    step = int(rng.choice([-5, -4, -3, -2, -1, 1, 1, 2, 3, 4, 7]))
    a, b = sorted(int(v) for v in rng.integers(0, n + 1, size=2))
    start, stop = (a, b) if step > 0 else (b - 1, a - 1)
    start = None if rng.random() < 0.3 else start
    stop = None if rng.random() < 0.3 or (stop is not None and stop < 0) else stop
    if start is not None and start > 0 and rng.random() < 0.2:
        start -= n
    text = f"{'' if start is None else start}:{'' if stop is None else stop}" + ("" if step == 1 else f":{step}")
    return text, slice(start, stop, step)


def parsed_slice(text):
    return slice(*[int(p) if p else None for p in text.split(":")])


def slice_case(rng, dx, dtype, expr=None):
    """A slice of dX (`expr`, else random per axis), checked against numpy's assignment too."""
    texts = [slice_item(rng, n)[0] for n in dx] if expr is None else expr.strip("[]").split(", ")
    where = tuple(parsed_slice(t) for t in texts)
    dy = [len(range(*s.indices(n))) for s, n in zip(where, dx)]
    if 0 in dy:
        return None
    expr = "[" + ", ".join(texts) + "]"

    def ref(inp):
        out = np.zeros(dx, dtype=dtype)
        out[where] = inp["dy"]
        return out

    return dict(inputs={"dy": (dy, dtype, "bits")},
                args=["slice-grad", "-g", "{dy}", "--output-sizes", csv(dx), "--slice", expr],
                desc=f"slice {dtype} dx {dx} {expr}", numpy=ref)


def slice_random(rng):
    """A numpy slice of every dtype, rank 1-8, steps -5..7, tiny to 2.4 MB tensors."""
    dtype = str(rng.choice(SLICE_DTYPES))
    rank = int(rng.choice([1, 2, 3, 4, 5, 6, 8], p=[0.1, 0.2, 0.25, 0.25, 0.1, 0.05, 0.05]))
    item = np.dtype(dtype).itemsize
    budget = int(rng.choice([2000, 50000, 600000])) // item * 4
    dx = shape_under(rng, rank, budget, 700 if rank <= 2 else 40)
    return slice_case(rng, dx, dtype)


# ---- max-pool ----

def pooled(size, w, s, p0, p1, d):
    return sweep_cases.pooled_size(size, w, s, p0, p1, d, False)


def maxpool_random(rng, spatial=None, axis_fn=None, max_elems=400000):
    """2-D or 3-D pooling: windows 1-7, strides 1-4, dilations 1-3, paddings up to the span (or `axis_fn`'s per axis),
    ceil mode as extra end padding; X with ties or specials, dY sometimes extreme."""
    spatial = spatial or (3 if rng.random() < 0.35 else 2)
    dtype = str(rng.choice(FLOAT))

    def one():
        return sweep_cases.pool_axis(rng, plain_dilation=0.6, symmetric_below=0.6, padding_past_span=1)

    axes = [(axis_fn or one)() for _ in range(spatial)] if rng.random() < 0.4 else [(axis_fn or one)()] * spatial
    hi = 40 if spatial == 3 else 300
    sizes = [size(rng, hi) for _ in range(spatial)]
    ceil = rng.random() < 0.2
    out, end = [], []
    for n, (w, s, d, (p0, p1)) in zip(sizes, axes):
        o = pooled(n, w, s, p0, p1, d)
        if o is None:
            return None
        if ceil and (n + p0 + p1 - ((w - 1) * d + 1)) % s:
            p1 += s - (n + p0 + p1 - ((w - 1) * d + 1)) % s  # ceil mode as extra end padding
            o += 1
        out.append(o)
        end.append(p1)
    plane = prod(sizes)
    nc_max = max(1, max_elems // plane)
    n = int(rng.integers(1, 4)) if rng.random() < 0.5 else 1
    c = int(rng.integers(1, max(2, nc_max // n + 1)))
    if n * c * plane > max_elems * 2:
        return None
    x, dy = [n, c, *sizes], [n, c, *out]
    w, s, d = ([a[k] for a in axes] for k in range(3))
    start = [a[3][0] for a in axes]
    kind = str(rng.choice(["ties", "ties", "random", "nonan"]))
    return dict(inputs={"x": (x, dtype, kind), "dy": (dy, dtype, "extreme" if rng.random() < 0.3 else "nonan")},
                args=["maxpool-grad", "-x", "{x}", "-g", "{dy}", "--window-size", csv(w), "--strides", csv(s),
                      "--start-padding", csv(start), "--end-padding", csv(end), "--dilations", csv(d)],
                desc=f"maxpool {dtype} x{x} k{w} s{s} d{d} p{start}/{end}")


# ---- resample ----

def resample_random(rng):
    """DirectML's form, rank 1-4: dY sizes equal, scaled or unrelated to dX's; scales of the sizes or not; offsets;
    rounding."""
    dtype = str(rng.choice(FLOAT))
    mode = str(rng.choice(["nearest", "linear"]))
    rank = int(rng.integers(1, 5))
    max_elems = 400000
    dx = shape_under(rng, rank, max_elems, 100 if rank <= 2 else 24)
    dy = []
    for n in dx:
        r = rng.random()
        if r < 0.3:
            dy.append(n)
        elif r < 0.7:
            f = float(rng.choice([2, 3, 4, 0.5, 1 / 3, 0.25, 1.5, 2.5, 0.75, 0.6, 0.4]))
            dy.append(max(1, int(round(n * f))))
        else:
            dy.append(size(rng, 64))
    if prod(dy) > max_elems * 2:
        return None
    args = ["resample-grad", "-g", "{dy}", "--output-sizes", csv(dx), "--interpolation-mode", mode]
    desc = f"resample {mode} {dtype} dy{dy} dx{dx}"
    if rng.random() < 0.4:
        sc = [float(np.float32(a / b)) if rng.random() < 0.7 else float(rng.choice([0.5, 2.0, 1.0, 3.0, 0.3, 1.7]))
              for a, b in zip(dy, dx)]
        args += ["--scales", fcsv(sc)]
        desc += f" scales {sc}"
    if rng.random() < 0.5:
        offs = lambda: [float(rng.choice([-0.5, 0.0, 0.5, 0.25, -0.25, 1.0])) for _ in dx]
        io, oo = offs(), offs()
        args += ["--input-pixel-offsets", fcsv(io), "--output-pixel-offsets", fcsv(oo)]
        desc += f" offs {io}/{oo}"
    if mode == "nearest" and rng.random() < 0.5:
        args += ["--rounding-direction", "increasing"]
        desc += " ceil"
    kind = str(rng.choice(["random", "random", "nonan", "extreme"]))
    return dict(inputs={"dy": (dy, dtype, kind)}, args=args, desc=desc)


def resample_torch(rng):
    """PyTorch's form (--torch-mode, --scale-factor, --align-corners), 3-D to 5-D."""
    dtype = str(rng.choice(FLOAT))
    spatial = int(rng.integers(1, 4))
    mode = str(rng.choice(["nearest", "nearest-exact", ["linear", "bilinear", "trilinear"][spatial - 1]]))
    sizes = [size(rng, 60 if spatial < 3 else 16) for _ in range(spatial)]
    nc = [int(rng.integers(1, 4)), int(rng.integers(1, 9))]
    f = [float(rng.choice([2, 3, 4, 0.5, 0.25, 1.5, 2.5, 0.75, 0.6, 0.4, 1 / 3])) for _ in range(spatial)]
    out = [max(1, int(np.floor(n * s))) for n, s in zip(sizes, f)]
    args = ["resample-grad", "-g", "{dy}", "--output-sizes", csv(nc + sizes), "--torch-mode", mode,
            "--scale-factor", fcsv(f)]
    if "linear" in mode and rng.random() < 0.5:
        args.append("--align-corners")
    return dict(inputs={"dy": (nc + out, dtype, "random")}, args=args,
                desc=f"resample torch {mode} {dtype} dx{nc + sizes} f{f}")


# ---- targeted: boundaries of the newest rules ----

def linear_planes(rng):
    """Large linear plans of small planes (the linear planes' rule: f32 dX from 2^20, fp16 from 2^21 elements, planes
    of a uint4 less one to 4096 dX elements, few terms), just inside and outside the floors."""
    dtype = str(rng.choice(FLOAT))
    floor = 2 ** 20 if dtype == "float32" else 2 ** 21
    h = int(rng.choice([1, 1, 1, 2, 3, 5]))
    w = int(rng.choice([2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 51, 100]))
    hy = max(1, int(round(h * float(rng.choice([1, 2, 3, 4, 0.5])))))
    wy = max(1, int(round(w * float(rng.choice([0.25, 0.4, 0.5, 0.6, 0.75, 1.0, 1.2, 1.5, 2.0])))))
    plane = h * w
    r = rng.random()
    target = floor + int(rng.choice([-3, -1, 0, 1, 3])) * plane if r < 0.6 else int(floor * rng.uniform(0.5, 1.5))
    n = max(1, -(-target // plane))
    dx = [2, -(-n // 2), h, w] if rng.random() < 0.3 else [n, h, w]
    dy = dx[:-2] + [hy, wy]
    args = ["resample-grad", "-g", "{dy}", "--output-sizes", csv(dx), "--interpolation-mode", "linear"]
    q = rng.random()
    if q < 0.2:
        args += ["--input-pixel-offsets", fcsv([0] * len(dx)), "--output-pixel-offsets", fcsv([0] * len(dx))]
    elif q < 0.35:
        args += ["--input-pixel-offsets", fcsv([0] * (len(dx) - 2) + [0.25, -0.5]),
                 "--output-pixel-offsets", fcsv([0] * (len(dx) - 2) + [1.0, 0.5])]
    return dict(inputs={"dy": (dy, dtype, "extreme" if rng.random() < 0.3 else "random")}, args=args,
                desc=f"linear_planes {dtype} dy{dy} dx{dx} ({prod(dx)} vs {floor})")


def nearest_block(rng):
    """Nearest fp16 of integer factors (the block kernel; one-column blocks on rows of an even length, aligned
    rows), f32 too (other kernels), odd and even widths."""
    dtype = "float16" if rng.random() < 0.8 else "float32"
    fr, fc = int(rng.choice([1, 1, 2, 3, 4])), int(rng.choice([1, 1, 2, 3, 4, 8]))
    w = int(rng.choice([1, 2, 3, 4, 6, 7, 8, 9, 10, 14, 16, 17, 30, 32, 33, 64, 100, 128, 257, 1000, 4096]))
    h = int(rng.choice([1, 2, 3, 5, 8, 17, 64]))
    budget = int(rng.choice([3000, 200000, 1500000]))
    n = max(1, budget // (h * w * fr * fc))
    dx = [n, h, w] if rng.random() < 0.6 else [1, n, h, w]
    dy = dx[:-2] + [h * fr, w * fc]
    args = ["resample-grad", "-g", "{dy}", "--output-sizes", csv(dx), "--interpolation-mode", "nearest"]
    if rng.random() < 0.3:  # the factors' scales, dY a little longer or shorter (clamped or untaken taps)
        dy = dx[:-2] + [max(1, h * fr + int(rng.choice([-1, 0, 1]))), max(1, w * fc + int(rng.choice([-1, 0, 1, 2])))]
        args += ["--scales", fcsv([1] * (len(dx) - 2) + [fr, fc])]
    if rng.random() < 0.2:
        args += ["--input-pixel-offsets", fcsv([0] * len(dx)), "--output-pixel-offsets", fcsv([0] * len(dx))]
    if rng.random() < 0.3:
        args += ["--rounding-direction", "increasing"]
    return dict(inputs={"dy": (dy, dtype, "extreme" if rng.random() < 0.3 else "random")}, args=args, desc=f"nearest_block {dtype} dy{dy} dx{dx}")


def slice_big(rng):
    """Slices of 0.25-6 MB with short inner rows (lines, words, spans regions, periods)."""
    dtype = str(rng.choice(SLICE_DTYPES + ("int8", "uint8", "int8", "float16", "int16")))
    item = np.dtype(dtype).itemsize
    total = int(rng.choice([2 ** 18, 2 ** 20, 2 ** 21, 6 * 2 ** 20])) // item
    rank = int(rng.choice([2, 2, 3, 3, 4]))
    inner = int(rng.choice([1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 21, 31, 32, 33, 47, 63, 64, 65, 100, 127, 129, 300]))
    mids = [int(rng.choice([1, 2, 3, 4, 5, 7, 8, 16])) for _ in range(rank - 2)]
    outer = max(1, total // (inner * prod(mids or [1])))
    return slice_case(rng, [outer, *mids, inner], dtype)


def maxpool_select(rng):
    """Windows of one tap (the selection kernel): strides, paddings larger than the window, dilations."""
    def one():
        s = int(rng.integers(1, 5))
        return 1, s, int(rng.integers(1, 4)), (int(rng.integers(0, 4)), int(rng.integers(0, 4)))
    return maxpool_random(rng, axis_fn=one)


def maxpool_column(rng):
    """One-column windows (window k x 1): the two-pass choose's batch of one-column windows."""
    spatial = 3 if rng.random() < 0.3 else 2
    rows = dict(w=int(rng.integers(2, 8)), s=int(rng.integers(1, 5)), d=int(rng.choice([1, 1, 2, 3])))
    calls = [0]

    def one():
        calls[0] += 1
        if calls[0] == spatial:  # the columns: one tap
            return 1, int(rng.integers(1, 4)), 1, (int(rng.integers(0, 2)), int(rng.integers(0, 2)))
        span = (rows["w"] - 1) * rows["d"] + 1
        p = (int(rng.integers(0, span)), int(rng.integers(0, span))) if rng.random() < 0.5 else (0, 0)
        return rows["w"], rows["s"], rows["d"], p
    return maxpool_random(rng, spatial=spatial, axis_fn=one)


def maxpool_big(rng):
    """maxpool_random on tensors of up to 3 M elements."""
    return maxpool_random(rng, max_elems=3000000)


# ---- beyond lavapipe's 128 MiB binding: the chunked paths ----

def big_slice(rng):
    """dY of 130-160 MiB: box chunks on Vulkan (lavapipe), bound whole on Direct3D 12 (512 MiB views)."""
    dtype = str(rng.choice(["int8", "float16", "float32", "uint64"]))
    item = np.dtype(dtype).itemsize
    inner = int(rng.choice([3, 5, 16, 17, 100, 1001]))
    step = int(rng.choice([1, -1, 2, -3]))
    rows = int(rng.uniform(130, 160) * 2 ** 20) // (inner * item)
    dx = [rows * abs(step), inner + int(rng.choice([0, 1, 3]))]
    if prod(dx) * item > 900 * 2 ** 20:
        return None
    lo = dx[1] - inner
    inner_slice = f"{lo}:" if rng.random() < 0.5 else f"{dx[1] - 1 - lo}::-1" if lo else "::-1"
    return slice_case(rng, dx, dtype, f"[::{step}, {inner_slice}]")


def big_resample(rng):
    """fp16/f32 2-D resamples whose dX or dY is 130-150 MiB (chunks on Vulkan)."""
    dtype = str(rng.choice(FLOAT))
    item = np.dtype(dtype).itemsize
    mode = str(rng.choice(["nearest", "linear"]))
    w = int(rng.choice([7, 33, 101, 1001]))
    wy = int(rng.choice([w // 2 + 1, w, 2 * w - 1]))
    big_dx = rng.random() < 0.5
    rows = int((rng.uniform(130, 150) * 2 ** 20) // (item * (w if big_dx else wy)))
    rows += rows % 2 == 0
    dx, dy = [rows, w], [rows, wy]
    return dict(inputs={"dy": (dy, dtype, "random")},
                args=["resample-grad", "-g", "{dy}", "--output-sizes", csv(dx), "--interpolation-mode", mode],
                desc=f"big_resample {mode} {dtype} dy{dy} dx{dx}")


def big_maxpool(rng):
    """Pooling of 130-145 MiB planes' batches (chunks of planes on Vulkan)."""
    dtype = str(rng.choice(FLOAT))
    item = np.dtype(dtype).itemsize
    h, w = int(rng.choice([7, 9, 31, 33])), int(rng.choice([5, 9, 31, 63]))
    planes = int((rng.uniform(130, 145) * 2 ** 20) // (item * h * w))
    k, s = int(rng.choice([1, 2, 3])), int(rng.choice([1, 2]))
    out = [(h - k) // s + 1, (w - k) // s + 1]
    return dict(inputs={"x": ([1, planes, h, w], dtype, "ties"), "dy": ([1, planes, *out], dtype, "nonan")},
                args=["maxpool-grad", "-x", "{x}", "-g", "{dy}", "--window-size", csv([k, k]),
                      "--strides", csv([s, s])],
                desc=f"big_maxpool {dtype} planes {planes} {h}x{w} k{k} s{s}")


def many_rows(rng):
    """Tens of millions of short rows (slices of 8/16-bit elements): span, line and walk steps of more than 65535
    workgroups."""
    dtype = str(rng.choice(["int8", "uint8", "float16", "int16"]))
    item = np.dtype(dtype).itemsize
    cols = int(rng.choice([1, 2, 3, 4, 5]))
    rows = int(rng.uniform(60, 120) * 2 ** 20) // (cols * item)
    dx = [rows, cols] if rng.random() < 0.6 else [2, rows // 2, cols]
    return slice_case(rng, dx, dtype)


def resample_onnx(rng):
    """ONNX Resize's form: every coordinate transformation and nearest mode."""
    dtype = str(rng.choice(FLOAT))
    rank = int(rng.integers(1, 5))
    mode = str(rng.choice(["nearest", "linear"]))
    dx = shape_under(rng, rank, 200000, 60 if rank <= 2 else 16)
    dy = [n if rng.random() < 0.3 else max(1, int(round(n * float(rng.choice([2, 3, 0.5, 1.5, 0.75, 0.4, 1 / 3])))))
          for n in dx]
    ctm = str(rng.choice(["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                          "half_pixel_symmetric"]))
    args = ["resample-grad", "-g", "{dy}", "--output-sizes", csv(dx), "--interpolation-mode", mode,
            "--coordinate-transformation-mode", ctm]
    if mode == "nearest":
        args += ["--nearest-mode", str(rng.choice(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]))]
    return dict(inputs={"dy": (dy, dtype, "extreme" if rng.random() < 0.3 else "random")}, args=args, desc=f"resample onnx {ctm} {mode} {dtype} dy{dy} dx{dx}")


def huge_1d(rng):
    """1-D nearest/linear fp16 plans past 2^27 dY elements (the lines' bounds variant where bound whole: D3D12 binds
    up to 512 MiB; Vulkan on lavapipe chunks)."""
    dy = 2 ** 27 + int(rng.integers(1, 200000))
    f = int(rng.choice([2, 4, 16, 17]))
    dx = dy // f + int(rng.choice([0, 1, 3]))
    mode = "nearest" if rng.random() < 0.7 else "linear"
    return dict(inputs={"dy": ([dy], "float16", "random")},
                args=["resample-grad", "-g", "{dy}", "--output-sizes", str(dx), "--interpolation-mode", mode],
                desc=f"huge_1d {mode} dy {dy} dx {dx}")


def slice_window(rng):
    """DirectML's window form: offsets, sizes, signed strides, dY shorter than the window allows."""
    dtype = str(rng.choice(SLICE_DTYPES))
    rank = int(rng.choice([1, 2, 3, 4, 5]))
    item = np.dtype(dtype).itemsize
    dx = shape_under(rng, rank, int(rng.choice([3000, 100000, 1000000])) // item, 300 if rank <= 2 else 30)
    offs, sizes, strides, dy = [], [], [], []
    for n in dx:
        off = int(rng.integers(0, n))
        size_ = int(rng.integers(1, n - off + 1))
        st = int(rng.choice([1, 1, 2, 3, 4, 5, 9])) * int(rng.choice([1, -1]))
        most = 1 + (size_ - 1) // abs(st)
        m = most if rng.random() < 0.6 else int(rng.integers(1, most + 1))
        offs.append(off); sizes.append(size_); strides.append(st); dy.append(m)

    def ref(inp):
        out = np.zeros(dx, dtype=dtype)
        idx = []
        for o, s_, st, m in zip(offs, sizes, strides, dy):
            start = o + (s_ - 1 if st < 0 else 0)
            idx.append(np.arange(m) * st + start)
        out[np.ix_(*idx)] = inp["dy"]
        return out

    return dict(inputs={"dy": (dy, dtype, "bits")},
                args=["slice-grad", "-g", "{dy}", "--output-sizes", csv(dx), "--input-window-offsets", csv(offs),
                      "--input-window-sizes", csv(sizes), "--input-window-strides", csv(strides)],
                desc=f"slice_window {dtype} dx{dx} off{offs} size{sizes} st{strides} dy{dy}", numpy=ref)


def _pool(rng, dtype, x, k, s, p0, p1, d=None):
    """A max-pool case of X shape `x` and the given per-axis parameters; None where a window does not fit."""
    spatial = len(k)
    d = d or [1] * spatial
    out = []
    for n, kk, ss, a, b, dd in zip(x[2:], k, s, p0, p1, d):
        o = pooled(n, kk, ss, a, b, dd)
        if o is None or o < 1:
            return None
        out.append(o)
    kind = str(rng.choice(["ties", "ties", "random"]))
    return dict(inputs={"x": (x, dtype, kind), "dy": (x[:2] + out, dtype, "extreme" if rng.random() < 0.2 else "nonan")},
                args=["maxpool-grad", "-x", "{x}", "-g", "{dy}", "--window-size", csv(k), "--strides", csv(s),
                      "--start-padding", csv(p0), "--end-padding", csv(p1), "--dilations", csv(d)],
                desc=f"pool {dtype} x{x} k{k} s{s} p{p0}/{p1} d{d}")


def maxpool_families(rng):
    """The fast (k2/k3, s1-3), k2s2, walk2d (k3 p1 s1/s2), walk3d (k3s2p1, k2s1), bands (fp16 s1) and cell
    geometries, sizes around their tiles and rules (odd, even, narrow rows, cells of 2 covering or not)."""
    dtype = str(rng.choice(FLOAT))
    fam = int(rng.integers(0, 6))
    sz = lambda hi: int(rng.choice([1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 129, hi]))
    nc = [int(rng.integers(1, 3)), int(rng.integers(1, 6))]
    if fam == 0:  # fast 2-D
        k = int(rng.choice([2, 3])); s = int(rng.integers(1, 4)); p = int(rng.integers(0, k // 2 + 1))
        return _pool(rng, dtype, nc + [sz(200), sz(200)], [k, k], [s, s], [p, p], [int(rng.integers(0, 2)) * p] * 2)
    if fam == 1:  # k2s2 tiling (planar and cube)
        if rng.random() < 0.7:
            x = nc + [2 * sz(60), 2 * int(rng.choice([4, 8, 12, 16, 32, 64, 3, 5]))]
            return _pool(rng, dtype, x, [2, 2], [2, 2], [0, 0], [0, 0])
        x = nc + [2 * sz(8), 2 * sz(16), 2 * int(rng.choice([4, 8, 16, 3]))]
        return _pool(rng, dtype, x, [2, 2, 2], [2, 2, 2], [0, 0, 0], [0, 0, 0])
    if fam == 2:  # walk2d k3 p1 s1/s2
        s = int(rng.choice([1, 2]))
        h, w = sz(300), sz(300)
        e = int(rng.integers(0, 2))
        return _pool(rng, dtype, nc + [h, w], [3, 3], [s, s], [1, 1], [e, e])
    if fam == 3:  # walk3d k3s2p1
        x = nc + [sz(20), sz(40), sz(40)]
        e = [int(rng.integers(0, 2)) for _ in range(3)]
        return _pool(rng, dtype, x, [3, 3, 3], [2, 2, 2], [1, 1, 1], e)
    if fam == 4:  # walk3d k2s1 / fast cube
        x = nc + [sz(20), sz(40), sz(70)]
        e = [int(rng.integers(0, 2)) for _ in range(3)]
        return _pool(rng, dtype, x, [2, 2, 2], [1, 1, 1], [0, 0, 0], e)
    # bands: fp16 stride 1, any window up to 8 columns
    kh, kw = int(rng.integers(1, 8)), int(rng.integers(1, 9))
    x = nc + [sz(120), sz(120)]
    return _pool(rng, "float16", x, [kh, kw], [1, 1], [int(rng.integers(0, kh)), int(rng.integers(0, kw))],
                 [int(rng.integers(0, kh)), int(rng.integers(0, kw))])


def nearest_rows(rng):
    """Nearest plans resampling outer axes only (the rows kernels, f32 rows_shifted: rows not whole uint4s of at
    least 8 warps' uint4s), rows of 1 to a few thousand."""
    dtype = str(rng.choice(FLOAT))
    w = int(rng.choice([4, 8, 12, 16, 1023, 1024, 1025, 1027, 2047, 2049, 4099, 15528, 3, 7]))
    h = int(rng.choice([1, 2, 3, 5, 8]))
    hy = max(1, int(round(h * float(rng.choice([2, 3, 0.5, 1.5, 1 / 3])))))
    n = max(1, int(rng.choice([2000, 100000, 600000])) // (w * h))
    dx = [n, h, w]
    dy = [n, hy, w] if rng.random() < 0.7 else [max(1, n // 2), hy, w]
    args = ["resample-grad", "-g", "{dy}", "--output-sizes", csv(dx), "--interpolation-mode", "nearest"]
    if rng.random() < 0.3:
        args += ["--rounding-direction", "increasing"]
    return dict(inputs={"dy": (dy, dtype, "extreme" if rng.random() < 0.2 else "random")}, args=args,
                desc=f"nearest_rows {dtype} dy{dy} dx{dx}")


def many_groups(rng):
    """Steps of more than 65535 workgroups of 256 within one binding: max-pool windows (a thread each), nearest
    planes (an element a thread), fp16 resample words."""
    dtype = str(rng.choice(FLOAT))
    r = int(rng.integers(0, 3))
    if r == 0:
        c = int(rng.uniform(360000, 420000))
        k = int(rng.choice([2, 3]))
        return _pool(rng, dtype, [1, c, 8, 8], [k, k], [1, 1], [0, 0], [0, 0], [int(rng.choice([1, 2]))] * 2)
    if r == 1:  # nearest planes of rows of 1-2 from 2x2
        n = int(rng.uniform(9e6, 11e6))
        dx, dy = [n, 1, 2], [n, 2, 4]
    else:  # fp16 linear words
        n = int(rng.uniform(35e6, 40e6)) // 16
        dx, dy = [n, 16], [n, 24]
        dtype = "float16"
    mode = "nearest" if r == 1 else "linear"
    return dict(inputs={"dy": (dy, dtype, "random")},
                args=["resample-grad", "-g", "{dy}", "--output-sizes", csv(dx), "--interpolation-mode", mode],
                desc=f"many_groups {mode} {dtype} dy{dy} dx{dx}")


# The random generators (bench/backend_check.py's default), weighted by repetition toward the operators whose kernels
# branch on the geometry; and every generator.
RANDOM = ["relu", "clip", "slice_random", "slice_random", "slice_window", "maxpool_random", "maxpool_random",
          "resample_random", "resample_random", "resample_torch", "resample_onnx"]
ALL = RANDOM[:2] + ["slice_random", "slice_window", "slice_big", "maxpool_random", "maxpool_select",
                    "maxpool_column", "maxpool_families", "maxpool_big", "resample_random", "resample_torch",
                    "resample_onnx", "linear_planes", "nearest_block", "nearest_rows", "big_slice", "big_resample",
                    "big_maxpool", "many_rows", "many_groups", "huge_1d", "resample_extreme"]


def resample_extreme(rng):
    """Upscales by 5-40 (dX elements summing hundreds of taps, in the CPU's order), downscales to one or two
    elements, and scales or offsets far out (FLT_MAX, 1e-30, offsets of +-1000: every coordinate clamped)."""
    dtype = str(rng.choice(FLOAT))
    mode = str(rng.choice(["nearest", "linear"]))
    rank = int(rng.integers(1, 5))
    dx = shape_under(rng, rank, 20000, 12 if rank > 2 else 60)
    dy = []
    for n in dx:
        r = rng.random()
        dy.append(n * int(rng.integers(5, 41)) if r < 0.35 and n * 40 < 3000 else int(rng.choice([1, 2])) if r < 0.6
                  else n)
    if prod(dy) > 3000000:
        return None
    args = ["resample-grad", "-g", "{dy}", "--output-sizes", csv(dx), "--interpolation-mode", mode]
    if rng.random() < 0.4:
        far = [3.4028235e38, 1e-30, 1e30, 1e-7, 0.999999, 1.000001]
        args += ["--scales", fcsv([float(rng.choice(far)) if rng.random() < 0.5 else a / b for a, b in zip(dy, dx)])]
    if rng.random() < 0.3:
        far = [-1000.0, 1000.0, -0.5, 0.5, 1e6, 0.0]
        args += ["--input-pixel-offsets", fcsv([float(rng.choice(far)) for _ in dx]),
                 "--output-pixel-offsets", fcsv([float(rng.choice(far)) for _ in dx])]
    return dict(inputs={"dy": (dy, dtype, str(rng.choice(["random", "nonan", "extreme"])))}, args=args,
                desc=f"resample_extreme {mode} {dtype} dy{dy} dx{dx}")
