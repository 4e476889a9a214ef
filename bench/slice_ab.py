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

from ab_table import print_header, timed_cells


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
    folder = tempfile.mkdtemp(prefix='slice_ab_')
    dy = os.path.join(folder, 'dy.npy')
    rng = np.random.default_rng(7)
    print_header(binaries, ['dtype', 'dY -> dX', 'slice'])
    for dtype, shape, sl in read_cases(cases):
        dy_shape = np.zeros(shape, np.uint8)[eval('np.s_' + sl)].shape
        np.save(dy, random_dy(rng, dtype, dy_shape))
        cells = timed_cells(binaries, folder, ['slice-grad', '-g', dy, '--output-sizes', ','.join(map(str, shape)),
                                               '--slice', sl])
        shapes = 'x'.join(map(str, dy_shape)) + ' -> ' + 'x'.join(map(str, shape))
        print(f"| {dtype} | {shapes} | {sl} | " + ' | '.join(cells) + ' |', flush=True)
        for f in os.listdir(folder):
            os.remove(os.path.join(folder, f))
    os.rmdir(folder)


if __name__ == '__main__':
    main()
