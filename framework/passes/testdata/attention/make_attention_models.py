"""Writes the torch exports attention_fusion_test reads.

torch 1.13's nn.MultiheadAttention (d 16, 2 heads, batch first) with and
without a float attention mask, at opsets 11, 13 and 17, and torchvision's
VisionTransformer (32x32, patch 16, 1 layer, width 16, 2 heads) at opset
13; each with one input and torch's output, as ONNX TensorProtos.

Usage (from this directory): /usr/bin/python3 make_attention_models.py
"""

import onnx
import onnx.numpy_helper
import torch
import torchvision
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, masked):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
        self.masked = masked
        mask = torch.triu(torch.full((5, 5), -1e4), diagonal=1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        mask = self.mask if self.masked else None
        return self.attn(x, x, x, attn_mask=mask, need_weights=False)[0]


def save(name, model, x, opset):
    model.eval()
    with torch.no_grad():
        y = model(x)
    torch.onnx.export(model, (x,), name + ".onnx", opset_version=opset,
                      input_names=["x"], output_names=["y"])
    for tensor_name, value in (("x", x), ("y", y)):
        proto = onnx.numpy_helper.from_array(value.numpy(), tensor_name)
        with open("%s_%s.pb" % (name, tensor_name), "wb") as f:
            f.write(proto.SerializeToString())


def main():
    torch.manual_seed(0)
    x = torch.randn(3, 5, 16)
    for masked in (False, True):
        model = SelfAttention(masked)
        for opset in (11, 13, 17):
            save("mha%s_opset%d" % ("_mask" if masked else "", opset), model,
                 x, opset)
    vit = torchvision.models.VisionTransformer(
        image_size=32, patch_size=16, num_layers=1, num_heads=2,
        hidden_dim=16, mlp_dim=32, num_classes=10)
    nn.init.normal_(vit.heads.head.weight, std=0.02)
    save("vit_opset13", vit, torch.randn(2, 3, 32, 32), 13)


if __name__ == "__main__":
    main()
