#!/usr/bin/env python3
"""Slices timed on several dmlgrad binaries: for each case the same random dY for every binary, each one's kernel
median and chosen kernel, and whether every dX is bit-identical to the first binary's (bench/ab_table.py).

    python3 bench/slice_ab.py CASES BINARY...

CASES: a file of one case a line, `dtype dX-shape slice` (e.g. `float16 16x65536x8x16 [:, :61932:3, -3:7:4, :]`);
blank lines and lines from # on are skipped.
"""
import os
import sys
import tempfile

import numpy as np

from ab_table import print_header, shapes_text, timed_cells


def read_cases(path):
    for line in open(path):
        line = line.split('#')[0].strip()
        if line:
            dtype, shape, sl = line.split(None, 2)
            yield dtype, tuple(int(n) for n in shape.split('x')), sl


def random_dy(rng, dtype, shape):
    if np.dtype(dtype).kind == 'f':
        return rng.standard_normal(shape, dtype=np.float32).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(dtype)


def main():
    cases, binaries = sys.argv[1], sys.argv[2:]
    rng = np.random.default_rng(7)
    print_header(binaries, ['dtype', 'dY -> dX', 'slice'])
    with tempfile.TemporaryDirectory(prefix='slice_ab_') as folder:
        dy = os.path.join(folder, 'dy.npy')
        for dtype, shape, sl in read_cases(cases):
            dy_shape = np.zeros(shape, np.uint8)[eval('np.s_' + sl)].shape
            np.save(dy, random_dy(rng, dtype, dy_shape))
            cells = timed_cells(binaries, folder, ['slice-grad', '-g', dy, '--output-sizes',
                                                   ','.join(map(str, shape)), '--slice', sl])
            print(f"| {dtype} | {shapes_text(dy_shape, shape)} | {sl} | " + ' | '.join(cells) + ' |', flush=True)


if __name__ == '__main__':
    main()
