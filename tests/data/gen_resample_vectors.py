#!/usr/bin/python3
"""Writes resample_vectors.txt: resample-grad cases in the PyTorch and ONNX forms with their expected dX.

PyTorch cases: dX is torch's autograd gradient of F.interpolate (torch 1.13, CPU, float32). ONNX cases: dX is the
transpose of ONNX Resize's forward map, built per axis from the formulas of the ONNX operator description in exact
rational arithmetic (fractions), so that coordinates landing exactly on an integer or a half are rounded as ONNX
says. tests/unit/resample_modes_test.cpp reads the file. Needs torch and numpy:

    /usr/bin/python3 tests/data/gen_resample_vectors.py

Line format (one case per line, fields separated by blanks, lists by commas):
    torch MODE ALIGN_CORNERS(0|1) SCALE_FACTORS(-|f[,f]) DX_SHAPE DY_SHAPE DY DX
    onnx MODE(nearest|linear) COORDINATE_MODE NEAREST_MODE(-|name) DX_SHAPE DY_SHAPE DY DX
"""
import math
import os
import random
from fractions import Fraction

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(20261124)


def text(values):
    """float32 values, each in the shortest form that reads back to the same float32."""
    return ",".join(str(int(v)) if float(v).is_integer() else str(np.float32(v)) for v in values)


def shape_text(shape):
    return ",".join(str(n) for n in shape)


def random_dy(shape):
    # Small integers: every nearest sum is exact in float32.
    return np.array([rng.randint(-9, 9) for _ in range(int(np.prod(shape)))], dtype=np.float32).reshape(shape)


# ------------------------------------------------------------------------------------------------------------------
# PyTorch

def torch_case(mode, align_corners, dx_shape, out_spatial=None, factors=None):
    x = torch.zeros(dx_shape, dtype=torch.float32, requires_grad=True)
    kwargs = {"mode": mode}
    if mode in ("linear", "bilinear", "trilinear"):
        kwargs["align_corners"] = align_corners
    if factors is not None:
        kwargs["scale_factor"] = factors[0] if len(factors) == 1 else tuple(factors)
    else:
        kwargs["size"] = tuple(out_spatial)
    y = F.interpolate(x, **kwargs)
    dy = random_dy(tuple(y.shape))
    y.backward(torch.from_numpy(dy))
    dx = x.grad.numpy().astype(np.float32)
    return "torch {} {} {} {} {} {} {}".format(
        mode, int(align_corners), "-" if factors is None else text(factors), shape_text(dx_shape),
        shape_text(y.shape), text(dy.ravel()), text(dx.ravel()))


def torch_cases():
    lines = []
    spatial_of = {"nearest": (1, 2), "nearest-exact": (1, 2), "linear": (1,), "bilinear": (2,)}
    factor_choices = [0.5, 0.6, 0.75, 1.2, 1.5, 1.7, 2.0, 2.5, 3.0, 1.0 / 3.0]
    for mode, spatials in spatial_of.items():
        for align in ((False, True) if mode in ("linear", "bilinear") else (False,)):
            for with_factor in (False, True):
                for k in range(20):
                    spatial = spatials[k % len(spatials)]
                    dx_shape = (rng.randint(1, 2), rng.randint(1, 2)) + tuple(rng.randint(1, 9) for _ in range(spatial))
                    if with_factor:
                        factors = [rng.choice(factor_choices) for _ in range(rng.choice((1, spatial)))]
                        sizes = [math.floor(dx_shape[2 + s] * factors[min(s, len(factors) - 1)])
                                 for s in range(spatial)]
                        if min(sizes) < 1:
                            continue
                        lines.append(torch_case(mode, align, dx_shape, factors=factors))
                    else:
                        out = [rng.choice((1, 2 * dx_shape[2 + s], dx_shape[2 + s], rng.randint(1, 13), rng.randint(1, 13)))
                               for s in range(spatial)]
                        lines.append(torch_case(mode, align, dx_shape, out_spatial=out))
    # Hand-picked: float32's in/out product against DirectML's divide (14 -> 2 picks source 7), size 1, odd sizes.
    for mode in ("nearest", "nearest-exact"):
        lines.append(torch_case(mode, False, (1, 1, 14), out_spatial=[2]))
        lines.append(torch_case(mode, False, (1, 1, 21), out_spatial=[3]))
        lines.append(torch_case(mode, False, (1, 1, 26), out_spatial=[64]))
    for align in (False, True):
        lines.append(torch_case("linear", align, (1, 1, 1), out_spatial=[5]))
        lines.append(torch_case("linear", align, (1, 1, 5), out_spatial=[1]))
        lines.append(torch_case("bilinear", align, (1, 2, 7, 3), out_spatial=[3, 8]))
        lines.append(torch_case("linear", align, (1, 1, 5), factors=[1.5]))
    return lines


def torch_volume_cases():
    """5-D volumes (N, C, D, H, W): nearest, nearest-exact and trilinear, which dmlgrad folds to rank 4. A random
    generator of their own, so that adding them left the earlier cases as they were."""
    global rng
    kept, rng = rng, random.Random(20261126)
    lines = []
    for mode in ("nearest", "nearest-exact", "trilinear"):
        for align in ((False, True) if mode == "trilinear" else (False,)):
            for k in range(8):
                dx_shape = (rng.randint(1, 2), rng.randint(1, 3)) + tuple(rng.randint(1, 5) for _ in range(3))
                if k % 2:
                    factors = [rng.choice([0.5, 1.5, 2.0, 0.75]) for _ in range(rng.choice((1, 3)))]
                    if min(math.floor(dx_shape[2 + s] * factors[min(s, len(factors) - 1)]) for s in range(3)) < 1:
                        continue
                    lines.append(torch_case(mode, align, dx_shape, factors=factors))
                else:
                    out = [rng.choice((1, 2 * dx_shape[2 + s], rng.randint(1, 7))) for s in range(3)]
                    lines.append(torch_case(mode, align, dx_shape, out_spatial=out))
    rng = kept
    return lines


# ------------------------------------------------------------------------------------------------------------------
# ONNX: x_original by coordinate_transformation_mode, then the nearest rounding or the two linear neighbours with the
# edge pixels repeated, as the ONNX Resize description states them.

def onnx_original(mode, x, length_original, length_resized):
    scale = Fraction(length_resized, length_original)
    if mode == "half_pixel":
        return (x + Fraction(1, 2)) / scale - Fraction(1, 2)
    if mode == "half_pixel_symmetric":
        output_width = scale * length_original  # the sizes are given: equal to length_resized
        adjustment = Fraction(length_resized) / output_width
        offset = Fraction(length_original, 2) * (1 - adjustment)
        return offset + (x + Fraction(1, 2)) / scale - Fraction(1, 2)
    if mode == "pytorch_half_pixel":
        return (x + Fraction(1, 2)) / scale - Fraction(1, 2) if length_resized > 1 else Fraction(0)
    if mode == "align_corners":
        return Fraction(x * (length_original - 1), length_resized - 1) if length_resized > 1 else Fraction(0)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + Fraction(1, 2)) / scale
    raise ValueError(mode)


def onnx_nearest(mode, x):
    f = math.floor(x)
    if mode == "round_prefer_floor":
        return f if x == f + Fraction(1, 2) else math.floor(x + Fraction(1, 2))
    if mode == "round_prefer_ceil":
        return math.ceil(x) if x == f + Fraction(1, 2) else math.floor(x + Fraction(1, 2))
    if mode == "floor":
        return f
    if mode == "ceil":
        return math.ceil(x)
    raise ValueError(mode)


def onnx_axis_matrix(interp, coord, nearest, n_in, n_out, resampled):
    """Forward map of one axis: y = A x, A of shape (n_out, n_in)."""
    a = np.zeros((n_out, n_in))
    for o in range(n_out):
        if not resampled:
            a[o, o] = 1
            continue
        x = onnx_original(coord, o, n_in, n_out)
        if interp == "nearest":
            a[o, min(max(onnx_nearest(nearest, x), 0), n_in - 1)] += 1
        else:
            x0 = math.floor(x)
            ratio = x - x0
            for index, weight in ((x0, 1 - ratio), (x0 + 1, ratio)):
                a[o, min(max(index, 0), n_in - 1)] += float(weight)
    return a


def onnx_case(interp, coord, nearest, dx_shape, dy_shape):
    rank = len(dx_shape)
    dy = random_dy(dy_shape).astype(np.float64)
    grad = dy
    for d in range(rank):  # dX = A^T dY, one axis at a time
        resampled = rank <= 2 or d >= 2 or dx_shape[d] != dy_shape[d]
        a = onnx_axis_matrix(interp, coord, nearest, dx_shape[d], dy_shape[d], resampled)
        grad = np.moveaxis(np.tensordot(a.T, np.moveaxis(grad, d, 0), axes=1), 0, d)
    dx = grad.astype(np.float32)
    return "onnx {} {} {} {} {} {} {}".format(
        interp, coord, nearest or "-", shape_text(dx_shape), shape_text(dy_shape), text(dy.ravel()),
        text(dx.ravel()))


def onnx_cases():
    lines = []
    coords = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
              "half_pixel_symmetric"]
    tie_pairs = [(7, 2), (8, 3), (3, 9), (2, 8), (5, 10), (9, 6), (1, 4), (4, 1), (6, 4), (3, 5)]
    for coord in coords:
        for interp, nearest in [("nearest", m) for m in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")] + [
                ("linear", None)]:
            for k in range(6):
                rank = rng.randint(1, 4)
                dx_shape, dy_shape = [], []
                for d in range(rank):
                    spatial = rank <= 2 or d >= 2
                    if spatial:
                        n_in, n_out = rng.choice(tie_pairs) if k % 2 == 0 else (rng.randint(1, 9), rng.randint(1, 9))
                    else:
                        n_in = rng.randint(1, 3)
                        n_out = n_in if rng.random() < 0.7 else rng.randint(1, 3)
                    dx_shape.append(n_in)
                    dy_shape.append(n_out)
                lines.append(onnx_case(interp, coord, nearest, tuple(dx_shape), tuple(dy_shape)))
    return lines


def main():
    torch.set_num_threads(1)
    lines = torch_cases() + onnx_cases() + torch_volume_cases()
    path = os.path.join(HERE, "resample_vectors.txt")
    with open(path, "w") as f:
        f.write("# Generated by tests/data/gen_resample_vectors.py (torch {}); format in its docstring.\n".format(
            torch.__version__))
        f.write("\n".join(lines) + "\n")
    print("{}: {} cases, {} bytes".format(path, len(lines), os.path.getsize(path)))


if __name__ == "__main__":
    main()
