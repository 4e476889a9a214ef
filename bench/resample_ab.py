"""The shared part of bench/resample_*_ab.py: one resample case on several dmlgrad binaries, the same random dY for
every binary, each one's kernel median (`--repeat 20 --json`) and chosen kernel, and whether every dX is bit-identical
to the first binary's."""
import filecmp, json, os, subprocess
import numpy as np


def print_header(binaries, columns):
    print("| " + " | ".join(columns) + " | " + " | ".join(f"us ({b})" for b in binaries) + " | same bits |")
    print("|" + "---|" * (len(columns) + len(binaries) + 1))


def run_case(binaries, folder, rng, dtype, dy_shape, dx_shape, form):
    """The table cells of one case: a median and kernel (or the error) per binary, then 'yes' or '**NO**'."""
    dy = os.path.join(folder, "dy.npy")
    np.save(dy, rng.standard_normal(dy_shape, dtype=np.float32).astype(dtype))
    cells, outs = [], []
    for b, binary in enumerate(binaries):
        out = os.path.join(folder, f"dx{b}.npy")
        p = subprocess.run([binary, "resample-grad", "-g", dy, "-o", out, "--output-sizes",
                            ",".join(map(str, dx_shape)), *form, "--repeat", "20", "--json"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            cells.append("ERROR " + p.stderr.strip()[-120:])
            continue
        r = json.loads(p.stdout)
        cells.append(f"{r['kernel_ms']['median'] * 1e3:.1f} [{r.get('kernel')}]")
        outs.append(out)
    same = len(outs) == len(binaries) and all(filecmp.cmp(outs[0], o, False) for o in outs[1:])
    return cells + ["yes" if same else "**NO**"]


def shapes_text(dy_shape, dx_shape):
    return "x".join(map(str, dy_shape)) + " -> " + "x".join(map(str, dx_shape))
