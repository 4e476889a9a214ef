#!/usr/bin/python3
"""Writes the .npy edge-case corpus read by tests/unit/npy_test.cpp.

Run with a python that has numpy (here: /usr/bin/python3, numpy 1.24) from any folder:

    /usr/bin/python3 tests/data/npy/make_corpus.py

The output is deterministic, so re-running it must leave `git status` clean. The values below are repeated in
npy_test.cpp: change both together. Files numpy can write are written by numpy; the malformed ones are built
from bytes by `npy_bytes`.
"""
import os
import struct

import numpy as np
from numpy.lib import format as npformat

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = b"\x93NUMPY"

# Values of the dtype_<name>.npy files, shape (2, 3), C order: zero, small values and the extremes of each type.
FLOAT_VALUES = {
    "float16": [0.0, -0.0, 1.5, 65504.0, -np.inf, 2.0**-24],  # 2^-24: the smallest half subnormal
    "float32": [0.0, -0.0, 1.5, np.finfo(np.float32).max, -np.inf, 2.0**-149],
    "float64": [0.0, -0.0, 1.5, np.finfo(np.float64).max, -np.inf, 5e-324],
}


def int_values(dtype):
    info = np.iinfo(dtype)
    return [0, 1, 42, info.min, info.max, info.max - 1]


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def save(name, array, version=None):
    with open(os.path.join(HERE, name), "wb") as f:
        npformat.write_array(f, array, version=version, allow_pickle=False)


def npy_bytes(header, payload=b"", version=(1, 0), header_len=None):
    """A .npy file with `header` (text) as is: no padding or newline added, so odd layouts can be written."""
    text = header.encode("latin1")
    length = len(text) if header_len is None else header_len
    prefix = MAGIC + bytes(version)
    prefix += struct.pack("<H", length) if version[0] == 1 else struct.pack("<I", length)
    return prefix + text + payload


def i4(values):
    return np.array(values, dtype="<i4").tobytes()


def main():
    for name, values in FLOAT_VALUES.items():
        save(f"dtype_{name}.npy", np.array(values, dtype=name).reshape(2, 3))
    for name in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]:
        save(f"dtype_{name}.npy", np.array(int_values(name), dtype=name).reshape(2, 3))

    # Versions: the same int32 array [1, 2, 3].
    small = np.array([1, 2, 3], dtype="<i4")
    save("version_1_0.npy", small, version=(1, 0))
    save("version_2_0.npy", small, version=(2, 0))
    save("version_3_0.npy", small, version=(3, 0))
    v1 = open(os.path.join(HERE, "version_1_0.npy"), "rb").read()
    write("version_4_0.npy", v1[:6] + bytes([4, 0]) + v1[8:])
    write("version_1_1.npy", v1[:6] + bytes([1, 1]) + v1[8:])

    # Header layouts numpy accepts: unaligned, no spaces, tabs and newlines, other key orders, trailing comma or
    # not, double quotes. Each holds int32 [1, 2, 3].
    payload = i4([1, 2, 3])
    write("odd_padding.npy", npy_bytes("{'descr':'<i4','fortran_order':False,'shape':(3,)}", payload))
    write("whitespace.npy",
          npy_bytes("  {\n\t'shape' : ( 3 , ) ,\n\t'descr'\t:'<i4',  'fortran_order'  :False ,}\t  \n", payload))
    write("keys_reordered.npy",
          npy_bytes("{'shape': (3,), 'fortran_order': False, 'descr': '<i4', }" + " " * 6 + "\n", payload))
    write("no_trailing_comma.npy",
          npy_bytes("{'fortran_order': False, 'descr': '<i4', 'shape': (3,)}\n", payload))
    write("double_quotes.npy", npy_bytes('{"descr": "<i4", "fortran_order": False, "shape": (3,)}\n', payload))
    write("python2_long_dims.npy", npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (3L,), }\n",
                                             payload))
    # Byte orders of 1- and 2-byte types: int8 [-1, 2, -3] as '<i1' and '>i1'; int16 [1, -2, 3] as '=i2'.
    write("byteorder_lt_i1.npy",
          npy_bytes("{'descr': '<i1', 'fortran_order': False, 'shape': (3,), }\n", np.array([-1, 2, -3], "i1").tobytes()))
    write("byteorder_gt_i1.npy",
          npy_bytes("{'descr': '>i1', 'fortran_order': False, 'shape': (3,), }\n", np.array([-1, 2, -3], "i1").tobytes()))
    write("byteorder_native_i2.npy",
          npy_bytes("{'descr': '=i2', 'fortran_order': False, 'shape': (3,), }\n", np.array([1, -2, 3], "<i2").tobytes()))
    write("byteorder_pipe_f4.npy",
          npy_bytes("{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }\n", np.array([1], "<f4").tobytes()))

    # Big-endian payloads.
    save("big_endian_f4.npy", np.array([1.0, -2.5, np.inf, 2.0**-149], dtype=">f4"))
    save("big_endian_i8.npy", np.array([1, -2, np.iinfo(np.int64).min, 0x0102030405060708], dtype=">i8"))
    save("big_endian_f2.npy", np.array([1.0, -2.5, 65504.0, 2.0**-24], dtype=">f2"))

    # Fortran order: element values are their C-order index, so the loaded tensor must read 0, 1, 2, ...
    save("fortran_2d_i4.npy", np.asfortranarray(np.arange(6, dtype="<i4").reshape(2, 3)))
    save("fortran_3d_i2.npy", np.asfortranarray(np.arange(24, dtype="<i2").reshape(2, 3, 4)))
    save("fortran_4d_i1.npy", np.asfortranarray(np.arange(12, dtype="i1").reshape(2, 1, 3, 2)))
    save("fortran_3d_big_endian_u2.npy", np.asfortranarray(np.arange(12, dtype=">u2").reshape(3, 2, 2)))

    # Shapes: 0-d, 1-d, an empty axis.
    save("scalar_f4.npy", np.array(3.5, dtype="<f4"))
    save("vector_5_u1.npy", np.arange(5, dtype="u1"))
    save("empty_0x3_f4.npy", np.zeros((0, 3), dtype="<f4"))

    # Truncation and sizes.
    good = open(os.path.join(HERE, "dtype_float32.npy"), "rb").read()
    write("truncated_payload.npy", good[:-5])
    write("trailing_bytes.npy", good + b"\0")
    write("truncated_header.npy", good[:50])
    write("truncated_prefix.npy", good[:9])
    write("header_len_ffff.npy", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n",
                                           b"\0" * 4, header_len=0xFFFF))
    write("header_len_4g_v2.npy", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n",
                                            b"\0" * 4, version=(2, 0), header_len=0xFFFFFFFF))
    write("dim_overflow.npy",
          npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }\n"))
    write("bytes_overflow.npy",
          npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952, 4), }\n"))
    write("negative_dim.npy", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }\n"))

    # Not .npy at all.
    write("bad_magic.npy", b"\x93NUMPZ" + good[6:])
    write("text_file.npy", b"descr,shape\n<f4,2x3\n")
    write("empty_file.npy", b"")

    # Types dmlgrad does not read (headers written by numpy).
    save("dtype_bool.npy", np.array([True, False]))
    save("dtype_complex64.npy", np.array([1 + 2j], dtype="<c8"))
    save("dtype_bytes.npy", np.array([b"ab"], dtype="|S2"))
    save("dtype_unicode.npy", np.array(["ab"], dtype="<U2"))
    save("dtype_structured.npy", np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")]))
    save("dtype_datetime.npy", np.array(["2026-11-22"], dtype="<M8[D]"))
    # An object array's payload is a pickle: only its header matters here, so write it by hand.
    write("dtype_object.npy", npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }\n", b"\x80\x04."))


if __name__ == "__main__":
    main()
