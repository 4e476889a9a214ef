"""The shared part of bench/resample_*_ab.py: one resample case on several dmlgrad binaries, the same random dY for
every binary (bench/ab_table.py times them and compares their dX)."""
import os
import tempfile

import numpy as np

from ab_table import print_header, shapes_text, timed_cells  # noqa: F401 (the first two: for resample_*_ab.py)


def run_case(binaries, folder, rng, dtype, dy_shape, dx_shape, form):
    """The table cells of one case: a median and kernel (or the error) per binary, then 'yes' or '**NO**'."""
    dy = os.path.join(folder, "dy.npy")
    np.save(dy, rng.standard_normal(dy_shape, dtype=np.float32).astype(dtype))
    return timed_cells(binaries, folder, ["resample-grad", "-g", dy, "--output-sizes", ",".join(map(str, dx_shape)),
                                          *form])


def print_typed_cases(binaries, cases, seed, form_name):
    """A table of (dtype, dY shape, dX shape, form) cases on the binaries, the same random dY for each (drawn from
    `seed`); form_name(form) is the text of the form column."""
    rng = np.random.default_rng(seed)
    print_header(binaries, ["dtype", "dY -> dX", "form"])
    with tempfile.TemporaryDirectory() as d:
        for dtype, dy_shape, dx_shape, form in cases:
            cells = run_case(binaries, d, rng, dtype, dy_shape, dx_shape, form)
            print(f"| {dtype} | {shapes_text(dy_shape, dx_shape)} | {form_name(form)} | " + " | ".join(cells) + " |",
                  flush=True)
