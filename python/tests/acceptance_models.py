"""The models of issue 7's acceptance list, with random weights, at sizes a 2-core CI machine
runs in seconds: torchvision resnet18, mobilenet_v3_small and vit_b_16 (reduced image
sizes), an MLP, a torch.nn.TransformerEncoder and a small GPT-2-style decoder written here.
Shared by test_acceptance_models.py, test_disk_cache.py and tools/bench_models.py."""
from __future__ import annotations

import math
from typing import Callable, Dict, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in: int = 784, hidden: int = 512, d_out: int = 10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.GELU(),
                                 nn.Linear(hidden, d_out))

    def forward(self, x):
        return torch.log_softmax(self.net(x), dim=-1)


class CausalSelfAttention(nn.Module):
    def __init__(self, d: int, n_head: int):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (y.view(b, t, self.n_head, d // self.n_head).transpose(1, 2) for y in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, d))


class Block(nn.Module):
    def __init__(self, d: int, n_head: int):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, n_head)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    """A GPT-2-style decoder: token and position embeddings, pre-norm blocks with causal
    attention and a tanh-GELU MLP, a final norm and an LM head tied to the embedding."""

    def __init__(self, vocab: int = 1024, ctx: int = 128, d: int = 128, n_head: int = 4, n_layer: int = 2):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.h = nn.ModuleList(Block(d, n_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * n_layer))

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def _encoder():
    layer = nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=512, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)


def _tv(name: str, **kw):
    import torchvision
    return getattr(torchvision.models, name)(weights=None, **kw)


def _randomize_norms(model: nn.Module, gen: torch.Generator) -> None:
    """Non-trivial affine parameters and running statistics, so a wrong normalization shows,
    and random weights where torchvision starts at zero (vit's head), so the output is not 0."""
    for p in model.parameters():
        if p.dim() >= 2 and not p.detach().any():
            with torch.no_grad():
                p.normal_(0, 0.02, generator=gen)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)) and m.weight is not None:
            with torch.no_grad():
                m.weight.uniform_(0.5, 1.5, generator=gen)
                m.bias.uniform_(-0.2, 0.2, generator=gen)
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2, generator=gen)
            m.running_var.uniform_(0.5, 1.5, generator=gen)


# name -> (builder, input maker(batch), default batch, float32 tolerance (rtol, atol))
MODELS: Dict[str, Tuple[Callable[[], nn.Module], Callable[[int, torch.Generator], torch.Tensor], int,
                        Tuple[float, float]]] = {
    "resnet18": (lambda: _tv("resnet18"), lambda b, g: torch.randn(b, 3, 224, 224, generator=g), 2, (1e-3, 1e-3)),
    "mobilenet_v3_small": (lambda: _tv("mobilenet_v3_small"), lambda b, g: torch.randn(b, 3, 224, 224, generator=g),
                           2, (1e-3, 1e-3)),
    "vit_b_16": (lambda: _tv("vit_b_16", image_size=64), lambda b, g: torch.randn(b, 3, 64, 64, generator=g), 2,
                 (1e-3, 1e-3)),
    "mlp": (MLP, lambda b, g: torch.randn(b, 784, generator=g), 8, (1e-4, 1e-5)),
    "transformer_encoder": (_encoder, lambda b, g: torch.randn(b, 32, 128, generator=g), 4, (1e-4, 1e-4)),
    "gpt2": (GPT2, lambda b, g: torch.randint(0, 1024, (b, 64), generator=g), 4, (1e-4, 1e-4)),
}


def build(name: str, batch: int = 0, seed: int = 0):
    """(model in eval mode with seeded random weights, its input, (rtol, atol))."""
    make, inputs, default_batch, tol = MODELS[name]
    torch.manual_seed(seed)
    model = make().eval()
    gen = torch.Generator().manual_seed(seed + 1)
    _randomize_norms(model, gen)
    return model, inputs(batch or default_batch, gen), tol
