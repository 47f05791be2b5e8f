"""Writes an ONNX TensorProto (.pb) without onnx: make_pb.py OUT TYPE DIMS BYTES

TYPE is the TensorProto data_type number (1 float, 7 int64), DIMS is
comma-separated ("" for a scalar) and BYTES the length of raw_data (zeros).
The dims may claim any shape, so tests can give mncc files whose dims and
data disagree.
"""
import sys


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


out, data_type, dims_text, raw_bytes = sys.argv[1:5]
message = bytearray()
for dim in (int(d) for d in dims_text.split(",") if d):
    message += b"\x08" + varint(dim)  # field 1, dims
message += b"\x10" + varint(int(data_type))  # field 2, data_type
raw = bytes(int(raw_bytes))
if raw:
    message += b"\x4a" + varint(len(raw)) + raw  # field 9, raw_data
with open(out, "wb") as f:
    f.write(bytes(message))
