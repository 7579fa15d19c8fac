"""KON (Knowledge Orthogonal Network) and the MT-ENT baseline, stacked over seeds (torch).

Every parameter carries a leading seed axis S (and a property axis K for the per-knowledge
modules), so the models of all seeds train as one: the loss is a sum over seeds, Adam(W) is
elementwise and the gradient clip is taken per seed, so a seed's numbers do not depend on
which other seeds share the job.

KON, as in the public repository (src/models/kon.py, losses.py, train.py), shrunk:
- trunk ck1 = LN(Linear(64, 128) -> GELU -> Linear(128, 64));
- per knowledge k a branch sk_k = MLP(64 -> 64 -> 4) and a head h_k(sk_k);
- common residual ck2 = LN(MLP(64 -> 64 -> 8)) of ck1; restore head r(ck2) -> x, L1 loss;
- adversaries: for each k an MLP reads ck2 *recomputed from a detached ck1* through a
  gradient-reversal layer and predicts k's discretised label (CE); so the reversed gradient
  reaches only the second common stage (kon.py f_map / forward);
- information bottleneck on each sk_k: batch-moment KL to N(0, I), weight lambda_kl;
- decorrelation over [ck2, sk_1..sk_K]: each block standardised over the batch;
  lambda_var * sum_blocks mean((std - 1)^2) + lambda_cov * mean over block pairs of
  mean(C_ij^2), C_ij = Z_i^T Z_j / N (losses.redundancy_reduction_loss).
Heads follow the repo: ss (class-weighted) and packing (the repo's lp) are classified;
asa, curvature, flexibility and hydro are regressed with L1 on z-scored labels.

MT-ENT: the same trunk, one 32-d bottleneck MLP(64 -> 64 -> 32), the same knowledge heads
reading all 32 dims and the restore head; no branches, adversary, KL or decorrelation.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from .data import FACTORS, SS_CLASSES

K = len(FACTORS)
DISCRETE = ("ss", "packing")   # the repo classifies ss, lp, entropy; packing <-> lp (INFERRED)
BRANCH_DIM, COMMON_DIM, TRUNK_HIDDEN, MT_DIM = 4, 8, 128, 32


class _GradReverse(torch.autograd.Function):
    """Identity forward; the gradient times -lambda backward (Ganin & Lempitsky 2015)."""

    @staticmethod
    def forward(ctx, x, lam):
        ctx.lam = lam
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.neg() * ctx.lam, None


def grad_reverse(x, lam: float):
    return _GradReverse.apply(x, lam)


# ------------------------------------------------------------------------------------------
# parameters: nn.Linear's default U(-1/sqrt(in), 1/sqrt(in)) per seed, from the seed's generator
# ------------------------------------------------------------------------------------------
def _linear(gens, fan_in, fan_out, k=None):
    bound = 1.0 / math.sqrt(fan_in)
    ws, bs = [], []
    for g in gens:
        shape = (fan_in, fan_out) if k is None else (k, fan_in, fan_out)
        bshape = (1, fan_out) if k is None else (k, 1, fan_out)
        ws.append((torch.rand(shape, generator=g) * 2 - 1) * bound)
        bs.append((torch.rand(bshape, generator=g) * 2 - 1) * bound)
    return torch.stack(ws), torch.stack(bs)


def init_params(kind: str, seeds, p: dict, dev) -> dict[str, torch.Tensor]:
    """Parameters of ``kind`` (kon | mt) for each seed (leading axis), leaf tensors on dev."""
    gens = [torch.Generator().manual_seed(int(s) % (2 ** 63)) for s in seeds]
    S, d, hid, nb = len(gens), int(p["x_dim"]), int(p["head_hidden"]), int(p["n_bins"])
    out_dim = max(SS_CLASSES, nb)
    P = {}
    P["t1w"], P["t1b"] = _linear(gens, d, TRUNK_HIDDEN)
    P["t2w"], P["t2b"] = _linear(gens, TRUNK_HIDDEN, d)
    P["t_g"], P["t_b"] = torch.ones(S, 1, d), torch.zeros(S, 1, d)
    if kind == "kon":
        P["s1w"], P["s1b"] = _linear(gens, d, d, K)
        P["s2w"], P["s2b"] = _linear(gens, d, BRANCH_DIM, K)
        P["c1w"], P["c1b"] = _linear(gens, d, d)
        P["c2w"], P["c2b"] = _linear(gens, d, COMMON_DIM)
        P["c_g"], P["c_b"] = torch.ones(S, 1, COMMON_DIM), torch.zeros(S, 1, COMMON_DIM)
        head_in, rest_in = BRANCH_DIM, COMMON_DIM
    else:
        P["z1w"], P["z1b"] = _linear(gens, d, d)
        P["z2w"], P["z2b"] = _linear(gens, d, MT_DIM)
        head_in, rest_in = MT_DIM, MT_DIM
    P["h1w"], P["h1b"] = _linear(gens, head_in, hid, K)
    P["h2w"], P["h2b"] = _linear(gens, hid, out_dim, K)
    P["r1w"], P["r1b"] = _linear(gens, rest_in, d)
    P["r2w"], P["r2b"] = _linear(gens, d, d)
    if kind == "kon":
        P["a1w"], P["a1b"] = _linear(gens, COMMON_DIM, hid, K)
        P["a2w"], P["a2b"] = _linear(gens, hid, out_dim, K)
    return {k: v.to(dev).requires_grad_(True) for k, v in P.items()}


def _mlp(x, P, a, b):
    """Linear -> GELU -> Linear with stacked weights (broadcast over seed / property axes)."""
    return torch.matmul(F.gelu(torch.matmul(x, P[a + "w"]) + P[a + "b"]), P[b + "w"]) + P[b + "b"]


def _ln(x, g, b):
    return F.layer_norm(x, x.shape[-1:]) * g + b


def _common2(ck1, P):
    return _ln(_mlp(ck1, P, "c1", "c2"), P["c_g"], P["c_b"])


def forward(kind: str, P: dict, x: torch.Tensor, lam: float = 0.0) -> dict:
    """x (S, B, d) -> features and head outputs of every seed."""
    ck1 = _ln(_mlp(x, P, "t1", "t2"), P["t_g"], P["t_b"])
    if kind == "kon":
        sk = _mlp(ck1[:, None], P, "s1", "s2")                       # (S, K, B, 4)
        ck2 = _common2(ck1, P)                                       # (S, B, 8)
        heads = _mlp(sk, P, "h1", "h2")                              # (S, K, B, out)
        restore = _mlp(ck2, P, "r1", "r2")
        adv_in = grad_reverse(_common2(ck1.detach(), P), lam)        # kon.py: ck2_adv
        adv = _mlp(adv_in[:, None], P, "a1", "a2")                   # (S, K, B, out)
        feats = torch.cat([sk.permute(0, 2, 1, 3).reshape(x.shape[0], x.shape[1], -1), ck2], -1)
        return {"sk": sk, "ck2": ck2, "heads": heads, "restore": restore, "adv": adv,
                "features": feats}
    z = _mlp(ck1, P, "z1", "z2")                                     # (S, B, 32)
    return {"z": z, "heads": _mlp(z[:, None], P, "h1", "h2"),
            "restore": _mlp(z, P, "r1", "r2"), "features": z}


def encode(kind: str, P: dict, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return forward(kind, P, x)["features"]


# ------------------------------------------------------------------------------------------
# losses, each (S,) or (S, K)
# ------------------------------------------------------------------------------------------
def weighted_ce(logits, labels, weight=None):
    """Per-seed class-weighted CE over the batch: sum w_y nll / sum w_y (torch's 'mean')."""
    nll = -torch.log_softmax(logits, -1).gather(-1, labels[..., None])[..., 0]   # (S, B)
    if weight is None:
        return nll.mean(-1)
    w = weight[labels]
    return (w * nll).sum(-1) / w.sum(-1)


def knowledge_losses(out, lab, nb, ss_weight, key="heads"):
    """(S, K): CE for ss / packing, L1 on z-scored labels for the rest (key='heads'); every
    adversary ('adv') predicts discretised labels with CE."""
    o = out[key]
    cols = []
    for k, name in enumerate(FACTORS):
        if name == "ss":
            cols.append(weighted_ce(o[:, k, :, :SS_CLASSES], lab["ss"], ss_weight))
        elif key == "adv" or name in DISCRETE:
            cols.append(weighted_ce(o[:, k, :, :nb], lab["bins"][..., k - 1]))
        else:
            cols.append((o[:, k, :, 0] - lab["z"][..., k - 1]).abs().mean(-1))
    return torch.stack(cols, -1)


def kl_bottleneck(sk):
    """(S, K): -0.5 mean_d(1 + log var_d - mu_d^2 - var_d), batch moments of each sk_k."""
    mu = sk.mean(-2)
    var = sk.var(-2, unbiased=False) + 1e-6
    return -0.5 * (1 + torch.log(var) - mu ** 2 - var).mean(-1)


def block_pair_weights(sizes) -> np.ndarray:
    """W[a, b] = 1 / (d_i d_j) for dims a of block i, b of block j, i < j (else 0), so that
    sum(C^2 * W) = sum over block pairs of mean(C_ij^2)."""
    edges = np.cumsum([0] + list(sizes))
    W = np.zeros((edges[-1], edges[-1]))
    for i in range(len(sizes)):
        for j in range(i + 1, len(sizes)):
            W[edges[i]:edges[i + 1], edges[j]:edges[j + 1]] = 1.0 / (sizes[i] * sizes[j])
    return W


def decorrelation(blocks, lam_var, lam_cov, pair_w):
    """(S,): lam_var * sum_blocks mean((std - 1)^2) + lam_cov * mean over pairs mean(C_ij^2)."""
    zs, var_loss = [], 0.0
    for z in blocks:
        zc = z - z.mean(-2, keepdim=True)
        std = zc.std(-2, unbiased=False) + 1e-4
        zs.append(zc / std[:, None, :])
        var_loss = var_loss + ((std - 1.0) ** 2).mean(-1)
    Z = torch.cat(zs, -1)
    C = torch.matmul(Z.transpose(-1, -2), Z) / Z.shape[-2]
    n_pairs = len(blocks) * (len(blocks) - 1) / 2
    cov = (C ** 2 * pair_w).sum((-1, -2)) / n_pairs
    return lam_var * var_loss + lam_cov * cov


# ------------------------------------------------------------------------------------------
# training: AdamW (0.9, 0.95), warmup + two cosine stages, adversary lr x2, per-seed clip,
# lambda_adv ramp, the epoch with the best monitor loss kept (train.py)
# ------------------------------------------------------------------------------------------
def lr_factor(step, total, p):
    warm = max(1, int(round(p["warmup_frac"] * total)))
    decay = max(warm + 1, int(round(p["decay_frac"] * total)))
    if step < warm:
        return step / warm
    if step < decay:
        c = 0.5 * (1 + math.cos(math.pi * (step - warm) / (decay - warm)))
        return p["decay_rate"] + (1 - p["decay_rate"]) * c
    c = 0.5 * (1 + math.cos(math.pi * (step - decay) / max(1, total - decay)))
    return 0.01 + (p["decay_rate"] - 0.01) * c


def adv_scale(epoch, epochs, p):
    start, ramp = p["adv_start_frac"] * epochs, p["adv_ramp_frac"] * epochs
    return min(1.0, max(0.0, (epoch - start) / max(ramp, 1e-12)))


@torch.no_grad()
def clip_per_seed(params, max_norm):
    """Clip each seed's gradient (all its parameters together) to norm max_norm."""
    sq = sum(q.grad.pow(2).reshape(q.shape[0], -1).sum(1) for q in params if q.grad is not None)
    scale = (max_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)
    for q in params:
        if q.grad is not None:
            q.grad.mul_(scale.reshape((-1,) + (1,) * (q.dim() - 1)))


def pretrain(kind: str, x: torch.Tensor, lab: dict, init_seeds, batch_seeds, p: dict, dev,
             ss_weight) -> tuple[dict, list[dict]]:
    """Train ``kind`` for every seed on its pretraining rows; x (S, N, d), labels (S, N, ...).

    Returns the parameters of each seed's best epoch (lowest knowledge + restore loss) and
    per-epoch curve rows {seed_index, epoch, metric, value}."""
    from icml26.lm.optim import AdamW

    S, N = x.shape[0], x.shape[1]
    P = init_params(kind, init_seeds, p, dev)
    adv_keys = [k for k in P if k.startswith("a")]
    main = [P[k] for k in P if k not in adv_keys]
    # torch.optim.AdamW semantics (decay on every parameter), the adversaries at lr x2
    opts = [AdamW(main, p["lr"], (0.9, 0.95), weight_decay=p["weight_decay"],
                  decay=[True] * len(main))]
    if adv_keys:
        adv = [P[k] for k in adv_keys]
        opts.append(AdamW(adv, p["lr"] * p["adv_lr_scale"], (0.9, 0.95),
                          weight_decay=p["weight_decay"], decay=[True] * len(adv)))
    epochs, B = int(p["epochs"]), int(p["batch"])
    per_epoch = -(-N // B)
    total = epochs * per_epoch
    step = 0
    gens = [np.random.default_rng(int(s)) for s in batch_seeds]
    sidx = torch.arange(S, device=dev)[:, None]
    nb = int(p["n_bins"])
    pair_w = torch.as_tensor(block_pair_weights([COMMON_DIM] + [BRANCH_DIM] * K),
                             dtype=x.dtype, device=dev)
    best = {k: v.detach().clone() for k, v in P.items()}
    best_loss = torch.full((S,), float("inf"), device=dev)
    curves = []
    for epoch in range(epochs):
        lam = p["lambda_adv"] * adv_scale(epoch, epochs, p) if kind == "kon" else 0.0
        perm = torch.as_tensor(np.stack([g.permutation(N) for g in gens]), device=dev)
        sums: dict[str, torch.Tensor] = {}
        for b in range(per_epoch):
            rows = perm[:, b * B:(b + 1) * B]
            xb = x[sidx, rows]
            lb = {k: v[sidx, rows] for k, v in lab.items()}
            out = forward(kind, P, xb, lam)
            know = knowledge_losses(out, lb, nb, ss_weight)                 # (S, K)
            restore = (out["restore"] - xb).abs().mean((-1, -2))            # (S,)
            terms = {"knowledge": know.sum(-1), "restore": restore}
            if kind == "kon":
                terms["adversary"] = knowledge_losses(out, lb, nb, ss_weight, "adv").sum(-1)
                terms["kl"] = p["lambda_kl"] * kl_bottleneck(out["sk"]).sum(-1)
                terms["decorrelation"] = decorrelation(
                    [out["ck2"]] + [out["sk"][:, k] for k in range(K)],
                    p["lambda_var"], p["lambda_cov"], pair_w)
            loss = sum(terms.values())
            for q in P.values():
                q.grad = None
            loss.sum().backward()
            clip_per_seed(list(P.values()), p["grad_clip"])
            for o in opts:
                o.step(lr_factor(step, total, p))
            step += 1
            for name, v in terms.items():
                sums[name] = sums.get(name, 0.0) + v.detach()
            for k, name in enumerate(FACTORS):
                sums[f"loss_{name}"] = sums.get(f"loss_{name}", 0.0) + know[:, k].detach()
        mean = {k: v / per_epoch for k, v in sums.items()}
        monitor = mean["knowledge"] + mean["restore"]
        better = monitor < best_loss
        best_loss = torch.where(better, monitor, best_loss)
        for k, v in P.items():
            m = better.reshape((-1,) + (1,) * (v.dim() - 1))
            best[k] = torch.where(m, v.detach(), best[k])
        for name, v in list(mean.items()) + [("monitor", monitor)]:
            for s in range(S):
                curves.append({"seed_index": s, "epoch": epoch + 1, "metric": name,
                               "value": float(v[s])})
        for s in range(S):
            curves.append({"seed_index": s, "epoch": epoch + 1, "metric": "lambda_adv",
                           "value": float(lam)})
    return best, curves


