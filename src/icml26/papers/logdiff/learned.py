"""The learned (hybrid) variant: a conditional denoiser and noisy-input classifiers, trained in
the pipeline, one independent model per seed stacked on a leading axis (icml26.stacked).

- Denoiser eps_theta(x_t, t, y): MLP on [x (2), sinusoidal t (16), one-hot of each attribute in
  {0, 1, unknown} (3 per attribute)] -> H -> H -> 2, SiLU; eps-prediction MSE; each attribute
  independently replaced by "unknown" with probability p_unknown, so one network gives the
  unconditional, partial and full conditionals. s = -eps / sqrt(1 - abar).
- Component classifier q_psi(c | x_t, t): [x, t-embedding] -> H -> H -> K, cross-entropy.
  Posteriors of any attribute event are sums of its components' probabilities (hybrid
  guidance: no classifier gradient is needed).
- Formula classifier (baseline 5, monolithic guidance): [x, t-embedding] -> H -> H -> F, one
  logit per formula of the learned settings, binary cross-entropy on 1{phi_j(c)}; its guidance
  is grad_x log sigmoid(logit_j). INFERRED: the spec's "one classifier per formula" is one
  network with one output per formula (a shared trunk), to save a training pass.
All three are trained on the same noisy batches (x_0 from a pool of n_pool draws of D1 per seed,
t ~ U(t_end, 1), fresh noise per step; INFERRED: the spec's "50k samples per seed,
regenerated on the fly"), with Adam. Random numbers come from numpy generators per seed (CPU),
then move to the device.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from icml26 import stacked
from icml26.seeding import derive_seed

from .mixture import UNKNOWN, Mixture

T_EMB = 16


def _abar(t: torch.Tensor) -> torch.Tensor:
    return torch.exp(-(0.1 * t + 9.95 * t * t))       # = mixture.alpha_bar


def time_embedding(t: torch.Tensor) -> torch.Tensor:
    """Sinusoidal embedding of t in [0, 1] read as a step index 1000 t (DDPM-style)."""
    half = T_EMB // 2
    freqs = torch.exp(-np.log(10000.0) * torch.arange(half, dtype=torch.float32,
                                                      device=t.device) / half)
    arg = 1000.0 * t[..., None] * freqs
    return torch.cat([torch.sin(arg), torch.cos(arg)], dim=-1)


def attribute_onehot(values: np.ndarray) -> np.ndarray:
    """(..., n_attr) of 0 / 1 / UNKNOWN -> (..., 3 n_attr) one-hot (slot 2 = unknown)."""
    idx = np.where(values == UNKNOWN, 2, values)
    return np.eye(3, dtype=np.float32)[idx].reshape(*values.shape[:-1], -1)


def _mlp(h1, layers):
    h = F.silu(h1)
    h = F.silu(torch.baddbmm(layers[1][1], h, layers[1][0]))
    return torch.baddbmm(layers[2][1], h, layers[2][0])


def _first(layers, x, temb, y=None):
    """First layer on the parts [x, temb, y] of the input (the same function as on their
    concatenation; the parts are added so that x and t are shared across conditions)."""
    w, b = layers[0]
    h = torch.bmm(x, w[:, :2]) + torch.bmm(temb, w[:, 2:2 + T_EMB]) + b
    if y is not None:
        h = h + torch.bmm(y, w[:, 2 + T_EMB:])
    return h


class Trained:
    """The three stacked networks of the seeds ``seeds`` (model r belongs to seeds[r])."""

    def __init__(self, den, clf, fclf, device, n_attr: int):
        self.den, self.clf, self.fclf = den, clf, fclf
        self.device, self.n_attr = device, n_attr


def train(mix: Mixture, formulas_sat: np.ndarray, seeds, p: dict, t_end: float, paper: str,
          device):
    """Train the networks of every seed; returns (Trained, per-seed records)."""
    R, H, K, n_attr = len(seeds), int(p["hidden"]), mix.K, mix.n_attr
    F_ = max(formulas_sat.shape[0], 1)
    init = lambda name, sizes: stacked.uniform_init(  # noqa: E731
        sizes, [derive_seed(paper, name, s) for s in seeds], device=device)
    den = init("denoiser-init", [2 + T_EMB + 3 * n_attr, H, H, 2])
    clf = init("classifier-init", [2 + T_EMB, H, H, K])
    fclf = init("formula-classifier-init", [2 + T_EMB, H, H, F_])
    params = stacked.parameters(den) + stacked.parameters(clf) + stacked.parameters(fclf)
    opt = torch.optim.Adam(params, lr=float(p["lr"]), foreach=True)
    fsat = np.asarray(formulas_sat, dtype=np.float32).reshape(-1, K).T     # (K, F)
    fsat = torch.as_tensor(fsat if fsat.shape[1] else np.zeros((K, 1), np.float32),
                           device=device)
    gens = [np.random.default_rng(derive_seed(paper, "learned-train", s)) for s in seeds]
    pools = [mix.sample(g, int(p["n_pool"])) for g in gens]
    pool_x = np.stack([x for x, _ in pools]).astype(np.float32)
    pool_c = np.stack([c for _, c in pools])
    B, steps, chunk = int(p["batch"]), int(p["train_steps"]), 250
    drop = float(p["p_unknown"])
    record_every = max(steps // 20, 1)
    records = []
    rows = np.arange(R)[:, None]
    for start in range(0, steps, chunk):
        n = min(chunk, steps - start)
        draws = [(g.integers(0, pool_x.shape[1], size=(n, B)), g.uniform(t_end, 1.0, (n, B)),
                  g.standard_normal((n, B, 2)), g.uniform(size=(n, B, n_attr)) < drop)
                 for g in gens]
        # the chunk's batches of every seed at once: (n, R, B, ...)
        idx = np.stack([d[0] for d in draws], axis=1)
        c_all = pool_c[rows[None], idx]
        x0_all = torch.as_tensor(pool_x[rows[None], idx], device=device)
        t_all = torch.as_tensor(np.stack([d[1] for d in draws], 1).astype(np.float32),
                                device=device)
        eps_all = torch.as_tensor(np.stack([d[2] for d in draws], 1).astype(np.float32),
                                  device=device)
        y_all = torch.as_tensor(attribute_onehot(np.where(np.stack([d[3] for d in draws], 1),
                                                          UNKNOWN, mix.attrs[c_all])),
                                device=device)
        c_all = torch.as_tensor(c_all, device=device)
        for k in range(n):
            t, eps, x0, y, ct = t_all[k], eps_all[k], x0_all[k], y_all[k], c_all[k]
            ab = _abar(t)[..., None]
            xt = torch.sqrt(ab) * x0 + torch.sqrt(1 - ab) * eps
            temb = time_embedding(t)
            den_loss = ((_mlp(_first(den, xt, temb, y), den) - eps) ** 2).mean(dim=(1, 2))
            logits = _mlp(_first(clf, xt, temb), clf)
            clf_loss = F.cross_entropy(logits.reshape(-1, K), ct.reshape(-1),
                                       reduction="none").reshape(R, B).mean(1)
            flog = _mlp(_first(fclf, xt, temb), fclf)
            f_loss = F.binary_cross_entropy_with_logits(
                flog, fsat[ct], reduction="none").mean(dim=(1, 2))
            opt.zero_grad(set_to_none=True)
            (den_loss.sum() + clf_loss.sum() + f_loss.sum()).backward()
            opt.step()
            step = start + k + 1
            if step % record_every == 0 or step == steps:
                acc = (logits.argmax(-1) == ct).float().mean(1)
                records.append((step, den_loss.detach().cpu().numpy().astype(np.float64),
                                clf_loss.detach().cpu().numpy().astype(np.float64),
                                acc.cpu().numpy().astype(np.float64)))
    return Trained(den, clf, fclf, device, n_attr), records


class LearnedAtoms:
    """Scores from the conditional denoiser and posteriors from the component classifier at
    rows x (S, m, 2) (model r for rows x[r]), time t; the hybrid guidance's atoms."""

    def __init__(self, nets: Trained, mix: Mixture, x: np.ndarray, t: float):
        self.nets, self.mix = nets, mix
        dev = nets.device
        self.x = torch.as_tensor(x.astype(np.float32), device=dev)
        S = self.x.shape[0]
        tt = torch.full((S, 1), float(t), device=dev)
        self.temb = time_embedding(tt)                              # (S, 1, 16)
        self.sd = float(np.sqrt(1.0 - _abar(torch.tensor(float(t))).item()))
        with torch.no_grad():
            self.base = _first(nets.den, self.x, self.temb)
            self.logq = torch.log_softmax(_mlp(_first(nets.clf, self.x, self.temb), nets.clf),
                                          -1).cpu().numpy().astype(np.float64)
        self._cache: dict = {}

    def score(self, event) -> np.ndarray:
        key = tuple(event)
        if key not in self._cache:
            den = self.nets.den
            y = torch.as_tensor(attribute_onehot(np.asarray(key)[None, None]),
                                device=self.nets.device).expand(self.x.shape[0], 1, -1)
            with torch.no_grad():
                eps = _mlp(self.base + torch.bmm(y, den[0][0][:, 2 + T_EMB:]), den)
            self._cache[key] = -eps.cpu().numpy().astype(np.float64) / self.sd
        return self._cache[key]

    def logpost(self, event) -> np.ndarray:
        sub = self.logq[..., self.mix.event_mask(event)]
        m = sub.max(-1, keepdims=True)
        return m[..., 0] + np.log(np.exp(sub - m).sum(-1))

    def formula_grad(self, j: int) -> np.ndarray:
        """grad_x log sigmoid(logit_j(x, t)) of the formula classifier (monolithic)."""
        fclf = self.nets.fclf
        with torch.enable_grad():
            x = self.x.clone().requires_grad_(True)
            out = F.logsigmoid(_mlp(_first(fclf, x, self.temb), fclf)[..., j]).sum()
            (g,) = torch.autograd.grad(out, x)
        return g.cpu().numpy().astype(np.float64)
