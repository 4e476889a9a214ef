#!/usr/bin/env python3
"""Max-pool grad kernels side by side: several dmlgrad binaries (e.g. a base, a candidate, and a build whose family
table prefers another kernel) on the same inputs, each one's kernel median (`--repeat 30 --json`) and the kernel it
chose, and whether every binary's dX is bit-identical. The shapes: the bench's max-pool rows, the fast and walk
kernels' geometries and the sweep's off-table cases; with `cells`, windows that do not overlap (the cell kernels'
geometries) instead. Run on the GPU machine:

    python3 bench/maxpool_ab.py BASE_DMLGRAD,NEW_DMLGRAD[,OTHER_DMLGRAD...] [cells|small3d|pairs]

With `small3d`: 3-D k3 s2 p1 pooling on small planes (walk3d41: the walk only where a plane fills a quarter of its
tiles); with `pairs`: windows of 2 column taps and some of more on the two-pass kernels (pairs41).
"""
import json, os, shutil, subprocess, sys, tempfile
import numpy as np
bins = sys.argv[1].split(",")
CASES = [  # x shape, window, strides, start, end, dilations, dtype
    ((32, 64, 256, 256), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), "float32"),
    ((32, 64, 256, 256), (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), "float32"),
    ((32, 64, 256, 256), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), "float16"),
    ((32, 64, 256, 256), (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), "float16"),
    ((16, 32, 32, 64, 64), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), "float32"),
    ((16, 32, 32, 64, 64), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), "float16"),
    ((64, 256, 56, 56), (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), "float32"),
    ((13, 5, 55, 19, 69), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), "float32"),
    ((2, 32, 16, 56, 56), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), (1, 1, 1), "float16"),
    ((8, 128, 100, 100), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), "float16"),
    ((16, 64, 128, 128), (2, 2), (1, 1), (0, 0), (0, 0), (1, 1), "float32"),
    ((8, 64, 96, 96), (3, 3), (1, 1), (1, 1), (1, 1), (2, 2), "float32"),
    ((8, 64, 96, 96), (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), "float32"),
    ((8, 64, 97, 95), (2, 2), (1, 1), (0, 0), (0, 0), (1, 1), "float16"),
    ((8, 32, 32, 48, 48), (2, 2, 2), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), "float32"),
    ((8, 32, 32, 48, 48), (2, 2, 2), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), "float16"),
    ((8, 32, 31, 47, 47), (3, 3, 3), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), "float32"),
    ((4, 16, 15, 63, 63), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), (1, 1, 1), "float16"),
    ((16, 64, 128, 128), (3, 3), (2, 2), (0, 0), (0, 0), (1, 1), "float32"),
    ((16, 64, 128, 128), (2, 2), (1, 1), (0, 0), (0, 0), (1, 1), "float16"),
]
CELL_CASES = [  # cells of 8-16 rows (the depth's and rows' strides) on rows of 40-300 columns; 2-D cells of 4 and 8 rows
    ((8, 64, 40, 41, 83), (3, 3, 3), (3, 3, 3), (0, 0, 0), (0, 0, 0), (1, 1, 1), "float32"),
    ((8, 64, 40, 41, 300), (3, 3, 3), (3, 3, 3), (0, 0, 0), (0, 0, 0), (1, 1, 1), "float32"),
    ((4, 64, 40, 41, 83), (2, 2, 2), (4, 4, 4), (1, 1, 1), (1, 1, 1), (1, 1, 1), "float32"),
    ((16, 64, 20, 40, 40), (2, 4, 4), (2, 4, 4), (0, 0, 0), (0, 0, 0), (1, 1, 1), "float32"),
    ((64, 64, 128, 130), (8, 2), (8, 2), (0, 0), (0, 0), (1, 1), "float32"),
    ((64, 64, 128, 130), (4, 4), (4, 4), (0, 0), (0, 0), (1, 1), "float32"),
    ((8, 64, 40, 41, 84), (3, 3, 2), (3, 3, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), "float16"),
    ((64, 64, 128, 132), (4, 4), (4, 4), (0, 0), (0, 0), (1, 1), "float16"),
]
SMALL_3D_CASES = [  # 3-D k3 s2 p1 on planes of fewer windows than a quarter of the walk's 8 x 32 tiles, and more
    ((12, 5801, 28, 9, 14), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), "float32"),
    ((12, 5801, 28, 9, 14), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), "float16"),
    ((8, 64, 16, 14, 14), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), "float32"),
    ((8, 64, 16, 7, 7), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), "float32"),
    ((32, 64, 16, 7, 8), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), "float16"),
    ((4, 16, 31, 17, 20), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), "float32"),
    ((2, 64, 32, 28, 28), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), "float32"),
]
COLUMN_PAIR_CASES = [  # windows of 2 column taps (20261252/4's k6x6x2 among them) and some of more, two-pass kernels
    ((64, 7, 12, 63, 86), (6, 6, 2), (1, 4, 3), (0, 1, 0), (0, 1, 0), (1, 1, 2), "float32"),
    ((32, 64, 56, 56), (5, 2), (2, 1), (0, 0), (0, 0), (1, 1), "float32"),
    ((16, 64, 64, 64), (4, 2), (2, 2), (0, 0), (0, 0), (1, 2), "float16"),
    ((16, 64, 64, 64), (7, 2), (3, 1), (0, 0), (0, 0), (1, 1), "float32"),
    ((8, 32, 20, 30, 40), (2, 5, 2), (1, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 3), "float32"),
    ((8, 64, 16, 28, 28), (3, 3, 2), (1, 1, 2), (1, 1, 0), (1, 1, 0), (1, 1, 1), "float32"),
    ((25, 64, 9, 7, 47), (7, 7, 7), (3, 3, 3), (4, 4, 4), (3, 3, 3), (1, 1, 1), "float32"),
    ((4096, 19, 83, 7), (6, 6), (4, 4), (0, 0), (0, 0), (1, 1), "float32"),
    ((1619, 11, 81, 13), (4, 4), (4, 4), (0, 0), (0, 0), (3, 3), "float32"),
]
if sys.argv[2:] == ["cells"]:
    CASES = CELL_CASES
elif sys.argv[2:] == ["small3d"]:
    CASES = SMALL_3D_CASES
elif sys.argv[2:] == ["pairs"]:
    CASES = COLUMN_PAIR_CASES
def out_size(i, k, s, a, b, d):
    return (i + a + b - d * (k - 1) - 1) // s + 1
csv = lambda v: ",".join(map(str, v))
tmp = tempfile.mkdtemp()
rng = np.random.default_rng(7)
for xs, k, s, a, b, d, dt in CASES:
    dys = xs[:2] + tuple(out_size(xs[2 + j], k[j], s[j], a[j], b[j], d[j]) for j in range(len(k)))
    x = rng.standard_normal(xs, dtype=np.float32).astype(dt)
    dy = rng.standard_normal(dys, dtype=np.float32).astype(dt)
    np.save(f"{tmp}/x.npy", x); np.save(f"{tmp}/dy.npy", dy)
    row, outs = [], []
    for n, binary in enumerate(bins):
        o = f"{tmp}/dx{n}.npy"
        p = subprocess.run([binary, "maxpool-grad", "-x", f"{tmp}/x.npy", "-g", f"{tmp}/dy.npy", "-o", o,
                            "--window-size", csv(k), "--strides", csv(s), "--start-padding", csv(a), "--end-padding",
                            csv(b), "--dilations", csv(d), "--repeat", "30", "--json"], capture_output=True, text=True)
        if p.returncode:
            row.append(f"FAIL {p.stderr.strip()[:80]}"); outs.append(None); continue
        r = json.loads(p.stdout)
        row.append(f"{r['kernel_ms']['median']*1e3:8.1f} us {r.get('kernel')}")
        outs.append(np.load(o).tobytes())
    same = all(o == outs[0] for o in outs if o is not None)
    print(f"{dt} x {'x'.join(map(str, xs))} k{csv(k)} s{csv(s)} p{csv(a)}/{csv(b)} d{csv(d)}: " + " | ".join(row) +
          f" | identical: {same}", flush=True)
    for n in range(len(bins)):
        if os.path.exists(f"{tmp}/dx{n}.npy"):
            os.remove(f"{tmp}/dx{n}.npy")
shutil.rmtree(tmp)
