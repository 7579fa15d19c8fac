"""The change head and the influence of a pseudo-label on the labelled loss.

LogisticHead: weighted logistic regression on features Phi with an intercept, objective

    J(theta) = sum_i w_i l(a_i, y_i; theta) / W + alpha / 2 |beta|^2,   a_i = [phi_i, 1],

W = sum_i w_i (labelled pixels weight 1, pseudo-labels 0.5), the intercept unpenalised (as in
scikit-learn's LogisticRegression, which it equals with C = 1 / (alpha W)), fitted with scipy's
L-BFGS. On random Fourier features this is kernel logistic regression (spec).

influence (Koh & Liang 2017): upweighting a training point z by eps (J + eps l(z)) moves the
optimum by -eps H^-1 grad l(z), so the mean labelled loss changes by eps I(z) with

    I(z) = - grad L_lab(theta)^T H^-1 grad l(z, y_hat; theta),

H the exact (D+1) x (D+1) Hessian of J. I(z) < 0: the pseudo-label helps the labelled data.

AFCDHead (INFERRED, small): logit = local(phi(z)) + g * global(phi(zbar)), g = sigmoid(s) a
learned scalar gate, both branches penalised by alpha, fitted jointly by L-BFGS.

MLPTrunk (full profile): a one-hidden-layer ReLU network trained with Adam; its hidden layer is
the feature map of a LogisticHead refitted exactly (last-layer influence).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg, optimize


def sigmoid(t):
    return 0.5 * (1.0 + np.tanh(0.5 * t))


def augment(phi: np.ndarray) -> np.ndarray:
    return np.hstack([phi, np.ones((len(phi), 1))])


class LogisticHead:
    def __init__(self, alpha=1e-3, gtol=1e-7, max_iter=1000):
        self.alpha, self.gtol, self.max_iter = float(alpha), float(gtol), int(max_iter)

    def _penalty(self, d):
        r = np.full(d, self.alpha)
        r[-1] = 0.0   # intercept unpenalised
        return r

    def objective(self, theta, a, y, w, norm):
        t = a @ theta
        pen = self._penalty(a.shape[1])
        loss = float(w @ (np.logaddexp(0.0, t) - y * t)) / norm + 0.5 * float(pen @ theta ** 2)
        grad = a.T @ (w * (sigmoid(t) - y)) / norm + pen * theta
        return loss, grad

    def fit(self, phi, y, w, norm=None):
        """``norm`` (default W = sum w) divides the data term; the brute-force influence test
        adds eps W-weighted copies of a point under the unchanged W."""
        a = augment(np.asarray(phi, dtype=float))
        y, w = np.asarray(y, dtype=float), np.asarray(w, dtype=float)
        norm = float(w.sum()) if norm is None else float(norm)
        res = optimize.minimize(self.objective, np.zeros(a.shape[1]), args=(a, y, w, norm),
                                jac=True, method="L-BFGS-B",
                                options={"maxiter": self.max_iter, "gtol": self.gtol,
                                         "ftol": 1e-15, "maxcor": 20})
        self.coef_ = res.x
        self.n_iter_ = int(res.nit)
        self.grad_norm_ = float(np.abs(res.jac).max())
        self._train = (a, w, norm)
        return self

    def decision(self, phi):
        return augment(phi) @ self.coef_

    def hessian(self):
        """Exact Hessian of J at the fitted theta (training data of the last fit)."""
        a, w, norm = self._train
        p = sigmoid(a @ self.coef_)
        return (a.T * (w * p * (1 - p))) @ a / norm + np.diag(self._penalty(a.shape[1]))

    def influence(self, phi_lab, y_lab, phi_cand, y_cand) -> np.ndarray:
        """I(z) of every candidate (phi_cand, pseudo-label y_cand) on the mean labelled loss."""
        al, ac = augment(phi_lab), augment(phi_cand)
        g_lab = al.T @ (sigmoid(al @ self.coef_) - y_lab) / len(al)
        s = linalg.cho_solve(linalg.cho_factor(self.hessian()), g_lab)
        return -((sigmoid(ac @ self.coef_) - y_cand) * (ac @ s))

    def labelled_loss(self, phi_lab, y_lab) -> float:
        t = augment(phi_lab) @ self.coef_
        return float(np.mean(np.logaddexp(0.0, t) - y_lab * t))


class AFCDHead:
    """Adaptive fusion (INFERRED, small): sigmoid(local(phi_l) + sigmoid(s) global(phi_g))."""

    def __init__(self, alpha=1e-3, gtol=1e-7, max_iter=1000):
        self.alpha, self.gtol, self.max_iter = float(alpha), float(gtol), int(max_iter)

    def _split(self, theta, d1):
        return theta[:d1], theta[d1:-1], theta[-1]

    def objective(self, theta, a1, a2, y, w, norm):
        t1, t2, s = self._split(theta, a1.shape[1])
        g = sigmoid(s)
        u = a2 @ t2
        t = a1 @ t1 + g * u
        r = w * (sigmoid(t) - y) / norm
        pen1, pen2 = t1.copy(), t2.copy()
        pen1[-1] = pen2[-1] = 0.0
        loss = (float(w @ (np.logaddexp(0.0, t) - y * t)) / norm
                + 0.5 * self.alpha * (pen1 @ t1 + pen2 @ t2))
        grad = np.concatenate([a1.T @ r + self.alpha * pen1, g * (a2.T @ r) + self.alpha * pen2,
                               [g * (1 - g) * float(u @ r)]])
        return loss, grad

    def fit(self, phi_local, phi_global, y, w):
        a1, a2 = augment(phi_local), augment(phi_global)
        y, w = np.asarray(y, dtype=float), np.asarray(w, dtype=float)
        x0 = np.zeros(a1.shape[1] + a2.shape[1] + 1)
        res = optimize.minimize(self.objective, x0, args=(a1, a2, y, w, float(w.sum())),
                                jac=True, method="L-BFGS-B",
                                options={"maxiter": self.max_iter, "gtol": self.gtol,
                                         "ftol": 1e-15, "maxcor": 20})
        self.coef_, self.n_iter_ = res.x, int(res.nit)
        self._d1 = a1.shape[1]
        self.gate_ = float(sigmoid(res.x[-1]))
        return self

    def decision(self, phi_local, phi_global):
        t1, t2, s = self._split(self.coef_, self._d1)
        return augment(phi_local) @ t1 + sigmoid(s) * (augment(phi_global) @ t2)


class MLPTrunk:
    """Full profile: z -> ReLU(z W + b) -> logit, trained by Adam on the weighted loss +
    alpha/2 |weights|^2; ``transform`` gives the hidden layer for a LogisticHead refit."""

    def __init__(self, hidden=64, steps=300, lr=1e-2, alpha=1e-3):
        self.hidden, self.steps = int(hidden), int(steps)
        self.lr, self.alpha = float(lr), float(alpha)

    def fit(self, z, y, w, rng: np.random.Generator):
        from icml26.npoptim import Adam

        d = z.shape[1]
        bound = 1.0 / np.sqrt(d)
        params = [rng.uniform(-bound, bound, (d, self.hidden)), np.zeros(self.hidden),
                  rng.uniform(-1 / np.sqrt(self.hidden), 1 / np.sqrt(self.hidden), self.hidden),
                  np.zeros(1)]
        opt = Adam(params, self.lr)
        norm = float(w.sum())
        for _ in range(self.steps):
            w1, b1, v, c = params
            h = np.maximum(z @ w1 + b1, 0.0)
            r = w * (sigmoid(h @ v + c) - y) / norm
            dh = np.outer(r, v) * (h > 0)
            opt.step([z.T @ dh + self.alpha * w1, dh.sum(0), h.T @ r + self.alpha * v,
                      np.array([r.sum()])])
        self.params_ = params
        return self

    def transform(self, z):
        w1, b1, _, _ = self.params_
        return np.maximum(z @ w1 + b1, 0.0)
