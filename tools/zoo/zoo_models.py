"""The models of the zoo: how each is built, fed and exported.

Each ModelSpec names a model, builds it (torch.manual_seed(0) is set just
before, so its random weights are the same on every run) with its norms'
parameters and statistics made as training would leave them
(give_trained_statistics), makes its inputs for a case (a batch size, or
an image size for the detection model), and says which axes of its inputs
and outputs are dynamic in the export.
"""

import torch
import torchvision
from torch import nn

import zoo_catalog

BATCH_AXES = {0: "batch"}


class ModelSpec:
    """A zoo model. `cases` are (label, n) pairs: make_inputs(n) feeds case."""

    def __init__(self, name, build, make_inputs, input_names, output_names,
                 dynamic_axes, cases=(("b1", 1), ("b3", 3)), calibrate=None):
        self.name = name
        entry = zoo_catalog.CATALOG[name]
        self.title = entry.title
        self.small = entry.small
        self.rtol = entry.rtol
        self.rtol_reason = entry.rtol_reason
        self.build = build
        self.make_inputs = make_inputs
        self.input_names = input_names
        self.output_names = output_names
        self.dynamic_axes = dynamic_axes
        self.cases = list(cases)
        # Runs the module, in train mode, on a batch of 8 other inputs.
        self.calibrate = calibrate or (
            lambda module: module(*make_inputs(8, seed=1)))

    def build_trained(self):
        """The module, eval mode, its norms made as if trained."""
        module = self.build()
        give_trained_statistics(module, self.calibrate)
        return module

    def flatten_inputs(self, inputs):
        return list(inputs)

    def flatten_outputs(self, outputs):
        if isinstance(outputs, torch.Tensor):
            return [outputs]
        return list(outputs)


NORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm, nn.GroupNorm)


def give_trained_statistics(module, calibrate):
    """Makes the norms' parameters and statistics look like a trained net's.

    Freshly built, a net's batch norms hold mean 0, variance 1, scale 1 and
    shift 0, so in eval mode they normalise nothing: in MobileNet or
    EfficientNet the activations then shrink layer after layer to 1e-9 or
    less, where sigmoid is 0.5 and every nonlinearity a line, and an input
    barely moves GoogLeNet's output. So, as training would leave them: the
    norms' scales and shifts are random (a shift or a mean a wrong bias fold
    drops shows), and the batch norms' statistics are those of a forward
    pass in train mode over a random batch (CALIBRATE runs it).
    """
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, NORMS) and getattr(layer, "weight",
                                                    None) is not None:
                layer.weight.uniform_(0.5, 1.5)
                layer.bias.normal_(0.0, 0.2)
            if isinstance(layer, nn.modules.batchnorm._BatchNorm):
                layer.reset_running_stats()
                layer.momentum = None  # The plain mean over the batches.
        module.train()
        calibrate(module)
        module.eval()


def image(n, size=224, seed=0):
    return (torch.randn(n, 3, size, size, generator=torch.Generator()
                        .manual_seed(1000 + 100 * seed + n)),)


def vision(name, build):
    return ModelSpec(name, build, image, ["input"], ["output"],
                     {"input": BATCH_AXES, "output": BATCH_AXES})


class SmallVit(nn.Module):
    """torchvision's VisionTransformer at 224x224, patch 16, in a small size.

    vit_b_16 (12 layers, width 768, 86M parameters) exports as the same ops;
    4 layers of width 256 keep the zoo's exports and its CI share small.
    """

    def __init__(self):
        super().__init__()
        self.vit = torchvision.models.VisionTransformer(
            image_size=224, patch_size=16, num_layers=4, num_heads=4,
            hidden_dim=256, mlp_dim=1024, num_classes=1000)
        # torchvision starts the head at zero (for fine-tuning): the output
        # would be 0 whatever the input.
        nn.init.normal_(self.vit.heads.head.weight, std=0.02)

    def forward(self, x):
        return self.vit(x)


def sequence(n, length=128, width=256, seed=0):
    generator = torch.Generator().manual_seed(2000 + 100 * seed + n)
    return torch.randn(n, length, width, generator=generator)


class Encoder(nn.Module):
    """torch.nn.TransformerEncoder: 2 layers, d 256, 4 heads, ff 1024."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=256, nhead=4,
                                           dim_feedforward=1024,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)

    def forward(self, src):
        return self.encoder(src)


class Decoder(nn.Module):
    """torch.nn.TransformerDecoder, 2 layers, d 256, with a causal mask."""

    def __init__(self, target_length=64):
        super().__init__()
        layer = nn.TransformerDecoderLayer(d_model=256, nhead=4,
                                           dim_feedforward=1024,
                                           batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, num_layers=2)
        self.register_buffer(
            "mask", nn.Transformer.generate_square_subsequent_mask(
                target_length))

    def forward(self, tgt, memory):
        return self.decoder(tgt, memory, tgt_mask=self.mask)


class Recurrent(nn.Module):
    """An nn.LSTM or nn.GRU of 2 layers, batch first; returns every state."""

    def __init__(self, cell, bidirectional):
        super().__init__()
        self.rnn = cell(input_size=64, hidden_size=128, num_layers=2,
                        batch_first=True, bidirectional=bidirectional)

    def forward(self, x):
        output, state = self.rnn(x)
        if isinstance(state, tuple):
            return (output,) + state
        return output, state


def rnn_inputs(n, seed=0):
    generator = torch.Generator().manual_seed(3000 + 100 * seed + n)
    return (torch.randn(n, 32, 64, generator=generator),)


STATE_AXES = {1: "batch"}


class Detector(nn.Module):
    """SSDlite320 (MobileNet V3 large) on one image, its boxes after NMS."""

    def __init__(self):
        super().__init__()
        self.model = torchvision.models.detection.ssdlite320_mobilenet_v3_large(
            weights=None, weights_backbone=None)

    def forward(self, x):
        out = self.model([x])[0]
        return out["boxes"], out["scores"], out["labels"]


def detection_image(size):
    generator = torch.Generator().manual_seed(4000 + size)
    return (torch.rand(3, size, size, generator=generator),)


def calibrate_detector(module):
    # In train mode the detector wants targets; its backbone does not.
    module.model.backbone(torch.randn(
        8, 3, 320, 320, generator=torch.Generator().manual_seed(4001)))


def _models():
    tv = torchvision.models
    return [
        vision("resnet18", tv.resnet18),
        vision("resnet50", tv.resnet50),
        vision("mobilenet_v2", tv.mobilenet_v2),
        vision("mobilenet_v3_small", tv.mobilenet_v3_small),
        vision("efficientnet_b0", tv.efficientnet_b0),
        vision("shufflenet_v2", tv.shufflenet_v2_x1_0),
        vision("squeezenet", tv.squeezenet1_1),
        vision("densenet121", tv.densenet121),
        vision("googlenet",
               lambda: tv.googlenet(aux_logits=False, init_weights=True)),
        vision("regnet_y_400mf", tv.regnet_y_400mf),
        vision("convnext_tiny", tv.convnext_tiny),
        vision("vit_small", SmallVit),
        ModelSpec("transformer_encoder", Encoder,
                  lambda n, seed=0: (sequence(n, seed=seed),),
                  ["src"], ["output"],
                  {"src": BATCH_AXES, "output": BATCH_AXES}),
        ModelSpec("transformer_decoder", Decoder,
                  lambda n, seed=0: (sequence(n, 64, seed=2 * seed),
                                     sequence(n, 128, seed=2 * seed + 1)),
                  ["tgt", "memory"], ["output"],
                  {"tgt": BATCH_AXES, "memory": BATCH_AXES,
                   "output": BATCH_AXES}),
        ModelSpec("lstm", lambda: Recurrent(nn.LSTM, False), rnn_inputs,
                  ["input"], ["output", "h_n", "c_n"],
                  {"input": BATCH_AXES, "output": BATCH_AXES,
                   "h_n": STATE_AXES, "c_n": STATE_AXES}),
        ModelSpec("gru", lambda: Recurrent(nn.GRU, True), rnn_inputs,
                  ["input"], ["output", "h_n"],
                  {"input": BATCH_AXES, "output": BATCH_AXES,
                   "h_n": STATE_AXES}),
        ModelSpec("ssdlite", Detector, detection_image, ["image"],
                  ["boxes", "scores", "labels"],
                  {"image": {1: "height", 2: "width"},
                   "boxes": {0: "detections"}, "scores": {0: "detections"},
                   "labels": {0: "detections"}},
                  cases=(("s320", 320), ("s256", 256)),
                  calibrate=calibrate_detector),
    ]


def select(names, small_only):
    """The specs of zoo_catalog.select(names, small_only), in zoo order."""
    specs = {spec.name: spec for spec in _models()}
    assert list(specs) == list(zoo_catalog.CATALOG), "catalog out of step"
    return [specs[name] for name in zoo_catalog.select(names, small_only)]
