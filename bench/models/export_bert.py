#!/usr/bin/python3
"""Exports a BERT-like encoder with random weights to ONNX, for the benches.

    /usr/bin/python3 bench/models/export_bert.py OUT_DIR [like|tiny]

Token and position embeddings, a LayerNorm, then two
torch.nn.TransformerEncoderLayer (GELU, post-norm as BERT), batch 1,
sequence 128, opset 17: `like` (the default, bert_like.onnx) with d_model
256, 4 heads and feed-forward 1024; `tiny` (bert_tiny.onnx) with d_model
128, 2 heads and feed-forward 512, BERT-tiny's width. The graph has
what torch's exporter writes for attention: the shape arithmetic of the
head split (Shape, Gather, Unsqueeze, Concat feeding Reshape), Transposes,
Softmax over the last axis, Dropout folded away in eval. Weights are random
(seed 0): the benches measure graphs and speed, not accuracy.
"""

import os
import sys

import torch

LAYERS, VOCAB, SEQUENCE = 2, 1000, 128
# name: (d_model, heads, feed-forward)
SIZES = {"like": (256, 4, 1024), "tiny": (128, 2, 512)}


class BertLike(torch.nn.Module):
    def __init__(self, d_model, heads, feed_forward):
        super().__init__()
        self.tokens = torch.nn.Embedding(VOCAB, d_model)
        self.positions = torch.nn.Embedding(SEQUENCE, d_model)
        self.norm = torch.nn.LayerNorm(d_model)
        layer = torch.nn.TransformerEncoderLayer(
            d_model, heads, feed_forward, dropout=0.1, activation="gelu",
            batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(
            layer, LAYERS, enable_nested_tensor=False)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.norm(self.tokens(ids) + self.positions(positions))
        return self.encoder(x)


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[2:3] and sys.argv[2] not in SIZES:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    size = sys.argv[2] if len(sys.argv) == 3 else "like"
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    model = BertLike(*SIZES[size]).eval()
    ids = torch.randint(0, VOCAB, (1, SEQUENCE))
    path = os.path.join(out_dir, "bert_%s.onnx" % size)
    torch.onnx.export(model, ids, path, opset_version=17,
                      input_names=["ids"], output_names=["hidden"],
                      do_constant_folding=True)
    print("bert_%s: %s (%.1f MB)" % (size, path, os.path.getsize(path) / 1e6))


if __name__ == "__main__":
    main()
