"""Stages of prm-adaptive-tts: prepare (train the generator and PRM of every seed), train (run
every test-time method on the seed's test problems, writing per-problem records) and evaluate
(accuracy, FLOPs, compute intensity per budget point and subset).

Runs are (method, "chains", seed); a run holds all budget points of its method family (N for
SC/BoN, w for Beam, theta for Adaptive, lambda for the learned controller), so one job per
stage covers the paper (``shard_by: []``). Every random stream derives from
(paper, stream, seed), so results do not depend on sharding; the problems, generator and PRM of
a seed are shared by every method (paired comparisons).
"""

from __future__ import annotations

import numpy as np

from icml26.agents.worlds.chains import ChainWorld, make_chains
from icml26.errors import ConfigError
from icml26.seeding import derive_seed

from . import controller as ctl
from . import models as md
from .search import (
    Models,
    Outcome,
    account,
    adaptive,
    beam_search,
    greedy,
    pool_outcome,
    sample_pool,
)

GEN_PARAMS = ("W1", "b1", "W2", "b2")
FAMILY = {"sc": "N", "bon": "N", "beam": "w", "adaptive": "t", "adaptive-notool": "t",
          "adaptive-nostop": "all", "adaptive-learned": "l"}
SUBSETS = ("all", "easy", "hard")
HIST_EDGES = np.linspace(4.0, 8.5, 37)   # log10 FLOPs bins of Fig. 2


def P(cfg):
    return cfg["params"]


def check(cfg) -> None:
    """Cross-key rules the schema cannot state: one clear line naming the key."""
    p = P(cfg)
    if float(p["theta_headline"]) not in [float(t) for t in p["thetas"]]:
        raise ConfigError(f"{cfg['paper']}: params.theta_headline={p['theta_headline']} must be "
                          f"one of params.thetas {list(p['thetas'])}")
    if int(p["easy_max_K"]) >= int(p["hard_min_K"]):
        raise ConfigError(f"{cfg['paper']}: params.easy_max_K must be < params.hard_min_K")


def points(cfg, method) -> list[str]:
    """Budget points of a method family, in order of increasing compute."""
    p = P(cfg)
    kind = FAMILY[method]
    if kind == "N":
        return [f"N{n}" for n in p["n_samples"]]
    if kind == "w":
        return [f"w{w}" for w in p["beam_widths"]]
    if kind == "t":
        # theta = 0 (stop after the greedy iteration) is the curve's low-compute end
        return ["t0"] + [f"t{t:g}" for t in p["thetas"] if float(t) > 0]
    if kind == "l":
        return [f"l{v:g}" for v in p["controller_lambdas"]]
    return ["all"]


def hist_points(cfg) -> dict:
    """Fig. 2's budget points: Adaptive at the headline theta, BoN at N = 8 (the largest
    N <= 8 in the grid at smoke scale)."""
    p = P(cfg)
    n = max([int(v) for v in p["n_samples"] if int(v) <= 8] or [min(p["n_samples"])])
    return {"adaptive": f"t{float(p['theta_headline']):g}", "bon": f"N{n}"}


def _rng(cfg, stream, seed):
    return np.random.default_rng(derive_seed(cfg["paper"], stream, seed))


def triple_splits(cfg, seed):
    """The generator's training triples (75%) and the PRM's (a separate random 70%)."""
    p = P(cfg)
    tri = md.all_triples(int(p["m"]), int(p["c_max"]))
    n = len(tri)
    g = _rng(cfg, "generator-triples", seed).permutation(n)[:int(round(p["gen_frac"] * n))]
    r = _rng(cfg, "prm-triples", seed).permutation(n)[:int(round(p["prm_frac"] * n))]
    return tri, np.sort(g), np.sort(r)


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Train the generator and the PRM of every seed (stacked over seeds), and measure the
    spec's premises about them."""
    check(cfg)
    p = P(cfg)
    m, c_max, H = int(p["m"]), int(p["c_max"]), int(p["hidden"])
    seeds = list(cfg["seeds"])
    splits = {s: triple_splits(cfg, s) for s in seeds}
    tri = splits[seeds[0]][0]
    seen = np.stack([tri[splits[s][1]] for s in seeds])
    gens, gl, used = md.train_generators(
        m, c_max, H, seen, [_rng(cfg, "generator", s) for s in seeds], steps=int(p["gen_steps"]),
        batch=int(p["gen_batch"]), lr=float(p["gen_lr"]), fit_target=float(p["gen_fit_target"]),
        max_steps=int(p["gen_max_steps"]))
    gen_list = [[a[k] for a in gens] for k in range(len(seeds))]
    prm_tri = np.stack([tri[splits[s][2]] for s in seeds])
    prms, pl, pos = md.train_prms(m, c_max, H, prm_tri, gen_list,
                                  [_rng(cfg, "prm", s) for s in seeds],
                                  n_samples=int(p["prm_samples"]),
                                  temperature=float(p["prm_temperature"]),
                                  steps=int(p["prm_steps"]), batch=int(p["prm_batch"]),
                                  lr=float(p["prm_lr"]))
    out = {}
    every = max(1, int(p["gen_steps"]) // 20)
    for k, s in enumerate(seeds):
        for name, arr in zip(GEN_PARAMS, gens, strict=True):
            out[f"gen/{s}/{name}"] = arr[k]
        for name, arr in zip(GEN_PARAMS, prms, strict=True):
            out[f"prm/{s}/{name}"] = arr[k]
        out[f"loss/gen/{s}"] = gl[:int(used[k]):every, k]
        out[f"loss/prm/{s}"] = pl[::max(1, int(p["prm_steps"]) // 20), k]
        out[f"premise/{s}/prm_train_pos"] = np.asarray(pos[k])
        out[f"premise/{s}/gen_steps_used"] = np.asarray(float(used[k]))
        for key, v in premises(cfg, s, gen_list[k], [a[k] for a in prms], splits[s]).items():
            out[f"premise/{s}/{key}"] = np.asarray(v)
    return out


def premises(cfg, seed, gen, prm, split) -> dict:
    """What the spec states as fact about the models, measured: the generator is right on its
    seen triples, mostly wrong but diffuse on unseen ones (sampling can recover: the right value
    keeps a probability above chance); the PRM is imperfect on triples it has not seen."""
    p = P(cfg)
    m, c_max = int(p["m"]), int(p["c_max"])
    tri, g_idx, r_idx = split
    x, op, c = tri[:, 0], tri[:, 1], tri[:, 2]
    y_true = md.apply_op(x, op, c, m)
    z = md.gen_logits(gen, x, op, c, m)
    right = z.argmax(1) == y_true
    prob = np.exp(z - z.max(1, keepdims=True))
    prob /= prob.sum(1, keepdims=True)
    p_true = prob[np.arange(len(tri)), y_true]
    g_seen = np.zeros(len(tri), bool)
    g_seen[g_idx] = True
    r_seen = np.zeros(len(tri), bool)
    r_seen[r_idx] = True
    # PRM on fresh generator samples at the evaluation temperature T = 1, every triple 20 times
    r = _rng(cfg, "premise-prm", seed)
    rep = np.repeat(np.arange(len(tri)), 20)
    ys = md.sample(z[rep], 1.0, r)
    lab = ys == y_true[rep]
    sc = md.prm_prob(prm, x[rep], op[rep], c[rep], ys, m, c_max)
    ok = (sc >= 0.5) == lab
    # the PRM's score of the right step: on triples where its training saw right steps (PRM
    # and generator triples) and elsewhere
    s_right = md.prm_prob(prm, x, op, c, y_true, m, c_max)
    both = g_seen & r_seen
    return {"prm_right_familiar": float(s_right[both].mean()),
            "prm_right_other": float(s_right[~both].mean()) if (~both).any() else np.nan,
            "gen_acc_seen": float(right[g_seen].mean()),
            "gen_acc_unseen": float(right[~g_seen].mean()),
            "gen_ptrue_unseen": float(p_true[~g_seen].mean()),
            "gen_ptrue_seen": float(p_true[g_seen].mean()),
            "prm_acc_seen": float(ok[r_seen[rep]].mean()),
            "prm_acc_unseen": float(ok[~r_seen[rep]].mean()),
            "chance": 1.0 / m}


# ---------------------------------------------------------------------------------------------
def seed_models(cfg, data, seed) -> Models:
    p = P(cfg)
    return Models([data[f"gen/{seed}/{n}"] for n in GEN_PARAMS],
                  [data[f"prm/{seed}/{n}"] for n in GEN_PARAMS], int(p["m"]), int(p["c_max"]))


def world(cfg) -> ChainWorld:
    """The chain world with the spec's prices: generator call 2 P_gen, PRM call 2 P_prm,
    calculator ``tool_steps`` generator-step equivalents."""
    p = P(cfg)
    m, c_max, H = int(p["m"]), int(p["c_max"]), int(p["hidden"])
    return ChainWorld(m, gen_flops=2.0 * md.n_params(m, c_max, H, prm=False),
                      prm_flops=2.0 * md.n_params(m, c_max, H, prm=True),
                      tool_steps=float(p["tool_steps"]), c_max=c_max)


def problems(cfg, seed, stream="test", n_per_K=None):
    p = P(cfg)
    return make_chains(_rng(cfg, stream, seed), int(p["m"]), p["K"],
                       int(n_per_K or p["n_per_K"]), int(p["c_max"]))


def iterations(cfg, models, probs, seed, tools=True, tag="") -> list[Outcome]:
    """The four iteration outcomes of the adaptive agent on every problem (spec):
    1 greedy; 2 beam w = 4, T = 1.0; 3 beam w = 8, T = 1.3, tool below 0.5; 4 as 3 with tool
    below 0.8. ``tools=False``: iterations 3 and 4 without the calculator (ablation)."""
    p = P(cfg)
    E = int(p["expansions"])
    its = [greedy(models, probs),
           beam_search(models, probs, int(p["it2_width"]), E, float(p["it2_temperature"]),
                       _rng(cfg, f"it2{tag}", seed))]
    for j, thr in ((3, p["tool_thr3"]), (4, p["tool_thr4"])):
        its.append(beam_search(models, probs, int(p["it34_width"]), E,
                               float(p["it34_temperature"]),
                               _rng(cfg, f"it{j}{tag}{'' if tools else '-notool'}", seed),
                               tool_thr=float(thr) if tools else None))
    return its


def _record(state, key, out: Outcome, world_, truth):
    flops, calls = account(world_, out)
    state[f"{key}/correct"] = (out.answer == truth).astype(np.int8)
    state[f"{key}/flops"] = flops
    state[f"{key}/calls"] = calls
    state[f"{key}/tools"] = out.n_tool.astype(float)
    state[f"{key}/iters"] = out.n_iter.astype(float)


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    """Run every method of every seed on that seed's test problems; per-problem records."""
    check(cfg)
    p = P(cfg)
    w_ = world(cfg)
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    for seed in sorted({r.seed for r in runs}):
        mine = {r.method: r for r in runs if r.seed == seed}
        models = seed_models(cfg, data, seed)
        probs = problems(cfg, seed)
        truth = probs.answers()
        for r in mine.values():
            state[f"{r.key}/K"] = probs.K.astype(float)
        if {"sc", "bon"} & set(mine):
            nmax = max(int(n) for n in p["n_samples"])
            ans, R = sample_pool(models, probs, nmax, float(p["sample_temperature"]),
                                 _rng(cfg, "pool", seed))
            for meth in ("sc", "bon"):
                if meth in mine:
                    for n in p["n_samples"]:
                        _record(state, f"{mine[meth].key}/N{n}",
                                pool_outcome(ans, R, int(n), probs.K, method=meth, m=models.m),
                                w_, truth)
        if "beam" in mine:
            for w in p["beam_widths"]:
                out = beam_search(models, probs, int(w), int(p["expansions"]),
                                  float(p["sample_temperature"]), _rng(cfg, f"beam{w}", seed))
                _record(state, f"{mine['beam'].key}/w{w}", out, w_, truth)
        adaptive_family = {"adaptive", "adaptive-nostop", "adaptive-learned"} & set(mine)
        if adaptive_family or "adaptive-notool" in mine:
            its = iterations(cfg, models, probs, seed)
            g_correct = (its[0].answer == truth).astype(np.int8)
            for meth in ("adaptive", "adaptive-notool"):
                if meth not in mine:
                    continue
                use = its if meth == "adaptive" else its[:2] + iterations(
                    cfg, models, probs, seed, tools=False)[2:]
                for pt in points(cfg, meth):
                    _record(state, f"{mine[meth].key}/{pt}", adaptive(use, float(pt[1:])), w_,
                            truth)
            if "adaptive-nostop" in mine:
                _record(state, f"{mine['adaptive-nostop'].key}/all", adaptive(its, None), w_,
                        truth)
            if "adaptive-learned" in mine:
                curves += learned(cfg, state, mine["adaptive-learned"], models, its, w_, truth,
                                  seed)
            for meth in sorted(adaptive_family | ({"adaptive-notool"} & set(mine))):
                state[f"{mine[meth].key}/greedy_correct"] = g_correct
        for meth, pt in hist_points(cfg).items():
            if meth in mine:
                r = mine[meth]
                logf = np.clip(np.log10(state[f"{r.key}/{pt}/flops"]), HIST_EDGES[0],
                               HIST_EDGES[-1])
                h = np.histogram(logf, HIST_EDGES)[0]
                curves += [{**r.as_dict(), "step": b, "metric": f"flops_hist_{pt}",
                            "value": float(v)} for b, v in enumerate(h)]
        if "adaptive" in mine:
            r = mine["adaptive"]
            for kind in ("gen", "prm"):
                for j, v in enumerate(data[f"loss/{kind}/{seed}"]):
                    curves.append({**r.as_dict(), "step": j, "metric": f"{kind}_loss",
                                   "value": float(v)})
    return state, curves


def learned(cfg, state, run, models, its_test, world_, truth, seed) -> list[dict]:
    """Full profile: the REINFORCE controller, trained on its own problems for every lambda
    and evaluated (most likely action) on the test problems."""
    p = P(cfg)
    kmax = float(max(p["K"]))
    tr = problems(cfg, seed, "controller-train", int(p["controller_n_per_K"]))
    its_tr = iterations(cfg, models, tr, seed, tag="-ctrl")
    truth_tr = tr.answers()

    def tables(its, truth_):
        flops = np.stack([account(world_, o)[0] for o in its])
        return flops, np.stack([(o.answer == truth_).astype(float) for o in its])

    f_tr, c_tr = tables(its_tr, truth_tr)
    f_te, c_te = tables(its_test, truth)
    k_te = state[f"{run.key}/K"] / kmax
    curves = []
    for lam in p["controller_lambdas"]:
        W, curve = ctl.train_controller(its_tr, f_tr, tr.K / kmax, c_tr, float(lam),
                                        _rng(cfg, f"controller{lam:g}", seed),
                                        updates=int(p["controller_updates"]),
                                        batch=int(p["controller_batch"]),
                                        lr=float(p["controller_lr"]))
        out, _, _, _ = ctl.rollout(W, its_test, f_te, k_te, c_te)
        _record(state, f"{run.key}/l{lam:g}", out, world_, truth)
        every = max(1, len(curve) // 20)
        curves += [{**run.as_dict(), "step": j, "metric": f"reward_l{lam:g}",
                    "value": float(curve[j])} for j in range(0, len(curve), every)]
    return curves


# ---------------------------------------------------------------------------------------------
def subsets(cfg, K):
    p = P(cfg)
    return {"all": np.ones(len(K), bool), "easy": K <= p["easy_max_K"],
            "hard": K >= p["hard_min_K"]}


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """Per run: for every budget point, accuracy and mean FLOPs on all / easy / hard problems,
    mean compute intensity (FLOPs / the final trajectory's own K generator steps), tool calls,
    iterations, and for the adaptive family the allocation ratio (mean FLOPs where greedy
    decoding fails / where it succeeds); plus the seed's premises."""
    w_ = world(cfg)
    rows = []
    for run in runs:
        K = state[f"{run.key}/K"]
        subs = subsets(cfg, K)
        row = {}
        for pt in points(cfg, run.method):
            key = f"{run.key}/{pt}"
            corr, flops = state[f"{key}/correct"].astype(float), state[f"{key}/flops"]
            for sub, mask in subs.items():
                row[f"acc_{sub}_{pt}"] = float(corr[mask].mean()) if mask.any() else np.nan
                row[f"flops_{sub}_{pt}"] = float(flops[mask].mean()) if mask.any() else np.nan
            row[f"ci_{pt}"] = float(np.mean(flops / (K * w_.gen_flops)))
            row[f"tools_{pt}"] = float(state[f"{key}/tools"].mean())
            row[f"iters_{pt}"] = float(state[f"{key}/iters"].mean())
            gk = f"{run.key}/greedy_correct"
            if gk in state:
                g = state[gk].astype(bool)
                row[f"alloc_{pt}"] = (float(flops[~g].mean() / flops[g].mean())
                                      if g.any() and (~g).any() else np.nan)
                row["greedy_acc"] = float(g.mean())
                it = state[f"{key}/iters"]
                row[f"escalated_gsucc_{pt}"] = float((it[g] > 1).mean()) if g.any() else np.nan
                row[f"escalated_gfail_{pt}"] = float((it[~g] > 1).mean()) if (~g).any() \
                    else np.nan
        for k in data:
            if k.startswith(f"premise/{run.seed}/"):
                row[f"premise_{k.rsplit('/', 1)[1]}"] = float(data[k])
        rows.append(row)
    return rows
