"""DiLoCo / MuLoCo and their data-parallel baselines, simulated exactly in one process (torch).

One ``Plan`` is one run: a method, its number of workers K, the initial model, and the window
start positions of every worker at every inner step. ``train_plans`` trains several plans
side by side (their replicas stacked in one ``Fleet``, see fleet.py); each plan only ever
touches its own replicas, so the result is the same as training it alone.

DiLoCo round r (Douillard et al. 2023), global parameters θ, K workers, H inner steps:
  for k = 1..K: θ_k <- θ; H steps of the inner optimizer on worker k's own batches
                (each worker's inner-optimizer state persists across rounds)
  Δ = (1/K) Σ_k (θ - θ_k)                                     (pseudogradient)
  outer Nesterov SGD: m <- μ m + Δ;  θ <- θ - η_out (Δ + μ m)
(η_out, μ) per method, from the authors' configs (see the paper config); torchft's
torch.optim.SGD(nesterov=True, maximize=True) on local - global is the same step.
MuLoCo is the same loop with Muon (hidden matrices; AdamW for embeddings/head/LayerNorm) as the
inner optimizer. DP-AdamW / DP-Muon are one replica trained on the full global batch (K = 1, no
outer step).

Directional correctness (INFERRED definition, from the spec): on measured rounds, a reference
replica starts from θ with the inner state of worker 1 and runs the same H steps on the
concatenation of the K workers' batches (the DP-equivalent update); Δ_ref = θ - θ_ref and we
report cos(Δ, Δ_ref) over all parameters and ‖Δ‖ / ‖Δ_ref‖. At K = 1 the reference run is the
worker's own run, so the cosine is exactly 1 (not recomputed in the pipeline; tested).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from icml26.lm.optim import warmup_cosine

from .fleet import Fleet, Inner, eval_losses, flat_params

OUTER_KEYS = ("outer_lr", "outer_momentum")


@dataclass(eq=False)
class Plan:
    key: str
    method: str                 # plans of one method with equal inner hp share one Inner
    kind: str                   # "adamw" or "muon"
    diloco: bool                # False: data-parallel baseline (K = 1, no outer step)
    K: int
    init: dict                  # name -> tensor, the initial model
    starts: np.ndarray          # (steps, K, b) window starts of each worker's sequences
    lrs: dict = field(default_factory=dict)      # this plan's overrides of hp (inner lrs and
    #                                              wd, outer_lr, outer_momentum)
    curves: list = field(default_factory=list)   # (step, metric, value)
    final: dict | None = None   # the trained model (θ for DiLoCo)


def outer_nesterov(theta: dict, mom: dict, delta: dict, lr: float, mu: float) -> None:
    """In place: m <- μ m + Δ;  θ <- θ - lr (Δ + μ m)  (torch.optim.SGD, nesterov=True)."""
    for n in theta:
        mom[n].mul_(mu).add_(delta[n])
        theta[n].sub_(lr * (delta[n] + mu * mom[n]))


def cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.dot(a, b) / (torch.linalg.vector_norm(a) * torch.linalg.vector_norm(b)))


def _batch(ids: torch.Tensor, starts: torch.Tensor, context: int):
    """starts (R, b) -> inputs, targets (R, b, context)."""
    chunk = ids[starts[..., None] + torch.arange(context + 1, device=starts.device)]
    return chunk[..., :-1], chunk[..., 1:]


def train_plans(template, plans: list[Plan], train_ids: torch.Tensor, val_windows: torch.Tensor,
                hp: dict) -> None:
    """Train every plan (all with the same per-worker batch b); fills plan.curves / final.

    hp: steps, H, warmup, final_frac, clip, outer_lr, outer_momentum, measure_every (rounds),
    eval_every (rounds), context, and the inner optimizers' hyperparameters (see fleet.Inner);
    a plan's ``lrs`` override any of them for that plan (the outer step per plan, the inner
    hyperparameters per group of plans with equal inner overrides).
    """
    steps, H, T = int(hp["steps"]), int(hp["H"]), int(hp["context"])
    rounds = -(-steps // H)

    def inner_key(p):
        return (p.method, p.kind, tuple(sorted((k, repr(v)) for k, v in p.lrs.items()
                                               if k not in OUTER_KEYS)))

    # replicas: plans with one inner key are contiguous, so one Inner covers them all
    plans = sorted(plans, key=inner_key)
    lo, slices, replicas = 0, {}, []
    for p in plans:
        slices[p.key] = (lo, lo + p.K)
        replicas += [p.init] * p.K
        lo += p.K
    fleet = Fleet(template, replicas)
    groups = []
    for key in dict.fromkeys(inner_key(p) for p in plans):
        members = [p for p in plans if inner_key(p) == key]
        a, b = slices[members[0].key][0], slices[members[-1].key][1]
        groups.append((members, Inner(members[0].kind, template, a, b,
                                      {**hp, **members[0].lrs})))
    dev = train_ids.device  # the plans' weights, the ids and the batches share one device
    starts = torch.as_tensor(np.concatenate([p.starts for p in plans], axis=1),
                             device=dev)  # (steps, R, b)
    theta = {p.key: {n: t.clone() for n, t in p.init.items()} for p in plans if p.diloco}
    mom = {k: {n: torch.zeros_like(t) for n, t in th.items()} for k, th in theta.items()}

    def evaluate(step: int) -> None:
        models = [theta[p.key] if p.diloco else fleet.replica(slices[p.key][0]) for p in plans]
        stacked = {n: torch.stack([m[n] for m in models]) for n in fleet.names}
        for p, v in zip(plans, eval_losses(template, stacked, val_windows).tolist(), strict=True):
            p.curves.append((step, "val_loss", v))

    evaluate(0)
    for r in range(rounds):
        h_steps = range(r * H, min((r + 1) * H, steps))
        # reference replica of each DiLoCo plan with K > 1 on measured rounds
        # (hp measure_k1: also at K = 1, where it must reproduce the worker exactly; tests)
        measured = [p for p in plans if p.diloco and (p.K > 1 or hp.get("measure_k1"))] \
            if r % int(hp["measure_every"]) == 0 else []
        ref = ref_groups = None
        if measured:
            ref = Fleet(template, [theta[p.key] for p in measured])
            ref_groups, j = [], 0
            for members, inner in groups:
                rows = [p for p in members if p in measured]
                if rows:
                    first = [slices[p.key][0] - inner.lo for p in rows]  # worker 1 of each
                    ref_groups.append(inner.gather(first, j, j + len(rows)))
                    j += len(rows)
        train_loss = torch.zeros(fleet.R, device=dev)
        for step in h_steps:
            x, y = _batch(train_ids, starts[step], T)
            train_loss += fleet.backward(x, y)
            if hp["clip"]:
                fleet.clip_(float(hp["clip"]))
            scale = warmup_cosine(step, steps, int(hp["warmup"]), float(hp["final_frac"]))
            for _, inner in groups:
                inner.step(fleet, scale)
            if ref is not None:
                # the concatenation of the K workers' batches of this step, one row per plan
                xr = torch.stack([x[slice(*slices[p.key])].reshape(-1, T) for p in measured])
                yr = torch.stack([y[slice(*slices[p.key])].reshape(-1, T) for p in measured])
                ref.backward(xr, yr)
                if hp["clip"]:
                    ref.clip_(float(hp["clip"]))
                for inner in ref_groups:
                    inner.step(ref, scale)
        done = h_steps[-1] + 1
        train_loss /= len(h_steps)
        for p in plans:
            a, b = slices[p.key]
            p.curves.append((done, "train_loss", float(train_loss[a:b].mean())))
            if not p.diloco:
                continue
            # pseudogradient and outer Nesterov step
            th = theta[p.key]
            delta = {n: th[n] - fleet.data(n)[a:b].mean(dim=0) for n in fleet.names}
            if p in measured:
                i = measured.index(p)
                d_ref = {n: th[n] - ref.data(n)[i] for n in fleet.names}
                u, v = flat_params(delta), flat_params(d_ref)
                p.curves.append((done, "cos", cosine(u, v)))
                p.curves.append((done, "norm_ratio", float(torch.linalg.vector_norm(u)
                                                           / torch.linalg.vector_norm(v))))
            elif p.K == 1 and r % int(hp["measure_every"]) == 0:
                p.curves.append((done, "cos", 1.0))  # the reference run is the worker's run
                p.curves.append((done, "norm_ratio", 1.0))
            p.curves.append((done, "pg_norm", float(torch.linalg.vector_norm(flat_params(delta)))))
            outer_nesterov(th, mom[p.key], delta, float(p.lrs.get("outer_lr", hp["outer_lr"])),
                           float(p.lrs.get("outer_momentum", hp["outer_momentum"])))
            fleet.set_replicas(a, b, th)  # θ_k <- θ for the next round
        if (r + 1) % int(hp["eval_every"]) == 0 or r == rounds - 1:
            evaluate(done)
    for p in plans:
        p.final = theta[p.key] if p.diloco else fleet.replica(slices[p.key][0])
