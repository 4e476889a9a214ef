#!/usr/bin/env python3
"""Several dmlgrad binaries on nearest resamples whose columns take more taps than the lines' column words' variants
(LINE_MOST_TAPS): downscales by 5x and more on rows of an odd length, from dX of a few thousand elements to past
2^24 on one axis, where DirectML's float32 coordinates give a column 0 to 8 taps (bounds41: the lines' bounds in the
uint4 walk's place, the walk kept below 2^21 elements). The same random dY for every binary, each one's kernel median
(`--repeat 20 --json`), the kernel it chose, and whether its dX is bit-identical to the first binary's.

    python3 bench/resample_downscale_ab.py BASE_DMLGRAD NEW_DMLGRAD [MORE...]
"""
import sys

from resample_ab import print_typed_cases

NEAREST = ["--interpolation-mode", "nearest"]  # DirectML's default offsets, rounding down
# 20261250/48: 1-D align_corners, round_prefer_ceil, dX 84752039 halves from 63564029.
CASE_48 = ["--interpolation-mode", "nearest", "--scales", "0.749999994", "--input-pixel-offsets", "0",
           "--output-pixel-offsets", "-0.5", "--rounding-direction", "decreasing"]

CASES = [  # (dtype, dY shape, dX shape, the resample's form)
    ("float16", (63564029,), (84752039,), CASE_48),
    ("float16", (64, 999, 1005), (64, 999, 201), NEAREST),
    ("float16", (4000, 6006), (4000, 1001), NEAREST),
    ("float16", (3, 35000007), (3, 5000001), NEAREST),
    ("float16", (30000000,), (12000000,), NEAREST),
    ("float16", (16, 64, 57, 161), (16, 64, 57, 23), NEAREST),
    ("float16", (8, 64, 100, 199), (8, 64, 100, 33), NEAREST),
    ("float16", (1, 1, 27000), (1, 1, 5000), NEAREST),
    ("float16", (1, 1, 5400000), (1, 1, 1000000), NEAREST),
    ("float16", (2000, 1005), (2000, 201), NEAREST),
    ("float32", (3, 1040), (3, 110), NEAREST),
    ("float32", (7, 5000001), (7, 500000), NEAREST),
]


def main():
    print_typed_cases(sys.argv[1:], CASES, 41, lambda form: "20261250/48's" if form is CASE_48 else "half-pixel")


if __name__ == "__main__":
    main()
