#!/usr/bin/env python3
"""Several dmlgrad binaries on nearest fp16 resamples of small dX (below 2^21 elements) that read many dY elements an
element (words37: 20261239/48, 4x down on three axes to 49x35x19, and its neighbours), and plans of the same sizes
that the strips take, for scale. The same random dY for every binary, each one's kernel median (`--repeat 20
--json`), the kernel it chose, and whether its dX is bit-identical to the first binary's.

    python3 bench/resample_small_dx_ab.py BASE_DMLGRAD NEW_DMLGRAD [MORE...]
"""
import sys, tempfile
import numpy as np

from resample_ab import print_header, run_case, shapes_text

HALF_PIXEL = ["--interpolation-mode", "nearest"]  # DirectML's default offsets, rounding down
CASE_48 = ["--interpolation-mode", "nearest", "--scales", "4.0625,4.08823529,4.16666667", "--input-pixel-offsets",
           "0,0,0", "--rounding-direction", "increasing"]  # 20261239/48's align_corners, round_prefer_floor

CASES = [  # (dY shape, dX shape, the resample's form)
    ((196, 140, 76), (49, 35, 19), CASE_48),
    ((64, 64, 64), (16, 16, 16), HALF_PIXEL),
    ((4, 96, 96, 96), (4, 48, 48, 48), HALF_PIXEL),
    ((8, 66, 66), (8, 33, 33), HALF_PIXEL),
    ((16, 128, 128), (16, 32, 32), HALF_PIXEL),  # the strips
    ((3, 200, 200), (3, 100, 100), HALF_PIXEL),
]


def main():
    binaries = sys.argv[1:]
    rng = np.random.default_rng(20261239)
    print_header(binaries, ["dY -> dX", "form"])
    with tempfile.TemporaryDirectory() as d:
        for dy_shape, dx_shape, form in CASES:
            cells = run_case(binaries, d, rng, "float16", dy_shape, dx_shape, form)
            name = "20261239/48's" if form is CASE_48 else "half-pixel"
            print(f"| {shapes_text(dy_shape, dx_shape)} | {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
