"""Training through the core's autograd (autograd="core", the default): gradients against
eager torch for parameters and inputs, inputs without requires_grad, several outputs (one
unused by the loss), view outputs, the loss inside the graph, optimizer steps between calls,
a dynamic batch, torch.no_grad() inference (no backward built), bf16 autocast, and what
explain() reports."""
from __future__ import annotations

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import plugsdk
from plugsdk import backend, runtime, training


def fresh():
    torch._dynamo.reset()
    backend.reports.clear()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.ln = nn.LayerNorm(64)
        self.fc2 = nn.Linear(64, 8)

    def forward(self, x):
        return self.fc2(F.gelu(self.ln(self.fc1(x))))


def pair(model: nn.Module):
    torch.manual_seed(0)
    ref = copy.deepcopy(model)
    return model, ref, torch.compile(model, backend="plugsdk", dynamic=False)


def assert_grads_match(model, ref, rtol=1e-4, atol=1e-5):
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            torch.testing.assert_close(p.grad, q.grad, rtol=rtol, atol=atol, msg=lambda m: f"{name}: {m}")


def core_trained():
    """The last graph was trained by the core: one compiled forward, no torch backward graph."""
    reports = plugsdk.explain()
    assert reports and reports[-1].training and reports[-1].compiled_partitions == 1, reports
    assert not any(r.fallbacks for r in reports), reports
    return reports[-1]


def test_parameter_and_input_gradients_match_eager():
    fresh()
    torch.manual_seed(0)
    model, ref, f = pair(Net())
    x = torch.randn(4, 32, requires_grad=True)
    xr = x.detach().clone().requires_grad_()
    out = f(x)
    assert type(out.grad_fn).__name__ == "_CompiledStepBackward"
    torch.testing.assert_close(out, ref(xr), rtol=1e-5, atol=1e-5)
    (out * torch.linspace(-1, 1, 8)).sum().backward()
    (ref(xr) * torch.linspace(-1, 1, 8)).sum().backward()
    assert_grads_match(model, ref)
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-4, atol=1e-5)
    report = core_trained()
    stats = report.saved_bytes["forward1"]
    assert 0 < stats["saved_bytes"] <= stats["saved_bytes_no_recompute"], stats


def test_an_input_without_requires_grad_gets_no_gradient():
    fresh()
    model, ref, f = pair(Net())
    x = torch.randn(4, 32)
    f(x).sum().backward()
    ref(x).sum().backward()
    assert x.grad is None
    assert_grads_match(model, ref)
    # a frozen parameter: no gradient for it, the others still match
    fresh()
    model, ref, f = pair(Net())
    model.fc1.weight.requires_grad_(False)
    ref.fc1.weight.requires_grad_(False)
    f(x).sum().backward()
    ref(x).sum().backward()
    assert model.fc1.weight.grad is None
    assert_grads_match(model, ref)


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(16, 16)
        self.a = nn.Linear(16, 4)
        self.b = nn.Linear(16, 6)

    def forward(self, x):
        h = torch.tanh(self.body(x))
        a = self.a(h)
        return a, self.b(h), a.t(), a.view(-1)  # views of an output among the outputs


def test_several_outputs_views_and_an_unused_output():
    fresh()
    model, ref, f = pair(TwoHeads())
    x = torch.randn(5, 16)
    outs, want = f(x), ref(x)
    for o, w in zip(outs, want):
        torch.testing.assert_close(o, w, rtol=1e-5, atol=1e-5)
    # the second head is unused by the loss (its gradient is None in autograd); views get theirs
    loss = lambda o: o[0].square().sum() + (o[2] * 3).sum() + o[3][::2].sum()  # noqa: E731
    loss(outs).backward()
    loss(want).backward()
    assert_grads_match(model, ref)
    assert model.b.weight.grad is None and ref.b.weight.grad is None
    core_trained()


class WithLoss(nn.Module):
    """Returns its loss, as users do to fuse an expensive loss into the graph."""

    def __init__(self):
        super().__init__()
        self.net = Net()

    def forward(self, x, target):
        return F.cross_entropy(self.net(x), target)


def test_the_loss_inside_the_graph():
    fresh()
    model, ref, f = pair(WithLoss())
    x, t = torch.randn(6, 32), torch.randint(0, 8, (6,))
    loss = f(x, t)
    assert loss.dim() == 0
    torch.testing.assert_close(loss, ref(x, t), rtol=1e-5, atol=1e-6)
    loss.backward()
    ref(x, t).backward()
    assert_grads_match(model, ref)
    core_trained()


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_optimizer_steps_between_calls_match_eager(opt):
    fresh()
    model, ref, f = pair(WithLoss())
    make = (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)) if opt == "sgd" else (
        lambda p: torch.optim.Adam(p, lr=1e-2))
    o, ro = make(model.parameters()), make(ref.parameters())
    gen = torch.Generator().manual_seed(3)
    for step in range(10):
        x, t = torch.randn(6, 32, generator=gen), torch.randint(0, 8, (6,), generator=gen)
        for m, opt_ in ((f, o), (ref, ro)):
            opt_.zero_grad()
            loss = m(x, t)
            loss.backward()
            opt_.step()
        torch.testing.assert_close(model.net.fc1.weight, ref.net.fc1.weight, rtol=1e-4, atol=1e-5,
                                   msg=lambda m: f"step {step}: {m}")
    info = plugsdk.cache_info()
    assert info["compiles"] == 1 and info["eager_calls"] == 0, info
    # Steps after the first find their artifact in the training graph's memo (no guards run),
    # and the core's counters still count them as hits.
    graphs = [g for g in list(runtime._functions) if isinstance(g, training.TrainingGraph)]
    assert len(graphs) == 1 and graphs[0].memo_hits == 9, [g.memo_hits for g in graphs]
    assert info["hits"] >= 9, info


def test_a_dynamic_batch_trains_with_one_symbolic_compile():
    # dynamic=True: Dynamo marks the batch symbolic, the core builds one training pair with a
    # symbolic batch (the backward binds the symbol from a saved input) and every batch size
    # runs it; gradients match eager at each size
    fresh()
    torch.manual_seed(0)
    model = WithLoss()
    ref = copy.deepcopy(model)
    f = torch.compile(model, backend="plugsdk", dynamic=True)
    gen = torch.Generator().manual_seed(4)
    for batch in (5, 9, 2, 16):
        x, t = torch.randn(batch, 32, generator=gen), torch.randint(0, 8, (batch,), generator=gen)
        model.zero_grad()
        ref.zero_grad()
        f(x, t).backward()
        ref(x, t).backward()
        assert_grads_match(model, ref)
    info = plugsdk.cache_info()
    assert info["compiles"] == 1 and info["eager_calls"] == 0, info
    core_trained()


def test_no_grad_inference_builds_no_backward():
    fresh()
    model, ref, f = pair(Net())
    x = torch.randn(4, 32)
    with torch.no_grad():
        out = f(x)
    assert out.grad_fn is None
    torch.testing.assert_close(out, ref(x).detach(), rtol=1e-5, atol=1e-5)
    reports = plugsdk.explain()
    assert len(reports) == 1 and not reports[0].training and not reports[0].saved_bytes


def test_bf16_autocast_keeps_the_casts_and_matches_eager_autocast():
    fresh()
    model, ref, f = pair(Net())
    x = torch.randn(8, 32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = f(x)
        want = ref(x)
    assert out.dtype == want.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), want.float(), rtol=2e-2, atol=2e-2)
    out.float().square().sum().backward()
    want.float().square().sum().backward()
    # bf16 tolerances: one bf16 rounding step is 2^-8 relative; gradients pass a few of them
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        err = (p.grad - q.grad).abs().max().item()
        assert err <= 3e-2 * q.grad.abs().max().item() + 1e-3, (name, err)
    report = core_trained()
    assert "convert_element_type" in report.text[0] or "_to_copy" in report.text[0], report.text[0][:500]


def test_torch_aot_backward_graphs_remain_available():
    fresh()
    torch.manual_seed(0)
    model = Net()
    ref = copy.deepcopy(model)
    f = torch.compile(model, backend="plugsdk", dynamic=False, options={"autograd": "aot"})
    x = torch.randn(4, 32)
    f(x).sum().backward()
    ref(x).sum().backward()
    assert_grads_match(model, ref)
    reports = plugsdk.explain()
    assert len(reports) == 2 and not any(r.training for r in reports)  # forward and torch's backward


class ConvNet(nn.Module):
    """Strided, padded, grouped and dilated convolutions with batch norm and a residual."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.grouped = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=2)
        self.down = nn.Conv2d(8, 16, 1, stride=2)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        y = F.relu(self.bn(self.stem(x)))
        y = F.relu(self.grouped(y) + y)
        return self.fc(self.down(y).mean(dim=(2, 3)))


def test_conv_training_where_the_library_takes_only_plain_float_convolutions():
    # As on the GPU (cuDNN through the cuda plugin): convolution is a library op for float
    # dtypes and not transposed, so each input gradient -- a transposed convolution -- is
    # rewritten into a plain one the library runs, and each weight gradient is a plain
    # convolution over permuted operands (ABI 1.4, conv_forms=float-plain).
    # The reference is eager torch in float64: the toolbox's torch 2.6 computes some float32
    # convolution input gradients wrongly on the CPU (a 3x3 convolution's: 0.88 relative
    # error against its own float64 result), which plugsdk matches to 1e-6.
    fresh()
    torch.manual_seed(0)
    model = ConvNet()
    ref = copy.deepcopy(model).double()
    f = torch.compile(model, backend="plugsdk", dynamic=False,
                      options={"device": "cpu", "backend_options": "conv_forms=float-plain"})
    x = torch.randn(2, 3, 16, 16, requires_grad=True)
    xr = x.detach().double().requires_grad_()
    weights = torch.randn(2, 5)
    out = f(x)
    want = ref(xr)
    torch.testing.assert_close(out.double(), want, rtol=1e-4, atol=1e-5)
    (out * weights).sum().backward()
    (want * weights.double()).sum().backward()
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        err = ((p.grad.double() - q.grad).abs().max() / q.grad.abs().max()).item()
        assert err < 1e-4, f"{name}: relative gradient error {err:.2e}"
    err = ((x.grad.double() - xr.grad).abs().max() / xr.grad.abs().max()).item()
    assert err < 1e-4, f"input: relative gradient error {err:.2e}"
    core_trained()


class Attention(nn.Module):
    """Causal self-attention whose scaled_dot_product_attention runs in `self.low` (bf16 in the
    compiled model, float64 in the reference)."""

    def __init__(self, masked_length=0):
        super().__init__()
        self.qkv = nn.Linear(32, 96)
        self.proj = nn.Linear(32, 32)
        self.low = torch.bfloat16
        # A learned additive mask instead of the causal one (its gradient is the scores').
        self.bias = nn.Parameter(0.5 * torch.randn(masked_length, masked_length)) if masked_length else None

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, 2, 16).permute(2, 0, 3, 1, 4)
        mask = None if self.bias is None else self.bias.to(self.low)
        y = F.scaled_dot_product_attention(q.to(self.low), k.to(self.low), v.to(self.low), attn_mask=mask,
                                           is_causal=mask is None)
        return self.proj(y.to(x.dtype).transpose(1, 2).reshape(b, n, 32))


@pytest.mark.parametrize("length,masked", [(24, False), (21, False), (21, True)])
def test_bf16_attention_gradients_match_float64(length, masked):
    # prims.sdpa's backward runs its matmuls on the bf16 operands with f32 results, P and dS
    # rounded to bf16 as their operands (flash attention's backward); the gradients must stay
    # within bf16 tolerances of a float64 reference. 21 keys are padded to 24 in the backward
    # (aligned rows for the GEMMs), with the causal mask or a learned additive one.
    fresh()
    torch.manual_seed(0)
    model = Attention(length if masked else 0)
    ref = copy.deepcopy(model).double()
    ref.low = torch.float64
    f = torch.compile(model, backend="plugsdk", dynamic=False)
    x = torch.randn(2, length, 32)
    f(x).square().sum().backward()
    ref(x.double()).square().sum().backward()
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        err = (p.grad.double() - q.grad).abs().max().item()
        assert err <= 3e-2 * q.grad.abs().max().item() + 1e-3, (name, err)
    assert core_trained().training
