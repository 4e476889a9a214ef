"""The shared part of bench/resample_*_ab.py: one resample case on several dmlgrad binaries, the same random dY for
every binary (bench/ab_table.py times them and compares their dX)."""
import os
import numpy as np

from ab_table import print_header, shapes_text, timed_cells  # noqa: F401 (the first two: for resample_*_ab.py)


def run_case(binaries, folder, rng, dtype, dy_shape, dx_shape, form):
    """The table cells of one case: a median and kernel (or the error) per binary, then 'yes' or '**NO**'."""
    dy = os.path.join(folder, "dy.npy")
    np.save(dy, rng.standard_normal(dy_shape, dtype=np.float32).astype(dtype))
    return timed_cells(binaries, folder, ["resample-grad", "-g", dy, "--output-sizes", ",".join(map(str, dx_shape)),
                                          *form])
