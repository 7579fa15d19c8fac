"""Behaviour tests of the st-gpa paper: the SGC ridge head against scikit-learn, propagation by
hand, self-training selection, the 2-layer GCN gradients, certificate validity (poisoning one
partition moves no other partition's vote; brute-force attacks within the certified radius never
change a prediction), the claim checkers on data built to fail, and the pipeline end to end."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from icml26 import grid, pipeline, registry
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.graph import contextual_sbm, dpa_certificate, edges_to_adj, knn_graph
from icml26.papers.st_gpa import claims, experiment, figures, models, stgpa

PARAMS = {"base": "sgc", "hops": 2, "ridge_lambda": 0.1, "st_rounds": 2, "st_tau": 3}


def _small_graph(n=60, C=3, per=5, seed=0, k=3):
    rng = np.random.default_rng(seed)
    x, y, edges = contextual_sbm(n, C, rng, mean_degree=4.0, feature_noise=0.5)
    labelled = np.sort(np.concatenate(
        [rng.choice(np.flatnonzero(y == c), per, replace=False) for c in range(C)]))
    knn = knn_graph(x, k).tocoo()
    knn_edges = np.stack([knn.row, knn.col], 1)[knn.row < knn.col]
    return x, y, edges, labelled, knn_edges


# --------------------------------------------------------------------------------------------
# base model
# --------------------------------------------------------------------------------------------
def test_ridge_head_equals_sklearn_ridge():
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(0)
    n, d, C, P = 50, 6, 3, 3
    h = rng.normal(size=(P, n, d))
    targets = rng.integers(0, C, size=(P, n))
    mask = rng.random((P, n)) < 0.4
    w = models.ridge_fit(h, mask, targets, C, 0.1)
    scores = models.ridge_scores(h, w)
    for p in range(P):
        onehot = (targets[p, mask[p]][:, None] == np.arange(C)).astype(float)
        ref = Ridge(alpha=0.1, fit_intercept=True).fit(h[p, mask[p]], onehot)
        assert np.allclose(scores[p], ref.predict(h[p]), atol=1e-9)
    # a shared feature matrix (1, n, d) broadcasts over partitions
    w_shared = models.ridge_fit(h[:1], mask, targets, C, 0.1)
    for p in range(P):
        assert np.allclose(w_shared[p], models.ridge_fit(h[:1], mask[p:p + 1],
                                                         targets[p:p + 1], C, 0.1)[0])
    # an empty partition: zero weights, every score 0 -> votes class 0
    empty = models.ridge_fit(h[:1], np.zeros((1, n), bool), targets[:1], C, 0.1)
    assert np.all(empty == 0)


def test_sgc_propagation_by_hand_and_block_diagonal():
    rng = np.random.default_rng(1)
    n = 7
    x = rng.normal(size=(n, 3))
    e1 = np.array([[0, 1], [1, 2], [3, 4]])
    e2 = np.array([[2, 5], [5, 6], [0, 6], [1, 3]])

    def dense_sgc(edges):
        a = np.eye(n) + edges_to_adj(edges, n).toarray()
        dinv = np.diag(a.sum(1) ** -0.5)
        an = dinv @ a @ dinv
        return an @ an @ x

    shared = models.sgc_features(models.Propagation.from_edges([e1], n), x)
    assert shared.shape == (1, n, 3) and np.allclose(shared[0], dense_sgc(e1))
    stacked = models.sgc_features(models.Propagation.from_edges([e1, e2], n), x)
    assert np.allclose(stacked[0], dense_sgc(e1)) and np.allclose(stacked[1], dense_sgc(e2))


def test_self_training_adds_top_margin_nodes_per_class():
    class Fixed:
        """A 'model' whose scores do not depend on the training set."""
        def __init__(self, scores):
            self.scores, self.fits = scores, []

        def fit_scores(self, mask, targets, C):
            self.fits.append((mask.copy(), targets.copy()))
            return self.scores

    # 6 nodes, 2 classes; node 0 is the true labelled node
    s = np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8], [0.45, 0.55], [0.7, 0.3], [0.0, 1.0]])
    model = Fixed(s[None])
    mask = np.zeros((1, 6), bool)
    mask[0, 0] = True
    targets = np.full((1, 6), -1)
    targets[0, 0] = 0
    _, final_mask, final_targets = stgpa.self_train(model, mask, targets, 2, rounds=2, tau=1)
    assert len(model.fits) == 3
    # round 1: class 0 -> node 4 (margin 0.4 > node 1's 0.2), class 1 -> node 5 (margin 1.0)
    # round 2 (accumulating): class 0 -> node 1, class 1 -> node 2
    m1 = model.fits[1][0][0]
    assert np.flatnonzero(m1).tolist() == [0, 4, 5]
    assert np.flatnonzero(final_mask[0]).tolist() == [0, 1, 2, 4, 5]
    assert final_targets[0, [0, 1, 2, 4, 5]].tolist() == [0, 0, 1, 0, 1]
    assert not final_mask[0, 3]        # smallest margin: never chosen


def test_method_flags():
    assert stgpa.method_flags("gpa", "label") == (False, False)
    assert stgpa.method_flags("st-gpa", "label") == (True, False)
    assert stgpa.method_flags("st-gpa", "structure") == (True, True)
    assert stgpa.method_flags("st-only", "structure") == (True, False)
    assert stgpa.method_flags("edges-only", "label") == (False, True)
    with pytest.raises(ValueError, match="allowed"):
        stgpa.method_flags("dpa", "label")


def test_gcn_gradients_match_finite_differences():
    rng = np.random.default_rng(2)
    n, d, C, P = 12, 4, 3, 2
    x = rng.normal(size=(n, d))
    edges = rng.integers(0, n, size=(20, 2))
    prop = models.Propagation.from_edges([edges[:10], edges[10:]], n)
    ax = prop(x[None])
    params = models.gcn_init(P, d, 5, C, rng)
    params["b1"] = rng.normal(size=params["b1"].shape) * 0.1
    mask = rng.random((P, n)) < 0.6
    targets = rng.integers(0, C, size=(P, n))
    loss, grads = models.gcn_loss_grads(prop, ax, params, mask, targets, 5e-3)
    eps = 1e-6
    for name in ("w1", "b1", "w2", "b2"):
        idx = tuple(rng.integers(0, s) for s in params[name].shape)
        plus = {k: v.copy() for k, v in params.items()}
        minus = {k: v.copy() for k, v in params.items()}
        plus[name][idx] += eps
        minus[name][idx] -= eps
        lp = models.gcn_loss_grads(prop, ax, plus, mask, targets, 5e-3)[0][idx[0]]
        lm = models.gcn_loss_grads(prop, ax, minus, mask, targets, 5e-3)[0][idx[0]]
        assert grads[name][idx] == pytest.approx((lp - lm) / (2 * eps), rel=1e-4, abs=1e-8)


def test_gcn_base_model_learns_a_separable_graph():
    x, y, edges, labelled, knn_edges = _small_graph(n=90, per=8, seed=3)
    params = {**PARAMS, "base": "gcn", "gcn_epochs": 100}
    out = stgpa.base_predictions("gpa", "label", x, edges, knn_edges, labelled, y,
                                 np.zeros(len(labelled), int), 1, 3, params, init_seed=0)
    assert np.mean(out["pred"][0] == y) > 0.8


# --------------------------------------------------------------------------------------------
# certificate validity
# --------------------------------------------------------------------------------------------
def test_pair_partition_is_a_function_of_the_pair():
    e = np.array([[3, 9], [9, 3], [0, 1], [1, 0]])
    p = stgpa.pair_partition(e, 7, key=11)
    assert p[0] == p[1] and p[2] == p[3]
    many = np.stack(np.triu_indices(200, 1), 1)
    counts = np.bincount(stgpa.pair_partition(many, 10, key=5), minlength=10)
    assert counts.min() > 0.9 * len(many) / 10 and counts.max() < 1.1 * len(many) / 10
    assert not np.array_equal(stgpa.pair_partition(many, 10, 5), stgpa.pair_partition(many, 10, 6))


@pytest.mark.parametrize("method", stgpa.METHODS)
def test_label_poisoning_moves_only_its_partition(method):
    x, y, edges, labelled, knn_edges = _small_graph(n=120, per=10, seed=4)
    P, q = 5, 2
    node_part = stgpa.node_partition(len(x), P, key=7)
    part = node_part[labelled]
    clean = stgpa.base_predictions(method, "label", x, edges, knn_edges, labelled, y, part, P,
                                   3, PARAMS)["pred"]
    poisoned_y = y.copy()
    victims = labelled[part == q]
    poisoned_y[victims] = (y[victims] + 1) % 3           # flip every label of partition q
    # also add a new labelled node that hashes to q, with a wrong label
    extra = next(v for v in np.flatnonzero(node_part == q) if v not in labelled)
    new_lab = np.sort(np.append(labelled, extra))
    poisoned_y[extra] = (y[extra] + 2) % 3
    out = stgpa.base_predictions(method, "label", x, edges, knn_edges, new_lab, poisoned_y,
                                 node_part[new_lab], P, 3, PARAMS)["pred"]
    others = np.arange(P) != q
    assert np.array_equal(out[others], clean[others])
    assert not np.array_equal(out[q], clean[q])           # the attack did reach partition q


@pytest.mark.parametrize("method", stgpa.METHODS)
def test_structure_poisoning_moves_only_its_partition(method):
    x, y, edges, labelled, knn_edges = _small_graph(n=120, per=10, seed=5)
    P, q, key = 5, 3, 99
    part = stgpa.pair_partition(edges, P, key)
    # delete half of q's edges and insert 40 heterophilous edges that hash to q
    keep = ~((part == q) & (np.arange(len(edges)) % 2 == 0))
    cand = np.stack(np.triu_indices(len(x), 1), 1)
    cand = cand[(y[cand[:, 0]] != y[cand[:, 1]]) & (stgpa.pair_partition(cand, P, key) == q)]
    known = {tuple(e) for e in edges}
    inserted = np.array([e for e in cand if tuple(e) not in known][:40])
    poisoned = np.concatenate([edges[keep], inserted])
    clean = stgpa.base_predictions(method, "structure", x, edges, knn_edges, labelled, y, part,
                                   P, 3, PARAMS)["pred"]
    out = stgpa.base_predictions(method, "structure", x, poisoned, knn_edges, labelled, y,
                                 stgpa.pair_partition(poisoned, P, key), P, 3, PARAMS)["pred"]
    others = np.arange(P) != q
    assert np.array_equal(out[others], clean[others])
    assert not np.array_equal(out[q], clean[q])


def _aggregate(pred, C):
    return dpa_certificate(stgpa.votes(pred, np.arange(pred.shape[1]), C))


def test_label_flips_within_radius_never_change_a_prediction():
    """Exhaustive: every set of k <= max radius label flips (all wrong classes), ST-GPA."""
    x, y, edges, labelled, knn_edges = _small_graph(n=60, per=5, seed=0)
    C, P = 3, 5
    part = stgpa.node_partition(len(x), P, key=3)[labelled]
    base, radius = _aggregate(stgpa.base_predictions(
        "st-gpa", "label", x, edges, knn_edges, labelled, y, part, P, C, PARAMS)["pred"], C)
    kmax = int(radius.max())
    assert kmax >= 2 and (radius >= 1).sum() > 10
    attacks = changed_beyond = 0
    for k in range(1, kmax + 1):
        for nodes in itertools.combinations(labelled, k):
            for shifts in itertools.product((1, 2), repeat=k):
                yy = y.copy()
                yy[list(nodes)] = (y[list(nodes)] + np.array(shifts)) % C
                pred, _ = _aggregate(stgpa.base_predictions(
                    "st-gpa", "label", x, edges, knn_edges, labelled, yy, part, P, C,
                    PARAMS)["pred"], C)
                safe = radius >= k
                assert np.array_equal(pred[safe], base[safe])
                changed_beyond += int((pred != base).any())
                attacks += 1
    assert kmax == 2 and attacks == 15 * 2 + 105 * 4     # P = 5: radius <= 2
    assert changed_beyond > 0      # the attacks have power: unprotected nodes do flip


def test_edge_flips_within_radius_never_change_a_prediction():
    """Every single edge insertion/deletion, and 200 random pairs of them, ST-GPA (kNN edges)."""
    x, y, edges, labelled, knn_edges = _small_graph(n=24, per=3, seed=7, k=2)
    C, P, key = 3, 5, 17
    n = len(x)
    pairs = np.stack(np.triu_indices(n, 1), 1)
    present = {tuple(e) for e in edges}

    def predict(edge_set):
        e = np.array(sorted(edge_set), dtype=np.int64).reshape(-1, 2)
        return _aggregate(stgpa.base_predictions(
            "st-gpa", "structure", x, e, knn_edges, labelled, y, stgpa.pair_partition(e, P, key),
            P, C, {**PARAMS, "st_tau": 2})["pred"], C)

    base, radius = predict(present)
    assert radius.max() >= 1
    rng = np.random.default_rng(0)
    flips = [(i,) for i in range(len(pairs))]
    flips += [tuple(rng.choice(len(pairs), 2, replace=False)) for _ in range(200)]
    changed = 0
    for f in flips:
        s = set(present) ^ {tuple(pairs[i]) for i in f}
        pred, _ = predict(s)
        safe = radius >= len(f)
        assert np.array_equal(pred[safe], base[safe])
        changed += int((pred != base).any())
    assert changed > 0


# --------------------------------------------------------------------------------------------
# claims on constructed data
# --------------------------------------------------------------------------------------------
def _constructed(good: bool):
    cfg = pipeline.resolve("st-gpa", "default")
    mrows, crows = [], []
    for setting in cfg["settings"]:
        threat, P = experiment.cell(cfg, setting)
        for seed in range(5):
            w = 0.002 * seed
            if good:
                cert = {"gpa": 0.3, "st-gpa": 0.5, "st-only": 0.45, "edges-only": 0.45}
                auc = {"gpa": 0.4, "st-gpa": 0.6,
                       "st-only": 0.55 if threat == "label" else 0.45,
                       "edges-only": 0.45 if threat == "label" else 0.55}
                clean = {"gpa": 0.8, "st-gpa": 0.8, "st-only": 0.8, "edges-only": 0.8}
            else:
                cert = {"gpa": 0.5, "st-gpa": 0.52, "st-only": 0.5, "edges-only": 0.5}
                auc = {"gpa": 0.6, "st-gpa": 0.5,
                       "st-only": 0.45 if threat == "label" else 0.55,
                       "edges-only": 0.55 if threat == "label" else 0.45}
                clean = {"gpa": 0.85, "st-gpa": 0.8, "st-only": 0.8, "edges-only": 0.8}
            for m in cfg["methods"]:
                mrows.append({"method": m, "setting": setting, "seed": seed,
                              "clean_acc": clean[m] + w, "cert_auc": auc[m] + w})
                for r in range(P // 2 + 1):
                    crows.append({"method": m, "setting": setting, "seed": seed, "step": r,
                                  "metric": "cert_acc", "value": cert[m] + w})
    return cfg, pd.DataFrame(mrows), pd.DataFrame(crows)


@pytest.mark.parametrize("good", [True, False])
def test_claim_checkers(good):
    cfg, metrics, curves = _constructed(good)
    result = claims.check(cfg, metrics, curves)
    assert len(result) == 5
    want = REPRODUCED if good else NOT_REPRODUCED
    assert {c.id: c.verdict for c in result} == {c.id: want for c in result}
    for c in result:
        c.to_dict()


def test_claim_5_needs_all_four_cells():
    cfg, metrics, curves = _constructed(True)
    metrics = metrics[metrics["setting"] != "label-P20"]
    cfg = {**cfg, "settings": {k: v for k, v in cfg["settings"].items() if k != "label-P20"}}
    c5 = claims.check(cfg, metrics, curves)[4]
    assert c5.verdict == INCONCLUSIVE


def test_cells_won_by_hand():
    diffs = np.array([[1.0, -1.0, 0.5, np.nan],
                      [1.0, -1.0, -0.2, 1.0]])
    stat = claims.cells_won(diffs)
    assert stat(np.arange(2)) == 0.5                 # cells 0 and 2 won; NaN cell not won
    assert stat(np.array([0, 0])) == 0.5
    assert stat(np.array([1, 1])) == 0.5             # cells 0 and 3


def _claim5(cell_shift: dict):
    """ST-GPA - GPA AUC per seed: shift[setting] + noise (seed-level)."""
    cfg, metrics, curves = _constructed(True)
    noise = {0: 0.03, 1: -0.03, 2: 0.02, 3: -0.02, 4: 0.0}
    m = metrics.copy()
    for setting, shift in cell_shift.items():
        for seed, eps in noise.items():
            sel = (m["method"] == "st-gpa") & (m["setting"] == setting) & (m["seed"] == seed)
            gpa = m.loc[(m["method"] == "gpa") & (m["setting"] == setting)
                        & (m["seed"] == seed), "cert_auc"].iloc[0]
            m.loc[sel, "cert_auc"] = gpa + shift + eps
    return claims.check(cfg, m, curves)[4]


def test_claim_5_is_a_fraction_with_a_bootstrap_over_seeds():
    # one cell clearly lost, three clearly won: 3 of 4 in every resample -> reproduced
    c5 = _claim5({"label-P10": 0.2, "label-P20": 0.2, "structure-P10": 0.2,
                  "structure-P20": -0.2})
    assert c5.verdict == REPRODUCED and c5.parts["value"].measured == 0.75
    # two cells whose mean difference is near zero: some resamples lose both -> not decided
    c5 = _claim5({"label-P10": 0.2, "label-P20": 0.2, "structure-P10": 0.005,
                  "structure-P20": 0.004})
    assert c5.verdict == INCONCLUSIVE
    # two cells clearly lost -> not reproduced
    c5 = _claim5({"label-P10": 0.2, "label-P20": -0.2, "structure-P10": 0.2,
                  "structure-P20": -0.2})
    assert c5.verdict == NOT_REPRODUCED


# --------------------------------------------------------------------------------------------
# pipeline
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", ["smoke", "default", "full"])
def test_configs_resolve(scale):
    cfg = pipeline.resolve("st-gpa", scale)
    registry.check_config_against_module(cfg)
    assert grid.runs(cfg)
    for setting in cfg["settings"]:
        threat, P = experiment.cell(cfg, setting)
        assert threat in stgpa.THREATS and P >= 2
    for t in ("label", "structure"):
        for P in cfg["params"]["claim_cells"][t]:
            assert claims.find_cell(cfg, t, P) is not None


def test_train_is_deterministic_and_shard_independent():
    cfg = pipeline.resolve("st-gpa", "smoke")
    data = experiment.prepare(cfg, None)
    runs = grid.runs(cfg)
    state_all, curves_all = experiment.train(cfg, data, runs)
    one = [r for r in runs if r.method == "st-gpa" and r.setting == "structure-P5"]
    state_one, curves_one = experiment.train(cfg, data, one)
    for k, v in state_one.items():
        assert np.array_equal(v, state_all[k], equal_nan=True)
    frame = pd.DataFrame(curves_all)
    picked = frame[(frame["method"] == "st-gpa") & (frame["setting"] == "structure-P5")]
    assert picked["value"].tolist() == pd.DataFrame(curves_one)["value"].tolist()
    # the graph is shared by every cell and method of a seed
    g = experiment.load_graph(data, 400, 0)
    assert g["x"].shape == (400, 24) and len(g["labelled"]) == 40 and len(g["test"]) == 200
    assert not set(g["labelled"]) & set(g["test"])


def test_smoke_end_to_end(tmp_path):
    cfg = pipeline.resolve("st-gpa", "smoke")
    out = pipeline.run_inprocess(cfg, tmp_path)
    metrics = pd.read_csv(out["metrics"])
    assert len(metrics) == len(grid.runs(cfg))
    assert {"clean_acc", "cert_acc_head", "cert_auc", "mean_radius", "ref_clean_acc"} <= set(
        metrics.columns)
    assert (metrics["cert_acc_head"] <= metrics["clean_acc"]).all()
    doc = json.loads(out["claims"].read_text())
    assert len(doc["claims"]) == 5
    for name in cfg["figures"]:
        assert (out["figures"] / f"{name}.png").exists()
    assert figures.tables(cfg, metrics, pd.read_csv(tmp_path / "st-gpa" / "train" / "all.csv"))
