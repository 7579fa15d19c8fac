"""Stages of the muloco paper: prepare (corpus, inner-lr selection), train, evaluate.

A run is (method, setting, seed); a setting is a number of workers K (and optionally H). The
methods are DiLoCo (AdamW inner), MuLoCo (Muon inner) and the data-parallel baselines DP-AdamW
and DP-Muon (one replica, full global batch; the config runs them once per seed, in the K = 1
setting). For a (setting, seed), every method starts from the same initial model (derived from
the seed) and sees the same batches (derived from K and seed): worker k of K draws its
B/K sequences per inner step from the k-th of K contiguous slices of the training text; a DP
run draws its B sequences from the whole text, with the same stream as K = 1.

prepare also runs the spec's inner-lr selection (DP at K = 1, ``lrsel_steps`` steps, a selection
seed of its own that no grid run uses): AdamW over ``lrsel_adamw``, then Muon over ``lrsel_muon``
(its AdamW share at Muon's lr with ``adamw_share: muon``, the authors' setting; at the chosen
AdamW lr with ``adamw_share: adamw``), each grid extended where the choice lands on its edge
(at most twice, alike for both); the chosen lrs are stored in data.npz and frozen for every
method and K. This is the only stage besides train that imports torch (once, in the prepare
job), so that every train job reads the same selected lrs.
"""

from __future__ import annotations

import numpy as np

from icml26.lm import corpus
from icml26.seeding import derive_seed

METHODS = ("dp-adamw", "dp-muon", "diloco", "muloco")
KIND = {"dp-adamw": "adamw", "dp-muon": "muon", "diloco": "adamw", "muloco": "muon"}
DILOCO = {"diloco", "muloco"}
# The spec's module list (paper 49's construction): the shared list less three modules.
SPEC_MODULES = tuple(m for m in corpus.STDLIB_DOC_MODULES
                     if m not in ("os.path", "email.message", "http.client"))


def setting_params(cfg: dict, setting: str) -> dict:
    return {**cfg["params"], **(cfg["settings"][setting] or {})}


def workers_of(cfg: dict, method: str, setting: str) -> int:
    """K of a run: the setting's K for DiLoCo/MuLoCo, 1 for the data-parallel baselines."""
    return int(setting_params(cfg, setting).get("K", 1)) if method in DILOCO else 1


def worker_starts(n_tokens: int, K: int, per_worker: int, steps: int, context: int,
                  rng: np.random.Generator) -> np.ndarray:
    """(steps, K, per_worker) window starts; worker k samples inside the k-th of K equal
    contiguous slices of the text (every window of context + 1 tokens stays in its slice)."""
    bounds = np.linspace(0, n_tokens, K + 1).astype(np.int64)
    out = np.empty((steps, K, per_worker), dtype=np.int64)
    for k in range(K):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        if hi - lo <= context + 1:
            raise ValueError(f"shard {k} of {K} has {hi - lo} tokens, fewer than a window")
        out[:, k, :] = rng.integers(lo, hi - context, size=(steps, per_worker))
    return out


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    p = cfg["params"]
    text = corpus.to_ascii(corpus.stdlib_docstrings(SPEC_MODULES))
    if p.get("max_chars"):
        text = text[: int(p["max_chars"])]
    tok = corpus.CharTokenizer(text)
    ids = tok.encode(text)
    train_ids, val_ids = corpus.split_contiguous(ids, float(p["train_frac"]))
    T = int(p["context"])
    starts = np.linspace(0, len(val_ids) - T - 1, int(p["val_windows"])).astype(np.int64)
    val_windows = val_ids[starts[:, None] + np.arange(T + 1)]
    prov = corpus.provenance(text)
    data = {
        "train_ids": train_ids.astype(np.int16),
        "val_windows": val_windows.astype(np.int16),
        "vocab": np.array(tok.chars),
        "python_version": np.array(prov["python"]),
        "corpus_sha256": np.array(prov["sha256"]),
        "corpus_chars": np.array(len(text)),
    }
    data.update(select_inner_lrs(cfg, data))
    return data


def model_config(cfg: dict, vocab_size: int):
    from icml26.lm.model import GPTConfig

    p = cfg["params"]
    return GPTConfig(vocab_size=vocab_size, context=int(p["context"]), d_model=int(p["d_model"]),
                     n_heads=int(p["n_heads"]), n_layers=int(p["n_layers"]))


def initial_model(cfg: dict, config, seed: int, device=None) -> dict:
    """The initial parameters of every run of this seed (all methods, all K): drawn on the
    CPU (the same numbers on every device), then moved to ``device`` (None: stay on the CPU)."""
    from .fleet import make_model

    model = make_model(config, derive_seed(cfg["paper"], "init", seed))
    dev = "cpu" if device is None else device
    return {n: p.detach().clone().to(dev) for n, p in model.named_parameters()}


def hyper(cfg: dict, setting: str | None = None, **over) -> dict:
    p = setting_params(cfg, setting) if setting else dict(cfg["params"])
    return {**p, **over}


def weight_decays(p: dict, K: int, steps: int) -> dict[str, float]:
    """The weight decays of a run with K workers (1 for DP) and ``steps`` inner steps.

    The authors' rule (jobs/muloco_paper/diloco_muloco_no-compression_h100.py and
    ddp_baselines_h100.py): wd = OPTIMAL_WD * WD_BASE_STEPS / (STEPS * K), K = 1 for DP, so that
    wd * steps is the same for every run length and the K workers' decays add up to one
    DP run's. ``wd`` / ``muon_wd`` are the bases (AdamW, Muon), ``wd_base_steps`` the step
    count they belong to; ``wd_base_steps`` null: ``wd`` / ``muon_wd`` are used as they are.
    """
    base = p.get("wd_base_steps")
    f = 1.0 if base is None else float(base) / (float(steps) * int(K))
    return {"wd": float(p["wd"]) * f, "muon_wd": float(p["muon_wd"]) * f}


def outer_of(p: dict, method: str) -> dict[str, float]:
    """The outer Nesterov (lr, momentum) of a DiLoCo-type method (params or a setting)."""
    return {"outer_lr": float(p["outer_lr"][method]),
            "outer_momentum": float(p["outer_momentum"][method])}


# setting keys that change the outer step of a run only (one fleet may mix them)
PER_RUN_KEYS = ("K", "outer_lr", "outer_momentum", "variant", "n_seeds")


def fleet_key(sp: dict, per_worker: int) -> str:
    """Runs whose hyperparameters agree except K and the outer step share one fleet (vmap
    needs equal per-worker batches and schedules; the inner hp are the fleet's)."""
    import json

    rest = {k: v for k, v in sp.items() if k not in PER_RUN_KEYS}
    return json.dumps({"b": per_worker, **rest}, sort_keys=True)


LRSEL_MAX_EXTEND = 2  # PAPER-CHECKLIST: an edge choice extends the grid, at most twice


def extend_at_edge(lrs: list[float], losses: list[float], run_one) -> tuple[list, list]:
    """The grid rule of the checklist, alike for every optimizer: while the lowest loss sits
    at an edge of the (sorted) grid, add one more lr beyond that edge with the grid's own
    ratio there (at most ``LRSEL_MAX_EXTEND`` times). ``run_one(lr)`` -> final loss."""
    lrs, losses = list(lrs), list(losses)
    for _ in range(LRSEL_MAX_EXTEND):
        order = np.argsort(lrs)
        lo, hi = order[0], order[-1]
        best = int(np.nanargmin(losses))
        if len(lrs) < 2 or best not in (lo, hi):
            break
        if best == hi:
            new = lrs[hi] * lrs[hi] / lrs[order[-2]]
        else:
            new = lrs[lo] * lrs[lo] / lrs[order[1]]
        lrs.append(float(new))
        losses.append(float(run_one(new)))
    return lrs, losses


def select_inner_lrs(cfg: dict, data: dict) -> dict[str, np.ndarray]:
    """The spec's inner-lr selection: DP at K = 1, ``lrsel_steps`` steps, lowest final
    validation loss. AdamW first; Muon's AdamW share runs at Muon's lr (``adamw_share: muon``,
    the authors' parameter groups) or at the chosen AdamW lr (``adamw_share: adamw``, an INFERRED
    earlier reading). Weight decays follow ``weight_decays`` at K = 1 and ``lrsel_steps``.

    The selection run has its own initial model and batches (streams "lrsel"), which no run of
    the grid uses, so no claim reads it; it is the same for every seed list and seed_offset.
    A choice on a grid edge extends the grid (``extend_at_edge``), for both optimizers alike.
    """
    import torch

    from icml26.seeding import torch_device

    from .diloco import Plan, train_plans
    from .fleet import make_model

    p = cfg["params"]
    dev = torch_device(cfg["device"])
    steps, B, T = int(p["lrsel_steps"]), int(p["batch"]), int(p["context"])
    config = model_config(cfg, len(data["vocab"]))
    template = make_model(config, 0).to(dev)
    ids = torch.as_tensor(data["train_ids"].astype(np.int64), device=dev)
    val = torch.as_tensor(data["val_windows"].astype(np.int64), device=dev)
    init = {n: t.detach().clone().to(dev) for n, t in
            make_model(config, derive_seed(cfg["paper"], "lrsel", "init")).named_parameters()}
    starts = worker_starts(len(ids), 1, B, steps, T,
                           np.random.default_rng(derive_seed(cfg["paper"], "lrsel", 0, "batches")))
    # DP: no outer step, no pseudogradient; evaluate only at the end
    hp = hyper(cfg, steps=steps, H=steps, measure_every=10**9, eval_every=1)

    wds = weight_decays(p, 1, steps)  # the wd rule at K = 1 and the selection's length

    def sweep(kind: str, lrs: list[float], fixed: dict) -> list[float]:
        plans = [Plan(f"{kind}-{i}", f"{kind}-{i}", kind, False, 1, init, starts,
                      lrs={**fixed, **wds, f"lr_{kind}": float(lr)})
                 for i, lr in enumerate(lrs)]
        train_plans(template, plans, ids, val, {**hp, **fixed})
        by_key = {pl.key: pl.curves[-1][2] for pl in plans}
        return [float(by_key[f"{kind}-{i}"]) for i in range(len(lrs))]

    out = {}
    fixed: dict = {}
    for kind, key in (("adamw", "lrsel_adamw"), ("muon", "lrsel_muon")):
        grid = [float(x) for x in p[key]]
        lrs, loss = extend_at_edge(grid, sweep(kind, grid, fixed),
                                   lambda lr, kind=kind, fixed=fixed: sweep(kind, [lr], fixed)[0])
        chosen = lrs[int(np.nanargmin(loss))]
        out.update({f"lrsel_{kind}_lrs": np.array(lrs), f"lrsel_{kind}_loss": np.array(loss),
                    f"lr_{kind}": np.array(chosen)})
        fixed = {"lr_adamw": chosen}
    return out


# ---------------------------------------------------------------------------------------------
def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    import torch

    from icml26.seeding import torch_device

    from .diloco import Plan, train_plans
    from .fleet import make_model

    # every replica, its optimizer state, the token ids and the batches on the device; the
    # window starts are drawn with numpy on the CPU (the same batches on every device)
    dev = torch_device(cfg["device"])
    config = model_config(cfg, len(data["vocab"]))
    template = make_model(config, 0).to(dev)  # structure only: replicas bring their weights
    ids = torch.as_tensor(data["train_ids"].astype(np.int64), device=dev)
    val = torch.as_tensor(data["val_windows"].astype(np.int64), device=dev)
    lrs = {"lr_adamw": float(data["lr_adamw"]), "lr_muon": float(data["lr_muon"])}
    groups: dict[tuple, list] = {}
    for run in runs:
        sp = setting_params(cfg, run.setting)
        K, B, T, steps = workers_of(cfg, run.method, run.setting), int(sp["batch"]), \
            int(sp["context"]), int(sp["steps"])
        if B % K:
            raise ValueError(f"global batch {B} is not divisible by K = {K}")
        # the batch stream depends on K and the seed only (the stream of setting "K<K>"), so
        # settings that differ in H or the outer step only see the same batches (paired)
        brng = np.random.default_rng(derive_seed(cfg["paper"], f"K{K}", run.seed, "batches"))
        plan = Plan(run.key, run.method, KIND[run.method], run.method in DILOCO, K,
                    initial_model(cfg, config, run.seed, dev),
                    worker_starts(len(ids), K, B // K, steps, T, brng),
                    lrs={**weight_decays(sp, K, steps),
                         **(outer_of(sp, run.method) if run.method in DILOCO else {})})
        plan.run = run
        groups.setdefault(fleet_key(sp, B // K), []).append(plan)
    # the lr selection of prepare, repeated as curve rows of every run (step 0) for the report
    lrsel = [(f"lrsel_loss_{name}_{lr:g}", float(v)) for name in ("adamw", "muon")
             for lr, v in zip(data[f"lrsel_{name}_lrs"], data[f"lrsel_{name}_loss"], strict=True)]
    state, curves = {}, []
    for plans in groups.values():
        setting = plans[0].run.setting
        train_plans(template, plans, ids, val, hyper(cfg, setting, **lrs))
        for plan in plans:
            run = plan.run
            for step, metric, value in plan.curves:
                curves.append({**run.as_dict(), "step": int(step), "metric": metric,
                               "value": float(value)})
            curves += [{**run.as_dict(), "step": 0, "metric": m, "value": v} for m, v in lrsel]
            vl = [v for _, m, v in plan.curves if m == "val_loss"]
            state[f"{run.key}/val_loss"] = np.array(vl)
            # K = 1 global model of each run, for inspection (small: ~60k floats)
            state[f"{run.key}/final_params"] = torch.cat(
                [t.reshape(-1) for t in plan.final.values()]).cpu().numpy().astype(np.float32)
    return state, curves


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """Per run: final validation loss, mean cos(Δ, Δ_ref) and ‖Δ‖/‖Δ_ref‖ over the measured
    rounds (NaN for DP), last-round train loss, K and the frozen inner lrs."""
    out = []
    for run in runs:
        part = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                      & (curves["seed"] == run.seed)]

        def series(metric, part=part):
            s = part[part["metric"] == metric].sort_values("step")
            return s["value"].to_numpy(dtype=float)

        val, cos, ratio, tr = (series(m) for m in ("val_loss", "cos", "norm_ratio",
                                                    "train_loss"))
        kind = KIND[run.method]
        out.append({
            "final_val_loss": float(val[-1]) if val.size else np.nan,
            "mean_cos": float(cos.mean()) if cos.size else np.nan,
            "mean_norm_ratio": float(ratio.mean()) if ratio.size else np.nan,
            "final_train_loss": float(tr[-1]) if tr.size else np.nan,
            "K": float(workers_of(cfg, run.method, run.setting)),
            "inner_lr": float(data["lr_muon"] if kind == "muon" else data["lr_adamw"]),
            "lr_adamw": float(data["lr_adamw"]),
            "lr_muon": float(data["lr_muon"]),
        })
    return out
