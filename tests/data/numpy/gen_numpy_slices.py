#!/usr/bin/python3
"""Writes numpy_slices.txt: random basic slices of random shapes and what numpy does with them, for
tests/unit/numpy_slice_test.cpp. One case per line, fields separated by '|':
    dX shape | slice text | numpy's result shape | the flat dX index of each result element (row-major)
or, where numpy refuses the index (IndexError):
    dX shape | slice text | error
The expected gradient of x[slice] is then g = zeros(shape); g.flat[indices] = dy.ravel().
Run: /usr/bin/python3 tests/data/numpy/gen_numpy_slices.py > tests/data/numpy/numpy_slices.txt"""
import random
import numpy as np

rng = random.Random(20261124)


def bound(size):
    """A start or stop: omitted, in range, negative, or out of range on either side."""
    r = rng.random()
    if r < 0.25:
        return None
    if r < 0.75:
        return rng.randint(-size, size)
    return rng.choice([-1, 1]) * rng.randint(size + 1, size + 5)


def item(size):
    r = rng.random()
    if r < 0.15:
        return str(rng.randint(-size - 1, size))  # an integer index, sometimes out of range
    start, stop = bound(size), bound(size)
    step = None if rng.random() < 0.3 else rng.choice([-3, -2, -1, 1, 2, 3, 4])
    text = ("" if start is None else str(start)) + ":" + ("" if stop is None else str(stop))
    if step is not None or rng.random() < 0.2:
        text += ":" + ("" if step is None else str(step))
    return text


def case():
    """A random case; most empty selections are drawn again (dmlgrad refuses tensors with an axis of size 0)."""
    while True:
        line = draw()
        if line.endswith("|error") or ",0" not in "," + line.split("|")[2] or rng.random() < 0.1:
            return line


def draw():
    rank = rng.randint(1, 5)
    shape = tuple(rng.randint(1, 6 if rank > 3 else 9) for _ in range(rank))
    items = [item(s) for s in shape][: rng.randint(0, rank)]  # fewer items than axes now and then
    if items and rng.random() < 0.2:
        items.insert(rng.randint(0, len(items)), "...")
    text = ", ".join(items)
    if rng.random() < 0.5:
        text = "[" + text + "]"
    index = eval("np.s_[" + text.strip("[]") + ("," if len(items) == 1 else "") + "]") if items else ()
    flat = np.arange(int(np.prod(shape))).reshape(shape)
    try:
        result = flat[index]
    except IndexError:
        return f"{','.join(map(str, shape))}|{text}|error"
    result = np.asarray(result)
    return (f"{','.join(map(str, shape))}|{text}|{','.join(map(str, result.shape))}|"
            f"{' '.join(map(str, result.ravel()))}")


print("\n".join(case() for _ in range(1500)))
