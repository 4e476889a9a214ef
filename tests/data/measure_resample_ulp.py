#!/usr/bin/python3
"""Measures how far resample-grad's linear modes (--torch-mode linear, bilinear, trilinear) are from PyTorch's
autograd, in float32 ULP, on random size pairs; the figures of docs/OPERATORS.md 5.7. Needs torch, numpy and a
built dmlgrad (not run by the tests, which compare with the committed vectors instead):

    /usr/bin/python3 tests/data/measure_resample_ulp.py build/dmlgrad

Two kinds of dY: one-hot (each dX element then receives a single product of weights and dY, so only the order of
the products and the merged taps at the last pixel can differ) and positive random values (sums without
cancellation, where a ULP bound is meaningful). One run covers every one-hot position: each sits in its own channel.
"""
import random
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

DMLGRAD = sys.argv[1] if len(sys.argv) > 1 else "build/dmlgrad"
rng = random.Random(7)
values = np.random.default_rng(7)


def ordered(bits):
    """float32 bit patterns as integers whose difference counts ULPs across zero."""
    bits = bits.astype(np.float32).view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def max_ulp(mode, align_corners, spatial_in, spatial_out, one_hot):
    count = int(np.prod(spatial_out))
    channels = count if one_hot else 2
    if one_hot:
        dy = np.zeros((1, channels) + tuple(spatial_out), np.float32)
        for k in range(count):
            dy[0, k].flat[k] = values.uniform(0.5, 2.0)
    else:
        dy = values.uniform(0.5, 2.0, (1, channels) + tuple(spatial_out)).astype(np.float32)
    x = torch.zeros((1, channels) + tuple(spatial_in), requires_grad=True)
    F.interpolate(x, size=tuple(spatial_out), mode=mode, align_corners=align_corners).backward(torch.from_numpy(dy))
    np.save("/tmp/measure_ulp_dy.npy", dy)
    command = [DMLGRAD, "resample-grad", "-g", "/tmp/measure_ulp_dy.npy", "-o", "/tmp/measure_ulp_dx.npy",
               "--output-sizes", ",".join(map(str, (1, channels) + tuple(spatial_in))), "--torch-mode", mode, "--cpu",
               "-q"] + (["--align-corners"] if align_corners else [])
    subprocess.run(command, check=True)
    return int(np.abs(ordered(np.load("/tmp/measure_ulp_dx.npy")) - ordered(x.grad.numpy())).max())


def main():
    torch.set_num_threads(1)
    for mode, rank, trials in (("linear", 1, 60), ("bilinear", 2, 60), ("trilinear", 3, 20)):
        for align_corners in (False, True):
            for one_hot in (True, False):
                worst, differing, runs = 0, 0, 0
                for _ in range(trials):
                    spatial_in = [rng.randint(1, 9) for _ in range(rank)]
                    spatial_out = [rng.choice((1, rng.randint(1, 13), 2 * n)) for n in spatial_in]
                    if one_hot and np.prod(spatial_out) > 400:
                        continue
                    ulp = max_ulp(mode, align_corners, spatial_in, spatial_out, one_hot)
                    worst, differing, runs = max(worst, ulp), differing + (ulp > 0), runs + 1
                print("{:9} align_corners={:5} {:8} size pairs {:3}, differing {:3}, max {} ULP".format(
                    mode, str(align_corners), "one-hot" if one_hot else "positive", runs, differing, worst))


if __name__ == "__main__":
    main()
