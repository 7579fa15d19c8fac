"""Staged training, its counterfactuals, and the stage-effect estimators (torch, float64).

Training (spec): stages s = 1..S in order, each with its own data, its own optimiser instance
(state reset at the stage start) and its own schedule. SGD with momentum and decoupled decay:
    v_{t+1} = mu v_t + g_t,   theta_{t+1} = (1 - eta_t lambda_s) theta_t - eta_t v_{t+1};
the full profile's Adam variant is AdamW (decoupled decay, bias-corrected moments).

Ground truth: Delta_s f = f(theta_T) - f(theta_T^(-s)), theta_T^(-s) from skipping stage s
(stage s + 1 starts from theta_end(s - 1)) with the same later data order and schedules.

Estimators (no retraining; all read the full run only):
- E2 (main): delta_0 = -(theta_end(s) - theta_start(s)) pushed through the linearised later
  dynamics with Hessian-vector products on the stored minibatches at the stored theta_t,
    dv_{t+1} = mu dv_t + H_t delta_t,  delta_{t+1} = (1 - eta_t lambda) delta_t - eta_t dv_{t+1},
  dv reset at each later stage start; Delta_s f ~ -grad f(theta_T) . delta_T. With AdamW the
  preconditioner P_t = 1 / (sqrt(v_hat_t) + eps) of the full run is frozen:
    dm_{t+1} = b1 dm_t + (1 - b1) H_t delta_t,
    delta_{t+1} = (1 - eta_t lambda) delta_t - eta_t P_t dm_{t+1} / (1 - b1^(t+1)).
  The propagation runs online, step by step with the full run, so no trajectory is stored.
- E1: grad f(theta_T) . D_{>s} (theta_end(s) - theta_start(s)), D_{>s} = prod_{later t}
  (1 - eta_t lambda_t) (computed from the schedules by the caller).
- B1 naive delta: grad f(theta_T) . (theta_end(s) - theta_start(s)).
- B2 TracIn-style: -sum_{t in s} eta_t grad f(theta_T) . g_t (raw minibatch gradients).
- B3 loss difference: f(theta_end(s)) - f(theta_start(s)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from icml26.stacked import uniform_init

DTYPE = torch.float64


class FlatMLP:
    """d_in -> hidden (tanh) -> n_out, each model's parameters one flat row of theta (R, P):
    W1 (d_in, hidden), b1, W2 (hidden, n_out), b2."""

    def __init__(self, d_in: int, hidden: int, n_out: int = 2):
        self.d_in, self.hidden, self.n_out = int(d_in), int(hidden), int(n_out)
        self.sizes = [d_in * hidden, hidden, hidden * n_out, n_out]
        self.n_params = int(sum(self.sizes))

    def split(self, theta):
        R = theta.shape[0]
        a, b, c, _ = np.cumsum(self.sizes)
        return (theta[:, :a].reshape(R, self.d_in, self.hidden),
                theta[:, a:b].reshape(R, 1, self.hidden),
                theta[:, b:c].reshape(R, self.hidden, self.n_out),
                theta[:, c:].reshape(R, 1, self.n_out))

    def logits(self, theta, X):
        W1, b1, W2, b2 = self.split(theta)
        return torch.baddbmm(b2, torch.tanh(torch.baddbmm(b1, X, W1)), W2)

    def example_losses(self, theta, X, y):
        """Cross-entropy of every example: (R, n)."""
        logp = torch.log_softmax(self.logits(theta, X), dim=-1)
        return -logp.gather(-1, y.unsqueeze(-1)).squeeze(-1)

    def init(self, seeds, device) -> torch.Tensor:
        """nn.Linear's default U(-1/sqrt(fan_in), 1/sqrt(fan_in)) per model, drawn on CPU
        generators (icml26.stacked.uniform_init), flattened, float64, moved to ``device``."""
        layers = uniform_init([self.d_in, self.hidden, self.n_out], [int(s) for s in seeds])
        flat = [t.detach().reshape(len(seeds), -1) for layer in layers for t in layer]
        return torch.cat(flat, 1).to(dtype=DTYPE, device=device)


def minibatch_loss(net, theta, X, y):
    """Sum over models of each model's mean minibatch loss (each model gets its own gradient)."""
    return net.example_losses(theta, X, y).mean(1).sum()


def grad(net, theta, X, y):
    th = theta.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(minibatch_loss(net, th, X, y), th)
    return g


def hvp(net, theta, X, y, v):
    """H v per model (double backward), H the Hessian of the mean minibatch loss at theta."""
    th = theta.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(minibatch_loss(net, th, X, y), th, create_graph=True)
    (hv,) = torch.autograd.grad((g * v).sum(), th)
    return hv


@dataclass
class Stage:
    """One stage for R seeds: pools X (R, n, d) / y (R, n), the clean resample Xc / yc of the
    same shape, minibatch order (R, steps, B), per-step learning rates (steps,) and decay."""

    X: torch.Tensor
    y: torch.Tensor
    Xc: torch.Tensor
    yc: torch.Tensor
    batches: torch.Tensor
    eta: np.ndarray
    wd: float


class Optimiser:
    """SGD with momentum ('sgdm') or AdamW ('adamw'), decoupled weight decay, state reset per
    stage; ``step`` returns the new theta."""

    def __init__(self, kind: str, shape, like, momentum=0.9, betas=(0.9, 0.999), eps=1e-8):
        self.kind, self.mu, self.betas, self.eps = kind, float(momentum), betas, float(eps)
        self.v = torch.zeros(shape, dtype=like.dtype, device=like.device)
        self.m2 = torch.zeros_like(self.v) if kind == "adamw" else None
        self.t = 0
        self.precond = None    # AdamW: 1 / (sqrt(v_hat) + eps) of the last step

    def step(self, theta, g, eta, wd):
        self.t += 1
        if self.kind == "sgdm":
            self.v = self.mu * self.v + g
            return (1.0 - eta * wd) * theta - eta * self.v
        b1, b2 = self.betas
        self.v = b1 * self.v + (1.0 - b1) * g
        self.m2 = b2 * self.m2 + (1.0 - b2) * g * g
        self.precond = 1.0 / (torch.sqrt(self.m2 / (1.0 - b2**self.t)) + self.eps)
        return (1.0 - eta * wd) * theta - eta * self.precond * self.v / (1.0 - b1**self.t)


def train_stages(net, theta0, stages: list[Stage], opt: dict, propagate: bool = True) -> dict:
    """The full run, every counterfactual without one stage and every run with one stage
    cleaned, for R seeds at once, plus E2's propagated perturbations (``propagate``).

    Branches fork from the full run: at the start of stage k, "minus k" keeps theta (it skips
    stage k) and "clean k" runs stage k on the clean resample; both then run every later stage
    on its ordinary data in the same order. Returns tensors: start / end (R, S, P) of the full
    run's stages, G (R, S, P) = sum_{t in s} eta_t g_t, final (R, P), minus / clean (R, S, P),
    deltas (R, S, P) = E2's delta_T per stage, train_loss (S, R) mean minibatch loss per stage.
    """
    R, P = theta0.shape
    S = len(stages)
    full = theta0.clone()
    minus, clean = [], []
    start, end, G, losses = [], [], [], []
    deltas = theta0.new_zeros((0, P))         # row s * R + r: perturbation of stage s, seed r
    seeds = torch.arange(R, device=theta0.device)
    for k, st in enumerate(stages):
        start.append(full.clone())
        minus.append(full.clone())            # skips stage k: unchanged through it
        clean.append(full.clone())
        # active branches: full, clean 0..k-1 and minus 0..k-1 (ordinary data), clean k
        theta = torch.cat([full] + clean[:k] + minus[:k] + [clean[k]])
        A = theta.shape[0] // R
        seed_of = seeds.repeat(A)
        src = seed_of + R * torch.cat([torch.zeros((A - 1) * R, dtype=torch.long,
                                                   device=theta0.device),
                                       torch.ones(R, dtype=torch.long, device=theta0.device)])
        Xpool, ypool = torch.cat([st.X, st.Xc]), torch.cat([st.y, st.yc])
        optim = Optimiser(opt["kind"], theta.shape, theta, opt.get("momentum", 0.9),
                          tuple(opt.get("betas", (0.9, 0.999))), opt.get("eps", 1e-8))
        n_pert = deltas.shape[0] // R
        dv = torch.zeros_like(deltas)
        Gk = torch.zeros_like(full)
        run_loss = torch.zeros(R, dtype=DTYPE, device=theta0.device)
        steps = st.batches.shape[1]
        for t in range(steps):
            idx = st.batches[seed_of, t]
            Xb, yb = Xpool[src[:, None], idx], ypool[src[:, None], idx]
            th = theta.detach().requires_grad_(True)
            ex = net.example_losses(th, Xb, yb).mean(1)
            (g,) = torch.autograd.grad(ex.sum(), th)
            run_loss += ex[:R].detach()
            eta = float(st.eta[t])
            if propagate and n_pert:
                Hd = hvp(net, theta[:R].repeat(n_pert, 1), Xb[:R].repeat(n_pert, 1, 1),
                         yb[:R].repeat(n_pert, 1), deltas)
            theta = optim.step(theta, g, eta, st.wd)
            Gk += eta * g[:R]
            if propagate and n_pert:
                if opt["kind"] == "sgdm":
                    dv = optim.mu * dv + Hd
                    deltas = (1.0 - eta * st.wd) * deltas - eta * dv
                else:
                    b1 = optim.betas[0]
                    dv = b1 * dv + (1.0 - b1) * Hd
                    pre = optim.precond[:R].repeat(n_pert, 1)
                    deltas = (1.0 - eta * st.wd) * deltas - eta * pre * dv / (1.0 - b1**optim.t)
        chunks = list(theta.split(R))
        full = chunks[0]
        clean[:k] = chunks[1:1 + k]
        minus[:k] = chunks[1 + k:1 + 2 * k]
        clean[k] = chunks[-1]
        end.append(full.clone())
        G.append(Gk)
        losses.append(run_loss / steps)
        deltas = torch.cat([deltas, -(end[k] - start[k])])
    stack = lambda xs: torch.stack(xs, 1)  # noqa: E731  (list over stages -> (R, S, P))
    return {"start": stack(start), "end": stack(end), "G": stack(G), "final": full,
            "minus": stack(minus), "clean": stack(clean),
            "deltas": deltas.reshape(S, R, P).transpose(0, 1), "train_loss": torch.stack(losses)}


def behaviours(net, theta, X, y, W):
    """f_b(theta) = sum_i W[b, i] loss_i: theta (R, P), test X (R, n, d), W (R, nb, n) ->
    (R, nb)."""
    return torch.einsum("rn,rbn->rb", net.example_losses(theta, X, y), W)


def behaviour_grads(net, theta, X, y, W):
    """grad_theta f_b(theta) for every behaviour: (R, nb, P)."""
    R, nb = W.shape[:2]
    th = theta.detach().repeat_interleave(nb, 0).requires_grad_(True)
    ex = net.example_losses(th, X.repeat_interleave(nb, 0), y.repeat_interleave(nb, 0))
    (g,) = torch.autograd.grad((ex * W.reshape(R * nb, -1)).sum(), th)
    return g.reshape(R, nb, -1)


def group_accuracy(net, theta, X, y, group):
    """(accuracy on group 0 = aligned, accuracy on group 1 = counter): each (R,)."""
    with torch.no_grad():
        ok = (net.logits(theta, X).argmax(-1) == y).to(DTYPE)
    g = group.to(DTYPE)
    return ((ok * (1 - g)).sum(1) / (1 - g).sum(1), (ok * g).sum(1) / g.sum(1))


def decay_after(etas: list[np.ndarray], wds: list[float]) -> np.ndarray:
    """D_{>s} = prod over every step of the stages after s of (1 - eta_t lambda): (S,)."""
    per_stage = np.array([np.prod(1.0 - np.asarray(e) * w) for e, w in zip(etas, wds,
                                                                           strict=True)])
    return np.array([np.prod(per_stage[s + 1:]) for s in range(len(per_stage))])


def estimates(net, run: dict, X, y, W, decay: np.ndarray) -> dict:
    """Every estimator's stage effects (R, S, nb) and the ground truth, from ``train_stages``'
    output, test data X (R, n, d), y (R, n) and behaviour weights W (R, nb, n)."""
    R, S, P = run["start"].shape
    gf = behaviour_grads(net, run["final"], X, y, W)                       # (R, nb, P)
    dtheta = run["end"] - run["start"]
    with torch.no_grad():
        b1 = torch.einsum("rbp,rsp->rsb", gf, dtheta)
        out = {
            "naive-delta": b1,
            "e1-decay-delta": torch.as_tensor(decay, dtype=DTYPE, device=b1.device)[None, :,
                                                                                   None] * b1,
            "tracin": -torch.einsum("rbp,rsp->rsb", gf, run["G"]),
            "e2-trajectory": -torch.einsum("rbp,rsp->rsb", gf, run["deltas"]),
        }
        f = lambda th: behaviours(net, th.reshape(R * S, P), X.repeat_interleave(S, 0),  # noqa
                                  y.repeat_interleave(S, 0), W.repeat_interleave(S, 0)
                                  ).reshape(R, S, -1)
        out["loss-diff"] = f(run["end"]) - f(run["start"])
        f_final = behaviours(net, run["final"], X, y, W)
        out["true"] = f_final[:, None, :] - f(run["minus"])
    return {k: v.cpu().numpy() for k, v in out.items()}
