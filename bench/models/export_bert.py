#!/usr/bin/python3
"""Exports a BERT-like encoder with random weights to ONNX, for the benches.

    /usr/bin/python3 bench/models/export_bert.py OUT_DIR

Token and position embeddings, a LayerNorm, then two
torch.nn.TransformerEncoderLayer (d_model 256, 4 heads, feed-forward 1024,
GELU, post-norm as BERT), batch 1, sequence 128, opset 17. The graph has
what torch's exporter writes for attention: the shape arithmetic of the
head split (Shape, Gather, Unsqueeze, Concat feeding Reshape), Transposes,
Softmax over the last axis, Dropout folded away in eval. Weights are random
(seed 0): the benches measure graphs and speed, not accuracy.
"""

import os
import sys

import torch

D_MODEL, HEADS, FEED_FORWARD, LAYERS, VOCAB, SEQUENCE = 256, 4, 1024, 2, 1000, 128


class BertLike(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = torch.nn.Embedding(VOCAB, D_MODEL)
        self.positions = torch.nn.Embedding(SEQUENCE, D_MODEL)
        self.norm = torch.nn.LayerNorm(D_MODEL)
        layer = torch.nn.TransformerEncoderLayer(
            D_MODEL, HEADS, FEED_FORWARD, dropout=0.1, activation="gelu",
            batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(
            layer, LAYERS, enable_nested_tensor=False)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.norm(self.tokens(ids) + self.positions(positions))
        return self.encoder(x)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    model = BertLike().eval()
    ids = torch.randint(0, VOCAB, (1, SEQUENCE))
    path = os.path.join(out_dir, "bert_like.onnx")
    torch.onnx.export(model, ids, path, opset_version=17,
                      input_names=["ids"], output_names=["hidden"],
                      do_constant_folding=True)
    print("bert_like: %s (%.1f MB)" % (path, os.path.getsize(path) / 1e6))


if __name__ == "__main__":
    main()
