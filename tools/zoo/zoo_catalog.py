"""The zoo's models by name, without torch: what run_zoo.py needs to know.

zoo_models.py says how each is built and fed. `small` marks the CI subset
(tools/zoo/zoo_test.sh); `rtol` is the relative error an output may have
(run_zoo.py says how it is measured), larger than 1e-4 only with a reason;
`ranked_by` names the output a detector ranks its rows by (run_zoo.py
matches rows of near-equal scores in either order).
"""

import collections

Entry = collections.namedtuple(
    "Entry", "title small rtol rtol_reason ranked_by",
    defaults=(False, 1e-4, "", None))

CATALOG = collections.OrderedDict([
    ("resnet18", Entry("ResNet-18")),
    ("resnet50", Entry("ResNet-50")),
    ("mobilenet_v2", Entry("MobileNet V2", small=True)),
    ("mobilenet_v3_small", Entry("MobileNet V3 small")),
    ("efficientnet_b0", Entry("EfficientNet-B0")),
    ("shufflenet_v2", Entry("ShuffleNet V2 x1.0", small=True)),
    ("squeezenet", Entry("SqueezeNet 1.1", small=True)),
    ("densenet121", Entry("DenseNet-121")),
    ("googlenet", Entry("GoogLeNet")),
    ("regnet_y_400mf", Entry("RegNetY-400MF")),
    ("convnext_tiny", Entry("ConvNeXt-tiny")),
    ("vit_small", Entry("ViT: torchvision's VisionTransformer, 224x224, "
                        "patch 16, 4 layers, width 256, 4 heads, mlp 1024 "
                        "(vit_b_16 has 12 layers of width 768: the same ops)")),
    ("transformer_encoder", Entry("torch.nn TransformerEncoder (2 layers, "
                                  "d 256, 4 heads, ff 1024, seq 128)",
                                  small=True)),
    ("transformer_decoder", Entry("torch.nn TransformerDecoder (2 layers, "
                                  "d 256, 4 heads, ff 1024, target 64 with a "
                                  "causal mask, memory 128)")),
    ("lstm", Entry("torch.nn LSTM (2 layers, 64 to 128, seq 32)",
                   small=True)),
    ("gru", Entry("torch.nn GRU (2 layers, bidirectional, 64 to 128, seq 32)",
                  small=True)),
    ("ssdlite", Entry("SSDlite320 MobileNet V3 large: detection with NMS, "
                      "one image of dynamic size", ranked_by="scores")),
])


def select(names, small_only):
    """The names asked for (comma-separated; all if empty), in zoo order."""
    wanted = [n for n in names.split(",") if n] if names else list(CATALOG)
    unknown = [n for n in wanted if n not in CATALOG]
    if unknown:
        raise SystemExit(f"unknown model(s) {', '.join(unknown)}; "
                         f"known: {', '.join(CATALOG)}")
    return [n for n in wanted if not small_only or CATALOG[n].small]
