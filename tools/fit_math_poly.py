#!/usr/bin/env python3
"""Derives the minimax polynomial coefficients of erf in backends/cpu/codegen/vector_math.cc.

The other functions use Cephes' published single-precision coefficients; erf's are ours:
  erf-small   erf(a) = a (c0 + t Q(t)), t = a^2, a in [0, 1], c0 = 2/sqrt(pi) kept exact
              (the code carries it as a float head + tail), Q of degree 5 (6 coefficients)
  erfc-big    erf(a) = 1 - exp(-a^2) R(a - 1), a in [1, 3.92] (erf rounds to 1 above),
              R of degree 9, fitted for the absolute error of erf in units of its ulp
The fit is Lawson's iteratively reweighted least squares (it converges to the minimax
solution) on Chebyshev nodes against mpmath; each coefficient is rounded to float in turn
and the remaining ones refitted, so the float coefficients are near-minimax themselves.
The printed error includes a float32 Horner evaluation. Run in the toolbox (numpy, mpmath):
  tools/toolbox run python3 tools/fit_math_poly.py erf-small
  tools/toolbox run python3 tools/fit_math_poly.py erfc-big
  tools/toolbox run python3 tools/fit_math_poly.py erf64    (f64 erf's series, not fitted)
"""
import sys

import mpmath as mp
import numpy as np

mp.mp.dps = 40


def cheb(a, b, n):
    k = np.arange(n)
    return (a + b) / 2 + (b - a) / 2 * np.cos(np.pi * (k + 0.5) / n)


def lawson(V, target, weight, fixed):
    """Coefficients minimizing max |V c - target| * weight, the first len(fixed) given."""
    k = len(fixed)
    r = target - (V[:, :k] @ np.array(fixed) if k else 0)
    A = V[:, k:] * weight[:, None]
    f = r * weight
    w = np.ones(len(f))
    for _ in range(150):
        sw = np.sqrt(w)
        c, *_ = np.linalg.lstsq(A * sw[:, None], f * sw, rcond=None)
        e = np.abs(A @ c - f) + 1e-300
        w = w * e
        w /= w.sum()
    return list(fixed) + list(c)


def sequential(V, target, weight, fixed):
    """Rounds coefficient i to float, refits i+1.., for i past the fixed ones."""
    fixed = list(fixed)
    for i in range(len(fixed), V.shape[1]):
        fixed.append(float(np.float32(lawson(V, target, weight, fixed)[i])))
    return fixed


def horner32(c, t):
    t = t.astype(np.float32)
    acc = np.float32(c[-1]) * np.ones_like(t)
    for x in reversed(c[:-1]):
        acc = (acc * t + np.float32(x)).astype(np.float32)
    return acc.astype(np.float64)


def show(c):
    print("coefficients, highest degree first:")
    print(", ".join("%.9ef" % x for x in reversed(c)))


def erf_small(deg=6):
    a = cheb(1e-6, 1.0, 3000)
    t = a * a
    c0 = float(2 / mp.sqrt(mp.pi))
    g = np.array([float(mp.erf(mp.mpf(x)) / x) for x in a])
    V = np.vander(t, deg + 1, increasing=True)
    c = sequential(V, g, 1 / g, [c0])
    q = horner32(c[1:], t)
    print("max relative error of erf/a (float Q, exact c0): %.3g (%.3f ulp)" % (
        np.max(np.abs(c0 + t * q - g) / g), np.max(np.abs(c0 + t * q - g) / g) / 2**-24))
    hi = np.float32(c0)
    print("c0 = %.9ef + %.9ef" % (hi, np.float32(c0 - float(hi))))
    show(c[1:])


def erfc_big(lo=1.0, hi=3.92, deg=9):
    a = cheb(lo, hi, 3000)
    g = np.array([float(mp.erfc(mp.mpf(x)) * mp.exp(mp.mpf(x) ** 2)) for x in a])
    erfv = np.array([float(mp.erf(mp.mpf(x))) for x in a])
    ex = np.exp(-a * a)
    u = a - lo
    V = np.vander(u, deg + 1, increasing=True)
    c = sequential(V, g, ex / erfv, [])
    p = horner32(c, u)
    print("max error of erf from R (float Horner): %.3f ulp" % (np.max(np.abs(p - g) * ex / erfv) / 2**-24))
    show(c)




def erf64():
    """f64 erf: Taylor coefficients of erf(a)/a - 2/sqrt(pi) below 0.75 (in t = a^2) and the
    32-point Chebyshev interpolant of erfcx(a) = e^(a^2) erfc(a) on [0.75, 6], as monomials."""
    mp.mp.dps = 50
    c0 = 2 / mp.sqrt(mp.pi)
    print("c0 = %r + %r" % (float(c0), float(c0 - mp.mpf(float(c0)))))
    q = [c0 * (-1) ** n / (mp.factorial(n) * (2 * n + 1)) for n in range(1, 17)]
    print("Q (t^0 first):", ", ".join(repr(float(v)) for v in q))
    lo, hi, n = mp.mpf("0.75"), mp.mpf(6), 32
    nodes = [mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]
    fx = [mp.erfc(a) * mp.exp(a * a) for a in [(hi - lo) / 2 * x + (hi + lo) / 2 for x in nodes]]
    cs = [2 * sum(fx[k] * mp.cos(mp.pi * j * (k + mp.mpf(1) / 2) / n) for k in range(n)) / n for j in range(n)]
    cs[0] /= 2  # the series is sum c_k T_k
    # As a polynomial in u (Horner is half Clenshaw's dependency chain): sum |a_k| = 0.507,
    # about max erfcx = 0.506, so no cancellation where erfc matters (u near -1).
    t = [[mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]]
    for k in range(2, n):
        up = [mp.mpf(0)] + [2 * v for v in t[k - 1]]
        t.append([x - y for x, y in zip(up, t[k - 2] + [mp.mpf(0)] * (len(up) - len(t[k - 2])))])
    mono = [sum(cs[k] * t[k][i] for k in range(i, n) if i < len(t[k])) for i in range(n)]
    print("sum |a_k| = %.4f" % float(sum(abs(v) for v in mono)))
    print("erfcx in u = (2a - 6.75) / 5.25, highest degree first:")
    print(", ".join(repr(float(v)) for v in reversed(mono)))


if __name__ == "__main__":
    {"erf-small": erf_small, "erfc-big": erfc_big, "erf64": erf64}[sys.argv[1]]()
