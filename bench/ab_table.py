"""The shared part of the bench/*_ab.py scripts: one case on several dmlgrad binaries as a markdown table row, each
binary's kernel median (`--repeat 20 --json`) and chosen kernel, and whether every dX is bit-identical to the first
binary's."""
import filecmp, json, os, subprocess


def print_header(binaries, columns):
    print("| " + " | ".join(columns) + " | " + " | ".join(f"us ({b})" for b in binaries) + " | same bits |")
    print("|" + "---|" * (len(columns) + len(binaries) + 1))


def timed_cells(binaries, folder, args):
    """`binary *args -o dx<b>.npy --repeat 20 --json` on each binary (dY already written): a median and kernel (or
    the error) per binary, then 'yes' or '**NO**'."""
    cells, outs = [], []
    for b, binary in enumerate(binaries):
        out = os.path.join(folder, f"dx{b}.npy")
        p = subprocess.run([binary, *args, "-o", out, "--repeat", "20", "--json"], capture_output=True, text=True)
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
