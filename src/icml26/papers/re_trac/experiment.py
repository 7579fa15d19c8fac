"""Stages of the re-trac paper: prepare (task sets + oracle check), train (run every method on
every question), evaluate (accuracy, per-round calls and tokens, redundancy).

Runs are (method, setting, seed); a setting is a budget B (and, at full scale, a context window
W or a clue count C). A seed's entity table and questions derive from derive_seed(paper,
"tasks", seed, C) only, so every method and budget of a seed answers the same questions
(paired); each question's policy stream derives from the run's own seed and the question id, so
results do not depend on sharding. Pure Python / numpy; no torch.
"""

from __future__ import annotations

import numpy as np

from icml26.agents import Budget, oracle_rate
from icml26.agents.worlds.browse import BrowseTask, BrowseWorld, make_questions, make_table
from icml26.errors import ConfigError
from icml26.seeding import derive_seed

from .agent import PolicyParams, run_method

STATE_METHODS = ("re-trac", "re-trac-noplan", "re-trac-official")


def P(cfg):
    return cfg["params"]


def setting_of(cfg, setting) -> dict:
    """Budget, window and clue count of a setting (window / clues default to the params)."""
    s, p = cfg["settings"][setting], P(cfg)
    return {"budget": int(s["budget"]), "window": int(s.get("window", p["window"])),
            "n_clues": int(s.get("n_clues", p["n_clues"]))}


def n_rounds(cfg, method) -> int:
    if method in ("react", "react-full"):
        return 1
    if method == "re-trac-official":
        return int(P(cfg)["official_cycles"])
    return int(P(cfg)["rounds"])


def task_set(cfg, seed, n_clues):
    """The seed's entity table, result order and questions with ``n_clues`` clues."""
    p = P(cfg)
    rng = np.random.default_rng(derive_seed(cfg["paper"], "tasks", seed))
    table, rank = make_table(rng, int(p["n_entities"]), int(p["n_attrs"]), int(p["n_values"]))
    qrng = np.random.default_rng(derive_seed(cfg["paper"], "questions", seed, n_clues))
    return table, rank, make_questions(qrng, table, int(p["n_questions"]), n_clues)


def world_of(cfg, table, rank) -> BrowseWorld:
    p = P(cfg)
    return BrowseWorld(table, rank, page_size=int(p["page_size"]),
                       search_tokens=int(p["search_tokens"]), open_tokens=int(p["open_tokens"]),
                       n_values=int(p["n_values"]))


def _needed(cfg):
    from icml26.grid import runs

    return sorted({(r.seed, setting_of(cfg, r.setting)["n_clues"]) for r in runs(cfg)})


def check_params(cfg) -> None:
    """Cross-key checks the schema cannot express (one line naming the key)."""
    p = P(cfg)
    for name in cfg["settings"]:
        c = setting_of(cfg, name)["n_clues"]
        if c > int(p["n_attrs"]):
            raise ConfigError(f"re-trac: n_clues = {c} (setting {name!r}) exceeds n_attrs = "
                              f"{p['n_attrs']}; a clue needs its own attribute")
    if int(p["window"]) < 1:
        raise ConfigError("re-trac: window must be >= 1")


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Every (seed, C) task set the grid needs, with the checks every failure rests on: each
    question has exactly one answer, and the scripted oracle solves all of them within
    ``oracle_budget`` tool calls (so every failure is the policy's)."""
    check_params(cfg)
    out = {}
    for seed, c in _needed(cfg):
        table, rank, qs = task_set(cfg, seed, c)
        w = world_of(cfg, table, rank)
        key = f"{c}/{seed}"
        out[f"table/{seed}"] = table
        out[f"rank/{seed}"] = rank
        out[f"clues/{key}"] = np.array([q.clues for q in qs], dtype=np.int64)
        out[f"target/{key}"] = np.array([q.target for q in qs], dtype=np.int64)
        n_match = [int(np.all(table[:, [a for a, _ in q.clues]]
                              == np.array([v for _, v in q.clues]), axis=1).sum()) for q in qs]
        out[f"n_answers/{key}"] = np.array(n_match, dtype=np.int64)
        out[f"matches_per_clue/{key}"] = np.array(
            [len(w.matches(a, v)) for q in qs for a, v in q.clues], dtype=np.int64)
        b = int(P(cfg)["oracle_budget"])
        out[f"oracle_rate/{key}"] = np.array(oracle_rate(
            w, qs, max_steps=4 * b, budgets=[Budget(calls=b) for _ in qs]))
    return out


def load_tasks(cfg, data, seed, n_clues):
    key = f"{n_clues}/{seed}"
    qs = [BrowseTask(i, tuple((int(a), int(v)) for a, v in cl), int(t))
          for i, (cl, t) in enumerate(zip(data[f"clues/{key}"], data[f"target/{key}"],
                                          strict=True))]
    return world_of(cfg, data[f"table/{seed}"], data[f"rank/{seed}"]), qs


def policy_params(cfg, method) -> PolicyParams:
    p = P(cfg)
    bonus = 0.0 if method == "re-trac-noplan" else float(p["plan_bonus"])
    return PolicyParams(tau=float(p["tau"]), plan_bonus=bonus, plan_top=int(p["plan_top"]))


def question_seeds(cfg, run, n):
    base = run.rng_seed(cfg["paper"], "policy")
    return [derive_seed(base, q) for q in range(n)]


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    p = P(cfg)
    state, curves, cache = {}, [], {}
    for run in runs:
        s = setting_of(cfg, run.setting)
        ck = (run.seed, s["n_clues"])
        if ck not in cache:
            cache[ck] = load_tasks(cfg, data, *ck)
        world, qs = cache[ck]
        res = run_method(world, qs, run.method, budget=s["budget"], window=s["window"],
                         rounds=int(p["rounds"]), pp=policy_params(cfg, run.method),
                         seeds=question_seeds(cfg, run, len(qs)),
                         state_token_cost=int(p["state_token_cost"]),
                         cycles=int(p["official_cycles"]))
        k = run.key
        state[f"{k}/correct"] = np.array(res.correct, dtype=np.int64)
        state[f"{k}/final"] = np.array([-1 if f is None else f for f in res.final],
                                       dtype=np.int64)
        for name in ("calls", "tokens", "state_tokens"):
            state[f"{k}/{name}"] = np.array(getattr(res, name), dtype=np.int64)
        state[f"{k}/answered"] = np.array([[e == "answered" for e in ex] for ex in res.exits],
                                          dtype=np.int64)
        state[f"{k}/exit"] = np.array(res.exits, dtype=str)
        state[f"{k}/redundant"] = np.array(res.redundant, dtype=np.int64)
        state[f"{k}/n_calls"] = np.array(res.n_calls, dtype=np.int64)
        for r in range(state[f"{k}/calls"].shape[1]):
            for name in ("calls", "tokens", "state_tokens"):
                curves.append({**run.as_dict(), "step": r + 1, "metric": f"{name}_per_round",
                               "value": float(state[f"{k}/{name}"][:, r].mean())})
    return state, curves


def evaluate(cfg, data, runs, state, curves) -> list[dict]:
    rows = []
    for run in runs:
        k = run.key
        s = setting_of(cfg, run.setting)
        calls, tokens = state[f"{k}/calls"], state[f"{k}/tokens"]
        row = {"accuracy": float(state[f"{k}/correct"].mean()),
               # pooled over the questions: repeated (search page) or open / all tool calls
               "redundancy": float(state[f"{k}/redundant"].sum()
                                   / max(1, state[f"{k}/n_calls"].sum())),
               "tool_calls": float(calls.sum(1).mean()),
               "tokens": float(tokens.sum(1).mean()),
               "no_answer": float((state[f"{k}/final"] < 0).mean()),
               "budget": float(s["budget"]), "window": float(s["window"]),
               "n_clues": float(s["n_clues"]), "n_questions": float(calls.shape[0])}
        if calls.shape[1] > 1:
            for r in range(calls.shape[1]):
                row[f"calls_r{r + 1}"] = float(calls[:, r].mean())
                row[f"tokens_r{r + 1}"] = float(tokens[:, r].mean())
                row[f"state_tokens_r{r + 1}"] = float(state[f"{k}/state_tokens"][:, r].mean())
                row[f"answered_r{r + 1}"] = float(state[f"{k}/answered"][:, r].mean())
        key = f"{s['n_clues']}/{run.seed}"
        row["oracle_rate"] = float(data[f"oracle_rate/{key}"])
        row["unique_answers"] = float((data[f"n_answers/{key}"] == 1).mean())
        row["matches_per_clue"] = float(data[f"matches_per_clue/{key}"].mean())
        rows.append(row)
    return rows
