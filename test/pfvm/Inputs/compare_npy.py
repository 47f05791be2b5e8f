"""Compares float .npy files without numpy: compare_npy.py RTOL A B [A B]...

Prints the largest relative difference |b - a| / max(|a|, 1e-30) over all
pairs and exits with status 1 when it is above RTOL, or when shapes or
types differ.
"""
import ast
import struct
import sys


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit("%s: not a .npy file" % path)
    length = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + length].decode("latin1"))
    codes = {"<f4": "f", "<f8": "d"}
    if header["descr"] not in codes:
        sys.exit("%s: %s is not float or double" % (path, header["descr"]))
    code = codes[header["descr"]]
    body = data[10 + length:]
    count = len(body) // struct.calcsize(code)
    return header["shape"], struct.unpack("<%d%s" % (count, code), body)


def main():
    rtol = float(sys.argv[1])
    worst = 0.0
    for a_path, b_path in zip(sys.argv[2::2], sys.argv[3::2]):
        a_shape, a = read(a_path)
        b_shape, b = read(b_path)
        if a_shape != b_shape:
            sys.exit("%s and %s: shapes %s and %s" % (a_path, b_path, a_shape,
                                                      b_shape))
        for x, y in zip(a, b):
            worst = max(worst, abs(y - x) / max(abs(x), 1e-30))
    print("max relative difference %.3g" % worst)
    sys.exit(0 if worst <= rtol else 1)


if __name__ == "__main__":
    main()
