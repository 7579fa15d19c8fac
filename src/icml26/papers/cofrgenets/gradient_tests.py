"""The gradient job: correctness and stability of the continuant backward (torch).

(i) Random set: n coefficient vectors a_k ~ U[0.5, 2] (no poles). The custom backward in
    float32 is compared with the float64 analytic gradient (numpy, continued_fraction.
    analytic_grad_np) and with float64 autograd of the nested form; the custom backward in
    float64 is compared with float64 autograd of the nested form. A central finite-difference
    check (float64, step 1e-6) on the first ``fd_vectors`` vectors is reported too.
(ii) Stress set: n vectors with a_{D-1} = -1, a_D = 1 (so a_{D-1} a_D + 1 = 0 exactly: the
    nested form divides by an exact zero inside while K_{1:D} = a_1 a_2 + 1 != 0), the others
    ~ U[0.5, 2]. Fractions of vectors with any non-finite gradient entry, naive float32
    autograd and custom float32 backward; relative error of the custom one vs float64 analytic.

Relative error is elementwise |g - g_ref| / |g_ref|, maximised over all entries; where
g_ref = 0 exactly (the stress set has df/da_{D-2} = 0) the error is 0 if g = 0, else inf.
"""

from __future__ import annotations

import numpy as np
import torch

from .continued_fraction import analytic_grad_np, cf_continuant, cf_nested


def max_rel_err(g, ref) -> float:
    g = np.asarray(g, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    diff = np.abs(g - ref)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(ref != 0, diff / np.abs(ref), np.where(diff == 0, 0.0, np.inf))
    rel = np.where(np.isfinite(g), rel, np.inf)
    return float(rel.max()) if rel.size else float("nan")


def autograd_grad(fn, a: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray]:
    """(f, df/da) of fn over coefficient columns a (D, n) in the given dtype, via backward."""
    t = torch.tensor(a, dtype=dtype, requires_grad=True)
    f = fn(t)
    f.sum().backward()
    return f.detach().double().numpy(), t.grad.double().numpy()


def finite_difference(a: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences of the nested form in float64 (numpy), a of shape (D, n)."""
    def f(x):
        v = x[-1]
        for i in range(x.shape[0] - 2, -1, -1):
            v = x[i] + 1.0 / v
        return 1.0 / v

    out = np.empty_like(a, dtype=np.float64)
    for k in range(a.shape[0]):
        up, down = a.copy(), a.copy()
        up[k] += h
        down[k] -= h
        out[k] = (f(up) - f(down)) / (2 * h)
    return out


def random_set(rng: np.random.Generator, n: int, depth: int) -> np.ndarray:
    """a_k ~ U[0.5, 2], rounded to float32 (the float64 references see the same numbers)."""
    return rng.uniform(0.5, 2.0, size=(depth, n)).astype(np.float32).astype(np.float64)


def stress_set(rng: np.random.Generator, n: int, depth: int) -> np.ndarray:
    """a_{D-1} = -1, a_D = 1 exactly, the others ~ U[0.5, 2] (float32-representable)."""
    a = random_set(rng, n, depth)
    a[depth - 2] = -1.0
    a[depth - 1] = 1.0
    return a


def nonfinite_fraction(grad: np.ndarray) -> float:
    """Fraction of vectors (columns) with any non-finite gradient entry."""
    return float((~np.isfinite(grad)).any(axis=0).mean())


def run_gradient_tests(rng: np.random.Generator, n: int, depth: int,
                       fd_vectors: int = 100) -> dict[str, float]:
    if depth < 3:
        raise ValueError("the stress set needs depth >= 3")
    out: dict[str, float] = {}
    # (i) random set, no poles
    a = random_set(rng, n, depth)
    ref = analytic_grad_np(a)
    _, g_custom32 = autograd_grad(cf_continuant, a, torch.float32)
    _, g_custom64 = autograd_grad(cf_continuant, a, torch.float64)
    _, g_naive32 = autograd_grad(cf_nested, a, torch.float32)
    f_nested64, g_naive64 = autograd_grad(cf_nested, a, torch.float64)
    f_custom64, _ = autograd_grad(cf_continuant, a, torch.float64)
    out["rand_custom32_vs_analytic64"] = max_rel_err(g_custom32, ref)
    out["rand_custom32_vs_autograd64"] = max_rel_err(g_custom32, g_naive64)
    out["rand_custom64_vs_autograd64"] = max_rel_err(g_custom64, g_naive64)
    out["rand_custom64_vs_analytic64"] = max_rel_err(g_custom64, ref)
    out["rand_naive32_vs_analytic64"] = max_rel_err(g_naive32, ref)
    out["rand_forward64_rel_diff"] = max_rel_err(f_custom64, f_nested64)
    m = min(fd_vectors, n)
    out["rand_custom64_vs_fd"] = max_rel_err(g_custom64[:, :m], finite_difference(a[:, :m]))
    # (ii) stress set: exact internal zero of the nested form
    s = stress_set(rng, n, depth)
    ref_s = analytic_grad_np(s)
    _, g_naive_s = autograd_grad(cf_nested, s, torch.float32)
    _, g_custom_s = autograd_grad(cf_continuant, s, torch.float32)
    out["stress_naive32_nonfinite_frac"] = nonfinite_fraction(g_naive_s)
    out["stress_custom32_nonfinite_frac"] = nonfinite_fraction(g_custom_s)
    out["stress_custom32_vs_analytic64"] = max_rel_err(g_custom_s, ref_s)
    out["grad_vectors"] = float(n)
    out["grad_depth"] = float(depth)
    return out
