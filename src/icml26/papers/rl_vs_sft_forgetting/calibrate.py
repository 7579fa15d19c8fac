"""Side experiment (outside the pipeline): the calibration of Part B's absolute SFT learning rate.

The official scripts give SFT and Self-SFT AdamW lr 1e-4 (5e-5 for the 7B/8B models) and RL
5e-6 (scripts/sft.sh, self_sft.sh, rl.sh). The ratio carries over to our network
(rl_lr_ratio); the absolute value does not: a 1e-9-parameter LLM and a 6k-parameter MLP
move differently at the same Adam step. The rule, fixed before any run and reading no claim's
metric (it looks at SFT's new-task accuracy only, never at a drop or at RL):

    start at the official 1e-4 and multiply by sqrt(10) until SFT (the official recipe:
    AdamW, warm-up + cosine, batch 256, `steps` steps) reaches new-task accuracy >= match_acc
    within the first half of its steps on every calibration seed; lr_sft is that value.

Calibration seeds are CAL_SEEDS, base models drawn from the streams of a setting named
"calibration", so no claim's run (spec seeds, seed_offset=1000) shares a task or a base model.

    python -m icml26.papers.rl_vs_sft_forgetting.calibrate          # default scale
"""

from __future__ import annotations

import sys

import numpy as np

from icml26.seeding import derive_seed

from . import experiment, policy

CAL_SEEDS = (9000, 9001, 9002, 9003, 9004)
CAL_SETTING = "calibration"
START, RATIO, MAX_TRIES = 1e-4, 10 ** 0.5, 12


def _first_reach(cfg: dict, p: dict, lr: float, tasks, mask, base) -> np.ndarray:
    """First logged step at which SFT's new accuracy reaches match_acc, per seed (inf if never)."""
    match = float(cfg["params"]["match_acc"])
    R = len(CAL_SEEDS)
    first = np.full(R, np.inf)

    def log(step, params):
        _, new, _ = policy.evaluate(params, tasks, mask)
        hit = (new >= match) & ~np.isfinite(first)
        first[hit] = step

    rngs = [np.random.default_rng(derive_seed(cfg["paper"], CAL_SETTING, s, "samples"))
            for s in CAL_SEEDS]
    policy.post_train("sft", base, tasks, mask, rngs, {**p, "lr_sft": lr}, log)
    return first


def calibrate_lr_sft(cfg: dict, setting: str = "policy", out=sys.stdout) -> float:
    p = experiment.setting_params(cfg, setting)
    tasks_l = [policy.make_tasks(experiment._rng(cfg["paper"], CAL_SETTING, s, "tasks"),
                                 int(p["prompts"]), int(p["vocab"]), int(p["n_correct"]))
               for s in CAL_SEEDS]
    tasks = {k: np.stack([t[k] for t in tasks_l]) for k in tasks_l[0]}
    mask = np.stack([policy.correct_mask(C, int(p["vocab"])) for C in tasks["C"]])
    base = policy.pretrain(tasks, [experiment._rng(cfg["paper"], CAL_SETTING, s, "pretrain")
                                   for s in CAL_SEEDS],
                           steps=int(p["pretrain_steps"]), lr=float(p["pretrain_lr"]),
                           batch=int(p["pretrain_batch"]), hidden=int(p["hidden"]),
                           vocab=int(p["vocab"]), label_noise=float(p["label_noise"]))
    half = int(p["steps"]) / 2
    lr = START
    for _ in range(MAX_TRIES):
        first = _first_reach(cfg, p, lr, tasks, mask, base)
        ok = bool(np.all(first <= half))
        print(f"lr_sft {lr:.3g}: first step with new acc >= {cfg['params']['match_acc']} per "
              f"calibration seed {first.tolist()} (half budget {half:g}) -> "
              f"{'chosen' if ok else 'too slow'}", file=out)
        if ok:
            return lr
        lr *= RATIO
    raise RuntimeError("no learning rate on the grid reaches match_acc within half the steps")


if __name__ == "__main__":
    from icml26.pipeline import resolve

    scale = sys.argv[1] if len(sys.argv) > 1 else "default"
    print(f"chosen lr_sft = {calibrate_lr_sft(resolve('rl-vs-sft-forgetting', scale)):.6g}")
