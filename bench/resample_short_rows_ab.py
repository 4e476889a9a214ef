#!/usr/bin/env python3
"""Several dmlgrad binaries on nearest resamples of short rows that read several dY rows (nearest33's neighbours of
20261231/29, fp16 rows of 5 from 2x2 of 10, and /28, float32 rows of 1 from 3x3 of 3): fp16 rows of 1 to 7 halves,
odd and even, float32 rows of 1 to 3, one to three resampled axes, integer and fractional scales, down and up. The
same random dY for every binary, each one's kernel median (`--repeat 20 --json`), the kernel it chose, and whether
its dX is bit-identical to the first binary's.

    python3 bench/resample_short_rows_ab.py BASE_DMLGRAD NEW_DMLGRAD [MORE...]
"""
import sys

from resample_ab import print_typed_cases

HALF_FLOOR = ["--interpolation-mode", "nearest", "--coordinate-transformation-mode", "half_pixel", "--nearest-mode",
              "floor"]
EXACT = ["--torch-mode", "nearest-exact"]
TORCH = ["--torch-mode", "nearest"]

CASES = [  # (dtype, dY shape, dX shape, the resample's form)
    ("float16", (8, 15121, 330, 10), (8, 15121, 165, 5), HALF_FLOOR),  # 20261231/29
    ("float16", (8, 15121, 330, 14), (8, 15121, 165, 7), HALF_FLOOR),  # rows of 7: the walk
    ("float16", (8, 15121, 330, 12), (8, 15121, 165, 6), HALF_FLOOR),  # even rows: the strips
    ("float16", (16, 10000, 198, 6), (16, 10000, 99, 3), HALF_FLOOR),
    ("float16", (16, 10000, 250, 12), (16, 10000, 100, 5), TORCH),     # 2.5x 2.4x
    ("float16", (64, 4000, 150, 3), (64, 4000, 61, 1), EXACT),         # rows of 1 from 3
    ("float16", (32, 6000, 120, 4), (32, 6000, 60, 4), HALF_FLOOR),    # even rows, axis 2 only
    ("float16", (32, 6000, 120, 3), (32, 6000, 60, 3), HALF_FLOOR),    # odd rows, axis 2 only
    ("float16", (16, 4000, 300, 2), (16, 4000, 120, 3), TORCH),        # rows of 3 from 2: up on axis 3
    ("float16", (1000, 19, 9, 10), (1000, 19, 3, 5), EXACT),           # tiny planes (15 dX)
    ("float32", (18, 3103, 411, 3), (18, 3103, 137, 1), EXACT),        # 20261231/28
    ("float32", (18, 3103, 411, 6), (18, 3103, 137, 2), EXACT),        # rows of 2
    ("float32", (18, 3103, 411, 9), (18, 3103, 137, 3), EXACT),        # rows of 3: the walk
    ("float32", (32, 8000, 180, 2), (32, 8000, 90, 1), HALF_FLOOR),
    ("float32", (16, 4000, 250, 5), (16, 4000, 100, 2), TORCH),        # 2.5x
    ("float32", (8, 2000, 27, 22, 6), (8, 2000, 9, 11, 2), EXACT),     # three axes
    ("float32", (4, 400, 8000, 2), (4, 400, 4000, 1), HALF_FLOOR),     # planes of 4000
    ("float32", (105433, 18, 2, 2), (105433, 18, 1, 1), EXACT),        # 20261227/28: tiny planes
]


def main():
    names = {id(HALF_FLOOR): "half_pixel floor", id(EXACT): "nearest-exact", id(TORCH): "nearest"}
    print_typed_cases(sys.argv[1:], CASES, 20261233, lambda form: names[id(form)])


main()
