"""Issue 8's models trained through the core's autograd on the CPU plugin: whole-model
gradients against eager torch, then 50 optimizer steps on a random batch (learned by heart, so
the loss falls) whose loss curve must follow eager torch's step by step (float32).

Tolerances: gradients are compared per parameter as max |g - g_eager| / max |g_eager|; losses
step by step as |l - l_eager| <= rtol * |l_eager| + 1e-5. Float32 reassociation (blocked GEMMs,
tree reductions, fused kernels) differs from eager's kernels at ~1e-6 relative per op.

resnet18 is checked in float64 (model and data), against eager float64: in float32 its
gradients are discontinuous at the precision of the forward. A ReLU whose input lies within
float32 rounding of zero (about one per input batch at 8x3x32x32, among ~300k activations)
decides differently in any two float32 implementations, and with train-mode batch norm over
4x4 and 1x1 maps that one decision moves whole channels' gradients by 1e-2 relative. Measured
(docs/autograd.md): against eager float64, 30 SGD steps in float32 deviate by up to 7.3e-2
(eager), 1.9e-1 (inductor) and 3.0e-2 (plugsdk) relative from step 3 on, while plugsdk in
float64 follows eager float64 to 1.9e-13. So resnet18 is compared step by step in float64,
and in float32 at 3x64x64 with lr 1e-3, where float32's own noise is ~1e-2
(test_resnet18_float32_follows_eager_step_by_step, tolerance 5e-2)."""
from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

import plugsdk
from plugsdk import backend

from acceptance_models import build

IMAGES_F64 = lambda b, g: torch.randn(b, 3, 32, 32, generator=g, dtype=torch.float64)  # noqa: E731

# name -> (batch, input maker, loss, optimizer, grad tolerance, curve rtol, dtype)
CASES = {
    "mlp": (16, None, "xent", "sgd", 1e-4, 1e-4, torch.float32),
    "resnet18": (8, IMAGES_F64, "mse", "sgd", 1e-9, 1e-9, torch.float64),
    "resnet18_xent": (8, IMAGES_F64, "xent", "sgd", 1e-9, 1e-9, torch.float64),
    "transformer_encoder": (4, lambda b, g: torch.randn(b, 16, 128, generator=g), "mse", "adam", 1e-4, 1e-3,
                            torch.float32),
    "gpt2": (2, lambda b, g: torch.randint(0, 1024, (b, 32), generator=g), "lm", "adam", 1e-4, 1e-3, torch.float32),
}


def make(name: str):
    batch, inputs, loss, opt, gtol, ctol, dtype = CASES[name]
    model, x, _ = build(name.split("_xent")[0], batch=batch, seed=0)
    model.train().to(dtype)  # the input makers make their data in the case's dtype
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
        return x, torch.randn(batch, 1000, generator=gen, dtype=x.dtype)
    if name == "transformer_encoder":
        return x, torch.randn(x.shape, generator=gen, dtype=x.dtype)
    return x, None


NAMES = list(CASES)
# resnet18 in float64 costs ~1.5 s a step (the CPU plugin's float64 convolutions are direct
# loops): its curve runs once, with the cross-entropy loss; the MSE case checks gradients.
CURVE_NAMES = [n for n in CASES if n != "resnet18"]


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
    f64 = want.dtype == torch.float64
    torch.testing.assert_close(loss, want, rtol=1e-9 if f64 else 1e-4, atol=1e-10 if f64 else 1e-5)
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


@pytest.mark.parametrize("name", CURVE_NAMES)
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
        assert abs(curve[-1] - ref_curve[-1]) <= ctol * abs(ref_curve[-1]) + ctol / 10, (
            f"{name} step {step}: loss {curve[-1]:.6f}, eager {ref_curve[-1]:.6f}")
    assert ref_curve[-1] < ref_curve[0], "the loss did not decrease: the test trains nothing"
    info = plugsdk.cache_info()
    assert info["eager_calls"] == 0, info
    print(f"{name}: loss {ref_curve[0]:.4f} -> {ref_curve[-1]:.4f}, "
          f"max step difference {max(abs(a - b) for a, b in zip(curve, ref_curve)):.2e}")


def test_resnet18_float32_follows_eager_step_by_step():
    """Float32 resnet18 (see the module docstring), 3x64x64, SGD lr 1e-3 momentum 0.9, 50
    steps: the loss must follow eager float32 step by step within 5e-2 relative, a tolerance
    set by float32 itself: eager float32 deviates from eager float64 by up to 1.4e-2 here
    (measured; plugsdk 2.4e-2, plugsdk vs eager 1.7e-2), and both float32 curves must stay
    within the same bound of float64, so the bound is float32's noise, not slack."""
    torch._dynamo.reset()
    model, _, _ = build("resnet18", batch=8, seed=0)
    model.train()
    gen = torch.Generator().manual_seed(7)
    x, target = torch.randn(8, 3, 64, 64, generator=gen), torch.randint(0, 1000, (8,), generator=gen)

    def curve(m, f, dtype):
        opt = torch.optim.SGD(m.parameters(), lr=1e-3, momentum=0.9)
        losses = []
        for _ in range(50):
            opt.zero_grad()
            loss = F.cross_entropy(f(x.to(dtype)), target)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    m64, m32, mc = copy.deepcopy(model).double(), copy.deepcopy(model), copy.deepcopy(model)
    ref = curve(m64, m64, torch.float64)
    eager = curve(m32, m32, torch.float32)
    ours = curve(mc, torch.compile(mc, backend="plugsdk", dynamic=False), torch.float32)
    rtol = 5e-2
    for step, (a, e, r) in enumerate(zip(ours, eager, ref)):
        assert abs(e - r) <= rtol * r + 1e-4, f"step {step}: eager float32 {e:.5f} vs float64 {r:.5f}: bound too tight"
        assert abs(a - r) <= rtol * r + 1e-4, f"step {step}: plugsdk {a:.5f} vs eager float64 {r:.5f}"
        assert abs(a - e) <= rtol * e + 1e-4, f"step {step}: plugsdk {a:.5f} vs eager float32 {e:.5f}"
    assert ours[-1] < 0.01 * ours[0], ours
    assert plugsdk.cache_info()["eager_calls"] == 0
    print(f"resnet18 float32: loss {ours[0]:.4f} -> {ours[-1]:.5f}; largest step difference: plugsdk vs eager "
          f"{max(abs(a - e) / e for a, e in zip(ours, eager)):.2e}; from float64: plugsdk "
          f"{max(abs(a - r) / r for a, r in zip(ours, ref)):.2e}, eager {max(abs(e - r) / r for e, r in zip(eager, ref)):.2e}")
