"""Downstream heads MLP(in -> hidden -> out), many trained as one stacked batch (torch).

Every head has its own weights (leading head axis) and its own input columns of a per-seed
feature bank. Heads of the same stream (seed, split, task) share training rows, mini-batches
and the z-scoring of inputs (training-row mean / std per column), so representations are
compared on common random numbers. Adam with L2 weight decay (torch.optim.Adam's update,
written out in icml26.lm.optim), a fixed step count and no early stopping: as in the repo's
downstream script (tasks/proteinshake/train.py), the reported score is the mean of the last
``n_last`` evaluations, taken every ``eval_every`` steps. A stream whose training set has at
most ``head_batch`` rows trains full batch; otherwise it walks through fresh permutations of
its rows, ``head_batch`` rows a step.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from .analysis import ridge_fit_predict


def mcc(y: np.ndarray, pred: np.ndarray) -> float:
    """Matthews correlation of binary labels (0 when a margin of the table is empty, as
    sklearn.metrics.matthews_corrcoef)."""
    y, pred = np.asarray(y, bool), np.asarray(pred, bool)
    tp = float(np.sum(y & pred))
    tn = float(np.sum(~y & ~pred))
    fp = float(np.sum(~y & pred))
    fn = float(np.sum(y & ~pred))
    den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return 0.0 if den == 0 else (tp * tn - fp * fn) / math.sqrt(den)


def score(kind: str, y: np.ndarray, out: np.ndarray) -> float:
    """The task metric of raw outputs (n, n_out): MCC of logit > 0 (binary), accuracy of the
    argmax (multiclass), Spearman (regression)."""
    from icml26.stats import spearman

    if kind == "binary":
        return mcc(y, out[:, 0] > 0)
    if kind == "multiclass":
        return float(np.mean(np.argmax(out, 1) == y))
    return float(spearman(out[:, 0], y))


def batch_stream(train_rows: np.ndarray, steps: int, batch: int, seed: int) -> np.ndarray:
    """(steps, width) training rows of one stream: every row each step if they fit in
    ``batch``, else consecutive slices of fresh permutations (each row once per pass)."""
    n = len(train_rows)
    if n <= batch:
        return np.broadcast_to(train_rows, (steps, n))
    g = np.random.default_rng(int(seed))
    need = steps * batch
    perms = np.concatenate([g.permutation(n) for _ in range(-(-need // n))])
    return train_rows[perms[:need].reshape(steps, batch)]


def _loss(kind, out, y, mask):
    """Masked mean loss per head: BCE (binary), CE (multiclass), MSE (regression)."""
    if kind == "binary":
        per = F.binary_cross_entropy_with_logits(out[..., 0], y, reduction="none")
    elif kind == "multiclass":
        per = F.cross_entropy(out.transpose(1, 2), y, reduction="none")
    else:
        per = (out[..., 0] - y) ** 2
    return (per * mask).sum(-1) / mask.sum(-1)


def _padded(lists, fill=0):
    width = max(len(v) for v in lists)
    out = np.full((len(lists), width), fill, dtype=np.int64)
    n = np.array([len(v) for v in lists])
    for i, v in enumerate(lists):
        out[i, :len(v)] = v
    return out, n


def train_heads(bank: np.ndarray, y: np.ndarray, kind: str, n_out: int, heads: list[dict],
                streams: dict, p: dict, dev) -> tuple[np.ndarray, np.ndarray]:
    """Train every head of one task; returns (val, test) scores, each (H, n_last).

    bank (S, N, D): per-seed features; y (S, N) labels. ``streams[key]`` holds seed (index
    into bank), batches ((steps, width) training rows), train / val / test (rows). Each head
    has stream (a key), cols (bank columns) and init (its generator seed). Regression
    targets are z-scored with the stream's training rows.
    """
    from icml26.lm.optim import adamw_update

    H, steps, hid = len(heads), int(p["head_steps"]), int(p["head_hidden_ds"])
    keys = sorted({h["stream"] for h in heads})
    st = [streams[k] for k in keys]
    n_st, D = len(keys), bank.shape[-1]
    stream_of = np.array([keys.index(h["stream"]) for h in heads])
    d_max = max(len(h["cols"]) for h in heads)
    seed_of = np.array([s["seed"] for s in st])
    # z-scoring per stream and column (training rows), applied to the gathered rows
    mu = np.stack([bank[s["seed"]][s["train"]].mean(0) for s in st])[:, None, :]
    sd = np.stack([bank[s["seed"]][s["train"]].std(0) for s in st])[:, None, :]
    sd = np.where(sd > 0, sd, 1.0)
    if kind == "multiclass":
        yt = np.stack([y[s["seed"]] for s in st]).astype(np.int64)
    elif kind == "regression":
        yt = np.stack([(y[s["seed"]] - y[s["seed"]][s["train"]].mean())
                       / max(y[s["seed"]][s["train"]].std(), 1e-12) for s in st])
    else:
        yt = np.stack([y[s["seed"]] for s in st])
    bank_t = torch.as_tensor(bank, device=dev)
    mu_t = torch.as_tensor(mu, dtype=bank_t.dtype, device=dev)
    sd_t = torch.as_tensor(sd, dtype=bank_t.dtype, device=dev)
    y_t = torch.as_tensor(yt if kind == "multiclass" else yt.astype(np.float32), device=dev)
    seed_t = torch.as_tensor(seed_of, device=dev)
    # the first layer reads a head's columns: flat indices into the (streams, rows, D) gather,
    # padded columns point at column 0 and meet zero weights (and zero gradients: masked)
    cols, n_cols = _padded([h["cols"] for h in heads])
    colmask = (np.arange(d_max)[None, :] < n_cols[:, None]).astype(np.float32)

    def flat_index(width):
        idx = (stream_of[:, None, None] * width + np.arange(width)[None, :, None]) * D \
            + cols[:, None, :]
        return torch.as_tensor(idx, device=dev)

    # weights: nn.Linear's default init with the head's true fan-in
    W1 = torch.zeros(H, d_max, hid)
    b1 = torch.zeros(H, 1, hid)
    W2 = torch.zeros(H, hid, n_out)
    b2 = torch.zeros(H, 1, n_out)
    for i, h in enumerate(heads):
        g = torch.Generator().manual_seed(int(h["init"]) % (2 ** 63))
        d = len(h["cols"])
        W1[i, :d] = (torch.rand(d, hid, generator=g) * 2 - 1) / math.sqrt(d)
        b1[i] = (torch.rand(1, hid, generator=g) * 2 - 1) / math.sqrt(d)
        W2[i] = (torch.rand(hid, n_out, generator=g) * 2 - 1) / math.sqrt(hid)
        b2[i] = (torch.rand(1, n_out, generator=g) * 2 - 1) / math.sqrt(hid)
    params = [t.to(dev).requires_grad_(True) for t in (W1, b1, W2, b2)]
    m = [torch.zeros_like(t) for t in params]
    v = [torch.zeros_like(t) for t in params]
    cmask = torch.as_tensor(colmask, device=dev)[:, :, None]
    # training rows per step: (streams, steps, width) with a mask for full-batch padding
    width = max(s["batches"].shape[1] for s in st)
    rows_np = np.zeros((n_st, steps, width), np.int64)
    rmask_np = np.zeros((n_st, 1, width), np.float32)
    for j, s in enumerate(st):
        w = s["batches"].shape[1]
        rows_np[j, :, :w] = s["batches"][:steps]
        rmask_np[j, 0, :w] = 1.0
    rows_t = torch.as_tensor(rows_np, device=dev)
    rmask_t = torch.as_tensor(rmask_np, device=dev)[stream_of, 0]         # (H, width)
    train_idx = flat_index(width)
    sof = torch.as_tensor(stream_of, device=dev)

    def run(x, sl=slice(None)):
        h1 = F.gelu(torch.baddbmm(params[1][sl], x, params[0][sl] * cmask[sl]))
        return torch.baddbmm(params[3][sl], h1, params[2][sl])

    def gather_rows(rows):                                   # rows (streams, width)
        return (bank_t[seed_t[:, None], rows] - mu_t) / sd_t

    every, n_last = int(p["eval_every"]), int(p["n_last"])
    checkpoints = [steps - every * i for i in range(n_last - 1, -1, -1)]
    out = {}
    for part in ("val", "test"):
        rows, n = _padded([s[part] for s in st])
        out[part] = (rows, n, torch.as_tensor(rows, device=dev), flat_index(rows.shape[1]))
    scores = {part: np.zeros((H, n_last)) for part in ("val", "test")}

    def evaluate(col):
        with torch.no_grad():
            for part, (rows, n, rows_t_, idx) in out.items():
                xs = gather_rows(rows_t_).reshape(-1)
                pred = run(xs[idx]).cpu().numpy()
                for i in range(H):
                    j = stream_of[i]
                    yy = y[st[j]["seed"]][rows[j, :n[j]]]
                    scores[part][i, col] = score(kind, yy, pred[i, :n[j]])

    wd, lr = float(p["head_weight_decay"]), float(p["head_lr"])
    for t in range(1, steps + 1):
        rows = rows_t[:, t - 1]
        x = gather_rows(rows).reshape(-1)[train_idx]
        target = y_t.gather(1, rows)[sof]
        loss = _loss(kind, run(x), target, rmask_t).sum()
        for q in params:
            q.grad = None
        loss.backward()
        with torch.no_grad():
            grads = [q.grad + wd * q for q in params]       # Adam's L2 weight decay
        adamw_update(params, grads, m, v, t, lr, (0.9, 0.999), 1e-8, 0.0, [False] * 4)
        if t in checkpoints:
            evaluate(checkpoints.index(t))
    return scores["val"], scores["test"]


def ridge_val_score(kind, Xtr, ytr, Xva, yva, alpha, n_classes=None):
    """Validation score of a ridge read-out of one block (the ranking of PROTDIS-SEL):
    accuracy of a one-vs-all ridge on {-1, 1} (RidgeClassifier) for classes; otherwise the
    Spearman correlation of the ridge output with the target. For binary labels this is
    threshold-free: a thresholded MCC of a weak block's read-out on imbalanced labels is
    exactly 0 for most blocks, which would leave the ranking to ties."""
    from icml26.stats import spearman

    if kind == "multiclass":
        Y = 2.0 * np.eye(n_classes)[ytr] - 1.0
        return score(kind, yva, ridge_fit_predict(Xtr, Y, Xva, alpha))
    pred = ridge_fit_predict(Xtr, ytr.astype(float)[:, None], Xva, alpha)
    return float(spearman(pred[:, 0], yva.astype(float)))
