"""Stages of castle: corpus + VKR test sets, training of every run of a shard, metrics.

Settings: ``lm`` (char-level LM on stdlib docstrings) and ``vkr-1l`` / ``vkr-2l`` (the
value-before-key recall task with 1 or 2 layers). Methods: ``causal`` (standard attention),
``causal-wide`` (parameter-matched wider MLP; LM only) and ``castle``. Paired comparisons: the
training batches of a (task, seed) come from one stream shared by every method (and, for VKR,
by both depths), and the VKR test set is fixed per seed; only the initialisation is per run.
Everything the metrics need is computed in ``train`` (which imports torch lazily) and stored as
state arrays, so ``evaluate`` needs numpy only.
"""

from __future__ import annotations

import math
import time

import numpy as np

from icml26.seeding import derive_seed, torch_device

from . import vkr
from .checks import exactness

LN2 = math.log(2.0)
EXACTNESS = ("diff_recurrent", "diff_decode", "diff_causality", "diff_vu0")


def _task(cfg, setting) -> str:
    return str(cfg["settings"][setting].get("task", "lm"))


def _corpus(cfg) -> str:
    """The spec's docstring corpus (printable ASCII + newline, others -> '?'), optionally a
    prefix slice (smoke)."""
    from icml26.lm.corpus import STDLIB_DOC_MODULES, stdlib_docstrings, to_ascii

    c = cfg["params"]["corpus"]
    text = to_ascii(stdlib_docstrings(STDLIB_DOC_MODULES, min_chars=int(c["min_chars"])))
    if c.get("slice"):
        text = text[: int(c["slice"])]
    return text


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Corpus ids (train / validation, contiguous 90/10) with provenance; VKR test sets."""
    from icml26.lm.corpus import CharTokenizer, provenance, split_contiguous

    out: dict[str, np.ndarray] = {}
    tasks = {_task(cfg, s) for s in cfg["settings"]}
    if "lm" in tasks:
        text = _corpus(cfg)
        tok = CharTokenizer(text)
        ids = tok.encode(text)
        train, val = split_contiguous(ids, float(cfg["params"]["corpus"]["train_frac"]))
        out["lm/train_ids"], out["lm/val_ids"] = train, val
        out["lm/vocab"] = np.array(tok.chars)
        for k, v in provenance(text).items():
            out[f"lm/provenance/{k}"] = np.array(v)
    if "vkr" in tasks:
        p = cfg["params"]["vkr"]
        for seed in cfg["seeds"]:  # one fixed test set per seed, shared by methods and depths
            r = np.random.default_rng(derive_seed(cfg["paper"], "vkr", seed, "test"))
            x, y = vkr.sample(r, int(p["test_size"]), int(p["pairs"]))
            out[f"vkr/{seed}/test_x"], out[f"vkr/{seed}/test_y"] = x, y
    return out


# ---------------------------------------------------------------------------------------------
# models


def build_model(cfg, setting, method, vocab_size: int, context: int):
    """GPT of the setting with the method's attention (castle) or MLP width (causal-wide)."""
    from icml26.lm.model import GPT, CausalSelfAttention, GPTConfig

    from .castle import castle_factory, wide_hidden

    task = _task(cfg, setting)
    p = cfg["params"][task]
    layers = int(cfg["settings"][setting].get("layers", p.get("n_layers", 2)))
    d = int(cfg["settings"][setting].get("d_model", p["d_model"]))
    config = GPTConfig(vocab_size=vocab_size, context=context, d_model=d,
                       n_heads=int(p["n_heads"]), n_layers=layers,
                       mlp_hidden=wide_hidden(d) if method == "causal-wide" else None)
    attention = castle_factory if method == "castle" else CausalSelfAttention
    return GPT(config, attention=attention)


def _optimizer(cfg, model, lr):
    from icml26.lm.optim import AdamW

    o = cfg["params"]["optim"]
    return AdamW(list(model.parameters()), lr, betas=tuple(o["betas"]),
                 weight_decay=float(o["weight_decay"]))


def fit(cfg, model, opt, next_batch, loss_fn, steps, curve_fn, curve_every):
    """The shared loop: AdamW, linear warm-up then cosine to ``final_frac``, grad-clip.

    Returns (train-loss curve: mean over each block of ``loss_every`` steps, eval curve from
    ``curve_fn`` at step 0, every ``curve_every`` steps and at the end, CPU-s per step).
    """
    from icml26.lm.optim import clip_grad_norm, warmup_cosine

    o = cfg["params"]["optim"]
    every = int(cfg["params"]["loss_every"])
    train_curve, eval_curve, block, spent = [], [], [], 0.0
    model.train()
    for step in range(steps):
        if curve_every and step % curve_every == 0:
            eval_curve.append((step, curve_fn(model)))
        t0 = time.process_time()
        x, y = next_batch()
        loss = loss_fn(model, x, y)
        opt.zero_grad()
        loss.backward()
        clip_grad_norm(opt.params, float(o["clip"]))
        opt.step(warmup_cosine(step, steps, int(o["warmup"]), float(o["final_frac"])))
        spent += time.process_time() - t0
        block.append(loss.item())
        if len(block) == every or step == steps - 1:
            train_curve.append((step + 1, float(np.mean(block))))
            block = []
    eval_curve.append((steps, curve_fn(model)))
    return train_curve, eval_curve, spent / max(steps, 1)


# ---------------------------------------------------------------------------------------------
# the two tasks


def _provenance(data) -> dict[str, float]:
    """The corpus provenance as exact floats for the metrics table: characters, the first 32
    bits of the SHA-256 (the full hash is in data.npz), Python version as 10000 major +
    100 minor + micro."""
    major, minor, micro = (int(x) for x in str(data["lm/provenance/python"]).split(".")[:3])
    return {"corpus_chars": float(str(data["lm/provenance/chars"])),
            "corpus_sha32": float(int(str(data["lm/provenance/sha256"])[:8], 16)),
            "python_version": float(10000 * major + 100 * minor + micro)}


def _train_lm(cfg, data, run):
    import torch
    import torch.nn.functional as F

    from icml26.lm.model import n_params
    from icml26.lm.train import as_tensor, eval_loss, eval_windows, random_batch

    p = cfg["params"]["lm"]
    context, batch = int(p["context"]), int(p["batch"])
    dev = torch_device(cfg["device"])
    train_ids, val_ids = as_tensor(data["lm/train_ids"]), data["lm/val_ids"]
    val = eval_windows(val_ids, context).to(dev)  # non-overlapping windows: each token once
    n_curve = int(p["curve_windows"])
    curve_val = val if not n_curve or n_curve >= len(val) else val[
        np.linspace(0, len(val) - 1, n_curve).round().astype(int)]
    torch.manual_seed(run.rng_seed(cfg["paper"], "init") % 2**63)
    model = build_model(cfg, run.setting, run.method, len(data["lm/vocab"]), context).to(dev)
    opt = _optimizer(cfg, model, float(p["lr"]))
    # the batch stream depends on (task, seed) only: every method sees the same windows
    gen = torch.Generator().manual_seed(derive_seed(cfg["paper"], "lm", run.seed, "batches")
                                        % 2**63)

    def next_batch():  # drawn on the CPU (same stream on every device), then moved
        x, y = random_batch(train_ids, batch, context, gen)
        return x.to(dev), y.to(dev)

    def loss_fn(m, x, y):
        logits = m(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    train_curve, val_curve, sec = fit(cfg, model, opt, next_batch, loss_fn, int(p["steps"]),
                                      lambda m: eval_loss(m, curve_val),
                                      int(p["curve_every"]))
    final = {"val_loss": eval_loss(model, val), "n_params": n_params(model),
             "cpu_s_per_step": sec, "val_tokens": int(val[:, 1:].numel()), **_provenance(data)}
    if run.method == "castle":
        final.update(exactness(model, val.cpu().numpy(),
                               run.rng_seed(cfg["paper"], "exactness")))
    return final, {"train_loss": train_curve, "val_loss_curve": val_curve}


def _train_vkr(cfg, data, run):
    import torch
    import torch.nn.functional as F

    from icml26.lm.model import n_params

    p = cfg["params"]["vkr"]
    pairs, batch = int(p["pairs"]), int(p["batch"])
    dev = torch_device(cfg["device"])
    test_x = torch.as_tensor(data[f"vkr/{run.seed}/test_x"]).to(dev)
    test_y = torch.as_tensor(data[f"vkr/{run.seed}/test_y"]).to(dev)
    n_curve = int(p["curve_test"])
    cx, cy = (test_x, test_y) if not n_curve else (test_x[:n_curve], test_y[:n_curve])
    torch.manual_seed(run.rng_seed(cfg["paper"], "init") % 2**63)
    model = build_model(cfg, run.setting, run.method, vkr.VOCAB, vkr.seq_len(pairs)).to(dev)
    opt = _optimizer(cfg, model, float(p["lr"]))
    # fresh samples every step (infinite data), one stream per seed shared by all VKR runs
    rng = np.random.default_rng(derive_seed(cfg["paper"], "vkr", run.seed, "batches"))

    def next_batch():
        x, y = vkr.sample(rng, batch, pairs)
        return torch.as_tensor(x).to(dev), torch.as_tensor(y).to(dev)

    def loss_fn(m, x, y):  # loss on the last position only
        return F.cross_entropy(vkr.last_logits(m, x), y)

    @torch.no_grad()
    def accuracy(m, x, y):
        was = m.training
        m.eval()
        acc = float((vkr.last_logits(m, x).argmax(-1) == y).double().mean())
        m.train(was)
        return acc

    train_curve, acc_curve, sec = fit(cfg, model, opt, next_batch, loss_fn, int(p["steps"]),
                                      lambda m: accuracy(m, cx, cy), int(p["curve_every"]))
    final = {"test_acc": accuracy(model, test_x, test_y), "n_params": n_params(model),
             "cpu_s_per_step": sec}
    if run.method == "castle":
        final.update(exactness(model, test_x.cpu().numpy(),
                               run.rng_seed(cfg["paper"], "exactness")))
    return final, {"train_loss": train_curve, "test_acc_curve": acc_curve}


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    state, curves = {}, []
    for run in runs:
        if _task(cfg, run.setting) == "lm":
            final, series = _train_lm(cfg, data, run)
        else:
            final, series = _train_vkr(cfg, data, run)
        for k, v in final.items():
            state[f"{run.key}/{k}"] = np.array(float(v))
        for metric, pts in series.items():
            curves += [{**run.as_dict(), "step": int(s), "metric": metric, "value": float(v)}
                       for s, v in pts]
    return state, curves


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    out = []
    for run in runs:
        s = {k.split("/", 1)[1]: float(v) for k, v in state.items()
             if k.startswith(run.key + "/")}
        row = {"n_params": s["n_params"], "cpu_s_per_step": s["cpu_s_per_step"]}
        for k in EXACTNESS:  # (a)-(c) on the trained CASTLE model; NaN for the baselines
            row[k] = s.get(k, math.nan)
        if _task(cfg, run.setting) == "lm":
            row.update(val_loss=s["val_loss"], bpc=s["val_loss"] / LN2,
                       perplexity=math.exp(s["val_loss"]), corpus_chars=s["corpus_chars"],
                       corpus_sha32=s["corpus_sha32"], python_version=s["python_version"])
        else:
            row.update(test_acc=s["test_acc"])
        out.append(row)
    return out
