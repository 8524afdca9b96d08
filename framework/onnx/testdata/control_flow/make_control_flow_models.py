"""Exports the torch.jit.script model control_flow_import_test checks.

Run with Debian's python3 (python3-torch 1.13, python3-onnx) from this
directory: writes scripted.onnx, whose forward branches on a tensor's value
(ONNX If, the branches giving different shapes) and runs a for loop whose
count is an input's length (ONNX Loop, carrying two values and appending to a list, which
exports as an ONNX sequence the loop inserts into), and, for inputs that take each branch, the inputs and torch's outputs
as ONNX TensorProto files (<case>_<name>.pb).
"""
import numpy as np
import onnx
import onnx.numpy_helper
import torch


class Scripted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)

    def forward(self, x):
        # x: [steps, 3].
        if bool(x.sum() > 0):
            h = torch.relu(self.linear(x))
        else:
            h = torch.cat([x, -x], dim=0)
        acc = torch.zeros(3)
        weighted = torch.zeros(3)
        rows = []
        for i in range(h.size(0)):
            acc = torch.tanh(acc * 0.5 + h[i])
            weighted = weighted + acc * float(i + 1)
            rows.append(acc * weighted)
        return h, acc, weighted, torch.stack(rows)


torch.manual_seed(0)
model = Scripted().eval()
scripted = torch.jit.script(model)
example = torch.randn(4, 3)
torch.onnx.export(scripted, (example,), "scripted.onnx", opset_version=13,
                  input_names=["x"], output_names=["h", "acc", "weighted", "rows"],
                  dynamic_axes={"x": {0: "steps"}, "h": {0: "h_steps"},
                                "rows": {0: "h_steps"}})
onnx.checker.check_model(onnx.load("scripted.onnx"))
cases = {
    "positive": torch.abs(torch.randn(4, 3)) + 0.1,
    "negative": -torch.abs(torch.randn(2, 3)) - 0.1,
}
for case, x in cases.items():
    with torch.no_grad():
        results = scripted(x)
    for name, t in [("x", x)] + list(zip(["h", "acc", "weighted", "rows"], results)):
        proto = onnx.numpy_helper.from_array(t.numpy().astype(np.float32), name)
        with open(f"{case}_{name}.pb", "wb") as f:
            f.write(proto.SerializeToString())
