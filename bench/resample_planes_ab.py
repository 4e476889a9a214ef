#!/usr/bin/env python3
"""Several dmlgrad binaries on nearest resamples of tiny planes (nearest32's neighbours of 20261227/28): the same
random dY for every binary, each one's kernel median (`--repeat 20 --json`), the kernel it chose, and whether its
dX is bit-identical to the first binary's.

    python3 bench/resample_planes_ab.py BASE_DMLGRAD NEW_DMLGRAD [MORE...]
"""
import sys, tempfile
import numpy as np

from resample_ab import print_header, run_case, shapes_text

CASES = [  # (dtype, dY shape, dX shape), PyTorch's nearest-exact
    ("float32", (105433, 18, 2, 2), (105433, 18, 1, 1)),
    ("float32", (52716, 18, 2, 4), (52716, 18, 1, 2)),
    ("float32", (17572, 18, 4, 6), (17572, 18, 2, 3)),
    ("float32", (11714, 18, 6, 6), (11714, 18, 3, 3)),
    ("float32", (23429, 18, 3, 3), (23429, 18, 2, 2)),
    ("float32", (26358, 8, 2, 2, 2), (26358, 8, 1, 1, 1)),
    ("float32", (5206, 18, 9, 9), (5206, 18, 3, 3)),
    ("float32", (421732, 18, 1, 1), (421732, 18, 2, 2)),
    ("float16", (105433, 18, 2, 2), (105433, 18, 1, 1)),
    ("float16", (52716, 18, 2, 4), (52716, 18, 1, 2)),
    ("float16", (17572, 18, 4, 6), (17572, 18, 2, 3)),
    ("float16", (11714, 18, 6, 6), (11714, 18, 3, 3)),
    ("float16", (23429, 18, 3, 3), (23429, 18, 2, 2)),
]


def main():
    binaries = sys.argv[1:]
    rng = np.random.default_rng(20261228)
    print_header(binaries, ["dtype", "dY -> dX"])
    with tempfile.TemporaryDirectory() as d:
        for dtype, dy_shape, dx_shape in CASES:
            cells = run_case(binaries, d, rng, dtype, dy_shape, dx_shape, ["--torch-mode", "nearest-exact"])
            print(f"| {dtype} | {shapes_text(dy_shape, dx_shape)} | " + " | ".join(cells) + " |", flush=True)


main()
