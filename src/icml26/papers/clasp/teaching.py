"""The teaching protocol of every method, vectorised over the runs of a shard (imports torch).

Round t = 0 .. R-1 of an interactive method:
  train (300 full-batch Adam steps, warm start; CLASP / CLASP-weight-only weight the pairs by
  the current map) -> evaluate on the fixed in-distribution set (success-vs-budget curve) ->
  [t < R-1] M practice rollouts -> failure map on anchors = k-means of all demonstration states
  -> b new demonstrations whose starts the method chooses -> (weighted methods) anchors
  recomputed on all demonstrations, f re-attributed from the same practice rollouts.
Round 0 uses b0 novice demonstrations for everyone. BC-offline gets the whole budget of novice
demonstrations at once and trains offline_steps plain-MSE steps.

Everything a run draws comes from a seed derived from (paper, map, seed, purpose) where it is
shared across methods (evaluation sets, practice starts and noise, novice pool, initial
weights: paired comparisons) and from run.rng_seed(paper, purpose) where it is the method's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from icml26.seeding import derive_seed

from . import baselines, clasp, env
from .experiment import eval_starts
from .learner import BatchedPolicy

BC_OFFLINE = "BC-offline"
# method -> (how demo starts are chosen, difficulty-weighted training, ensemble members)
METHOD_SPEC = {
    "BC-offline": ("offline", False),
    "Novice-interactive": ("novice", False),
    "Failure-replay": ("failure", False),
    "Active-uncertainty": ("active", False),
    "CLASP": ("map", True),
    "CLASP-map-only": ("map", False),
    "CLASP-weight-only": ("novice", True),
}


def params(cfg: dict) -> dict:
    p = cfg["params"]
    ints = ("R", "b0", "b", "M", "bc_steps", "offline_steps", "K", "restarts", "top_k", "back",
            "n_eval", "n_candidates", "members", "horizon", "demo_cap", "hidden")
    floats = ("lr", "lam", "noise_sd", "shift_noise_sd")
    return {**{k: int(p[k]) for k in ints}, **{k: float(p[k]) for k in floats}}


def budget(prm: dict) -> int:
    return prm["b0"] + (prm["R"] - 1) * prm["b"]


def map_of(cfg: dict, setting: str) -> str:
    return cfg["settings"][setting]["map"]


# ---------------------------------------------------------------------------------------------
# shared per-(map, seed) material
# ---------------------------------------------------------------------------------------------
def eval_tape(paper: str, setting: str, seed: int, kind: str, horizon: int, n: int):
    return env.noise_tape(derive_seed(paper, setting, seed, f"eval-{kind}-tape"), horizon, n)


def novice_pool(paper: str, map_name: str, setting: str, seed: int, prm: dict):
    """The novice's demonstrations of the whole budget, in the order the novice gives them."""
    rng = np.random.default_rng(derive_seed(paper, setting, seed, "novice-starts"))
    starts = env.novice_starts(rng, budget(prm))
    demos = env.teacher_demos(map_name, starts, derive_seed(paper, setting, seed, "novice-demos"),
                              prm["noise_sd"], prm["horizon"], prm["demo_cap"])
    return starts, demos


# ---------------------------------------------------------------------------------------------
# batched learner rollouts
# ---------------------------------------------------------------------------------------------
@dataclass
class Rollouts:
    states: np.ndarray      # (T+1, runs, n, 2)
    length: np.ndarray      # (runs, n)
    success: np.ndarray     # (runs, n)
    collided: np.ndarray    # (runs, n)
    disagreement: np.ndarray | None = None  # (runs, n) summed member variance along the rollout


def rollouts(net: BatchedPolicy, members: list[list[int]], map_name: str, starts: np.ndarray,
             tapes: np.ndarray, noise_sd: float, horizon: int, track_disagreement=False):
    """Roll out each run's policy (mean action of its members) from its own starts.

    starts (runs, n, 2), tapes (runs, T, n, 2); ``members`` lists each run's nets.
    """
    R_, n, _ = starts.shape
    idx = np.array([i for mem in members for i in mem])
    run_of = np.array([r for r, mem in enumerate(members) for _ in mem])
    count = np.bincount(run_of, minlength=R_)[:, None, None].astype(float)
    if track_disagreement and len(set(map(len, members))) != 1:
        raise ValueError("disagreement needs the same number of members in every run")
    e = env.TaskEnv(R_ * n, map_name, noise_sd, horizon)
    dis = np.zeros((R_, n))

    def policy(obs, t):
        out = net.act(obs.reshape(R_, n, 2)[run_of], idx).astype(float)  # (nets, n, 2)
        if track_disagreement:
            live = e.active.reshape(R_, n)
            var = out.reshape(R_, len(members[0]), n, 2).var(axis=1).sum(-1)
            dis[:] += np.where(live, var, 0.0)
        act = np.zeros((R_, n, 2))
        np.add.at(act, run_of, out)
        return (act / count).reshape(R_ * n, 2)

    tape = np.concatenate(list(tapes), axis=1)                  # (T, runs*n, 2)
    ep = env.run_episodes(e, policy, starts.reshape(R_ * n, 2), env.TapeRNG(tape))
    T1 = ep.states.shape[0]
    return Rollouts(ep.states.reshape(T1, R_, n, 2), ep.length.reshape(R_, n),
                    ep.success.reshape(R_, n), (ep.violations > 0).reshape(R_, n),
                    dis if track_disagreement else None)


# ---------------------------------------------------------------------------------------------
# the runs of a shard
# ---------------------------------------------------------------------------------------------
@dataclass
class RunState:
    run: object
    chooser: str
    weighted: bool
    nets: list[int]
    demos: list = field(default_factory=list)          # [(states, actions)]
    starts: list = field(default_factory=list)         # demo start states
    wmap: clasp.FailureMap | None = None               # map that weights the next training
    maps: list = field(default_factory=list)           # map after each practice round
    target: list = field(default_factory=list)         # targeting fraction per round
    success_curve: list = field(default_factory=list)


def _padded(states_list, cap_rows: int, weights_list):
    """Stack per-net data into (nets, cap_rows, 2) arrays; padding rows have weight 0."""
    B = len(states_list)
    X = np.zeros((B, cap_rows, 2), np.float32)
    Y = np.zeros((B, cap_rows, 2), np.float32)
    W = np.zeros((B, cap_rows), np.float32)
    for i, ((S, A), w) in enumerate(zip(states_list, weights_list, strict=True)):
        X[i, :len(S)], Y[i, :len(S)], W[i, :len(S)] = S, A, w
    return X, Y, W


def _train_data(rs: RunState, lam: float):
    S = np.concatenate([d[0] for d in rs.demos])
    A = np.concatenate([d[1] for d in rs.demos])
    if rs.weighted and rs.wmap is not None:
        w = clasp.difficulty_weights(rs.wmap, S, lam)
    else:
        w = np.ones(len(S))
    return (S, A), w


def _eval(net, group, map_name, paper, prm, kind):
    setting = group[0].run.setting
    n = prm["n_eval"]
    starts = np.stack([eval_starts(paper, setting, rs.run.seed, kind, n) for rs in group])
    tapes = np.stack([eval_tape(paper, setting, rs.run.seed, kind, prm["horizon"], n)
                      for rs in group])
    sd = prm["noise_sd"] if kind == "id" else prm["shift_noise_sd"]
    return rollouts(net, [rs.nets for rs in group], map_name, starts, tapes, sd, prm["horizon"])


def run_setting(cfg: dict, setting: str, runs: list) -> tuple[dict, list[dict]]:
    """All runs of one map: BC-offline in one batch, interactive methods in another."""
    import torch

    from icml26.seeding import torch_device

    paper, prm = cfg["paper"], params(cfg)
    dev = torch_device(cfg["device"])  # the learners; environments and teacher stay numpy
    map_name = map_of(cfg, setting)
    pools = {seed: novice_pool(paper, map_name, setting, seed, prm)
             for seed in sorted({r.seed for r in runs})}
    state, curves = {}, []
    for offline in (True, False):
        group_runs = [r for r in runs if (r.method == BC_OFFLINE) == offline]
        if not group_runs:
            continue
        torch.manual_seed(derive_seed(paper, setting, "torch") % (2**63))  # nothing draws from it
        group, seeds = [], []
        for r in group_runs:
            chooser, weighted = METHOD_SPEC[r.method]
            m = prm["members"] if chooser == "active" else 1
            nets = list(range(len(seeds), len(seeds) + m))
            seeds += [derive_seed(paper, setting, r.seed, "init", j) for j in range(m)]
            group.append(RunState(r, chooser, weighted, nets))
        net = BatchedPolicy(seeds, prm["hidden"], device=dev)
        if offline:
            _offline(net, group, pools, prm)
        else:
            _interactive(net, group, pools, map_name, paper, prm)
        # final evaluation: in-distribution (the last curve point) and shift
        for kind in ("id", "shift"):
            ro = _eval(net, group, map_name, paper, prm, kind)
            gaps = np.stack([env.gap_used(map_name, ro.states[:, i]) for i in range(len(group))])
            for i, rs in enumerate(group):
                state[f"{rs.run.key}/{kind}_success"] = ro.success[i].astype(np.int8)
                state[f"{rs.run.key}/{kind}_gap"] = gaps[i].astype(np.int8)
        for rs in group:
            state.update(_run_state(rs, net, prm))
            curves.extend(_run_curves(rs, prm))
        if offline:
            ro_id = {rs.run.key: state[f"{rs.run.key}/id_success"] for rs in group}
            for rs in group:
                curves.append({**rs.run.as_dict(), "step": budget(prm), "metric": "success_id",
                               "value": float(ro_id[rs.run.key].mean())})
    return state, curves


def _offline(net, group, pools, prm):
    """BC-offline: the whole budget of novice demonstrations, plain MSE, offline_steps steps."""
    for rs in group:
        starts, demos = pools[rs.run.seed]
        rs.demos, rs.starts = list(demos), list(starts)
    data = [_train_data(rs, prm["lam"]) for rs in group]
    X, Y, W = _padded([d[0] for d in data], budget(prm) * prm["demo_cap"], [d[1] for d in data])
    net.fit(X, Y, W, prm["offline_steps"], prm["lr"])


def _interactive(net, group, pools, map_name, paper, prm):
    setting = group[0].run.setting
    for rs in group:
        starts, demos = pools[rs.run.seed]
        rs.demos, rs.starts = list(demos[:prm["b0"]]), list(starts[:prm["b0"]])
    for t in range(prm["R"]):
        n_demos = prm["b0"] + t * prm["b"]
        data = [_train_data(rs, prm["lam"]) for rs in group]
        per_net = [data[i] for i, rs in enumerate(group) for _ in rs.nets]
        X, Y, W = _padded([d[0] for d in per_net], n_demos * prm["demo_cap"],
                          [d[1] for d in per_net])
        net.fit(X, Y, W, prm["bc_steps"], prm["lr"])
        ro = _eval(net, group, map_name, paper, prm, "id")
        for i, rs in enumerate(group):
            rs.success_curve.append(float(ro.success[i].mean()))
        if t == prm["R"] - 1:
            break
        # practice rollouts (no demonstration cost), same starts and noise for every method
        M = prm["M"]
        starts = np.stack([env.task_starts(np.random.default_rng(
            derive_seed(paper, setting, rs.run.seed, "practice", t)), M) for rs in group])
        tapes = np.stack([env.noise_tape(derive_seed(paper, setting, rs.run.seed,
                                                     "practice-tape", t), prm["horizon"], M)
                          for rs in group])
        pr = rollouts(net, [rs.nets for rs in group], map_name, starts, tapes, prm["noise_sd"],
                      prm["horizon"])
        # Active-uncertainty: roll the ensemble out from candidate starts, measure disagreement
        au = [i for i, rs in enumerate(group) if rs.chooser == "active"]
        cand = {}
        if au:
            nc = prm["n_candidates"]
            c_starts = np.stack([env.task_starts(np.random.default_rng(
                group[i].run.rng_seed(paper, f"candidates{t}")), nc) for i in au])
            c_tapes = np.stack([env.noise_tape(group[i].run.rng_seed(paper, f"cand-tape{t}"),
                                               prm["horizon"], nc) for i in au])
            cro = rollouts(net, [group[i].nets for i in au], map_name, c_starts, c_tapes,
                           prm["noise_sd"], prm["horizon"], track_disagreement=True)
            for j, i in enumerate(au):
                cand[i] = baselines.most_uncertain(c_starts[j], cro.disagreement[j], prm["b"])
        new_starts, seeds = [], []
        for i, rs in enumerate(group):
            rng = np.random.default_rng(rs.run.rng_seed(paper, f"map{t}"))
            practice = clasp.Practice(
                pr.states[:, i], pr.length[i], pr.success[i],
                env.failing_step(pr.states[:, i], pr.length[i], pr.collided[i]))
            all_states = np.concatenate([d[0] for d in rs.demos])
            anchors, _ = clasp.kmeans(all_states, prm["K"], prm["restarts"], rng)
            fmap = clasp.failure_map(anchors, practice)
            rs.maps.append(fmap)
            rs._practice, rs._fmap = practice, fmap
            if rs.chooser == "map":
                s = clasp.map_starts(fmap, practice, prm["b"], rng, prm["top_k"], prm["back"])
            elif rs.chooser == "failure":
                s = baselines.failure_replay_starts(practice.states, practice.success, prm["b"],
                                                    rng)
            elif rs.chooser == "active":
                s = cand[i]
            else:
                s = None
            # novice chooser, and INFERRED fallback when nothing failed: the novice's next starts
            use_pool = s is None
            new_starts.append(s)
            seeds.append(rs.run.rng_seed(paper, f"teacher{t}"))
            rs._use_pool = use_pool
        for i, rs in enumerate(group):
            if rs._use_pool:
                p_starts, p_demos = pools[rs.run.seed]
                lo = n_demos
                new = list(p_demos[lo:lo + prm["b"]])
                new_s = list(p_starts[lo:lo + prm["b"]])
            else:
                new = env.teacher_demos(map_name, new_starts[i], seeds[i], prm["noise_sd"],
                                        prm["horizon"], prm["demo_cap"])
                new_s = list(new_starts[i])
            rs.target.append(clasp.targeting(rs._fmap, np.concatenate([d[0] for d in new]),
                                             prm["top_k"]))
            rs.demos += new
            rs.starts += new_s
            if rs.weighted:
                # regions recomputed on all demonstrations (incl. the new ones); f re-attributed
                # from the same practice rollouts
                rng = np.random.default_rng(rs.run.rng_seed(paper, f"reanchor{t}"))
                anchors, _ = clasp.kmeans(np.concatenate([d[0] for d in rs.demos]), prm["K"],
                                          prm["restarts"], rng)
                rs.wmap = clasp.failure_map(anchors, rs._practice)
            del rs._practice, rs._fmap, rs._use_pool


def _run_state(rs: RunState, net: BatchedPolicy, prm: dict) -> dict:
    key = rs.run.key
    out = {f"{key}/demo_starts": np.array(rs.starts, float),
           f"{key}/n_pairs": np.array(sum(len(d[0]) for d in rs.demos)),
           f"{key}/success_curve": np.array(rs.success_curve, float),
           f"{key}/targeting": np.array(rs.target, float)}
    for j, n in enumerate(rs.nets):
        for name, w in zip(("W1", "b1", "W2", "b2", "W3", "b3"), net.export(n), strict=True):
            out[f"{key}/member{j}/{name}"] = w
    if rs.maps:
        out[f"{key}/map_anchors"] = np.stack([m.anchors for m in rs.maps])
        out[f"{key}/map_f"] = np.stack([m.f for m in rs.maps])
        out[f"{key}/map_fail_region"] = np.stack([m.fail_region for m in rs.maps])
    return out


def _run_curves(rs: RunState, prm: dict) -> list[dict]:
    base = rs.run.as_dict()
    rows = [{**base, "step": prm["b0"] + t * prm["b"], "metric": "success_id", "value": v}
            for t, v in enumerate(rs.success_curve)]
    rows += [{**base, "step": prm["b0"] + (t + 1) * prm["b"], "metric": "targeting",
              "value": v} for t, v in enumerate(rs.target)]
    # the map after each practice round (for the map figure): anchors and f per region
    for t, m in enumerate(rs.maps):
        for k in range(len(m.anchors)):
            rows += [{**base, "step": t, "metric": f"anchor{k}_x", "value": float(m.anchors[k, 0])},
                     {**base, "step": t, "metric": f"anchor{k}_y", "value": float(m.anchors[k, 1])},
                     {**base, "step": t, "metric": f"f{k}", "value": float(m.f[k])}]
    return rows
