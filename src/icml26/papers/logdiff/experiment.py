"""Stages of the LOGDIFF paper: prepare (mixtures, true conditionals), train (sampling every
(formula, method) pair, plus the learned networks), evaluate (satisfaction, TV, sliced W1,
guidance-field error).

A setting is one formula on one dataset in one variant: ``analytic`` (exact atoms from the
mixture's closed form) or ``learned`` (atoms from the trained denoiser and classifier). A run
is (method, setting, seed). All methods of a setting are simulated in lockstep from the same
initial noise and noise increments of their seed (the official code's paired comparison); the
exact oracle of the setting runs alongside (even when not asked for) because the guidance-field
error of every method is measured on the oracle's trajectory. Random streams derive from the
seed (noise), from (setting, seed) (reference samples) or from the paper (projections), so
results do not depend on how runs are sharded.
"""

from __future__ import annotations

import numpy as np

from icml26.errors import ConfigError
from icml26.seeding import derive_seed

from . import logic, mixture, sampler
from .mixture import AnalyticAtoms


def P(cfg):
    return cfg["params"]


def setting_info(cfg, setting: str) -> dict:
    s = cfg["settings"][setting]
    datasets = P(cfg)["datasets"]
    if s["dataset"] not in datasets:
        raise ConfigError(f"logdiff: setting {setting!r} names dataset {s['dataset']!r}; "
                          f"allowed: {', '.join(datasets)}")
    mix = mixture.build(datasets[s["dataset"]])
    try:
        ast = logic.parse(s["formula"])
    except ValueError as err:
        raise ConfigError(f"logdiff: setting {setting!r}: {err}") from None
    if logic.n_vars(ast) > mix.n_attr:
        raise ConfigError(f"logdiff: setting {setting!r}: formula {s['formula']!r} uses more "
                          f"attributes than dataset {s['dataset']!r} has ({mix.n_attr})")
    sat = logic.satisfied(ast, mix.attrs)
    if not sat.any():
        raise ConfigError(f"logdiff: setting {setting!r}: formula {s['formula']!r} is "
                          "unsatisfiable on its dataset")
    variant = s.get("variant", "analytic")
    return {"mix": mix, "ast": ast, "sat": sat, "variant": variant, "dataset": s["dataset"],
            "formula": s["formula"], "vp": P(cfg)[variant]}


def check_grid(cfg, runs) -> None:
    for r in runs:
        info = setting_info(cfg, r.setting)
        if not logic.applicable(r.method, info["ast"]):
            raise ConfigError(f"logdiff: method {r.method!r} does not apply to formula "
                              f"{info['formula']!r} (setting {r.setting!r}); exclude the pair")
        if r.method == "monolithic" and info["variant"] != "learned":
            raise ConfigError(f"logdiff: method 'monolithic' needs a learned setting, not "
                              f"{r.setting!r} (exclude the pair)")


def learned_formulas(cfg) -> list[str]:
    """Formulas of the monolithic classifier's heads: every learned setting's, sorted."""
    return sorted({s["formula"] for s in cfg["settings"].values()
                   if s.get("variant", "analytic") == "learned"})


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Nothing random: each setting's mixture and its true conditional p(c | phi)."""
    out = {}
    for name in cfg["settings"]:
        info = setting_info(cfg, name)
        mix = info["mix"]
        out[f"{name}/means"] = mix.means
        out[f"{name}/weights"] = mix.weights
        out[f"{name}/satisfied"] = info["sat"].astype(np.float64)
        out[f"{name}/target"] = mixture.conditional_weights(mix, info["sat"])
    return out


def seed_noise(cfg, seed: int, n: int, steps: int):
    """x_T and the noise increments of one seed, shared by every method and setting."""
    g = np.random.default_rng(derive_seed(cfg["paper"], "sampler-noise", seed))
    x_T = g.standard_normal((n, 2))
    xi = g.standard_normal((steps, n, 2))
    return x_T, xi


def _method_score(cfg, method, info, atoms, exact, learned_atoms=None, head=None):
    vp = info["vp"]
    mono = None
    if method == "monolithic":
        def mono():
            return learned_atoms.formula_grad(head)
    return logic.score(method, info["ast"], atoms, info["mix"].n_attr, exact=exact,
                       not_cap=vp["not_weight_cap"], weights=P(cfg)["weights"],
                       monolithic=mono)


def simulate(cfg, info, methods, seeds, nets=None, head=None):
    """Sample every method of one setting in lockstep; returns final samples per method
    (S, n, 2), the guidance-field error per method (S, n_points) and its step indices."""
    p, vp, mix = P(cfg), info["vp"], info["mix"]
    n, steps = int(vp["samples"]), int(vp["steps"])
    noise = [seed_noise(cfg, s, n, steps) for s in seeds]
    x0 = np.stack([x for x, _ in noise])
    xi = np.stack([e for _, e in noise], axis=1)                 # (steps, S, n, 2)
    grid = sampler.time_grid(steps, float(p["t_end"]))
    order = ["oracle"] + [m for m in methods if m != "oracle"]
    X = {m: x0.copy() for m in order}
    gf_n, gf_every = min(int(p["gf_samples"]), n), int(p["gf_every"])
    gf_steps = list(range(0, steps, gf_every))
    gf = {m: np.zeros((len(seeds), len(gf_steps))) for m in order}

    def atoms_at(x, t):
        exact = AnalyticAtoms(mix, x, t)
        if info["variant"] == "learned":
            from .learned import LearnedAtoms
            return exact, LearnedAtoms(nets, mix, x, t)
        return exact, exact

    for k in range(steps):
        t, t_next = float(grid[k]), float(grid[k + 1])
        if k % gf_every == 0:
            xo = X["oracle"][:, :gf_n]
            exact, atoms = atoms_at(xo, t)
            s0 = exact.score(logic.event(mix.n_attr))
            g_ex = _method_score(cfg, "oracle", info, atoms, exact) - s0
            den = np.sum(g_ex ** 2, axis=(1, 2))
            for m in order:
                g = _method_score(cfg, m, info, atoms, exact, atoms, head) - s0
                gf[m][:, k // gf_every] = np.sum((g - g_ex) ** 2, axis=(1, 2)) / den
        for m in order:
            exact, atoms = atoms_at(X[m], t)
            s = _method_score(cfg, m, info, atoms, exact, atoms, head)
            X[m] = sampler.step(vp["sampler"], X[m], s, t, t_next,
                                xi[k] if vp["sampler"] == "em" else None)
    return X, gf, np.array(gf_steps)


def train_learned(cfg, seeds, data_mix):
    import torch

    from icml26.seeding import torch_device

    from . import learned

    torch.set_num_threads(1)
    device = torch_device(cfg["device"])
    forms = learned_formulas(cfg)
    fsat = np.array([logic.satisfied(logic.parse(f), data_mix.attrs) for f in forms])
    return learned.train(data_mix, fsat.reshape(len(forms), data_mix.K), seeds,
                         P(cfg)["learned"], float(P(cfg)["t_end"]), cfg["paper"], device)


def _rows(run, metric, steps, values):
    return [{**run.as_dict(), "step": int(k), "metric": metric, "value": float(v)}
            for k, v in zip(steps, values, strict=True)]


def train(cfg: dict, data: dict[str, np.ndarray], runs: list) -> tuple[dict, list[dict]]:
    p = P(cfg)
    check_grid(cfg, runs)
    for name in p["scatter_settings"]:
        if name not in cfg["settings"]:
            raise ConfigError(f"logdiff: scatter_settings names {name!r}; allowed: "
                              f"{', '.join(cfg['settings'])}")
    state, curves = {}, []
    settings = list(dict.fromkeys(r.setting for r in runs))
    nets, train_rec, learned_seeds = None, None, []
    learned_here = [s for s in settings if setting_info(cfg, s)["variant"] == "learned"]
    if learned_here:
        learned_seeds = sorted({r.seed for r in runs if r.setting in learned_here})
        lp = p["learned"]
        if lp["dataset"] not in p["datasets"]:
            raise ConfigError(f"logdiff: learned.dataset {lp['dataset']!r}; allowed: "
                              f"{', '.join(p['datasets'])}")
        train_mix = mixture.build(p["datasets"][lp["dataset"]])
        nets, train_rec = train_learned(cfg, learned_seeds, train_mix)
    directions = mixture.directions(np.random.default_rng(derive_seed(cfg["paper"], "swd")),
                                    int(p["swd_projections"]))
    forms = learned_formulas(cfg)
    for setting in settings:
        info = setting_info(cfg, setting)
        here = [r for r in runs if r.setting == setting]
        seeds = sorted({r.seed for r in here})
        methods = list(dict.fromkeys(r.method for r in here))
        sub_nets, head = None, None
        if info["variant"] == "learned":
            if info["dataset"] != p["learned"]["dataset"]:
                raise ConfigError(f"logdiff: learned setting {setting!r} must use the "
                                  f"learned dataset {p['learned']['dataset']!r}")
            sub_nets = _select(nets, [learned_seeds.index(s) for s in seeds])
            head = forms.index(info["formula"])
        X, gf, gf_steps = simulate(cfg, info, methods, seeds, sub_nets, head)
        for run in here:
            i = seeds.index(run.seed)
            x = X[run.method][i]
            ref_rng = np.random.default_rng(derive_seed(cfg["paper"], "reference", setting,
                                                        run.seed))
            ref, _ = info["mix"].sample(ref_rng, int(p["reference_samples"]),
                                        probs=mixture.conditional_weights(info["mix"],
                                                                          info["sat"]))
            ok = np.all(np.isfinite(x), axis=1)
            pre = f"{run.key}/"
            state[pre + "hist"] = mixture.histogram(info["mix"], x[ok]) if ok.any() \
                else np.zeros(info["mix"].K)
            state[pre + "nonfinite"] = np.array([float((~ok).sum())])
            state[pre + "swd"] = np.array([mixture.sliced_w1(x[ok], ref, directions)
                                           if ok.all() else np.nan])
            state[pre + "gf"] = gf[run.method][i]
            curves += _rows(run, "gf_err", gf_steps, gf[run.method][i])
            if setting in p["scatter_settings"]:
                pts = x[: int(p["scatter_points"])]
                idx = np.arange(len(pts))
                curves += _rows(run, "sample_x1", idx, pts[:, 0])
                curves += _rows(run, "sample_x2", idx, pts[:, 1])
            if info["variant"] == "learned":
                j = learned_seeds.index(run.seed)
                rec = np.array([[st, d[j], c[j], a[j]] for st, d, c, a in train_rec])
                state[pre + "train"] = rec
                if run.method == "logdiff":
                    for col, name in ((1, "denoiser_mse"), (2, "classifier_ce"),
                                      (3, "classifier_acc")):
                        curves += _rows(run, name, rec[:, 0], rec[:, col])
    return state, curves


def _select(nets, idx):
    """The stacked networks of the seeds at positions ``idx``."""
    from .learned import Trained

    pick = lambda layers: [[w[idx], b[idx]] for w, b in layers]  # noqa: E731
    return Trained(pick(nets.den), pick(nets.clf), pick(nets.fclf), nets.device, nets.n_attr)


# ---------------------------------------------------------------------------------------------
def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    rows = []
    for run in runs:
        pre = f"{run.key}/"
        hist = state[pre + "hist"]
        target = data[f"{run.setting}/target"]
        sat = data[f"{run.setting}/satisfied"] > 0.5
        failed = state[pre + "nonfinite"][0] > 0
        gf = state[pre + "gf"]
        row = {
            "satisfaction": np.nan if failed else float(hist[sat].sum() / hist.sum()),
            "tv": np.nan if failed else mixture.tv_distance(hist, target),
            "swd": float(state[pre + "swd"][0]),
            "gf_err": float(np.mean(gf)),
            "gf_rel_max": float(np.sqrt(np.max(gf))),
            "nonfinite_samples": float(state[pre + "nonfinite"][0]),
        }
        if pre + "train" in state:
            rec = state[pre + "train"]
            tail = rec[-max(len(rec) // 5, 1):]
            row.update({"denoiser_mse": float(tail[:, 1].mean()),
                        "classifier_ce": float(tail[:, 2].mean()),
                        "classifier_acc": float(tail[:, 3].mean())})
        rows.append(row)
    return rows


def with_info(cfg, metrics):
    """Metrics with each run's dataset, formula and variant (config, not measured)."""
    out = metrics.copy()
    for key in ("dataset", "formula", "variant"):
        out[key] = [cfg["settings"][s].get(key, "analytic") for s in out["setting"]]
    return out
