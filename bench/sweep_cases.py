"""The cases of bench/sweep.py: random draws over each operator's whole valid parameter space (docs/OPERATORS.md).

Every draw_* function takes a numpy Generator, a dtype and the largest tensor in bytes, and returns a SweepCase,
or None when the draw breaks a validation rule (the caller draws again; a refused draw is never run or counted).
The draws build valid parameters by construction where they can and test the rest with the rules of
docs/OPERATORS.md (0.1, 3.2, 4.1, 4.3, 5.5), so a refusal by dmlgrad itself means this file and the docs disagree.

Each case also carries PyTorch's nearest equivalent: torch_fn(tensors) on the case's own inputs when PyTorch
computes the same thing (then check names gpu_bench's comparison), or on inputs of its own (torch_inputs) when it
only does the same amount of the same work (then check is None and the result is compared with `dmlgrad --cpu`).
"""
import math

import numpy as np

import gpu_bench as gb

torch, F = gb.torch, gb.F

KIB, MIB = 1 << 10, 1 << 20
MAX_ELEMENTS = (1 << 32) - 1  # docs/OPERATORS.md 0.1: DirectML's buffer tensor limit

# PyTorch has no arithmetic on these: their data travels as the signed type of the same width (bits unchanged)
CARRIERS = {"uint16": np.int16, "uint32": np.int32, "uint64": np.int64}


def carrier(dtype):
    return np.dtype(CARRIERS.get(np.dtype(dtype).name, dtype))


class SweepCase:
    """One draw. args name the inputs {x}, {dy} and the output {dx}; inputs: name -> (shape, dtype);
    torch_inputs: None (PyTorch runs on the same inputs) or name -> (shape, dtype) of PyTorch's own."""

    def __init__(self, cls, dtype, inputs, output_shape, args, params, torch_name, torch_fn, check,
                 torch_inputs=None, taps=0):
        self.cls, self.dtype, self.inputs, self.output_shape = cls, np.dtype(dtype).name, inputs, output_shape
        self.args, self.params, self.torch_name, self.torch_fn = args, params, torch_name, torch_fn
        self.check, self.torch_inputs = check, torch_inputs
        self.taps = taps  # dY elements times the dX elements each reaches: how long a run may take, beyond bytes

    @property
    def memory_bound(self):  # issue 23's memory-bound classes; the others are judged by their speed-up
        return self.cls in ("relu", "clip", "slice", "resample-nearest")

    def shapes(self):
        return " ".join(f"{name} {gb.dims(shape)}" for name, (shape, _) in self.inputs.items()) + \
            f" -> dX {gb.dims(self.output_shape)}"


# Sizes -----------------------------------------------------------------------------------------------------------

def log_uniform(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(max(lo, hi))))))


def is_prime(n):
    return n >= 2 and all(n % q for q in range(2, math.isqrt(n) + 1))


def largest_prime_at_most(n):
    while n > 2 and not is_prime(n):
        n -= 1
    return max(n, 1)


def odd_at_most(n):
    return n if n % 2 else max(1, n - 1)


def styled(rng, n):
    """n turned into one of the sizes that trip kernels up: odd, prime, a power of two, or left as it is."""
    style = rng.choice(["odd", "prime", "pow2", "any"], p=[0.35, 0.25, 0.15, 0.25])
    if style == "odd":
        return odd_at_most(n)
    if style == "prime":
        return largest_prime_at_most(n)
    if style == "pow2":
        return 1 << (n.bit_length() - 1)
    return n


def axis_size(rng, limit):
    """One axis: one-sized, tiny (1-4), or 5..limit (log-uniform) made odd, prime, a power of two or left."""
    limit = max(1, int(limit))
    r = rng.random()
    if r < 0.07 or limit == 1:
        return 1
    if r < 0.17 or limit < 5:
        return int(rng.integers(1, min(4, limit) + 1))
    return styled(rng, log_uniform(rng, 5, limit))


def target_bytes(rng, max_bytes):
    """The size of a case's largest tensor: mostly 16 MiB .. max_bytes, 15% small (1 KiB .. 1 MiB), where the fixed
    cost of a dispatch shows. With a small max_bytes (--smoke) anything from 1 KiB up."""
    if max_bytes < 64 * MIB:
        return log_uniform(rng, KIB, max_bytes)
    if rng.random() < 0.15:
        return log_uniform(rng, KIB, MIB)
    return log_uniform(rng, 16 * MIB, max_bytes)


def filled_shape(rng, sizes, target_elements):
    """sizes with None on the axes still free: all but one of them get small styled sizes, the one left fills the
    shape up to target_elements (styled too)."""
    free = [a for a, s in enumerate(sizes) if s is None]
    if not free:
        return list(sizes)
    sizes = list(sizes)
    fill = free[int(rng.integers(len(free)))]
    for a in free:
        if a != fill:
            sizes[a] = axis_size(rng, 64)
    rest = math.prod(s for a, s in enumerate(sizes) if a != fill)
    sizes[fill] = styled(rng, max(1, target_elements // rest))
    return sizes


def elements(shape):
    return math.prod(shape)


def fits(max_bytes, dtype, *shapes):
    return all(0 < elements(s) <= MAX_ELEMENTS and elements(s) * np.dtype(dtype).itemsize <= max_bytes
               for s in shapes)


def csv(values):
    return ",".join(map(str, values))


# ReLU and clip ---------------------------------------------------------------------------------------------------

RELU_DTYPES = ("float32", "float16", "int32", "int16", "int8")
CLIP_DTYPES = ("float32", "float16", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8")


def odd_shape(rng, dtype, max_bytes):
    """Rank 1-3, every axis odd, so the length is odd too."""
    n = max(1, target_bytes(rng, max_bytes) // np.dtype(dtype).itemsize)
    rank = int(rng.integers(1, 4))
    trailing = [odd_at_most(axis_size(rng, 1023)) for _ in range(rank - 1)]
    return tuple([odd_at_most(max(1, n // elements(trailing)))] + trailing)


def draw_relu(rng, dtype, max_bytes):
    shape = odd_shape(rng, dtype, max_bytes)
    if not fits(max_bytes, dtype, shape):
        return None
    if np.dtype(dtype).kind == "f":
        name, fn = "threshold_backward", lambda t: torch.ops.aten.threshold_backward(t["dy"], t["x"], 0)
    else:  # threshold_backward has no integer kernel in every PyTorch build: the same select written out
        name, fn = "where(x>0, dy, 0)", lambda t: torch.where(t["x"] > 0, t["dy"], torch.zeros_like(t["dy"]))
    return SweepCase("relu", dtype, {"x": (shape, dtype), "dy": (shape, dtype)}, shape,
                     ["relu-grad", "-x", "{x}", "-g", "{dy}", "-o", "{dx}"], f"length {elements(shape)}", name, fn,
                     gb.exact)


def clip_bounds(rng, dtype):
    """Min < Max, exact in the dtype (floats: multiples of 1/64 in [-3, 3]; integers: anywhere in the type)."""
    if np.dtype(dtype).kind == "f":
        lo, hi = sorted(rng.choice(np.arange(-192, 193), size=2, replace=False) / 64)
        return float(lo), float(hi)
    info = np.iinfo(dtype)
    lo, hi = sorted(int(v) for v in rng.integers(info.min, info.max, size=2, endpoint=True, dtype=dtype))
    return (lo, hi) if lo < hi else (None, None)


def draw_clip(rng, dtype, max_bytes):
    shape = odd_shape(rng, dtype, max_bytes)
    lo, hi = clip_bounds(rng, dtype)
    if lo is None or not fits(max_bytes, dtype, shape):
        return None
    args = ["clip-grad", "-x", "{x}", "-g", "{dy}", "-o", "{dx}", f"--min={lo}", f"--max={hi}"]  # exact text
    check = gb.exact
    if np.dtype(dtype).kind == "f":
        name, fn = "hardtanh_backward", lambda t: torch.ops.aten.hardtanh_backward(t["dy"], t["x"], lo, hi)
    else:
        name = "where((x>min)&(x<max), dy, 0)"
        tlo, thi = lo, hi
        if np.dtype(dtype).name in CARRIERS:  # PyTorch compares the signed carrier: the same work, other values
            name, check = name + f" on {carrier(dtype).name}", None
            info = np.iinfo(carrier(dtype))
            tlo, thi = info.min // 2, info.max // 2
        fn = lambda t: torch.where((t["x"] > tlo) & (t["x"] < thi), t["dy"], torch.zeros_like(t["dy"]))
    return SweepCase("clip", dtype, {"x": (shape, dtype), "dy": (shape, dtype)}, shape, args,
                     f"length {elements(shape)}, min {lo}, max {hi}", name, fn, check)


# Slice -----------------------------------------------------------------------------------------------------------

SLICE_DTYPES = ("float32", "float16", "float64", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16",
                "uint8")


def slice_item(rng, n):
    """A numpy slice of an axis of n: the whole axis (30%) or a step in -4..4 with optional start and stop, written
    now and then counted from the end. (text, slice)."""
    if rng.random() < 0.3:
        return ":", slice(None)
    step = int(rng.choice([-4, -3, -2, -1, 1, 2, 3, 4]))
    a, b = sorted(int(v) for v in rng.integers(0, n + 1, size=2))
    start, stop = (a, b) if step > 0 else (b - 1, a - 1)
    start = None if rng.random() < 0.4 else start
    stop = None if rng.random() < 0.4 or stop < 0 else stop
    from_end = lambda v: v - n if v is not None and v > 0 and rng.random() < 0.25 else v
    start, stop = from_end(start), from_end(stop)
    text = f"{'' if start is None else start}:{'' if stop is None else stop}" + ("" if step == 1 else f":{step}")
    return text, slice(start, stop, step)


def ascending(s, n):
    """The same elements as slice s of n, visited in increasing order, and whether s walks backwards."""
    r = range(*s.indices(n))
    return (slice(r[-1], r[0] + 1, -r.step), True) if r.step < 0 else (slice(r.start, r.stop, r.step), False)


def draw_slice(rng, dtype, max_bytes):
    rank = int(rng.choice([1, 2, 3, 4, 5, 6, 8], p=[0.1, 0.15, 0.2, 0.3, 0.1, 0.1, 0.05]))
    limits = [16] * max(0, rank - 2) + [1024] * min(rank, 2)
    sizes = [None if rng.random() < 0.5 or a < rank - 2 else axis_size(rng, limits[a]) for a in range(rank)]
    dx = tuple(filled_shape(rng, sizes, target_bytes(rng, max_bytes) // np.dtype(dtype).itemsize))
    items = [slice_item(rng, n) for n in dx]
    dy = tuple(len(range(*s.indices(n))) for (_, s), n in zip(items, dx))
    if 0 in dy or not fits(max_bytes, dtype, dx, dy):
        return None
    expression = "[" + ", ".join(text for text, _ in items) + "]"
    placed = [ascending(s, n) for (_, s), n in zip(items, dx)]
    where = tuple(s for s, _ in placed)
    flips = [a for a, (_, backwards) in enumerate(placed) if backwards]

    def torch_grad(t):  # PyTorch slicing refuses negative steps: flip dY, then assign (as gpu_bench's rows)
        out = torch.zeros(dx, device=t["dy"].device, dtype=t["dy"].dtype)
        out[where] = t["dy"].flip(flips) if flips else t["dy"]
        return out

    name = "zeros + " + ("flipped " if flips else "") + "strided assign"
    return SweepCase("slice", dtype, {"dy": (dy, dtype)}, dx,
                     ["slice-grad", "-g", "{dy}", "-o", "{dx}", "--output-sizes", csv(dx), "--slice", expression],
                     expression, name, torch_grad, gb.exact)


# Max-pool --------------------------------------------------------------------------------------------------------

def pooled_size(size, window, stride, start, end, dilation, ceil):
    """docs/OPERATORS.md 4.1: dY's size on the axis (floor, or ceil mode), None where the window does not fit."""
    span, padded = (window - 1) * dilation + 1, size + start + end
    if span > padded:
        return None
    floor = (padded - span) // stride + 1
    return floor + 1 if ceil and (padded - span) % stride else floor


def torch_ceil_size(size, window, stride, start, end, dilation, native):
    """PyTorch's ceil-mode size: it drops a last window that starts past the input and its start padding (native:
    PyTorch pads; otherwise the input is padded explicitly, and all of it counts as input)."""
    span, padded = (window - 1) * dilation + 1, size + start + end
    out = -(-(padded - span) // stride) + 1
    return out - 1 if (out - 1) * stride >= (size + start if native else padded) else out


def pool_axis(rng, plain_dilation=0.5, symmetric_below=0.65, padding_past_span=0):
    """One axis's window 1-7, stride 1-4, dilation 1 (with probability `plain_dilation`) or 1-3, and padding: none
    35% of the time, PyTorch's symmetric (up to `symmetric_below`), or asymmetric up to the span (plus
    `padding_past_span`: windows wholly in padding)."""
    w, s = int(rng.integers(1, 8)), int(rng.integers(1, 5))
    d = 1 if rng.random() < plain_dilation else int(rng.integers(1, 4))
    span = (w - 1) * d + 1
    r = rng.random()
    if r < 0.35:
        p = (0, 0)
    elif r < symmetric_below:
        p = (int(rng.integers(0, w // 2 + 1)),) * 2
    else:
        p = tuple(int(v) for v in rng.integers(0, span + padding_past_span, size=2))
    return w, s, d, p


def pool_parameters(rng, spatial):
    """pool_axis's parameters, the same on every axis 70% of the time."""
    if rng.random() < 0.7:
        return [pool_axis(rng)] * spatial
    return [pool_axis(rng) for _ in range(spatial)]


def draw_maxpool(rng, dtype, max_bytes):
    spatial = 3 if rng.random() < 0.35 else 2
    axes = pool_parameters(rng, spatial)
    limit = 96 if spatial == 3 else 768
    size = [axis_size(rng, limit) for _ in range(spatial)]
    ceil = rng.random() < 0.15
    native = all(p[0] == p[1] and p[0] <= w // 2 for w, _, _, p in axes)  # PyTorch's own padding can say it
    if ceil:
        out = [torch_ceil_size(i, w, s, p[0], p[1], d, native) for i, (w, s, d, p) in zip(size, axes)]
    else:
        out = [pooled_size(i, w, s, p[0], p[1], d, False) for i, (w, s, d, p) in zip(size, axes)]
    valid = [pooled_size(i, w, s, p[0], p[1], d, False) for i, (w, s, d, p) in zip(size, axes)]
    if None in valid or any(o < 1 or o not in (v, v + 1) for o, v in zip(out, valid)):
        return None
    item = np.dtype(dtype).itemsize
    n, c = filled_shape(rng, [None, None], max(1, target_bytes(rng, max_bytes) // item // elements(size)))
    x, dy = (n, c, *size), (n, c, *out)
    if not fits(max_bytes, dtype, x, dy):
        return None
    w, s, d = ([a[k] for a in axes] for k in range(3))
    start, end = [a[3][0] for a in axes], [a[3][1] for a in axes]
    args = ["maxpool-grad", "-x", "{x}", "-g", "{dy}", "-o", "{dx}", "--window-size", csv(w), "--strides", csv(s),
            "--start-padding", csv(start), "--end-padding", csv(end), "--dilations", csv(d)]
    pool = (F.max_pool2d if spatial == 2 else F.max_pool3d) if F else None
    backward = (torch.ops.aten.max_pool2d_with_indices_backward if spatial == 2 else
                torch.ops.aten.max_pool3d_with_indices_backward) if torch else None
    pads = [v for a in reversed(range(spatial)) for v in (start[a], end[a])]  # F.pad: last axis first
    inner = tuple([slice(None)] * 2 + [slice(b, b + i) for b, i in zip(start, size)])

    def torch_grad(t):  # forward with indices, then backward; other paddings: -inf padding first (4.5)
        xp = t["x"] if native else F.pad(t["x"], pads, value=-math.inf)
        p = start if native else [0] * spatial
        _, idx = pool(xp, w, s, p, d, ceil, return_indices=True)
        g = backward(t["dy"], xp, w, s, p, d, ceil, idx)
        return g if native else g[inner]

    name = f"{'' if native else 'pad(-inf) + '}max_pool{spatial}d fwd+idx + bwd"
    params = (f"{spatial}-D k{gb.dims(w)} s{gb.dims(s)} d{gb.dims(d)} pad {csv(start)}/{csv(end)}"
              f"{' ceil' if ceil else ''}")
    return SweepCase("maxpool", dtype, {"x": (x, dtype), "dy": (dy, dtype)}, x, args, params, name, torch_grad,
                     gb.close if dtype == "float32" else gb.close_half, taps=elements(dy) * elements(w))


# Resample --------------------------------------------------------------------------------------------------------

FLT_MAX = 3.4028235e38
SCALES = (2.0, 3.0, 4.0, 0.5, 1 / 3, 0.25, 1.5, 2.5, 1.25, 0.75, 0.6, 0.4)  # integer and fractional, up and down

# DirectML conventions (docs/OPERATORS.md 5.7): grad offsets (input, output), the scale is out/in or aligned corners
CONVENTIONS = {"half_pixel": (-0.5, 0.5), "asymmetric": (0.0, 0.0), "align_corners": (0.0, 0.0),
               "tf_half_pixel_for_nn": (-0.5, 0.0)}
# nearest rounding: ONNX's nearest_mode as DirectML's direction and a shift of the grad output offset (5.1, 5.7)
ROUNDINGS = {"floor": ("decreasing", 0.0), "ceil": ("increasing", 0.0), "round_prefer_floor": ("increasing", 0.5),
             "round_prefer_ceil": ("decreasing", -0.5)}
TORCH_MODES = {"nearest": "nearest", "nearest-exact": "nearest-exact", "linear": "linear", "bilinear": "linear"}


def scale_factor(rng):
    return float(rng.choice(SCALES)) if rng.random() < 0.8 else math.exp(rng.uniform(math.log(0.25), math.log(4)))


def torch_upsample(mode, k, align, exact):
    """PyTorch's backward of resampling the last k axes (1-3) of an N x C x ... tensor; None for 4 axes."""
    if not torch or k > 3:
        return None, None
    if mode == "nearest":
        name = f"{'_' if exact else ''}upsample_nearest{'_exact' if exact else ''}{k}d_backward"
    else:
        name = {1: "upsample_linear1d_backward", 2: "upsample_bilinear2d_backward",
                3: "upsample_trilinear3d_backward"}[k]
    try:
        op = getattr(torch.ops.aten, name)
    except (AttributeError, RuntimeError):  # an older PyTorch without nearest-exact: checked on the CPU
        return None, None
    if mode == "nearest":
        return name, lambda dy, out, inp: op(dy, out, inp)
    return name + (" align_corners" if align else ""), lambda dy, out, inp: op(dy, out, inp, align)


def resample_axes(rng, rank):
    """Which axes resample (1-4 of them): mostly the last ones, as frameworks do, otherwise any."""
    k = int(rng.integers(1, rank + 1))
    if rng.random() < 0.7:
        return list(range(rank - k, rank))
    return sorted(int(a) for a in rng.choice(rank, size=k, replace=False))


def draw_resample(rng, mode, dtype, max_bytes):
    torch_mode = rng.random() < 0.3
    if torch_mode:  # dmlgrad's --torch-mode: PyTorch's own taps, 1 or 2 spatial axes of an N x C x ... tensor
        spatial = 1 if mode == "linear" and rng.random() < 0.5 else int(rng.integers(1, 3))
        rank, axes = spatial + 2, list(range(2, spatial + 2))
    else:
        rank = int(rng.integers(1, 5))
        axes = resample_axes(rng, rank)
    k = len(axes)
    first, same = scale_factor(rng), rng.random() < 0.7
    scales = [first if same else scale_factor(rng) for _ in axes]
    growth = math.prod(max(1.0, s) for s in scales)  # dY / dX where dY is the larger
    budget = max(1, int(target_bytes(rng, max_bytes) // np.dtype(dtype).itemsize / growth))  # of dX
    limit = max(2, int(budget ** (1 / k))) if k == rank else {1: 4096, 2: 768, 3: 96, 4: 32}[k]
    sizes = [None] * rank
    for a in axes:
        sizes[a] = axis_size(rng, limit)
    out_of = lambda i, s: max(1, int(math.floor(i * s)))
    dx = filled_shape(rng, sizes, budget)
    dy = list(dx)
    for a, s in zip(axes, scales):
        dy[a] = out_of(dx[a], s)
    dx, dy = tuple(dx), tuple(dy)
    if not fits(max_bytes, dtype, dx, dy):
        return None
    args = ["resample-grad", "-g", "{dy}", "-o", "{dx}", "--output-sizes", csv(dx)]
    align, exact_nearest = False, False
    if torch_mode:
        word = rng.choice(["nearest", "nearest-exact"]) if mode == "nearest" else \
            ("linear" if k == 1 else "bilinear")
        align = mode == "linear" and rng.random() < 0.4
        exact_nearest = word == "nearest-exact"
        args += ["--torch-mode", word] + (["--align-corners"] if align else [])
        params = f"--torch-mode {word}{' --align-corners' if align else ''}"
        same_as_torch = True
    else:
        conventions = [c for c in CONVENTIONS if mode == "nearest" or c != "tf_half_pixel_for_nn"]
        convention = str(rng.choice(conventions))
        align = convention == "align_corners"
        in_off, out_off = CONVENTIONS[convention]
        grad_scales = [1.0] * rank
        for a, s in zip(axes, scales):
            if align:
                grad_scales[a] = (dy[a] - 1) / (dx[a] - 1) if dx[a] > 1 and dy[a] > 1 else FLT_MAX
            else:
                grad_scales[a] = dy[a] / dx[a]
        offsets = lambda v: csv(f"{v if a in axes else 0.0:g}" for a in range(rank))
        rounding = str(rng.choice(list(ROUNDINGS))) if mode == "nearest" else None
        direction, shift = ROUNDINGS[rounding] if rounding else ("decreasing", 0.0)
        args += ["--interpolation-mode", mode, "--scales", csv(f"{s:.9g}" for s in grad_scales),
                 "--input-pixel-offsets", offsets(in_off), "--output-pixel-offsets", offsets(out_off + shift)]
        if rounding:
            args += ["--rounding-direction", direction]
        params = convention + (f", {rounding}" if rounding else "")
        # PyTorch's bilinear (align_corners=False) is half_pixel; its nearest rounds its own way (5.7)
        same_as_torch = mode == "linear" and convention in ("half_pixel", "align_corners")
    params += " scales " + csv(f"{dy[a] / dx[a]:.3g}" for a in axes) + f" on axes {csv(axes)}"
    name, op = torch_upsample(mode, k, align, exact_nearest)
    trailing = axes == list(range(rank - k, rank))
    half = dtype == "float16"
    if mode == "nearest":
        check = (gb.close_half if half else gb.close) if torch_mode else None
    else:
        check = (gb.close_to_scale_half if half else gb.close_to_scale) if same_as_torch and trailing else None
    torch_inputs = None
    lead = elements(dx[:rank - k]) if trailing else elements([dx[a] for a in range(rank) if a not in axes])
    in_sizes, out_sizes = [dx[a] for a in axes], [dy[a] for a in axes]
    if not trailing:  # the same work on the resampled axes moved last: PyTorch's own inputs, checked on the CPU
        torch_inputs = {"dy": ((1, lead, *out_sizes), dtype)}
        name = name and name + " (axes moved last)"
    fn = None
    if op:
        def fn(t):
            return op(t["dy"].reshape(1, lead, *out_sizes), out_sizes, [1, lead, *in_sizes]).reshape(
                dx if trailing else (1, lead, *in_sizes))
    return SweepCase("resample-" + mode, dtype, {"dy": (dy, dtype)}, dx, args, params, name, fn,
                     check if op else None, torch_inputs, taps=elements(dy) * (2 ** k if mode == "linear" else 1))


# The classes -----------------------------------------------------------------------------------------------------

def classes():
    """(class, dtype, weight, draw): weight is how many cases of the class a round of the sweep draws, more where
    kernels branch on the geometry."""
    out = []
    for dtype in RELU_DTYPES:
        out.append(("relu", dtype, 2 if dtype.startswith("float") else 1, draw_relu))
    for dtype in CLIP_DTYPES:
        out.append(("clip", dtype, 2 if dtype == "float32" else 1, draw_clip))
    for dtype in SLICE_DTYPES:
        out.append(("slice", dtype, 2 if dtype in ("float32", "float16", "int16", "int8") else 1, draw_slice))
    for dtype in ("float32", "float16"):
        out.append(("maxpool", dtype, 5, draw_maxpool))
    for mode, weight in (("nearest", 3), ("linear", 4)):
        for dtype in ("float32", "float16"):
            out.append((f"resample-{mode}", dtype, weight,
                        lambda rng, dt, mb, mode=mode: draw_resample(rng, mode, dt, mb)))
    return out


def draw_valid(draw, rng, dtype, max_bytes, tries=1000):
    """The next valid draw and how many were refused on the way."""
    for refused in range(tries):
        case = draw(rng, dtype, max_bytes)
        if case is not None:
            return case, refused
    raise RuntimeError(f"{tries} draws in a row broke a rule: the draw itself is wrong")


def schedule(seed, wanted, max_bytes, per_class=None):
    """The sweep's cases in run order: rounds over the classes, each class drawing its weight's worth of cases a
    round (or per_class in all), interleaved so that a run cut short by its time budget still covers every class.
    Each class has its own generator, seeded by (seed, class), so its draws do not depend on the other classes.
    Yields (case, refused draws)."""
    chosen = [c for c in classes() if wanted(c[0], c[1])]
    generators = {(c, d): np.random.default_rng([seed, i]) for i, (c, d, _, _) in enumerate(classes())}
    drawn = {(c, d): 0 for c, d, _, _ in chosen}
    while True:
        emitted = False
        for step in range(max(w for _, _, w, _ in chosen)):
            for cls, dtype, weight, draw in chosen:
                if step >= weight or (per_class is not None and drawn[(cls, dtype)] >= per_class):
                    continue
                drawn[(cls, dtype)] += 1
                emitted = True
                yield draw_valid(draw, generators[(cls, dtype)], dtype, max_bytes)
        if not emitted:
            return
