"""Stages of rl-vs-sft-forgetting: prepare (tasks + pretrained base models), train, evaluate.

A setting belongs to one part, named by its `part` parameter:
- part "mixture" (Part A): the two-mode mixture "model" (mixture.py); methods sft, rl,
  sft-replay and sft-small-lr (the official simulation's second forward-KL learning rate).
- part "policy" (Part B): the tiny shared-weight policy network (policy.py); methods sft,
  self-sft, iter-self-sft, rl, rl-nokl, rl-mean, and the spec's earlier reading sft-spec,
  rl-spec (labelled variants, no claim).
- part "sequence" (Part B, full profile only): a 2-layer character transformer with
  multi-token answers (sequence.py, torch imported inside train only); the six official-recipe
  methods.
The config's `exclude` list removes the (method, setting) pairs that do not exist in a part.

Paired comparisons: in Part B every method of a (setting, seed) starts from the same base
model and the same task mappings, pretrained once (in `prepare` for the MLP, once per train
job for the transformer) from streams derived from (paper, setting, seed); a run's own
randomness (its samples) comes from run.rng_seed. Runs of
the same (setting, method) are trained together along a leading batch axis; each run keeps its
own generator, so results do not depend on sharding.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed, torch_device

from . import mixture, policy

MIXTURE_METHODS = ("sft", "rl", "sft-replay", "sft-small-lr")
POLICY_METHODS = policy.METHODS
SEQUENCE_METHODS = ("sft", "self-sft", "iter-self-sft", "rl", "rl-nokl", "rl-mean")
PARTS = ("mixture", "policy", "sequence")


def part(cfg: dict, setting: str) -> str:
    p = (cfg["settings"][setting] or {}).get("part")
    if p not in PARTS:
        raise ValueError(f"setting {setting!r}: part must be one of {PARTS}, got {p!r}")
    return p


def setting_params(cfg: dict, setting: str) -> dict:
    """Params of one setting: the paper's shared params, then those of its part
    (params.mixture, params.policy or params.sequence), then the setting's own."""
    own = cfg["settings"][setting] or {}
    shared = {k: v for k, v in cfg["params"].items() if k not in PARTS}
    return {**shared, **cfg["params"].get(part(cfg, setting), {}), **own}


def _rng(*parts) -> np.random.Generator:
    return np.random.default_rng(derive_seed(*parts))


# ---------------------------------------------------------------------------------------------
def check_policy_params(setting: str, p: dict) -> None:
    """Cross-key constraints the schema cannot state; one line each."""
    s = p["spec_reading"]
    problems = []
    if int(p["n_correct"]) > int(p["vocab"]):
        problems.append(f"n_correct {p['n_correct']} > vocab {p['vocab']}")
    if int(p["rl_prompts"]) > int(p["prompts"]):
        problems.append(f"rl_prompts {p['rl_prompts']} > prompts {p['prompts']} (drawn "
                        "without replacement)")
    if int(s["batch"]) % int(s["group"]) or int(s["batch"]) // int(s["group"]) > int(p["prompts"]):
        problems.append(f"spec_reading batch {s['batch']} must be a multiple of its group "
                        f"{s['group']} with at most `prompts` groups")
    if problems:
        raise ValueError(f"setting {setting!r} (params.policy): " + "; ".join(problems))


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Task mappings and the pretrained base model of every (policy setting, seed).

    Pretraining runs once here (not in every train shard); the seeds of a setting are
    pretrained together, each from its own streams.
    """
    out = {"settings": np.array(list(cfg["settings"]))}
    paper = cfg["paper"]
    for setting in cfg["settings"]:
        if part(cfg, setting) != "policy":
            continue
        p = setting_params(cfg, setting)
        check_policy_params(setting, p)
        seeds = list(cfg["seeds"])
        tasks = [policy.make_tasks(_rng(paper, setting, s, "tasks"), int(p["prompts"]),
                                   int(p["vocab"]), int(p["n_correct"])) for s in seeds]
        stacked = {k: np.stack([t[k] for t in tasks]) for k in tasks[0]}
        base = policy.pretrain(stacked, [_rng(paper, setting, s, "pretrain") for s in seeds],
                               steps=int(p["pretrain_steps"]), lr=float(p["pretrain_lr"]),
                               batch=int(p["pretrain_batch"]), hidden=int(p["hidden"]),
                               vocab=int(p["vocab"]), label_noise=float(p["label_noise"]))
        for i, s in enumerate(seeds):
            for k, v in tasks[i].items():
                out[f"{setting}/{s}/task_{k}"] = v
            for k in policy.PARAM_NAMES:
                out[f"{setting}/{s}/base_{k}"] = base[k][i]
    return out


def _stack(data: dict, setting: str, seeds: list, prefix: str, names) -> dict:
    return {k: np.stack([data[f"{setting}/{s}/{prefix}{k}"] for s in seeds]) for k in names}


# ---------------------------------------------------------------------------------------------
def _train_mixture(cfg, setting, method, runs, state, curves) -> None:
    p = setting_params(cfg, setting)
    c = mixture.constants(p)
    ys = mixture.grid(c)
    iters = int(p["iterations"])
    every = int(p["log_every"])
    steps = set(range(0, iters + 1, every)) | {iters}
    steps |= {s for s in p["snapshots"] if s <= iters}
    lr = float({"rl": p["lr_rl"], "sft-small-lr": p["lr_sft_small"]}.get(method, p["lr_sft"]))
    rngs = [np.random.default_rng(r.rng_seed(cfg["paper"], "samples")) for r in runs]
    algo = "sft" if method == "sft-small-lr" else method     # forward KL, FWD_LR[1]
    logged, old_all, new_all = mixture.train(algo, c, rngs, iters, lr, int(p["samples"]),
                                             steps)
    theta0 = logged[0]
    for step in sorted(logged):
        theta = logged[step]
        old, new = old_all[step], new_all[step]
        kl = mixture.kl_to_init(theta, theta0, c, ys)
        nat = mixture.natural(theta, c["param"])
        for i, run in enumerate(runs):
            vals = {"old_acc": old[i], "new_acc": new[i], "kl_base": kl[i],
                    **{n: nat[i, j] for j, n in enumerate(mixture.NATURAL_NAMES)}}
            curves.extend({**run.as_dict(), "step": step, "metric": k, "value": float(v)}
                          for k, v in vals.items())
    reading = mixture.gain_reading(old_all, new_all, float(p["gain_threshold"]))
    for i, run in enumerate(runs):
        state[f"{run.key}/theta"] = logged[iters][i]
        state[f"{run.key}/gain_reading"] = np.array([reading[k][i] for k in GAIN_FIELDS])


GAIN_FIELDS = ("iter", "drop", "old_acc", "new_acc", "censored")


def _train_policy(cfg, data, setting, method, runs, state, curves) -> None:
    p = setting_params(cfg, setting)
    seeds = [r.seed for r in runs]
    tasks = _stack(data, setting, seeds, "task_", ("g", "C", "a", "e"))
    base = _stack(data, setting, seeds, "base_", policy.PARAM_NAMES)
    mask = np.stack([policy.correct_mask(C, int(p["vocab"])) for C in tasks["C"]])
    _, base_new = policy.all_logp(base, int(p["prompts"]))
    rngs = [np.random.default_rng(r.rng_seed(cfg["paper"], "samples")) for r in runs]

    def log(step, params):
        old, new, kl = policy.evaluate(params, tasks, mask, base_new)
        for i, run in enumerate(runs):
            for k, v in (("old_acc", old[i]), ("new_acc", new[i]), ("kl_base", kl[i])):
                curves.append({**run.as_dict(), "step": step, "metric": k, "value": float(v)})

    final = policy.post_train(method, base, tasks, mask, rngs, p, log)
    for i, run in enumerate(runs):
        for k in policy.PARAM_NAMES:
            state[f"{run.key}/{k}"] = final[k][i]


def _train_sequence(cfg, setting, method, runs, curves, bases) -> None:
    """Full profile: the character transformer. Its base model of each (setting, seed) is
    pretrained here (torch may not be imported by prepare), once per job, from streams derived
    from (paper, setting, seed), so every method and every sharding sees the same base.
    Models live on the config's device (initialised on the CPU, then moved; random draws stay
    on the CPU, so the CPU numbers do not depend on this)."""
    import torch
    import torch.nn.functional as F

    from . import sequence

    dev = torch_device(cfg["device"])
    p = setting_params(cfg, setting)
    if int(p["rl_prompts"]) > int(p["prompts"]):
        raise ValueError(f"setting {setting!r} (params.sequence): rl_prompts {p['rl_prompts']} "
                         f"> prompts {p['prompts']} (drawn without replacement)")
    for run in runs:
        key = (setting, run.seed)
        if key not in bases:
            tasks = sequence.make_tasks(_rng(cfg["paper"], setting, run.seed, "tasks"),
                                        int(p["prompts"]))
            base = sequence.pretrain(torch, F, tasks, p,
                                     derive_seed(cfg["paper"], setting, run.seed, "pretrain"),
                                     device=dev)
            bases[key] = (tasks, base)
        tasks, base = bases[key]

        def log(step, old, new, kl, run=run):
            for k, v in (("old_acc", old), ("new_acc", new), ("kl_base", kl)):
                curves.append({**run.as_dict(), "step": step, "metric": k, "value": float(v)})

        sequence.post_train(method, base, tasks, p, run.rng_seed(cfg["paper"], "samples"), log)


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    groups: dict[tuple[str, str], list] = {}
    bases: dict = {}  # sequence part: base model per (setting, seed), pretrained once per job
    for run in runs:
        groups.setdefault((run.setting, run.method), []).append(run)
    for (setting, method), group in groups.items():
        if part(cfg, setting) == "mixture":
            if method not in MIXTURE_METHODS:
                raise ValueError(f"method {method!r} does not run in mixture setting {setting!r}")
            _train_mixture(cfg, setting, method, group, state, curves)
        elif part(cfg, setting) == "sequence":
            if method not in SEQUENCE_METHODS:
                raise ValueError(f"method {method!r} does not run in sequence setting {setting!r}")
            _train_sequence(cfg, setting, method, group, curves, bases)
        else:
            if method not in POLICY_METHODS:
                raise ValueError(f"method {method!r} does not run in policy setting {setting!r}")
            _train_policy(cfg, data, setting, method, group, state, curves)
    return state, curves


# ---------------------------------------------------------------------------------------------
def run_metrics(trace, match_acc: float) -> dict:
    """Metrics of one run from its logged trace (a DataFrame indexed by step, one column per
    metric): drops of old accuracy relative to the start (step 0, the base model), at the first
    logged step whose new accuracy reaches match_acc (matched target performance; NaN if never)
    and at the end, and the KL to the base model at both points.

    A run that never reaches match_acc has a censored matched drop: it would be read after the
    end of training. ``drop_matched_bound`` enters it at the final drop, and
    ``matched_censored`` = 1 says the true matched drop is taken to be at least that (forgetting
    does not undo itself while new accuracy is still climbing towards match_acc); for a run that
    reaches match_acc it equals ``drop_matched`` and ``matched_censored`` is 0."""
    trace = trace.sort_index()
    base_old = float(trace["old_acc"].iloc[0])
    reached = trace.index[trace["new_acc"].to_numpy() >= match_acc]
    out = {
        "old_acc_base": base_old,
        "new_acc_base": float(trace["new_acc"].iloc[0]),
        "old_acc_final": float(trace["old_acc"].iloc[-1]),
        "new_acc_final": float(trace["new_acc"].iloc[-1]),
        "drop_final": base_old - float(trace["old_acc"].iloc[-1]),
        "kl_final": float(trace["kl_base"].iloc[-1]),
        "step_matched": float(reached[0]) if len(reached) else np.nan,
        "drop_matched": base_old - float(trace.loc[reached[0], "old_acc"]) if len(reached)
        else np.nan,
        "kl_matched": float(trace.loc[reached[0], "kl_base"]) if len(reached) else np.nan,
    }
    out["matched_censored"] = 0.0 if len(reached) else 1.0
    out["drop_matched_bound"] = (out["drop_matched"] if len(reached)
                                 else out["drop_final"])
    if "pi" in trace:
        out["pi_final"] = float(trace["pi"].iloc[-1])
    return out


def gain_metrics(reading: np.ndarray) -> dict:
    """Part A's official reading point (mixture.gain_reading) as metrics: the first iteration
    whose gain Acc(T) - Acc_0(T) reaches the threshold (NaN if never), the drop of Acc(T')
    there (read at the last iteration and flagged censored if never), and the accuracies."""
    r = dict(zip(GAIN_FIELDS, (float(x) for x in reading), strict=True))
    return {"iter_gain": r["iter"], "drop_gain": r["drop"], "old_acc_gain": r["old_acc"],
            "new_acc_gain": r["new_acc"], "gain_censored": r["censored"]}


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    rows = []
    match_acc = float(cfg["params"]["match_acc"])
    for run in runs:
        part_ = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                       & (curves["seed"] == run.seed)]
        trace = part_.pivot_table(index="step", columns="metric", values="value")
        row = run_metrics(trace, match_acc)
        if f"{run.key}/gain_reading" in state:
            row.update(gain_metrics(state[f"{run.key}/gain_reading"]))
        rows.append(row)
    return rows
