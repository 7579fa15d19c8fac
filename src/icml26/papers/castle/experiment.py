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


def build_model(cfg, setting, method, vocab_size: int, context: int,
                causal_attention=None):
    """GPT of the setting with the method's attention (castle) or MLP width (causal-wide);
    ``causal_attention`` replaces the baselines' attention class (same parameters)."""
    from icml26.lm.model import GPT, CausalSelfAttention, GPTConfig

    from .castle import castle_factory, wide_hidden

    task = _task(cfg, setting)
    p = cfg["params"][task]
    layers = int(cfg["settings"][setting].get("layers", p.get("n_layers", 2)))
    d = int(cfg["settings"][setting].get("d_model", p["d_model"]))
    config = GPTConfig(vocab_size=vocab_size, context=context, d_model=d,
                       n_heads=int(p["n_heads"]), n_layers=layers,
                       mlp_hidden=wide_hidden(d) if method == "causal-wide" else None)
    attention = castle_factory if method == "castle" else (
        causal_attention or CausalSelfAttention)
    return GPT(config, attention=attention)


def _template(model, task: str):
    """The module whose forward the stacked trainer calls: the GPT (LM: logits of every
    position) or a wrapper returning the last position's logits (VKR)."""
    import torch
    from torch import nn

    class LastLogits(nn.Module):
        def __init__(self, gpt):
            super().__init__()
            self.gpt = gpt

        def forward(self, idx: torch.Tensor) -> torch.Tensor:
            return vkr.last_logits(self.gpt, idx)

    return model if task == "lm" else LastLogits(model)


def fit(cfg, stack, next_batch, loss_fn, steps, curve_fn, curve_every):
    """The shared loop over R stacked seeds: AdamW, linear warm-up then cosine to
    ``final_frac``, per-seed grad-clip.

    Returns (per seed: train-loss curve, the mean over each block of ``loss_every`` steps;
    per seed: eval curve from ``curve_fn`` at step 0, every ``curve_every`` steps and at the
    end; CPU-s per step and seed).
    """
    from icml26.lm.optim import warmup_cosine

    o = cfg["params"]["optim"]
    every = int(cfg["params"]["loss_every"])
    R = stack.R
    train_curve, eval_curve, block, spent = [[] for _ in range(R)], [[] for _ in range(R)], \
        [], 0.0

    def record_eval(step):
        for r, v in enumerate(curve_fn(stack)):
            eval_curve[r].append((step, float(v)))

    for step in range(steps):
        if curve_every and step % curve_every == 0:
            record_eval(step)
        t0 = time.process_time()
        x, y = next_batch()
        losses = stack.step(loss_fn, x, y,
                            warmup_cosine(step, steps, int(o["warmup"]), float(o["final_frac"])),
                            float(o["clip"]))
        spent += time.process_time() - t0
        block.append(losses.cpu().numpy())
        if len(block) == every or step == steps - 1:
            mean = np.mean(block, axis=0)
            for r in range(R):
                train_curve[r].append((step + 1, float(mean[r])))
            block = []
    record_eval(steps)
    return train_curve, eval_curve, spent / max(steps, 1) / R


def _stack(cfg, setting, method, runs, task, vocab_size, context, lr, dev):
    """One model per run (seed), each initialised from its own seed, stacked for training;
    also returns one plain model of the architecture (for exactness and parameter counts)."""
    import torch

    from icml26.lm.model import MathCausalAttention

    from .stacked import Stacked

    models = []
    for run in runs:
        torch.manual_seed(run.rng_seed(cfg["paper"], "init") % 2**63)
        models.append(build_model(cfg, setting, method, vocab_size, context).to(dev))
    # the template runs under vmap: causal attention as explicit matmuls (same function)
    tmpl = build_model(cfg, setting, method, vocab_size, context,
                       causal_attention=MathCausalAttention).to(dev)
    o = cfg["params"]["optim"]
    stack = Stacked(_template(tmpl, task), [_template(m, task) for m in models], lr,
                    o["betas"], float(o["weight_decay"]))
    return stack, models


def _unstack(stack, models, task) -> None:
    """Copy the trained parameters of replica r into ``models[r]`` (a plain GPT)."""
    import torch

    with torch.no_grad():
        for r, m in enumerate(models):
            params = stack.replica(r)
            if task != "lm":
                params = {k.split(".", 1)[1]: v for k, v in params.items()}
            named = dict(m.named_parameters())
            for k, v in params.items():
                named[k].copy_(v)


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


def replica_logits(stack, template, r: int, x):
    """Logits of replica r alone on x (no grad): the plain model ``template`` (SDPA causal
    attention, no vmap) called with replica r's parameters. Equal to ``stack.logits`` up to
    float rounding (tested) and 2-2.5x cheaper for evaluation: vmap's batching of the math
    attention is what makes the stacked forward slow on big eval batches."""
    import torch
    from torch.func import functional_call

    with torch.no_grad():
        return functional_call(template, {n: stack.params[n].detach()[r] for n in stack.names},
                               (x,))


def _chunked(stack, template, windows, batch: int = 128):
    """Mean next-token cross-entropy of every replica on the same windows (n, T+1): (R,)."""
    import torch

    total, count = torch.zeros(stack.R, dtype=torch.float64), 0
    with torch.no_grad():
        for i in range(0, len(windows), batch):
            w = windows[i: i + batch]
            x, y = w[:, :-1], w[:, 1:]
            for r in range(stack.R):
                lg = replica_logits(stack, template, r, x)
                nll = torch.logsumexp(lg, -1) - lg.gather(-1, y.unsqueeze(-1)).squeeze(-1)
                total[r] += nll.double().sum().cpu()
            count += y.numel()
    return (total / count).numpy()


def _train_lm(cfg, data, setting, method, runs):
    import torch

    from icml26.lm.model import n_params
    from icml26.lm.train import as_tensor, eval_windows, random_batch

    from .stacked import cross_entropy

    p = cfg["params"]["lm"]
    context, batch = int(p["context"]), int(p["batch"])
    dev = torch_device(cfg["device"])
    train_ids, val_ids = as_tensor(data["lm/train_ids"]), data["lm/val_ids"]
    val = eval_windows(val_ids, context).to(dev)  # non-overlapping windows: each token once
    n_curve = int(p["curve_windows"])
    curve_val = val if not n_curve or n_curve >= len(val) else val[
        np.linspace(0, len(val) - 1, n_curve).round().astype(int)]
    stack, models = _stack(cfg, setting, method, runs, "lm", len(data["lm/vocab"]), context,
                           float(p["lr"]), dev)
    # the batch stream depends on (task, seed) only: every method sees the same windows
    gens = [torch.Generator().manual_seed(derive_seed(cfg["paper"], "lm", run.seed, "batches")
                                          % 2**63) for run in runs]

    def next_batch():  # drawn on the CPU (same stream on every device), then moved
        xy = [random_batch(train_ids, batch, context, g) for g in gens]
        return (torch.stack([a for a, _ in xy]).to(dev), torch.stack([b for _, b in xy]).to(dev))

    evaluator = models[0]  # the plain GPT (SDPA), run with each replica's parameters
    train_curve, val_curve, sec = fit(cfg, stack, next_batch, cross_entropy, int(p["steps"]),
                                      lambda s: _chunked(s, evaluator, curve_val),
                                      int(p["curve_every"]))
    final_loss = _chunked(stack, evaluator, val)
    _unstack(stack, models, "lm")
    out = []
    for r, run in enumerate(runs):
        final = {"val_loss": float(final_loss[r]), "n_params": n_params(models[r]),
                 "cpu_s_per_step": sec, "val_tokens": int(val[:, 1:].numel()),
                 **_provenance(data)}
        if method == "castle":
            final.update(exactness(models[r], val.cpu().numpy(),
                                   run.rng_seed(cfg["paper"], "exactness")))
        out.append((run, final, {"train_loss": train_curve[r],
                                 "val_loss_curve": val_curve[r]}))
    return out


def _train_vkr(cfg, data, setting, method, runs):
    import torch

    from icml26.lm.model import n_params

    from .stacked import cross_entropy

    p = cfg["params"]["vkr"]
    pairs, batch = int(p["pairs"]), int(p["batch"])
    dev = torch_device(cfg["device"])
    test_x = torch.stack([torch.as_tensor(data[f"vkr/{run.seed}/test_x"]) for run in runs]).to(dev)
    test_y = torch.stack([torch.as_tensor(data[f"vkr/{run.seed}/test_y"]) for run in runs]).to(dev)
    n_curve = int(p["curve_test"])
    cx, cy = (test_x, test_y) if not n_curve else (test_x[:, :n_curve], test_y[:, :n_curve])
    stack, models = _stack(cfg, setting, method, runs, "vkr", vkr.VOCAB, vkr.seq_len(pairs),
                           float(p["lr"]), dev)
    # fresh samples every step (infinite data), one stream per seed shared by all VKR runs
    rngs = [np.random.default_rng(derive_seed(cfg["paper"], "vkr", run.seed, "batches"))
            for run in runs]

    def next_batch():
        xy = [vkr.sample(r, batch, pairs) for r in rngs]
        return (torch.as_tensor(np.stack([a for a, _ in xy])).to(dev),
                torch.as_tensor(np.stack([b for _, b in xy])).to(dev))

    evaluator = _template(models[0], "vkr")  # plain model, run with each replica's parameters

    def accuracy(s, x, y):  # per seed, each on its own test set
        hits = [(replica_logits(s, evaluator, r, x[r]).argmax(-1) == y[r]).double().mean()
                for r in range(s.R)]
        return torch.stack(hits).cpu().numpy()

    train_curve, acc_curve, sec = fit(cfg, stack, next_batch, cross_entropy, int(p["steps"]),
                                      lambda s: accuracy(s, cx, cy), int(p["curve_every"]))
    final_acc = accuracy(stack, test_x, test_y)
    _unstack(stack, models, "vkr")
    out = []
    for r, run in enumerate(runs):
        final = {"test_acc": float(final_acc[r]), "n_params": n_params(models[r]),
                 "cpu_s_per_step": sec}
        if method == "castle":
            final.update(exactness(models[r], test_x[r].cpu().numpy(),
                                   run.rng_seed(cfg["paper"], "exactness")))
        out.append((run, final, {"train_loss": train_curve[r], "test_acc_curve": acc_curve[r]}))
    return out


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    """Every (setting, method) of the shard trains all its seeds at once (stacked)."""
    state, rows = {}, {}
    groups: dict[tuple, list] = {}
    for run in runs:
        groups.setdefault((run.setting, run.method), []).append(run)
    for (setting, method), group in groups.items():
        fn = _train_lm if _task(cfg, setting) == "lm" else _train_vkr
        for run, final, series in fn(cfg, data, setting, method, group):
            for k, v in final.items():
                state[f"{run.key}/{k}"] = np.array(float(v))
            rows[run.key] = [{**run.as_dict(), "step": int(s), "metric": metric,
                              "value": float(v)} for metric, pts in series.items()
                             for s, v in pts]
    return state, [row for run in runs for row in rows[run.key]]  # in the runs' order


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
