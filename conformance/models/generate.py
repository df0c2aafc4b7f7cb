#!/usr/bin/env python3
"""Generate the model graphs of the conformance suite as .pgraph text, from torch.

    tools/toolbox run python3 conformance/models/generate.py [--out DIR] [--only NAME ...]

Each model is built with seeded random weights in eval mode, and its forward is captured
at the ATen level with make_fx over torch.func.functional_call: parameters and buffers
become explicit graph inputs (named after their path, dots replaced by underscores), the
data input is `x`. Every FX node becomes one .pgraph node; arguments are mapped to the
op's schema by name (tensors become inputs, the rest attributes), kwargs our schemas do
not have (device, layout, pin_memory, memory_format) are dropped, and `getitem`s of a
multi-output op become the multi-output binding `%a, %b = op(...)`.

Writes <name>.pgraph (float32) and <name>.f64.pgraph (the same model traced in float64)
beside this script (or into --out). test_models.py imports the builders from here, so the
test rebuilds exactly the models the graphs were traced from.
"""
from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys
from typing import Callable, Dict, List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._decomp import get_decompositions
from torch.fx.experimental.proxy_tensor import make_fx

HERE = pathlib.Path(__file__).resolve().parent

# FX -> .pgraph is the package's importer (python/plugsdk/fx_import.py, shared with
# torch.compile), loaded by path: it needs nothing else of the package.
_spec = importlib.util.spec_from_file_location("plugsdk_fx_import", HERE.parents[1] / "python" / "plugsdk" / "fx_import.py")
fx_import = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = fx_import  # (its dataclasses look themselves up there)
_spec.loader.exec_module(fx_import)
DTYPES, Unmapped = fx_import.DTYPES, fx_import.Unmapped

# File suffix and torch dtype of each traced variant.
VARIANTS = {"": torch.float32, ".f64": torch.float64}

# ---------------------------------------------------------------------------------------
# The models
# ---------------------------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class BasicBlock(nn.Module):
    """torchvision's ResNet BasicBlock: two 3x3 convs with BN, identity or 1x1 shortcut."""
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ResNet18(nn.Module):
    """torchvision.models.resnet18 (BasicBlock, [2, 2, 2, 2]) with a 10-class fc."""

    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, 2)
        self.layer2 = self._make_layer(128, 2, stride=2)
        self.layer3 = self._make_layer(256, 2, stride=2)
        self.layer4 = self._make_layer(512, 2, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)
        for m in self.modules():  # torchvision's initialisation
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def _make_layer(self, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes, 1, stride=stride, bias=False),
                nn.BatchNorm2d(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


class CausalSelfAttention(nn.Module):
    def __init__(self, d: int, n_head: int):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(d, 3 * d)  # fused q, k, v
        self.c_proj = nn.Linear(d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class GPT2MLP(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, d: int = 64, n_head: int = 4):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, n_head)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = GPT2MLP(d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


def randomize_norms(model: nn.Module, gen: torch.Generator) -> None:
    """Give norm layers non-trivial affine parameters and running statistics, so that
    the graphs test them (their default init is the identity)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)


# name -> (module constructor, input shape, seed)
MODELS: Dict[str, Tuple[Callable[[], nn.Module], Tuple[int, ...], int]] = {
    "mlp": (MLP, (8, 784), 1),
    "resnet18": (ResNet18, (1, 3, 64, 64), 2),
    "transformer_encoder": (
        lambda: nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                           dropout=0.0, batch_first=True), (2, 16, 64), 3),
    "gpt2_block": (lambda: GPT2Block(64, 4), (2, 16, 64), 4),
}


def build(name: str, dtype: torch.dtype) -> Tuple[nn.Module, torch.Tensor]:
    """The model (eval mode, seeded weights, in `dtype`) and its input x."""
    ctor, shape, seed = MODELS[name]
    torch.manual_seed(seed)
    model = ctor()
    gen = torch.Generator().manual_seed(seed)
    randomize_norms(model, gen)
    x = torch.randn(shape, generator=gen)
    model = model.to(dtype).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model, x.to(dtype)


def graph_inputs(model: nn.Module, x: torch.Tensor) -> List[Tuple[str, str, torch.Tensor]]:
    """(graph input name, parameter/buffer path or "x", tensor) in graph-input order."""
    out = [(n.replace(".", "_"), n, t.detach()) for n, t in model.named_parameters()]
    out += [(n.replace(".", "_"), n, t.detach()) for n, t in model.named_buffers()]
    out.append(("x", "x", x))
    return out


def eager(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(x)


# ---------------------------------------------------------------------------------------
# Capture
# ---------------------------------------------------------------------------------------

# Torch decompositions applied while tracing: only for ops outside our op set. (None are
# needed for these four models at torch 2.6; see README.md.)
DECOMPOSITIONS: list = []


def trace(model: nn.Module, x: torch.Tensor) -> torch.fx.GraphModule:
    inputs = graph_inputs(model, x)
    paths = [path for _, path, _ in inputs[:-1]]

    def forward(*args):
        *state, data = args
        return torch.func.functional_call(model, dict(zip(paths, state)), (data,))

    table = get_decompositions(DECOMPOSITIONS) if DECOMPOSITIONS else None
    # functionalize: in-place ops (ResNet's ReLU(inplace=True)) become their functional
    # forms; views stay views.
    with torch.no_grad():
        gm = make_fx(torch.func.functionalize(forward, remove="mutations"),
                     decomposition_table=table, tracing_mode="real")(*[t for _, _, t in inputs])
    # Drop dead nodes (batch_norm's unused `empty` reserve buffer, unused getitems).
    gm.graph.eliminate_dead_code()
    return gm


def to_pgraph(gm: torch.fx.GraphModule, graph_name: str, input_names: List[str]) -> str:
    """The .pgraph text of a make_fx graph (the package's importer: python/plugsdk/fx_import.py)."""
    imported = fx_import.to_pgraph(gm, graph_name, input_names)
    if any(kind != "program" for kind, _ in imported.outputs):
        raise Unmapped("a graph output that is an input is not supported")
    return imported.text


HEADER = "# generated by conformance/models/generate.py from torch {ver}; do not edit\n"


def generate(name: str, dtype: torch.dtype) -> str:
    model, x = build(name, dtype)
    gm = trace(model, x)
    text = to_pgraph(gm, name, [n for n, _, _ in graph_inputs(model, x)])
    return HEADER.format(ver=torch.__version__.split("+")[0]) + text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=pathlib.Path, default=HERE, help="output directory")
    ap.add_argument("--only", nargs="*", choices=sorted(MODELS), help="models to generate")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in args.only or MODELS:
        for suffix, dtype in VARIANTS.items():
            path = args.out / f"{name}{suffix}.pgraph"
            try:
                text = generate(name, dtype)
            except Unmapped as e:
                print(f"{path.name}: cannot map: {e}", file=sys.stderr)
                failed += 1
                continue
            path.write_text(text)
            print(f"wrote {path} ({text.count(chr(10)) - 4} nodes)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
