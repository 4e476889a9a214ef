#!/usr/bin/env python3
"""Several dmlgrad binaries on stored sweep rows, run from each row's own command (bench/sweep.py's JSON keeps it),
so that rows of sweeps whose draws an older bench/sweep_cases.py made can be measured again: a fresh random dY
(dtype and shape from the row) for every binary alike, each one's kernel median (`--repeat 20 --json`) and the
kernel it chose, and whether every dX is bit-identical to the first binary's. Resample and slice rows (one input,
dY); the stored PyTorch figure is printed for scale.

    python3 bench/sweep_rows_ab.py docs/runs/A.json:28,docs/runs/B.json:41 BASE_DMLGRAD NEW_DMLGRAD [MORE...]
"""
import filecmp
import json
import os
import re
import shlex
import sys
import tempfile

import numpy as np

import sweep


def stored_row(path, case):
    """The row of run order `case` in a sweep's JSON (its `case` field, or its index where rows carry none)."""
    document = json.load(open(path))
    rows = document["rows"]
    match = [r for r in rows if r.get("case") == case]
    return document["seed"], match[0] if match else rows[case]


def command_args(command):
    """The stored command's arguments after the program, a slice's `--slice [a, b]` kept one argument (the JSON keeps
    it unquoted)."""
    command = re.sub(r"--slice (\[[^\]]*\])", lambda m: "--slice " + shlex.quote(m.group(1)), command)
    return shlex.split(command)[1:]


def dy_shape(row):
    return tuple(int(n) for n in row["shapes"].split("->")[0].replace("dy", "").strip().split("x"))


def main():
    picks, binaries = sys.argv[1], sys.argv[2:]
    rng = np.random.default_rng(41)
    print("| case | dtype | shapes | parameters | " + " | ".join(f"us ({b})" for b in binaries) + " | stored PyTorch us | same bits |")
    print("|---" * (len(binaries) + 6) + "|")
    with tempfile.TemporaryDirectory() as d:
        for pick in picks.split(","):
            path, case = pick.rsplit(":", 1)
            seed, row = stored_row(path, int(case))
            np.save(f"{d}/dy.npy", rng.standard_normal(dy_shape(row), dtype=np.float32).astype(row["dtype"]))
            cells = []
            for i, binary in enumerate(binaries):
                args = [a.replace("{dy}", f"{d}/dy.npy").replace("{dx}", f"{d}/dx{i}.npy")
                        for a in command_args(row["command"])]
                proc = sweep.dmlgrad(binary, args, ["--repeat", "20", "--json", "-v"])
                if proc.returncode:
                    cells.append(f"exit {proc.returncode}: {proc.stderr.strip()[-150:]}")
                    continue
                report = json.loads(proc.stdout)
                cells.append(f"{report['kernel_ms']['median'] * 1e3:.1f} [{sweep.kernel_name(report, proc.stderr)}]")
            same = all(os.path.exists(f"{d}/dx{i}.npy") and filecmp.cmp(f"{d}/dx0.npy", f"{d}/dx{i}.npy", False)
                       for i in range(len(binaries)))
            print(f"| {seed}/{case} | {row['dtype']} | {row['shapes']} | {row['params']} | " + " | ".join(cells) +
                  f" | {row['torch_us']:.1f} | {'yes' if same else '**NO**'} |", flush=True)


if __name__ == "__main__":
    main()
