#!/usr/bin/env python3
"""Sparse slices ("points": reached elements far apart) timed on two dmlgrad binaries, kernel medians of 20, outputs
compared bit for bit: one element every row or every other row, and several a row, 128-5120 bytes apart, fp32,
fp16, uint8 and fp64, dX of 64 and 384 MiB (--small: 4 MiB, 3 runs, to check the script).

    python3 bench/slice_points_ab.py BASE_BINARY CANDIDATE_BINARY
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

base, cand = sys.argv[1], sys.argv[2]
small = '--small' in sys.argv
scratch = tempfile.mkdtemp(prefix='slice_points_')
dy_file, dx_file = os.path.join(scratch, 'dy.npy'), os.path.join(scratch, 'dx.npy')
cases = []
MB = 1 << 20
for dt in ['float32', 'float16', 'uint8', 'float64']:
    e = np.dtype(dt).itemsize
    for target in ([4 * MB] if small else [64 * MB, 384 * MB]):
        for spacing in [128, 320, 1280, 5120]:
            # one point per reached row: rows of C elements, every s-th row
            for rowb, s in [(spacing, 1), (spacing // 2, 2)]:
                C = max(2, rowb // e) | 1
                B = 64
                A = max(1, target // (B * C * e))
                cases.append((dt, (A, B, C), f"[:, ::{s}, {C // 3}:{C // 3 + 1}]"))
            # several points per row, k apart
            k = max(2, spacing // e)
            C = 16 * k + 1
            A = max(1, target // (32 * C * e))
            cases.append((dt, (A, 32, C), f"[:, ::2, 1::{k}]"))
def run(b, shape, sl):
    r = subprocess.run([b, 'slice-grad', '-g', dy_file, '-o', dx_file, '--output-sizes',
                        ','.join(map(str, shape)), '--slice', sl, '--repeat', '3' if small else '20', '--json'],
                       capture_output=True, text=True)
    if r.returncode: return None, '?', None
    d = json.loads(r.stdout)
    return d['kernel_ms']['median'] * 1e3, d['kernel'], open(dx_file, 'rb').read()
rng = np.random.default_rng(5)
print('| dtype | dX | slice | dX MB | point spacing B | base us | kernel | cand us | kernel | cand/base | same |')
for dt, shape, sl in cases:
    ref = np.zeros(shape, np.uint8)[eval('np.s_' + sl)]
    np.save(dy_file, rng.integers(1, 100, ref.shape).astype(dt))
    tb, kb, ob = run(base, shape, sl); tc, kc, oc = run(cand, shape, sl)
    dxmb = np.prod(shape) * np.dtype(dt).itemsize / MB
    sp = np.prod(shape) * np.dtype(dt).itemsize / max(1, ref.size)
    print(f"| {dt} | {'x'.join(map(str, shape))} | {sl} | {dxmb:.0f} | {sp:.0f} | {tb:.1f} | {kb} | {tc:.1f} | {kc} | {tc / tb:.2f} | {'yes' if ob == oc else 'NO'} |", flush=True)
shutil.rmtree(scratch)
