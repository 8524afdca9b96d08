"""Exports the torch.nn recurrent models recurrent_import_test checks.

Run with Debian's python3 (python3-torch 1.13, python3-onnx) from this
directory: writes lstm.onnx, gru.onnx and rnn.onnx (dynamic batch and
sequence length) and, for each, inputs and torch's outputs at two batch
sizes and two sequence lengths as ONNX TensorProto files
(<model>_T<seq>_B<batch>_<name>.pb).
"""
import numpy as np
import onnx
import onnx.numpy_helper
import torch

INPUT, HIDDEN = 3, 4
CASES = [(2, 1), (5, 3)]  # (seq, batch)


def export(name, module, with_state):
    torch.manual_seed({"lstm": 1, "gru": 2, "rnn": 3}[name])
    module = module.eval()
    for p in module.parameters():
        torch.nn.init.uniform_(p, -0.5, 0.5)
    layers = module.num_layers * (2 if module.bidirectional else 1)
    x = torch.randn(4, 2, INPUT)
    h0 = torch.randn(layers, 2, HIDDEN)
    inputs = [x, h0]
    names = ["x", "h0"]
    if with_state:
        inputs.append(torch.randn(layers, 2, HIDDEN))
        names.append("c0")
    outs = ["y", "h_n"] + (["c_n"] if with_state else [])
    axes = {"x": {0: "seq", 1: "batch"}, "y": {0: "seq", 1: "batch"}}
    for n in names[1:] + outs[1:]:
        axes[n] = {1: "batch"}

    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = module

        def forward(self, x, h0, c0=None):
            if c0 is None:
                y, h = self.rnn(x, h0)
                return y, h
            y, (h, c) = self.rnn(x, (h0, c0))
            return y, h, c

    torch.onnx.export(Wrap(), tuple(inputs), f"{name}.onnx", opset_version=14,
                      input_names=names, output_names=outs,
                      dynamic_axes=axes)
    for seq, batch in CASES:
        case = [torch.randn(seq, batch, INPUT)] + [
            torch.randn(layers, batch, HIDDEN) for _ in names[1:]]
        with torch.no_grad():
            results = Wrap()(*case)
        for n, t in list(zip(names, case)) + list(zip(outs, results)):
            proto = onnx.numpy_helper.from_array(
                t.numpy().astype(np.float32), n)
            with open(f"{name}_T{seq}_B{batch}_{n}.pb", "wb") as f:
                f.write(proto.SerializeToString())


export("lstm", torch.nn.LSTM(INPUT, HIDDEN, num_layers=2, bidirectional=True),
       True)
export("gru", torch.nn.GRU(INPUT, HIDDEN, num_layers=1, bidirectional=True),
       False)
export("rnn", torch.nn.RNN(INPUT, HIDDEN, num_layers=2), False)
