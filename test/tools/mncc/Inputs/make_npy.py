"""Writes a .npy file without numpy: make_npy.py OUT DESCR SHAPE VALUES...

SHAPE is comma-separated ("" for a scalar); VALUES are the elements, or
"zeros:N" for N zero bytes of data. The header may claim any shape, so tests
can give mncc files whose header and data disagree.
"""
import struct
import sys

out, descr, shape_text = sys.argv[1:4]
values = sys.argv[4:]
shape = [int(d) for d in shape_text.split(",") if d]
if len(shape) == 1:
    shape_literal = "(%d,)" % shape[0]
else:
    shape_literal = "(" + ", ".join(str(d) for d in shape) + ")"
header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
    descr, shape_literal)
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
if len(values) == 1 and values[0].startswith("zeros:"):
    data = bytes(int(values[0][6:]))
else:
    code = {"<i8": "q", "<f4": "f", "<i4": "i"}[descr]
    data = struct.pack("<%d%s" % (len(values), code),
                       *[(float if code == "f" else int)(v) for v in values])
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode() + data)
