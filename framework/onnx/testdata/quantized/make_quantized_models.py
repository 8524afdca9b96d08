"""Writes the quantized models of quantization_import_test and ONNX
Runtime's outputs on them, the test's independent reference.

The models are laid out as ONNX Runtime's quantization tools write them,
built by hand here (the tools are not in Debian): a float CNN in QDQ form
(QuantizeLinear/DequantizeLinear pairs around Conv, Relu and MatMul, per-
channel int8 weights), the same in QOperator form (QLinearConv,
QLinearMatMul) and a dynamically quantized MLP (DynamicQuantizeLinear,
MatMulInteger, ConvInteger and the float rescaling after them). Each is
run by ONNX Runtime (onnxruntime-node, as tools/onnxruntime/compare.sh
installs it) on a seeded input; the input and outputs are saved as .npy.

Usage (from the repository root):
  /usr/bin/python3 framework/onnx/testdata/quantized/make_quantized_models.py \
      ~/.cache/scopeflow-onnxruntime/node_modules
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 13

RUN_JS = r"""
const fs = require('fs');
const ort = require('onnxruntime-node');
const types = {float32: Float32Array, uint8: Uint8Array, int8: Int8Array,
               int32: Int32Array};
(async () => {
  const [model, feedsPath, outDir] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model,
      {graphOptimizationLevel: 'disabled', intraOpNumThreads: 1});
  const feeds = {};
  for (const {name, type, dims, file} of JSON.parse(fs.readFileSync(feedsPath))) {
    const bytes = fs.readFileSync(file);
    feeds[name] = new ort.Tensor(type, new types[type](
        bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)), dims);
  }
  const results = await session.run(feeds);
  const outs = [];
  for (const name of session.outputNames) {
    const t = results[name];
    const file = outDir + '/' + name + '.bin';
    fs.writeFileSync(file, Buffer.from(t.data.buffer, t.data.byteOffset,
                                       t.data.byteLength));
    outs.push({name, type: t.type, dims: t.dims, file});
  }
  console.log(JSON.stringify(outs));
})();
"""


def init(name, array):
    return numpy_helper.from_array(array, name)


def quantize_weights(w, axis=0):
    """Symmetric per-channel int8, as ORT's per_channel weights."""
    reduce_axes = tuple(i for i in range(w.ndim) if i != axis)
    scale = np.abs(w).max(axis=reduce_axes) / 127.0
    scale = scale.astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.rint(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


def qdq_cnn(rng):
    """x -> Q/DQ -> Conv (DQ int8 weights per channel, float bias) -> Relu
    -> Q/DQ -> Flatten -> MatMul (DQ int8 weights per column) -> y."""
    w = rng.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    wq, ws = quantize_weights(w)
    b = rng.normal(0, 0.1, (4,)).astype(np.float32)
    m = rng.normal(0, 0.3, (4 * 4 * 4, 5)).astype(np.float32)
    mq, ms = quantize_weights(m, axis=1)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "x_s", "x_z"], ["xd"]),
        helper.make_node("DequantizeLinear", ["wq", "w_s", "w_z"], ["wd"],
                         axis=0),
        helper.make_node("Conv", ["xd", "wd", "b"], ["c"], pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "r_s", "r_z"], ["rq"]),
        helper.make_node("DequantizeLinear", ["rq", "r_s", "r_z"], ["rd"]),
        helper.make_node("Flatten", ["rd"], ["f"]),
        helper.make_node("DequantizeLinear", ["mq", "m_s", "m_z"], ["md"],
                         axis=1),
        helper.make_node("MatMul", ["f", "md"], ["y"]),
    ]
    inits = [
        init("x_s", np.float32(0.02)), init("x_z", np.uint8(128)),
        init("wq", wq), init("w_s", ws), init("w_z", np.zeros(4, np.int8)),
        init("b", b),
        init("r_s", np.float32(0.03)), init("r_z", np.uint8(0)),
        init("mq", mq), init("m_s", ms), init("m_z", np.zeros(5, np.int8)),
    ]
    graph = helper.make_graph(
        nodes, "qdq_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])],
        inits)
    return graph, {"x": rng.normal(0, 1, (2, 3, 8, 8)).astype(np.float32)}


def qoperator_cnn(rng):
    """QuantizeLinear -> QLinearConv (per-channel int8 weights, int32 bias)
    -> QLinearConv (grouped, 1x1) -> DQ, Reshape, Q -> QLinearMatMul ->
    DequantizeLinear."""
    w = rng.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    wq, ws = quantize_weights(w)
    x_s, c_s = np.float32(0.02), np.float32(0.05)
    bq = np.rint(rng.normal(0, 0.1, (4,)) / (x_s * ws)).astype(np.int32)
    g = rng.normal(0, 0.5, (4, 2, 1, 1)).astype(np.float32)
    gq, gs = quantize_weights(g)
    m = rng.normal(0, 0.3, (4 * 8 * 8, 5)).astype(np.float32)
    m_s = np.float32(np.abs(m).max() / 127.0)
    mq = np.clip(np.rint(m / m_s), -127, 127).astype(np.int8)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"]),
        helper.make_node("QLinearConv",
                         ["xq", "x_s", "x_z", "wq", "w_s", "w_z", "c_s", "c_z",
                          "bq"], ["cq"], pads=[1, 1, 1, 1]),
        helper.make_node("QLinearConv",
                         ["cq", "c_s", "c_z", "gq", "g_s", "g_z", "d_s", "d_z"],
                         ["dq"], group=2),
        # Through float: scopeflow's reshape has no uint8 kernel.
        helper.make_node("DequantizeLinear", ["dq", "d_s", "d_z"], ["df"]),
        helper.make_node("Reshape", ["df", "shape"], ["ff"]),
        helper.make_node("QuantizeLinear", ["ff", "d_s", "d_z"], ["fq"]),
        helper.make_node("QLinearMatMul",
                         ["fq", "d_s", "d_z", "mq", "m_s", "m_z", "y_s",
                          "y_z"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "y_s", "y_z"], ["y"]),
    ]
    inits = [
        init("x_s", x_s), init("x_z", np.uint8(128)),
        init("wq", wq), init("w_s", ws), init("w_z", np.zeros(4, np.int8)),
        init("c_s", c_s), init("c_z", np.uint8(100)), init("bq", bq),
        init("gq", gq), init("g_s", gs), init("g_z", np.zeros(4, np.int8)),
        init("d_s", np.float32(0.04)), init("d_z", np.uint8(120)),
        init("shape", np.array([2, -1], np.int64)),
        init("mq", mq), init("m_s", m_s), init("m_z", np.int8(0)),
        init("y_s", np.float32(0.1)), init("y_z", np.uint8(128)),
    ]
    graph = helper.make_graph(
        nodes, "qoperator_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5]),
         helper.make_tensor_value_info("yq", TensorProto.UINT8, [2, 5]),
         helper.make_tensor_value_info("cq", TensorProto.UINT8, [2, 4, 8, 8])],
        inits)
    return graph, {"x": rng.normal(0, 1, (2, 3, 8, 8)).astype(np.float32)}


def dynamic_mlp(rng):
    """As quantize_dynamic writes a MatMul and a Conv: DynamicQuantizeLinear
    on the activation, MatMulInteger / ConvInteger with uint8 weights and
    their zero points, then Cast and the product of the scales."""
    w = rng.normal(0, 0.5, (6, 4)).astype(np.float32)
    w_s = np.float32((w.max() - w.min()) / 255.0)
    w_z = np.uint8(np.clip(np.rint(-w.min() / w_s), 0, 255))
    wq = np.clip(np.rint(w / w_s) + w_z, 0, 255).astype(np.uint8)
    k = rng.normal(0, 0.5, (2, 1, 2, 2)).astype(np.float32)
    k_s = np.float32((k.max() - k.min()) / 255.0)
    k_z = np.uint8(np.clip(np.rint(-k.min() / k_s), 0, 255))
    kq = np.clip(np.rint(k / k_s) + k_z, 0, 255).astype(np.uint8)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node("MatMulInteger", ["xq", "wq", "xz", "w_z"], ["acc"]),
        helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["xs", "w_s"], ["scale"]),
        helper.make_node("Mul", ["accf", "scale"], ["y"]),
        helper.make_node("Reshape", ["y", "img_shape"], ["img"]),
        helper.make_node("DynamicQuantizeLinear", ["img"],
                         ["iq", "is", "iz"]),
        helper.make_node("ConvInteger", ["iq", "kq", "iz", "k_z"], ["cacc"],
                         auto_pad="SAME_UPPER"),
        helper.make_node("Cast", ["cacc"], ["caccf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["is", "k_s"], ["cscale"]),
        helper.make_node("Mul", ["caccf", "cscale"], ["z"]),
    ]
    inits = [
        init("wq", wq), init("w_s", w_s), init("w_z", w_z),
        init("img_shape", np.array([3, 1, 2, 2], np.int64)),
        init("kq", kq), init("k_s", k_s), init("k_z", k_z),
    ]
    graph = helper.make_graph(
        nodes, "dynamic_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [3, 2, 2, 2]),
         helper.make_tensor_value_info("xq", TensorProto.UINT8, [3, 6])],
        inits)
    return graph, {"x": rng.normal(0, 1, (3, 6)).astype(np.float32)}


def run_ort(node_modules, model_path, feeds):
    with tempfile.TemporaryDirectory() as tmp:
        spec = []
        for name, value in feeds.items():
            path = os.path.join(tmp, name + ".in")
            value.tofile(path)
            spec.append({"name": name, "type": str(value.dtype),
                         "dims": list(value.shape), "file": path})
        with open(os.path.join(tmp, "feeds.json"), "w") as f:
            json.dump(spec, f)
        with open(os.path.join(tmp, "run.js"), "w") as f:
            f.write(RUN_JS)
        env = dict(os.environ, NODE_PATH=node_modules)
        text = subprocess.run(
            ["node", os.path.join(tmp, "run.js"), model_path,
             os.path.join(tmp, "feeds.json"), tmp],
            env=env, check=True, capture_output=True, text=True).stdout
        outs = {}
        for out in json.loads(text):
            outs[out["name"]] = np.fromfile(
                out["file"], dtype=out["type"]).reshape(out["dims"])
        return outs


def main():
    node_modules = os.path.expanduser(sys.argv[1])
    rng = np.random.default_rng(29)
    for make in (qdq_cnn, qoperator_cnn, dynamic_mlp):
        graph, feeds = make(rng)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 7
        onnx.checker.check_model(model)
        name = make.__name__
        path = os.path.join(HERE, name + ".onnx")
        onnx.save(model, path)
        outs = run_ort(node_modules, path, feeds)
        for key, value in feeds.items():
            np.save(os.path.join(HERE, f"{name}.input.{key}.npy"), value)
        for key, value in outs.items():
            np.save(os.path.join(HERE, f"{name}.ort.{key}.npy"), value)
        print(name, {k: (v.dtype.name, v.shape) for k, v in outs.items()})


if __name__ == "__main__":
    main()
