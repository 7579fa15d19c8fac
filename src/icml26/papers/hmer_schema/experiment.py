"""Stages of the hmer-schema paper: prepare (glyph pools), train (everything per seed),
evaluate (metrics per run).

Runs are (variant, recogniser, seed). One train job does all the work per seed, because every
piece is shared: the seed's test expressions and their geometry (computed once and reused by
every recogniser and variant), the recogniser (trained once per (recogniser, seed) and reused
by the four variants), and the fixed exemplars. It writes per-expression results of every run;
evaluate pools them into the metrics. Random streams derive from (paper, stream, seed) only, so
results do not depend on sharding.
"""

from __future__ import annotations

import warnings

import numpy as np

from icml26.seeding import derive_seed

from . import decode, glyphs, layout, tokens

TAXONOMY = ("exact", "STRUCT", "ROLE", "PERCEPT", "OTHER")


def P(cfg):
    return cfg["params"]


def categories(cfg):
    return list(P(cfg)["categories"])


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """load_digits split by index parity: even indices train the recognisers, odd indices only
    render expressions (spec)."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return {"train_images": d.images[0::2].astype(np.float32),
            "train_labels": d.target[0::2].astype(np.int64),
            "render_images": d.images[1::2].astype(np.float32),
            "render_labels": d.target[1::2].astype(np.int64)}


def render_pools(data):
    return layout.digit_pools(np.asarray(data["render_images"], dtype=float),
                              np.asarray(data["render_labels"]))


def reference_layouts(cfg, pools):
    """The fixed exemplars (one per category, no artifact, a stream of their own: never test
    items; officially 9 fixed exemplar images) and the reference sample whose feature spread
    standardises the descriptor (INFERRED rule). Both are the same for every seed."""
    p = P(cfg)
    rng = np.random.default_rng(derive_seed(cfg["paper"], "exemplars"))
    exemplars = [layout.render(c, rng, pools, 0.0, p["jitter_px"]) for c in categories(cfg)]
    rng = np.random.default_rng(derive_seed(cfg["paper"], "descriptor-scale"))
    ref = [layout.render(c, rng, pools, p["artifact_prob"], p["jitter_px"])
           for c in categories(cfg) for _ in range(int(p["n_scale_per_category"]))]
    scale = np.array([decode.descriptor(decode.Geometry(e.boxes), e.cls) for e in ref]).std(0)
    return exemplars, scale


def test_set(cfg, pools, seed):
    """The seed's test expressions: n_per_category of every category, in category order."""
    p = P(cfg)
    rng = np.random.default_rng(derive_seed(cfg["paper"], "test", seed))
    return [layout.render(c, rng, pools, p["artifact_prob"], p["jitter_px"])
            for c in categories(cfg) for _ in range(int(p["n_per_category"]))]


def make_recogniser(name: str, p: dict, seed: int):
    """The stand-in "large models" (spec): LR (C = 1), KNN (k = 3), MLP (64 hidden, 300 it.)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier

    state = int(seed % (2 ** 31))
    if name == "lr":
        return LogisticRegression(C=float(p["lr_C"]), max_iter=int(p["lr_max_iter"]))
    if name == "knn":
        return KNeighborsClassifier(n_neighbors=int(p["knn_k"]))
    if name == "mlp":
        return MLPClassifier(hidden_layer_sizes=(int(p["mlp_hidden"]),),
                             max_iter=int(p["mlp_max_iter"]), random_state=state)
    raise ValueError(f"unknown recogniser {name!r}")


def fit_recogniser(name, p, X, y, seed):
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    model = make_recogniser(name, p, seed)
    # one BLAS thread: the job runs on one core, and spinning threads inflate its CPU time
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    n_iter = float(np.max(getattr(model, "n_iter_", np.nan)))
    cap = {"lr": p["lr_max_iter"], "mlp": p["mlp_max_iter"]}.get(name, np.nan)
    return model, n_iter, float(cap)


def probabilities(model, X):
    """Class probabilities over every visual class (columns in glyphs.CLASSES order)."""
    from threadpoolctl import threadpool_limits

    out = np.zeros((len(X), len(glyphs.CLASSES)))
    with threadpool_limits(1):
        out[:, model.classes_] = model.predict_proba(X)
    return out


# ---------------------------------------------------------------------------------------------
AMBIG = np.isin(np.arange(len(glyphs.CLASSES)), glyphs.AMBIGUOUS)


def read_expression(variant, g, Pm, schema, ex, label_tokens, label_struct):
    """One variant on one expression: its tokens and per-expression result row."""
    toks, emitted, used = decode.decode(variant, g, Pm, schema)
    exact = toks == label_tokens
    struct = exact or tokens.structure(toks) == label_struct
    amb = np.flatnonzero(AMBIG[ex.cls])
    role_ok = sum(1 for i in amb if emitted[i] == ex.tok[i])
    if exact:
        tax = 0
    elif not struct:
        tax = 1
    elif np.array_equal(used, ex.cls):
        tax = 2 if role_ok < len(amb) else 4
    else:
        tax = 3
    return toks, {"exact": exact, "struct": struct, "amb": len(amb), "role_ok": role_ok,
                  "tax": tax,
                  "schema": layout.CATEGORIES.index(schema) if schema else -1}


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    p = P(cfg)
    pools = render_pools(data)
    exemplars, scale = reference_layouts(cfg, pools)
    ex_geom = [decode.Geometry(e.boxes) for e in exemplars]
    ex_crops = np.concatenate([e.crops for e in exemplars])
    ex_split = np.cumsum([len(e.cls) for e in exemplars])[:-1]
    state: dict[str, np.ndarray] = {}
    vocab: dict = {}
    for seed in sorted({r.seed for r in runs}):
        mine = [r for r in runs if r.seed == seed]
        exprs = test_set(cfg, pools, seed)
        geoms = [decode.Geometry(e.boxes) for e in exprs]        # once per (expression, seed)
        labels = [tokens.tokenize(e.label) for e in exprs]
        label_struct = [tokens.structure(t) for t in labels]
        X = np.concatenate([e.crops for e in exprs])
        split = np.cumsum([len(e.cls) for e in exprs])[:-1]
        true_cls = np.concatenate([e.cls for e in exprs])
        state[f"seed{seed}/category"] = np.array(
            [layout.CATEGORIES.index(e.category) for e in exprs])
        state[f"seed{seed}/artifact"] = np.array([e.artifact != "" for e in exprs])
        state[f"seed{seed}/n_glyphs"] = np.array([len(e.cls) for e in exprs])
        rng = np.random.default_rng(derive_seed(cfg["paper"], "train-glyphs", seed))
        Xtr, ytr = glyphs.training_set(data["train_images"], data["train_labels"],
                                       int(p["n_train_per_symbol"]), rng)
        for rec in sorted({r.setting for r in mine}):
            model, n_iter, cap = fit_recogniser(
                rec, p, Xtr, ytr, derive_seed(cfg["paper"], "recogniser", rec, seed))
            Pall = probabilities(model, X)
            sym_ok = np.add.reduceat((Pall.argmax(1) == true_cls).astype(int),
                                     np.r_[0, split])
            Pex = probabilities(model, ex_crops)
            desc = [decode.descriptor(g, Pe.argmax(1))
                    for g, Pe in zip(ex_geom, np.split(Pex, ex_split), strict=True)]
            matcher = decode.SchemaMatcher(np.array(desc), scale, categories(cfg))
            Ps = np.split(Pall, split)
            argmaxes = [Pm.argmax(1) for Pm in Ps]
            schemas = {}
            for v in ("sil", "msr", "sasr"):
                if v == "sasr" and "sil" in schemas:   # the same 1-NN schema
                    schemas[v] = schemas["sil"]
                elif any(r.method == v for r in mine):
                    schemas[v] = [decode.identify(v, g, a, matcher)
                                  for g, a in zip(geoms, argmaxes, strict=True)]
            for run in (r for r in mine if r.setting == rec):
                rows, preds = [], []
                sch = schemas.get(run.method, [""] * len(exprs))
                for ex, g, Pm, s, lab, ls in zip(exprs, geoms, Ps, sch, labels, label_struct,
                                                 strict=True):
                    toks, row = read_expression(run.method, g, Pm, s, ex, lab, ls)
                    rows.append(row)
                    preds.append(toks)
                A, la = tokens.encode(preds, vocab)
                B, lb = tokens.encode(labels, vocab)
                dist = tokens.levenshtein_batch(A, la, B, lb)
                for col in ("exact", "struct", "amb", "role_ok", "tax", "schema"):
                    state[f"{run.key}/{col}"] = np.array([r[col] for r in rows])
                state[f"{run.key}/lev"] = dist
                state[f"{run.key}/len_pred"] = la
                state[f"{run.key}/len_label"] = lb
                state[f"{run.key}/sym_ok"] = sym_ok
                state[f"{run.key}/fit"] = np.array([n_iter, cap])
    return state, []


# ---------------------------------------------------------------------------------------------
def score(cats, n_glyphs, artifact, r: dict, names) -> dict:
    """Pooled metrics of one run from its per-expression results ``r`` (official ExpRate and
    token accuracy pooled over all samples; the rest project-defined)."""
    exact = r["exact"].astype(bool)
    lev, la, lb = r["lev"], r["len_pred"], r["len_label"]
    tacc = tokens.token_accuracy(lev, la, lb)
    out = {"exprate": float(exact.mean()), "exprate_le1": float(np.mean(lev <= 1)),
           "exprate_le2": float(np.mean(lev <= 2)), "token_acc": float(tacc.mean()),
           "struct_rate": float(r["struct"].mean()),
           "symbol_acc": float(r["sym_ok"].sum() / n_glyphs.sum()),
           "role_acc": float(r["role_ok"].sum() / max(r["amb"].sum(), 1)),
           "schema_acc": float(np.mean(r["schema"] == cats)) if (r["schema"] >= 0).any()
           else np.nan,
           "exprate_clean": float(exact[~artifact].mean()) if (~artifact).any() else np.nan,
           "exprate_artifact": float(exact[artifact].mean()) if artifact.any() else np.nan}
    failed = ~exact
    for t, name in enumerate(TAXONOMY[1:], 1):
        out[f"tax_{name}"] = float(np.mean(r["tax"][failed] == t)) if failed.any() else np.nan
    for k, c in enumerate(names):
        m = cats == k
        if not m.any():
            continue
        f = m & failed
        out[f"exprate_{c}"] = float(exact[m].mean())
        out[f"token_acc_{c}"] = float(tacc[m].mean())
        out[f"symbol_acc_{c}"] = float(r["sym_ok"][m].sum() / n_glyphs[m].sum())
        out[f"schema_acc_{c}"] = float(np.mean(r["schema"][m] == k)) \
            if (r["schema"] >= 0).any() else np.nan
        for t, name in enumerate(TAXONOMY[1:], 1):
            out[f"tax_{name}_{c}"] = float(np.mean(r["tax"][f] == t)) if f.any() else np.nan
    return out


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    names = layout.CATEGORIES
    out = []
    for run in runs:
        pre = f"seed{run.seed}"
        r = {c: state[f"{run.key}/{c}"] for c in ("exact", "struct", "amb", "role_ok", "tax",
                                                   "schema", "lev", "len_pred", "len_label",
                                                   "sym_ok")}
        row = score(state[f"{pre}/category"], state[f"{pre}/n_glyphs"],
                    state[f"{pre}/artifact"].astype(bool), r, names)
        n_iter, cap = state[f"{run.key}/fit"]
        row["fit_iter"] = float(n_iter)
        row["fit_iter_cap"] = float(cap)
        row["n_expressions"] = float(len(r["exact"]))
        out.append(row)
    return out
