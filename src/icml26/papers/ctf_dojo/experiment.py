"""Stages of ctf-dojo.

prepare (numpy, no torch): per seed, the challenge splits (CTF-Dojo training pool, the
single-operation pool of the base model, the three held-out benchmarks), the teacher's data
collection in the MiniDojo runtime (verified = flag-checked by the runtime, first of <= 3
attempts; unverified = first attempt; simulated = Cyber-Zero-style, imagined observations,
flag-checked by the simulator), the training pairs of every training set, and the benchmark
episodes of the teacher (with and without hints) and of the scripted solver.
train (torch): per seed the base policy (behaviour-cloned on single-operation trajectories),
then every SFT student from the base weights; each student plays every benchmark challenge
once, greedily, all episodes stepped together (run_batch). Per-episode records are stored.
evaluate (numpy): pass@1 per benchmark, steps of successful runs, invalid-call rates, yields.
"""
from __future__ import annotations

import math

import numpy as np

from icml26.agents import run_batch
from icml26.agents.worlds import ctf
from icml26.seeding import derive_seed
from icml26.seeding import rng as named_rng

METHODS = ("base", "verified-n1", "verified-n2", "verified", "unverified", "simulated",
           "teacher-hint", "teacher-nohint", "scripted")
STUDENTS = ("base", "verified-n1", "verified-n2", "verified", "unverified", "simulated")
BENCHES = ("intercode", "nyu", "cybench")
# which collected data set and which N (index into params.n_scaling) each student trains on
TRAIN_SET = {"verified-n1": ("verified", 0), "verified-n2": ("verified", 1),
             "verified": ("verified", -1), "unverified": ("unverified", -1),
             "simulated": ("simulated", -1)}
EPISODE_FIELDS = ("success", "calls", "invalid", "wrong_submit")


def extra_ops(p) -> tuple:
    return tuple(ctf.EXTRA_OPS) if p["extra_ops"] else ()


def tools(p) -> tuple:
    return ctf.tools_for(ctf.BASE_OPS + extra_ops(p))


def max_steps(p) -> int:
    """The step limit, by the rule fixed before any run: ceil(step_factor x the longest oracle
    path over every split), the longest path being (longest chain) + 1 submit. The official
    EnIGMA+ limit is 40 steps for real tasks; with step_factor 1.6 and chains of <= 4 this is
    the spec's 8."""
    longest = max(max(s["lengths"]) for s in ctf.SPLITS.values()) + 1
    return int(math.ceil(p["step_factor"] * longest))


# ------------------------------------------------------------------------------------------
# prepare
# ------------------------------------------------------------------------------------------
def challenges(p: dict, paper: str, seed: int) -> dict[str, list]:
    out = {}
    sizes = {"dojo": p["n_pool"], "single": p["n_single_pool"],
             **{b: p["n_bench"] for b in BENCHES}}
    for split, n in sizes.items():
        frac = p["writeup_frac"] if split in ("dojo", "single") else 0.0
        out[split] = ctf.generate(named_rng(paper, "challenges", split, seed), n,
                                  ctf.split_spec(split, extra_ops(p)), frac)
    return out


def decision_pairs(task, traj) -> list[tuple]:
    """(string, last action, error bit, step, action) at each decision of a trajectory: what
    the policy saw before each call. A call that failed leaves the string unchanged."""
    s, last, err, rows = task.artefact, -1, 0, []
    for k, st in enumerate(traj.steps):
        rows.append((s, last, err, k, st.call.tool))
        if st.obs.ok:
            s = st.obs.content
        last, err = st.call.tool, int(not st.obs.ok)
    return rows


def collect(world, pool, p, rng, n_target, attempts: int):
    """The CTF-Dojo recipe: per challenge in pool order, up to ``attempts`` teacher runs (hint
    iff the challenge has a write-up); keep the first verified one; stop at ``n_target``.
    Attempts are batched (all challenges' attempt 1, then attempt 2 of those that failed...);
    the recipe's order is then walked to count the attempts of the challenges it visits.
    Returns (first attempts of every challenge, kept [(challenge, traj)], stats)."""
    hints = [c.has_writeup for c in pool]
    first, success_at = [None] * len(pool), [None] * len(pool)
    trajs_at: list[dict] = [dict() for _ in pool]
    todo = list(range(len(pool)))
    for a in range(attempts):
        if not todo:
            break
        tasks = [pool[i] for i in todo]
        teacher = ctf.NoisyOracle(tasks, rng, p["eps_hint"], p["eps_plain"],
                                  [hints[i] for i in todo], world.tools)
        out = run_batch(world, tasks, teacher, max_steps=max_steps(p))
        still = []
        for i, tr in zip(todo, out, strict=True):
            trajs_at[i][a] = tr
            if a == 0:
                first[i] = tr
            if tr.success:
                success_at[i] = a
            else:
                still.append(i)
        todo = still
    kept, stats = [], {"att_hint": 0, "ver_hint": 0, "att_plain": 0, "ver_plain": 0,
                       "visited": 0}
    for i, c in enumerate(pool):
        if len(kept) >= n_target:
            break
        stats["visited"] += 1
        used = attempts if success_at[i] is None else success_at[i] + 1
        tag = "hint" if c.has_writeup else "plain"
        stats[f"att_{tag}"] += used
        if success_at[i] is not None:
            stats[f"ver_{tag}"] += 1
            kept.append((c, trajs_at[i][success_at[i]]))
    stats["kept"] = len(kept)
    return first, kept, stats


def _visible(s: str) -> str:
    from .features import CHARS

    return "".join(c if c in CHARS else "?" for c in s)


def _pairs_arrays(items, tl) -> dict[str, np.ndarray]:
    """Training pairs of [(challenge, traj)], tools as indices into the tool list ``tl``."""
    rows, traj_id = [], []
    for j, (c, tr) in enumerate(items):
        for r in decision_pairs(c, tr):
            rows.append(r)
            traj_id.append(j)
    # bytes outside the student's alphabet are all one "unknown" symbol to it; storing them
    # as "?" keeps numpy from dropping trailing NULs of a string array
    return {"obs": np.array([_visible(r[0]) for r in rows] or [""], dtype=str)[:len(rows)],
            "last": np.array([tl.index(r[1]) if r[1] != -1 else -1 for r in rows], np.int64),
            "err": np.array([r[2] for r in rows], np.int64),
            "t": np.array([r[3] for r in rows], np.int64),
            "act": np.array([tl.index(r[4]) for r in rows], np.int64),
            "traj": np.array(traj_id, np.int64)}


def episode_arrays(trajs) -> dict[str, np.ndarray]:
    return {"success": np.array([t.success for t in trajs], np.int8),
            "calls": np.array([t.n_calls for t in trajs], np.int16),
            "invalid": np.array([t.n_invalid for t in trajs], np.int16),
            "wrong_submit": np.array([sum(s.call.tool == ctf.SUBMIT and not s.obs.ok
                                          for s in t.steps) for t in trajs], np.int16)}


def challenge_arrays(cs) -> dict[str, np.ndarray]:
    return {"flag": np.array([c.flag for c in cs], dtype=str),
            "ops": np.array([",".join(c.ops) for c in cs], dtype=str),
            "key": np.array([c.key for c in cs], np.int64)}


def load_challenges(data, prefix) -> list:
    return [ctf.make_challenge(str(f), str(o).split(","), int(k)) for f, o, k in
            zip(data[f"{prefix}/flag"], data[f"{prefix}/ops"], data[f"{prefix}/key"],
                strict=True)]


def prepare_seed(p: dict, paper: str, seed: int) -> dict[str, np.ndarray]:
    cs = challenges(p, paper, seed)
    world = ctf.MiniDojo(tools(p))
    n_max = max(p["n_scaling"])
    pre = f"s{seed}"
    out: dict[str, np.ndarray] = {}
    # base model data: verified trajectories of single-operation challenges
    _, base_kept, _ = collect(world, cs["single"], p, named_rng(paper, "teacher-base", seed),
                              p["n_base"], p["attempts"])
    # CTF-Dojo: execution-verified (first verified of <= 3 attempts) and unverified (first
    # attempt, success or not) from the same runs of the teacher
    first, kept, st = collect(world, cs["dojo"], p, named_rng(paper, "teacher", seed), n_max,
                              p["attempts"])
    unver = [(c, tr) for c, tr in zip(cs["dojo"], first, strict=True)][:n_max]
    # Cyber-Zero-style: the same recipe in the simulator (imagined observations, flag check)
    sim_world = ctf.ImaginedDojo(named_rng(paper, "simulator", seed), p["p_wrong_obs"],
                                 tools(p))
    _, sim_kept, sim_st = collect(sim_world, cs["dojo"], p,
                                  named_rng(paper, "teacher-sim", seed), n_max, p["attempts"])
    for name, items in (("base", base_kept), ("verified", kept), ("unverified", unver),
                        ("simulated", sim_kept)):
        for k, v in _pairs_arrays(items, world.tools).items():
            out[f"{pre}/train/{name}/{k}"] = v
        out[f"{pre}/train/{name}/n_traj"] = np.array(len(items))
        out[f"{pre}/train/{name}/traj_success"] = np.array(
            [int(world.verify(c, tr.answer)) for c, tr in items], np.int8)
    out[f"{pre}/collect"] = np.array([st[k] for k in COLLECT_KEYS], np.int64)
    out[f"{pre}/collect_sim"] = np.array([sim_st[k] for k in COLLECT_KEYS], np.int64)
    # imagined-observation errors inside the kept simulated trajectories (the "no runtime" gap)
    out[f"{pre}/sim_wrong_in_kept"] = np.array(
        sum(_imagined_errors(c, tr) for c, tr in sim_kept), np.int64)
    # benchmarks: challenges, teacher (hint / no hint) and scripted solver episodes
    for b in BENCHES:
        for k, v in challenge_arrays(cs[b]).items():
            out[f"{pre}/bench/{b}/{k}"] = v
        tasks = cs[b]
        for method, eps in (("teacher-hint", p["eps_hint"]), ("teacher-nohint", p["eps_plain"])):
            teacher = ctf.NoisyOracle(tasks, named_rng(paper, method, b, seed), eps, eps,
                                      [False] * len(tasks), world.tools)
            trajs = run_batch(world, tasks, teacher, max_steps=max_steps(p))
            for k, v in episode_arrays(trajs).items():
                out[f"{pre}/eval/{method}/{b}/{k}"] = v
        trajs = run_batch(world, tasks, lambda sts, trs, live, t=tasks:
                          [world.oracle(t[i], s) for i, s in zip(live, sts, strict=True)],
                          max_steps=max_steps(p))
        for k, v in episode_arrays(trajs).items():
            out[f"{pre}/eval/scripted/{b}/{k}"] = v
    return out


COLLECT_KEYS = ("att_hint", "ver_hint", "att_plain", "ver_plain", "visited", "kept")


def _imagined_errors(task, traj) -> int:
    """Steps of a simulated trajectory whose imagined observation differs from what the
    runtime would have returned on the same string (the "no execution" gap)."""
    n = 0
    for (s, _, _, _, tool), st in zip(decision_pairs(task, traj), traj.steps, strict=True):
        if tool == ctf.SUBMIT:
            continue
        true = ctf.decode(tool, s, task.key)
        n += int(true != (st.obs.content if st.obs.ok else None))
    return n


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    p = cfg["params"]
    out = {"max_steps": np.array(max_steps(p))}
    for seed in cfg["seeds"]:
        out.update(prepare_seed(p, cfg["paper"], seed))
    return out


# ------------------------------------------------------------------------------------------
# train
# ------------------------------------------------------------------------------------------
def train_pairs(data, seed: int, name: str, n_traj: int, max_len: int) -> dict:
    from .features import char_ids

    pre = f"s{seed}/train/{name}"
    keep = data[f"{pre}/traj"] < n_traj
    ids, lens = char_ids(data[f"{pre}/obs"][keep], max_len)
    return {"ids": ids, "lens": lens, **{k: data[f"{pre}/{k}"][keep]
                                         for k in ("last", "err", "t", "act")}}


def train(cfg: dict, data, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from icml26.seeding import torch_device

    from . import student

    torch.set_num_threads(1)
    p = cfg["params"]
    dev = torch_device(cfg["device"])
    steps = max_steps(p)
    tl = tools(p)
    paper = cfg["paper"]
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    base_cache: dict[int, dict] = {}

    def fit(P, seed, name, n_traj, epochs, stream):
        pairs = train_pairs(data, seed, name, n_traj, p["max_len"])
        log = student.behaviour_clone(P, pairs, epochs=epochs, lr=p["lr"], batch=p["batch"],
                                      bucket=p["bucket"], max_steps=steps,
                                      rng=np.random.default_rng(stream), device=dev)
        return log, len(pairs["act"])

    def base_model(seed):
        """The base policy of a seed (shared by every student of that seed)."""
        if seed not in base_cache:
            P = student.init_params(derive_seed(paper, "student-init", seed), len(tl), steps,
                                    p, dev)
            log, n = fit(P, seed, "base", p["n_base"], p["base_epochs"],
                         derive_seed(paper, "base-batches", seed))
            base_cache[seed] = ({k: v.detach().clone() for k, v in P.items()}, log, n)
        return base_cache[seed]

    students = [r for r in runs if r.method in STUDENTS]
    if p["arch"] == "cnn":
        params, logs = _fit_stacked(cfg, data, students, dev, steps, len(tl))
    else:
        params, logs = {}, {}
        for run in students:
            P0, log, n_pairs = base_model(run.seed)
            P = {k: v.clone().requires_grad_(True) for k, v in P0.items()}
            if run.method != "base":
                name, j = TRAIN_SET[run.method]
                log, n_pairs = fit(P, run.seed, name, p["n_scaling"][j], p["epochs"],
                                   run.rng_seed(paper, "batches"))
            params[run.key], logs[run.key] = P, (log, n_pairs)
    for run in students:
        log, n_pairs = logs[run.key]
        for epoch, loss, acc in log:
            curves += [{**run.as_dict(), "step": epoch, "metric": "train_loss", "value": loss},
                       {**run.as_dict(), "step": epoch, "metric": "train_acc", "value": acc}]
        curves.append({**run.as_dict(), "step": 0, "metric": "n_pairs", "value": n_pairs})
    # every student plays every benchmark challenge of its seed once, greedily; all students'
    # episodes are stepped together (one stacked forward per step for the CNN)
    world = ctf.MiniDojo(tl)
    bench = {}
    for seed in sorted({r.seed for r in students}):
        cs, owner = [], []
        for b in BENCHES:
            c = load_challenges(data, f"s{seed}/bench/{b}")
            cs += c
            owner += [b] * len(c)
        bench[seed] = (cs, np.array(owner))
    if p["arch"] == "cnn":
        tasks, model = [], []
        for g, run in enumerate(students):
            tasks += bench[run.seed][0]
            model += [g] * len(bench[run.seed][0])
        policy = student.StackedGreedyPolicy(
            student.stack_params([params[r.key] for r in students]), model, tl, p["max_len"],
            steps, dev)
        trajs = run_batch(world, tasks, policy, max_steps=steps) if tasks else []
        model = np.array(model)
        per_run = {r.key: [t for t, m_ in zip(trajs, model, strict=True) if m_ == g]
                   for g, r in enumerate(students)}
    else:
        per_run = {r.key: run_batch(world, bench[r.seed][0],
                                    student.GreedyPolicy(params[r.key], tl, p["max_len"], steps,
                                                         dev), max_steps=steps)
                   for r in students}
    for run in students:
        arrs = episode_arrays(per_run[run.key])
        owner = bench[run.seed][1]
        for b in BENCHES:
            for k, v in arrs.items():
                state[f"{run.key}/{b}/{k}"] = v[owner == b]
    return state, curves


def _fit_stacked(cfg, data, students, dev, steps, n_tools):
    """The CNN students of every seed trained as stacks (``student.behaviour_clone_stacked``):
    first the base policy of every seed, then every SFT student from its seed's base weights,
    each model with the initialisation, data and batch stream it has alone."""
    from . import student

    p, paper = cfg["params"], cfg["paper"]
    seeds = sorted({r.seed for r in students})
    kw = dict(lr=p["lr"], batch=p["batch"], bucket=p["bucket"], max_steps=steps, device=dev)
    base_pairs = [train_pairs(data, s, "base", p["n_base"], p["max_len"]) for s in seeds]
    P0 = student.stack_params([student.init_params(derive_seed(paper, "student-init", s),
                                                   n_tools, steps, p, dev) for s in seeds])
    base, base_logs = student.behaviour_clone_stacked(
        P0, base_pairs, epochs=p["base_epochs"],
        rngs=[np.random.default_rng(derive_seed(paper, "base-batches", s)) for s in seeds], **kw)
    base_models = dict(zip(seeds, student.unstack_params(base), strict=True))
    params, logs = {}, {}
    for s, log, pr in zip(seeds, base_logs, base_pairs, strict=True):
        for r in students:
            if r.seed == s and r.method == "base":
                params[r.key], logs[r.key] = base_models[s], (log, len(pr["act"]))
    # one stack per seed: stacking every seed's students together makes the working set
    # outgrow the caches and costs more CPU time than the interpreter time it saves
    for s in seeds:
        _fit_sft_stack(cfg, data, [r for r in students if r.method != "base" and r.seed == s],
                       base_models, params, logs, kw)
    return params, logs


def _fit_sft_stack(cfg, data, sft, base_models, params, logs, kw):
    from . import student

    p, paper = cfg["params"], cfg["paper"]
    if sft:
        pairs = [train_pairs(data, r.seed, TRAIN_SET[r.method][0],
                             p["n_scaling"][TRAIN_SET[r.method][1]], p["max_len"]) for r in sft]
        trained, sft_logs = student.behaviour_clone_stacked(
            student.stack_params([base_models[r.seed] for r in sft]), pairs,
            epochs=p["epochs"],
            rngs=[np.random.default_rng(r.rng_seed(paper, "batches")) for r in sft], **kw)
        for r, P, log, pr in zip(sft, student.unstack_params(trained), sft_logs, pairs,
                                 strict=True):
            params[r.key], logs[r.key] = P, (log, len(pr["act"]))


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------
def episodes(data, state, run, bench) -> dict[str, np.ndarray]:
    if run.method in STUDENTS:
        return {k: state[f"{run.key}/{bench}/{k}"] for k in EPISODE_FIELDS}
    return {k: data[f"s{run.seed}/eval/{run.method}/{bench}/{k}"] for k in EPISODE_FIELDS}


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    p = cfg["params"]
    rows = []
    for run in runs:
        row: dict[str, float] = {}
        pooled = {k: [] for k in EPISODE_FIELDS}
        for b in BENCHES:
            ep = episodes(data, state, run, b)
            row[f"pass1_{b}"] = 100.0 * float(ep["success"].mean())
            for k in EPISODE_FIELDS:
                pooled[k].append(ep[k].astype(float))
        row["pass1_avg"] = float(np.mean([row[f"pass1_{b}"] for b in BENCHES]))
        ep = {k: np.concatenate(v) for k, v in pooled.items()}
        ok = ep["success"] > 0
        row["steps_success"] = float(ep["calls"][ok].mean()) if ok.any() else float("nan")
        row["invalid_rate"] = float(ep["invalid"].sum() / max(ep["calls"].sum(), 1))
        row["wrong_submit_rate"] = float(ep["wrong_submit"].sum() / max(ep["calls"].sum(), 1))
        row["step_limit_rate"] = float(((~ok) & (ep["calls"] >= max_steps(p))).mean())
        pre = f"s{run.seed}"
        st = dict(zip(COLLECT_KEYS, data[f"{pre}/collect"].tolist(), strict=True))
        ss = dict(zip(COLLECT_KEYS, data[f"{pre}/collect_sim"].tolist(), strict=True))
        row["yield_hint"] = 100.0 * st["ver_hint"] / max(st["att_hint"], 1)
        row["yield_plain"] = 100.0 * st["ver_plain"] / max(st["att_plain"], 1)
        row["n_verified"] = float(st["kept"])
        row["pool_visited"] = float(st["visited"])
        row["sim_yield"] = 100.0 * (ss["ver_hint"] + ss["ver_plain"]) / max(
            ss["att_hint"] + ss["att_plain"], 1)
        row["n_simulated"] = float(ss["kept"])
        n_sim_steps = int((data[f"{pre}/train/simulated/act"] != tools(p).index(ctf.SUBMIT)).sum()
                          ) if len(data[f"{pre}/train/simulated/act"]) else 0
        row["sim_wrong_obs_rate"] = (float(data[f"{pre}/sim_wrong_in_kept"]) / n_sim_steps
                                     if n_sim_steps else float("nan"))
        row["unverified_success"] = 100.0 * float(
            data[f"{pre}/train/unverified/traj_success"].mean())
        if run.method in STUDENTS:
            name, j = ("base", None) if run.method == "base" else TRAIN_SET[run.method]
            n = p["n_base"] if j is None else p["n_scaling"][j]
            tr = data[f"{pre}/train/{name}/traj"]
            row["n_train_traj"] = float(min(n, int(data[f"{pre}/train/{name}/n_traj"])))
            row["n_train_pairs"] = float((tr < n).sum())
        else:
            row["n_train_traj"] = row["n_train_pairs"] = float("nan")
        rows.append(row)
    return rows
