"""Writes the nets of net_benchmark as ONNX models, for ONNX Runtime.

The shapes, fills and ops are those of tests/benchmarks/net_benchmark.cc:
  add_chain_1.onnx, add_chain_1000.onnx: `add` chains on one element;
  mlp.onnx: 784-1024-1024-10 with relu and softmax, batch free;
  cnn.onnx: the CNN of AddBenchmarkCnn (tests/benchmarks/net_text.h).
Usage: python3 make_models.py OUTPUT_DIR
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def filled(name, shape, value):
    return numpy_helper.from_array(np.full(shape, value, np.float32), name)


def save(graph, path):
    model = helper.make_model(
        graph, producer_name="scopeflow",
        opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def add_chain(n, path):
    nodes = []
    for i in range(n):
        source = "x" if i == 0 else f"t{i - 1}"
        nodes.append(helper.make_node("Add", [source, "x"], [f"t{i}"]))
    graph = helper.make_graph(
        nodes, f"add_chain_{n}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info(f"t{n - 1}", TensorProto.FLOAT, [1])])
    save(graph, path)


def mlp(path):
    sizes = [784, 1024, 1024, 10]
    nodes, weights = [], []
    source = "x"
    for layer in range(3):
        w, b, h = f"w{layer}", f"b{layer}", f"h{layer}"
        weights += [filled(w, [sizes[layer], sizes[layer + 1]], 0.001),
                    filled(b, [sizes[layer + 1]], 0.01)]
        nodes.append(helper.make_node("Gemm", [source, w, b], [h]))
        source = h
        if layer < 2:
            nodes.append(helper.make_node("Relu", [h], [h + ".relu"]))
            source = h + ".relu"
    nodes.append(helper.make_node("Softmax", [source], ["probabilities"],
                                  axis=-1))
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["batch", 784])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT,
                                       ["batch", 10])],
        weights)
    save(graph, path)


def cnn(path):
    nodes, weights = [], []
    source = "x"
    channels = [(3, 32), (32, 32), (32, 64), (64, 64)]
    for i, (c, m) in enumerate(channels):
        w, b, out = f"conv{i}.w", f"conv{i}.b", f"conv{i}"
        weights += [filled(w, [m, c, 3, 3], 0.01), filled(b, [m], 0.01)]
        nodes.append(helper.make_node("Conv", [source, w, b], [out],
                                      kernel_shape=[3, 3],
                                      pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [out], [out + ".relu"]))
        source = out + ".relu"
        if i == 1:
            nodes.append(helper.make_node("MaxPool", [source], ["pooled"],
                                          kernel_shape=[2, 2],
                                          strides=[2, 2]))
            source = "pooled"
    nodes.append(helper.make_node("GlobalAveragePool", [source], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["gap.flat"]))
    weights += [filled("fc.w", [64, 10], 0.01), filled("fc.b", [10], 0.0)]
    nodes.append(helper.make_node("Gemm", ["gap.flat", "fc.w", "fc.b"],
                                  ["logits"]))
    graph = helper.make_graph(
        nodes, "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["batch", 3, 64, 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       ["batch", 10])],
        weights)
    save(graph, path)


def main():
    out = sys.argv[1]
    add_chain(1, f"{out}/add_chain_1.onnx")
    add_chain(1000, f"{out}/add_chain_1000.onnx")
    mlp(f"{out}/mlp.onnx")
    cnn(f"{out}/cnn.onnx")


if __name__ == "__main__":
    main()
