"""Nested DRO and its baselines for linear regression (numpy only), read top to bottom.

Nested objective (spec):  min_θ  min_{P̃: D_χ²(P̃‖P_n) ≤ η}  sup_Q [E_Q ℓ_θ − γ·OT cost]
1. inner, pessimistic OT step (penalty form, quadratic cost on x only): closed form per sample
       ℓ̃_i(θ) = sup_δ (y_i − θᵀ(x_i+δ))² − γ‖δ‖² = r_i² · γ / (γ − ‖θ‖²)     (‖θ‖² < γ);
2. outer, optimistic χ² step: the weights w ∈ simplex with D_χ²(w‖u) = (n/2)Σ(w_i − 1/n)² ≤ η
   that minimise Σ w_i ℓ̃_i; w_i ∝ (τ − ℓ̃_i)_+ with τ found by bisection;
3. Danskin gradient of F(θ) = s Σ w*_i r_i², s = 1/(1 − ‖θ‖²/γ), and Adam with a radial
   projection onto ‖θ‖² ≤ 0.95 γ.
The baselines are the same machinery with a different weighting mode / γ (WDRO: uniform weights;
χ²-DRO: pessimistic weights, γ = ∞; optimistic-χ² ablation: γ = ∞; OR-WDRO proxy: WDRO on the
samples left after a geometric trim), plus OLS, IRLS least absolute deviations (the common
initialisation) and scikit-learn's HuberRegressor.

Every batched routine works row by row on arrays of shape (B, n[, d]) with elementwise
operations and reductions along one axis only, so a run's numbers do not depend on which other
runs share its batch (results independent of sharding).
"""

from __future__ import annotations

import numpy as np

UNIFORM, OPTIMISTIC, PESSIMISTIC = 0, 1, 2
MODES = {"uniform": UNIFORM, "optimistic": OPTIMISTIC, "pessimistic": PESSIMISTIC}


# ---------------------------------------------------------------------------------------------
# 1. inner OT step: closed form for the squared loss
# ---------------------------------------------------------------------------------------------
def ot_factor(theta: np.ndarray, gamma) -> np.ndarray:
    """s = γ/(γ − ‖θ‖²) = 1/(1 − ‖θ‖²/γ) per row; 1 where γ = ∞ (no OT step).

    The maximiser of (r − θᵀδ)² − γ‖δ‖² is δ = −r θ/(γ − ‖θ‖²); plugging it in gives r² s.
    Every squared residual is multiplied by the same s: the OT step shrinks θ but does not
    change which samples look like outliers (the paper's geometry-invariance).
    """
    theta = np.atleast_2d(theta)
    gamma = np.broadcast_to(np.asarray(gamma, dtype=float), theta.shape[:1])
    sq = (theta * theta).sum(axis=-1)
    inv = np.where(np.isfinite(gamma), sq / np.where(np.isfinite(gamma), gamma, 1.0), 0.0)
    return 1.0 / (1.0 - inv)


def robust_losses(X, y, theta, gamma):
    """Per-sample robust losses ℓ̃ (B, n), residuals r (B, n) and the factor s (B,)."""
    r = y - (X * theta[:, None, :]).sum(axis=-1)
    s = ot_factor(theta, gamma)
    return s[:, None] * r * r, r, s


# ---------------------------------------------------------------------------------------------
# 2. outer χ² step: optimistic (cleaning) and pessimistic (Duchi-Namkoong) reweighting
# ---------------------------------------------------------------------------------------------
def chi2_divergence(w: np.ndarray) -> np.ndarray:
    """D_χ²(w‖uniform) = (n/2) Σ (w_i − 1/n)² per row."""
    n = w.shape[-1]
    return 0.5 * n * ((w - 1.0 / n) ** 2).sum(axis=-1)


def optimistic_chi2_weights(loss: np.ndarray, eta, iters: int = 60) -> np.ndarray:
    """argmin_{w ∈ simplex, D_χ²(w) ≤ η} Σ w_i loss_i for every row of loss (B, n).

    KKT: w_i = (τ − loss_i)_+ / Σ_j (τ − loss_j)_+, with τ the point where D_χ²(w(τ)) = η
    (D decreases in τ; uniform weights as τ → ∞). Bracket: lo = min loss (all mass on the
    argmin, D maximal) and hi = max(max loss, mean + sqrt(Var/(2η))) — at the second value all
    weights are positive and D = η exactly, so hi is always feasible. 60 bisection steps,
    vectorised over rows; the feasible end hi is returned. Large-loss samples get weight 0.
    """
    loss = np.atleast_2d(np.asarray(loss, dtype=float))
    n = loss.shape[-1]
    eta = np.broadcast_to(np.asarray(eta, dtype=float), loss.shape[:1])
    mean = loss.mean(axis=-1)
    var = ((loss - mean[:, None]) ** 2).mean(axis=-1)
    lo = loss.min(axis=-1)
    hi = np.maximum(loss.max(axis=-1), mean + np.sqrt(var / (2.0 * eta)))
    # all losses equal (Var = 0): any τ above them gives uniform weights (inside the ball)
    hi = np.maximum(hi, lo + 1e-12 * (1.0 + np.abs(lo)))
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        w = np.maximum(mid[:, None] - loss, 0.0)
        tot = w.sum(axis=-1)
        # D = (n/2)(Σ p² − 1/n) with p = w / Σw
        d = 0.5 * n * ((w * w).sum(axis=-1) / (tot * tot) - 1.0 / n)
        too_far = d > eta
        lo = np.where(too_far, mid, lo)
        hi = np.where(too_far, hi, mid)
    w = np.maximum(hi[:, None] - loss, 0.0)
    return w / w.sum(axis=-1, keepdims=True)


def pessimistic_chi2_weights(loss: np.ndarray, eta, iters: int = 60) -> np.ndarray:
    """argmax over the same χ² ball: weights ∝ (loss_i − τ)_+ (upweights high-loss samples;
    ≈ mean + sqrt(2η Var)). The optimistic problem of −loss."""
    return optimistic_chi2_weights(-np.asarray(loss, dtype=float), eta, iters)


def weights(loss, mode, eta, mask=None, iters: int = 60) -> np.ndarray:
    """Weights per row by mode (UNIFORM over the rows' mask, OPTIMISTIC or PESSIMISTIC χ²)."""
    loss = np.atleast_2d(loss)
    mode = np.broadcast_to(np.asarray(mode), loss.shape[:1])
    mask = np.ones(loss.shape, dtype=bool) if mask is None else mask
    out = mask / mask.sum(axis=-1, keepdims=True)
    opt, pes = mode == OPTIMISTIC, mode == PESSIMISTIC
    if (opt | pes).any():
        rows = opt | pes
        signed = np.where(pes[:, None], -loss, loss)[rows]
        eta_rows = np.broadcast_to(np.asarray(eta, dtype=float), loss.shape[:1])[rows]
        out = out.copy()
        out[rows] = optimistic_chi2_weights(signed, eta_rows, iters)
    return out


# ---------------------------------------------------------------------------------------------
# 3. objective, Danskin gradient and the Adam optimiser
# ---------------------------------------------------------------------------------------------
def objective_and_grad(X, y, theta, gamma, mode, eta, mask=None, iters: int = 60):
    """F(θ) = s Σ w*_i r_i² and ∇F = −2 s Xᵀ(w*∘r) + (2/γ) s² (Σ w*_i r_i²) θ per row.

    Danskin: w* is the optimum of the outer (convex, compact) weight problem, so the gradient
    treats it as fixed. γ = ∞ drops the second term (s = 1).
    """
    loss, r, s = robust_losses(X, y, theta, gamma)
    w = weights(loss, mode, eta, mask, iters)
    wr2 = (w * r * r).sum(axis=-1)
    gamma = np.broadcast_to(np.asarray(gamma, dtype=float), s.shape)
    inv_gamma = np.where(np.isfinite(gamma), 1.0 / np.where(np.isfinite(gamma), gamma, 1.0), 0.0)
    grad = (-2.0 * s[:, None] * (X * (w * r)[:, :, None]).sum(axis=1)
            + (2.0 * inv_gamma * s * s * wr2)[:, None] * theta)
    return s * wr2, grad, w


def project(theta: np.ndarray, gamma, frac: float = 0.95) -> np.ndarray:
    """Radial projection onto ‖θ‖² ≤ frac·γ (keeps the OT closed form valid)."""
    gamma = np.broadcast_to(np.asarray(gamma, dtype=float), theta.shape[:1])
    sq = (theta * theta).sum(axis=-1)
    cap = frac * gamma
    scale = np.where(sq > cap, np.sqrt(cap / np.maximum(sq, 1e-300)), 1.0)
    return theta * scale[:, None]


def fit_adam(X, y, theta0, gamma, mode, eta, mask=None, steps: int = 1500, lr: float = 0.02,
             betas=(0.9, 0.999), eps: float = 1e-8, record_every: int = 50, iters: int = 60,
             objective=None):
    """Adam on F for a batch of problems (rows). Returns θ (B, d), the final weights w* (B, n)
    and the objective recorded every ``record_every`` steps: {step: F (B,)}. ``objective``
    defaults to the squared-loss F above (logistic.objective_and_grad for the variant)."""
    objective = objective_and_grad if objective is None else objective
    theta = project(np.array(theta0, dtype=float), gamma)
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    b1, b2 = betas
    history = {}
    for t in range(1, steps + 1):
        f, g, _ = objective(X, y, theta, gamma, mode, eta, mask, iters)
        if (t - 1) % record_every == 0:
            history[t - 1] = f
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        mhat = m / (1 - b1 ** t)
        vhat = v / (1 - b2 ** t)
        theta = project(theta - lr * mhat / (np.sqrt(vhat) + eps), gamma)
    f, _, w = objective(X, y, theta, gamma, mode, eta, mask, iters)
    history[steps] = f
    return theta, w, history


# ---------------------------------------------------------------------------------------------
# closed-form baselines and the common robust initialisation
# ---------------------------------------------------------------------------------------------
def ols(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """ERM: ordinary least squares (numpy.linalg.lstsq), no intercept (centred data)."""
    return np.linalg.lstsq(X, y, rcond=None)[0]


def lad_irls(X: np.ndarray, y: np.ndarray, iters: int = 30, floor: float = 1e-6) -> np.ndarray:
    """Least absolute deviations by iteratively reweighted least squares (weights 1/|r|,
    floored), started at OLS: the common robust initialisation of every Adam-based method."""
    theta = ols(X, y)
    for _ in range(iters):
        r = y - X @ theta
        a = 1.0 / np.maximum(np.abs(r), floor)
        theta = np.linalg.solve(X.T @ (X * a[:, None]), X.T @ (a * y))
    return theta


def wdro_value(X, y, theta, gamma) -> float:
    """WDRO objective with uniform weights: mean(r²) · γ/(γ − ‖θ‖²) (closed form)."""
    r = y - X @ theta
    return float(np.mean(r * r) * gamma / (gamma - theta @ theta))


def geometric_keep(X: np.ndarray, y, frac: float = 0.15) -> np.ndarray:
    """OR-WDRO proxy's trim (geometry-coupled): keep all but the ``frac`` of samples with the
    largest standardised joint distance Σ_k ((z_k − median_k)/(1.4826 MAD_k))², z = (x, y).
    It removes outliers in y AND clean high-leverage points in x. y = None: z = x only
    (INFERRED for ±1 labels, whose MAD is 0)."""
    z = X if y is None else np.column_stack([X, y])
    med = np.median(z, axis=0)
    mad = 1.4826 * np.median(np.abs(z - med), axis=0)
    score = (((z - med) / np.maximum(mad, 1e-12)) ** 2).sum(axis=1)
    n_drop = int(round(frac * len(z)))
    keep = np.ones(len(z), dtype=bool)
    if n_drop:
        keep[np.argsort(-score, kind="stable")[:n_drop]] = False
    return keep


def huber(X: np.ndarray, y: np.ndarray, epsilon: float = 1.35) -> np.ndarray:
    """Classical robust M-estimator (context only): sklearn HuberRegressor(epsilon=1.35).
    INFERRED: fit_intercept=False, the same model class as every other method (data centred)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import HuberRegressor

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = HuberRegressor(epsilon=epsilon, fit_intercept=False, max_iter=500).fit(X, y)
    return np.asarray(model.coef_, dtype=float)
