#!/usr/bin/env python3
"""Several dmlgrad binaries on a sweep's cases (bench/sweep.py's draws for a seed): the same inputs for every
binary, each one's kernel median (`--repeat N --json`) and the kernel it chose, and whether every binary's dX is
bit-identical to the first one's (give the trusted binary, e.g. main, first). PyTorch is neither timed nor needed:
this is the A/B of a kernel change on chosen cases, such as an earlier sweep's slow ones.

    python3 bench/sweep_ab.py --seed 20261201 --pick 84,108,160 BASE_DMLGRAD NEW_DMLGRAD [MORE...]
"""
import argparse
import filecmp
import itertools
import json
import os
import sys
import tempfile

import numpy as np

import sweep
import sweep_cases as sc


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="+", help="dmlgrad binaries; the first one's outputs are the reference")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--pick", required=True, help="comma-separated case numbers of the seed's run order")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--max-gib", type=float, default=1.0, help="as the sweep was run with (default 1 GiB)")
    parser.add_argument("--device", default="cuda", help="where PyTorch draws the inputs (cpu without CUDA)")
    parser.add_argument("--only", default="", help="as the sweep was run with: its operator classes, e.g. "
                        "maxpool,resample,slice (the case numbers count those classes' draws)")
    return parser.parse_args()


def time_case(binaries, case, d, args, rng):
    """Per binary: (kernel median in us, kernel) or (None, error); and the binaries whose dX is not bit-identical to
    the first one's (or that failed)."""
    paths = sweep.make_inputs(case.inputs, d, args.device, rng)
    results, outputs = [], {}
    for b, binary in enumerate(binaries):
        out = os.path.join(d, f"dx{b}.npy")
        proc = sweep.dmlgrad(binary, [paths.get(a, out if a == "{dx}" else a) for a in case.args],
                             ["--repeat", str(sweep.repeat_for(case, args.repeat)), "--json", "-v"])
        if proc.returncode != 0:
            results.append((None, f"exit {proc.returncode}: {proc.stderr.strip()[-200:]}"))
            continue
        report = json.loads(proc.stdout)
        results.append((report["kernel_ms"]["median"] * 1e3, sweep.kernel_name(report, proc.stderr)))
        outputs[binary] = out
    first = outputs.get(binaries[0])
    return results, [b for b in binaries[1:] if not (first and b in outputs and filecmp.cmp(first, outputs[b], False))]


def main():
    args = parse_args()
    if sweep.torch is not None and args.device == "cuda" and not sweep.torch.cuda.is_available():
        args.device = "cpu"
    pick = sorted({int(i) for i in args.pick.split(",") if i})
    classes = sweep.wanted_classes(args.only, "")
    cases = itertools.islice(sc.schedule(args.seed, classes, int(args.max_gib * sweep.GIB), None), pick[-1] + 1)
    rng = np.random.default_rng(args.seed)
    print("| case | class | dtype | shapes | parameters | " + " | ".join(f"us ({b})" for b in args.binaries) +
          " | new / first | same bits |\n|" + "---|" * (len(args.binaries) + 7))
    differ = 0
    with tempfile.TemporaryDirectory() as d:
        for number, (case, _) in enumerate(cases):
            if number not in pick:
                continue
            results, differing = time_case(args.binaries, case, d, args, rng)
            differ += bool(differing)
            cells = [f"{us:.1f} [{kernel}]" if us is not None else f"ERROR {kernel}" for us, kernel in results]
            ratio = (f"{results[-1][0] / results[0][0]:.2f}" if results[0][0] and results[-1][0] else "-")
            print(f"| {number} | {case.cls} | {case.dtype} | {case.shapes()} | {case.params} | " + " | ".join(cells) +
                  f" | {ratio} | {'**NO**: ' + ', '.join(differing) if differing else 'yes'} |", flush=True)
    sys.exit(3 if differ else 0)


if __name__ == "__main__":
    main()
