#!/usr/bin/python3
"""Writes the small inputs of samples/ (run once; the .npy files are committed). Needs numpy."""
import pathlib

import numpy as np

here = pathlib.Path(__file__).parent
rng = np.random.default_rng(20261122)


def save(name, array):
    np.save(here / name, array)


save("x.npy", rng.standard_normal((4, 256)).astype(np.float32))
save("dy.npy", rng.standard_normal((4, 256)).astype(np.float32))
save("dy_slice.npy", rng.standard_normal((2, 3, 4, 4)).astype(np.float32))       # [:, :, ::2, ::2] of 2x3x8x8
save("x_pool.npy", rng.standard_normal((1, 2, 8, 8)).astype(np.float32))
save("dy_pool.npy", rng.standard_normal((1, 2, 4, 4)).astype(np.float32))        # 3x3 window, stride 2, pad 1
save("dy_resample.npy", rng.standard_normal((1, 2, 16, 16)).astype(np.float32))  # 2x linear upsample of 8x8
save("x_half.npy", rng.standard_normal((1000,)).astype(np.float16))
save("dy_half.npy", rng.standard_normal((1000,)).astype(np.float16))
