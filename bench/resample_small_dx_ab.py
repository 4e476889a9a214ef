#!/usr/bin/env python3
"""Several dmlgrad binaries on nearest fp16 resamples of small dX (below 2^21 elements) that read many dY elements an
element (words37: 20261239/48, 4x down on three axes to 49x35x19, and its neighbours), and plans of the same sizes
that the strips take, for scale. The same random dY for every binary, each one's kernel median (`--repeat 20
--json`), the kernel it chose, and whether its dX is bit-identical to the first binary's.

    python3 bench/resample_small_dx_ab.py BASE_DMLGRAD NEW_DMLGRAD [MORE...]

With `linear` first: linear fp16 resamples of small dX instead (linear39: the strips against the word walk), rows
of an even length (the fp16 strips' plans), around the 2^20 elements from which the strips keep them.

    python3 bench/resample_small_dx_ab.py linear BASE_DMLGRAD NEW_DMLGRAD [MORE...]
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
BILINEAR = ["--torch-mode", "bilinear"]
BILINEAR_CORNERS = ["--torch-mode", "bilinear", "--align-corners"]
TRILINEAR = ["--torch-mode", "trilinear"]
CASE_44 = ["--interpolation-mode", "linear", "--scales", "3.32608696,2.72", "--input-pixel-offsets", "0,0",
           "--output-pixel-offsets", "0,0"]  # 20261242/44's align_corners

LINEAR_CASES = [  # linear fp16 of small dX, rows of an even length (the strips' plans before linear39)
    ((460, 341), (139, 126), CASE_44),
    ((1, 1, 460, 341), (1, 1, 139, 126), BILINEAR_CORNERS),
    ((4, 32, 128, 128), (4, 32, 64, 64), BILINEAR),
    ((8, 3, 270, 360), (8, 3, 90, 120), BILINEAR),
    ((1, 1, 1024, 1024), (1, 1, 256, 256), BILINEAR),
    ((16, 64, 32, 32), (16, 64, 16, 16), BILINEAR_CORNERS),
    ((2, 8, 32, 64, 64), (2, 8, 16, 32, 32), TRILINEAR),
    ((4, 32, 32, 32), (4, 32, 64, 64), BILINEAR),
    ((2, 3, 40, 40), (2, 3, 20, 20), BILINEAR),
    ((8, 64, 96, 96), (8, 64, 48, 48), BILINEAR),
    ((8, 64, 50, 50), (8, 64, 34, 34), BILINEAR),
    ((1, 16, 720, 1280), (1, 16, 180, 320), BILINEAR),
    ((8, 64, 80, 80), (8, 64, 40, 40), BILINEAR),
    ((1, 8, 512, 512), (1, 8, 256, 256), BILINEAR),
    ((6, 64, 64, 64), (6, 64, 32, 32), BILINEAR_CORNERS),
    ((1, 1, 2048, 2048), (1, 1, 1024, 1024), BILINEAR),
    ((1, 64, 3000), (1, 64, 1000), ["--torch-mode", "linear"]),
]


def print_table(binaries, cases, seed, form_name):
    """The cases' rows on the binaries, the same random fp16 dY for each (drawn from `seed`); form_name(form) is the
    text of the form column."""
    rng = np.random.default_rng(seed)
    print_header(binaries, ["dY -> dX", "form"])
    with tempfile.TemporaryDirectory() as d:
        for dy_shape, dx_shape, form in cases:
            cells = run_case(binaries, d, rng, "float16", dy_shape, dx_shape, form)
            print(f"| {shapes_text(dy_shape, dx_shape)} | {form_name(form)} | " + " | ".join(cells) + " |", flush=True)


def main():
    if sys.argv[1:2] == ["linear"]:
        print_table(sys.argv[2:], LINEAR_CASES, 20261243, " ".join)
    else:
        print_table(sys.argv[1:], CASES, 20261239, lambda form: "20261239/48's" if form is CASE_48 else "half-pixel")


if __name__ == "__main__":
    main()
