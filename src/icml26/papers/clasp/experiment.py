"""Stages of clasp: fixed evaluation sets and the teacher's reference (prepare), the teaching
protocol of every method (train, torch imported there only), metrics per run (evaluate)."""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import env


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per (map, seed): the fixed evaluation starts and the teacher's success/diversity on them."""
    p = cfg["params"]
    n, horizon = int(p["n_eval"]), int(p["horizon"])
    out = {}
    for setting, s in cfg["settings"].items():
        for seed in cfg["seeds"]:
            for kind, sd in (("id", p["noise_sd"]), ("shift", p["shift_noise_sd"])):
                starts = eval_starts(cfg["paper"], setting, seed, kind, n)
                tape = env.noise_tape(derive_seed(cfg["paper"], setting, seed, f"eval-{kind}-tape"),
                                      horizon, n)
                ep = env.teacher_eval(s["map"], starts, tape,
                                      derive_seed(cfg["paper"], setting, seed, "teacher-eval"),
                                      horizon, float(sd))
                gaps = env.gap_used(s["map"], ep.states)
                out[f"{setting}/{seed}/{kind}_starts"] = starts
                out[f"{setting}/{seed}/teacher_{kind}_success"] = np.array(ep.success.mean())
                out[f"{setting}/{seed}/teacher_{kind}_diversity"] = np.array(
                    diversity(gaps, ep.success, len(env.get_map(s["map"])["gaps"])))
    return out


def eval_starts(paper: str, setting: str, seed: int, kind: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(derive_seed(paper, setting, seed, f"eval-{kind}"))
    return env.task_starts(rng, n) if kind == "id" else env.shift_starts(rng, n)


def diversity(gaps: np.ndarray, success: np.ndarray, n_gaps: int) -> float:
    """Entropy (bits) of the gap used among successful rollouts (= H(p_B) with two gaps)."""
    ok = success.astype(bool) & (gaps >= 0)
    return env.entropy_bits(np.bincount(gaps[ok], minlength=n_gaps))


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from .teaching import run_setting

    torch.set_num_threads(1)
    state, curves = {}, []
    for setting in dict.fromkeys(r.setting for r in runs):
        s, c = run_setting(cfg, setting, [r for r in runs if r.setting == setting])
        state.update(s)
        curves.extend(c)
    return state, curves


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    out = []
    for run in runs:
        k, s = run.key, run.setting
        n_gaps = len(env.get_map(cfg["settings"][s]["map"])["gaps"])
        id_ok, id_gap = state[f"{k}/id_success"], state[f"{k}/id_gap"]
        sh_ok, sh_gap = state[f"{k}/shift_success"], state[f"{k}/shift_gap"]
        ok_gaps = id_gap[(id_ok > 0) & (id_gap >= 0)]
        target = state[f"{k}/targeting"]
        out.append({
            "success_id": float(id_ok.mean()),
            "success_shift": float(sh_ok.mean()),
            "diversity": diversity(id_gap, id_ok, n_gaps),
            "diversity_shift": diversity(sh_gap, sh_ok, n_gaps),
            "p_B": float((ok_gaps == 1).mean()) if len(ok_gaps) else float("nan"),
            # mean over feedback rounds of the fraction of new demo states in the top-3
            # failing regions (NaN for BC-offline, which has no practice rollouts)
            "targeting": float(np.nanmean(target)) if np.isfinite(target).any() else float("nan"),
            "demos": float(len(state[f"{k}/demo_starts"])),
            "demo_start_y_mean": float(state[f"{k}/demo_starts"][:, 1].mean()),
            "n_pairs": float(state[f"{k}/n_pairs"]),
            "teacher_success_id": float(data[f"{s}/{run.seed}/teacher_id_success"]),
            "teacher_diversity": float(data[f"{s}/{run.seed}/teacher_id_diversity"]),
        })
    return out
