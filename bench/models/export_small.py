#!/usr/bin/env python3
"""Exports the small models of the code generator's tests and benches.

    /usr/bin/python3 bench/models/export_small.py test/models

writes mnist_mlp.onnx (784-512-512-10 with Relu and Softmax), lenet5.onnx
and small_cnn.onnx (Conv, BatchNormalization, Relu, MaxPool,
GlobalAveragePool, Gemm), each with random weights from seed 0, opset 17
and a dynamic batch dimension (compile with --input-shape x:1,... or
x:16,...). Needs Debian's python3-torch and python3-onnx.
"""

import os
import sys

import torch
import torch.nn as nn


class MnistMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 512)
        self.fc2 = nn.Linear(512, 512)
        self.fc3 = nn.Linear(512, 10)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return torch.softmax(self.fc3(x), dim=1)


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = torch.max_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = torch.relu(self.bn2(self.conv2(x)))
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


def export(model, shape, path):
    torch.manual_seed(0)
    model.eval()
    # Batch statistics that are not the identity, so BatchNormalization
    # does real work.
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 1.5)
            module.weight.data.uniform_(0.5, 1.5)
            module.bias.data.uniform_(-0.2, 0.2)
    example = torch.zeros(shape)
    torch.onnx.export(model, example, path, opset_version=17,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                      do_constant_folding=True)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "test/models"
    os.makedirs(out, exist_ok=True)
    for name, make, shape in [("mnist_mlp", MnistMlp, (1, 784)),
                              ("lenet5", LeNet5, (1, 1, 32, 32)),
                              ("small_cnn", SmallCnn, (1, 3, 32, 32))]:
        torch.manual_seed(0)
        export(make(), shape, os.path.join(out, name + ".onnx"))
        print("wrote", os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
