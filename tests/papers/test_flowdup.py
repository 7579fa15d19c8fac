"""Behaviour tests of the flowdup paper: the hypernetwork's start point and batching, hand-written
gradients against finite differences and fed's reference MLP, the baselines on toy cases, the
data's geometry, the claim checkers on data built to fail, and the pipeline end to end."""

import numpy as np
import pandas as pd
import pytest

from icml26 import fed, grid, pipeline
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.papers.flowdup import baselines, claims, data, experiment, model
from icml26.papers.flowdup import flowdup as fl


def _toy(R=2, C=5, n=7, k=3, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(R, C, n, data.DIM)).astype(dtype)
    y = rng.integers(data.N_CLASSES, size=(R, C, n))
    theta0 = np.stack([model.init_theta0(rng) for _ in range(R)]).astype(dtype)
    P = rng.normal(0, 1 / np.sqrt(k), (R, model.n_params(), k)).astype(dtype)
    psi = fl.init_hypernet([np.random.default_rng(seed + r) for r in range(R)], k, dtype=dtype)
    return rng, X, y, theta0, P, psi


# --- method ------------------------------------------------------------------------------------
def test_zero_initialised_last_layer_starts_every_client_at_theta0():
    _, X, _, theta0, P, psi = _toy()
    theta, v, e = fl.infer(psi, X, theta0, P)
    assert np.all(v == 0)
    assert np.array_equal(theta, np.broadcast_to(theta0[:, None], theta.shape))
    assert e.shape == (2, 5, fl.HIDDEN) and np.abs(e).sum() > 0


def test_batched_hypernetwork_and_models_equal_a_per_client_loop():
    rng, X, y, theta0, P, psi = _toy()
    psi[6] = rng.normal(size=psi[6].shape)            # non-zero last layer
    v, e, _ = fl.hypernet_forward(psi, X)
    theta = fl.personalize(theta0, P, v)
    loss, grad = model.ce_and_grad(theta, model.with_ones(X), model.one_hot(y))
    for r in range(2):
        one = [a[r:r + 1] for a in psi]
        for c in range(5):
            vc, ec, _ = fl.hypernet_forward(one, X[r:r + 1, c:c + 1])
            assert np.allclose(vc[0, 0], v[r, c]) and np.allclose(ec[0, 0], e[r, c])
            th = theta0[r] + P[r] @ vc[0, 0]
            assert np.allclose(th, theta[r, c])
            # reference: fed's MLP, softmax cross-entropy and hand-written backward pass
            params = model.unflatten(th)
            logits, acts = fed.mlp_forward(params, X[r, c])
            ref_loss, dl = fed.softmax_xent(logits, y[r, c])
            ref = model.flatten(fed.mlp_grads(params, acts, dl))
            assert loss[r, c] == pytest.approx(ref_loss, rel=1e-10)
            assert np.allclose(grad[r, c], ref, atol=1e-12)


def test_shared_model_gradient_is_the_per_client_gradient():
    _, X, y, theta0, _, _ = _toy()
    Y, X1 = model.one_hot(y), model.with_ones(X)
    loss_s, g_s = model.ce_and_grad(theta0, X1, Y)              # theta0 (R, d) shared
    theta_pc = np.repeat(theta0[:, None], X.shape[1], axis=1)
    loss_p, g_p = model.ce_and_grad(theta_pc, X1, Y)
    assert np.allclose(loss_s, loss_p) and np.allclose(g_s, g_p)


@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_objective_gradient_matches_finite_differences(lam):
    rng, X, y, theta0, P, psi = _toy(R=1, C=4, n=5, k=3)
    psi[6] = rng.normal(scale=0.5, size=psi[6].shape)
    psi[8] = rng.normal(size=psi[8].shape)            # mu away from 0
    Y = model.one_hot(y[:, :3])                       # 3 labeled clients, 1 unlabeled

    def J(p):
        return fl.objective(p, X, Y, 3, theta0, P, lam, 0.7)[0][0]

    _, _, grads = fl.objective(psi, X, Y, 3, theta0, P, lam, 0.7)
    eps = 1e-6
    for i, (p, g) in enumerate(zip(psi, grads, strict=True)):
        for idx in [tuple(rng.integers(s) for s in p.shape) for _ in range(4)]:
            up = [a.copy() for a in psi]
            dn = [a.copy() for a in psi]
            up[i][idx] += eps
            dn[i][idx] -= eps
            fd = (J(up) - J(dn)) / (2 * eps)
            assert g[idx] == pytest.approx(fd, abs=1e-6, rel=1e-4), (i, idx)


def test_adam_first_step_is_lr_times_sign():
    from icml26.npoptim import Adam

    p = np.array([1.0, -2.0, 3.0])
    opt = Adam([p], lr=0.1)
    opt.step([np.array([0.5, -4.0, 1e-3])])
    assert np.allclose(p, [0.9, -1.9, 2.9], atol=1e-5)


def test_flowdup_training_lowers_the_objective_and_penalty_pulls_to_mu():
    _, X, y, theta0, P, psi = _toy(R=1, C=6, n=20, k=4, dtype=np.float32)
    Y = model.one_hot(y[:, :4], np.float32)
    psi, log = fl.train(X, Y, 4, theta0, P, psi, rounds=60, lr=3e-3, lam=1e-3, sigma=1.0,
                        log_every=20)
    assert log[-1][1][0] < log[0][1][0]
    assert log[0][1][0] == pytest.approx(log[0][2][0])   # at start v = mu = 0: J = CE


# --- baselines ---------------------------------------------------------------------------------
def _clients(kind, n_clients, seed=0, n=100):
    g = data.make_clients(n_clients, n, 200, kind, np.random.default_rng(seed))
    return g, model.with_ones(g["x_train"])[None], model.one_hot(g["y_train"])[None]


def test_fedavg_learns_the_unrotated_task():
    # permuted clients mapped back to canonical labels: one global model suffices
    g0 = data.make_clients(6, 100, 200, "permutation", np.random.default_rng(1))
    y0 = np.take_along_axis(np.argsort(g0["perm"], axis=1), g0["y_train"], axis=1)
    theta0 = model.init_theta0(np.random.default_rng(0))[None]
    theta, log = baselines.fedavg(theta0, model.with_ones(g0["x_train"])[None],
                                  model.one_hot(y0)[None],
                                  300, 3e-2)
    yt = np.take_along_axis(np.argsort(g0["perm"], axis=1), g0["y_test"], axis=1)
    assert model.accuracy(theta[0], g0["x_test"], yt).mean() > 0.9
    assert log[-1][1][0] < log[0][1][0]


def test_global_subspace_stays_in_the_subspace():
    g, x, Y = _clients("rotation", 4)
    rng = np.random.default_rng(0)
    theta0 = model.init_theta0(rng)[None]
    P = rng.normal(0, 0.5, (1, model.n_params(), 3))
    theta, v, _ = baselines.global_subspace(theta0, P, x, Y, 50, 1e-2)
    assert np.allclose(theta[0], theta0[0] + P[0] @ v[0])


def test_cluster_kmeans_recovers_separable_client_groups():
    # four client groups at angles 0, 90, 180, 270 degrees: the unlabeled means separate them
    rng = np.random.default_rng(0)
    xs, truth = [], []
    for gi, a in enumerate(np.arange(4) * np.pi / 2):
        g = data.make_clients(5, 100, 10, "permutation", rng)
        xs.append(np.einsum("ij,knj->kni", data.rotation_matrix(a), g["x_train"]))
        truth += [gi] * 5
    km, labels = baselines.cluster_fit(np.concatenate(xs), 4, seed=0)
    from sklearn.metrics import adjusted_rand_score
    assert adjusted_rand_score(truth, labels) == 1.0


def test_cluster_models_average_gradients_within_clusters_only():
    g, x, Y = _clients("rotation", 4)
    theta0 = model.init_theta0(np.random.default_rng(0))[None]
    assign = np.array([[0, 0, 1, 1]])
    models, _ = baselines.cluster_models(theta0, x, Y, assign, 2, 5, 1e-2)
    ref0 = baselines.fedavg(theta0, x[:, :2], Y[:, :2], 5, 1e-2)[0]
    ref1 = baselines.fedavg(theta0, x[:, 2:], Y[:, 2:], 5, 1e-2)[0]
    assert np.allclose(models[0, 0], ref0[0]) and np.allclose(models[0, 1], ref1[0])


# --- data --------------------------------------------------------------------------------------
def test_rotation_marginal_mean_reveals_alpha():
    g = data.make_clients(20, 5000, 1, "rotation", np.random.default_rng(0))
    m = g["x_train"].mean(axis=1)
    # class-averaged mean of z is 0.5 (1, 1, 1, 1, 0, ...): rotated by alpha it points at
    # alpha + 45 degrees in both planes, with length sqrt(0.5)
    for plane in (0, 2):
        est = np.arctan2(m[:, plane + 1], m[:, plane]) - np.pi / 4
        err = np.angle(np.exp(1j * (est - g["alpha"])))
        assert np.abs(err).max() < 0.1
        assert np.allclose(np.hypot(m[:, plane], m[:, plane + 1]), np.sqrt(0.5), atol=0.05)
    assert np.abs(m[:, 4:]).max() < 0.05


def test_rotation_keeps_labels_and_permutation_keeps_marginal():
    R = data.rotation_matrix(0.7)
    assert np.allclose(R @ R.T, np.eye(data.DIM))
    g = data.make_clients(3, 4000, 1, "permutation", np.random.default_rng(1))
    means = g["x_train"].mean(axis=1)
    assert np.abs(means - means[0]).max() < 0.1                 # same marginal everywhere
    for k in range(3):                                          # label = perm[class]
        for c in range(4):
            pts = g["x_train"][k][g["y_train"][k] == g["perm"][k, c]]
            assert np.argmax(pts.mean(0)[:4]) == c


# --- experiment --------------------------------------------------------------------------------
def test_results_do_not_depend_on_how_seeds_are_batched():
    cfg = pipeline.resolve("flowdup", "smoke")
    cfg["params"] = {**cfg["params"], "rounds": 20}
    cfg["seeds"] = [0, 1]
    runs = [grid.Run(m, "A", s) for m in ("flowdup", "cluster") for s in (0, 1)]
    both, _ = experiment.train(cfg, {}, runs)
    alone, _ = experiment.train(cfg, {}, [runs[1], runs[3]])
    for r in (runs[1], runs[3]):
        assert np.allclose(both[f"{r.key}/acc_new"], alone[f"{r.key}/acc_new"])
    assert np.allclose(both[f"{runs[1].key}/v_new"], alone[f"{runs[1].key}/v_new"], atol=1e-6)


def test_method_ids_and_upload_sizes():
    p = {"k": 32}
    assert experiment.flowdup_variant("flowdup", p) == (32, True, False)
    assert experiment.flowdup_variant("flowdup-nou", p) == (32, False, False)
    assert experiment.flowdup_variant("flowdup-k4", p) == (4, True, False)
    assert experiment.flowdup_variant("flowdup-pretrained", p) == (32, True, True)
    assert experiment.flowdup_variant("fedavg", p) is None
    assert experiment.upload_floats("flowdup", p) == 32
    assert experiment.upload_floats("oracle-local", p) == model.n_params() == 676


# --- claims ------------------------------------------------------------------------------------
def _metrics(acc: dict, unl_shift=0.0):
    rows = []
    for (m, s), base in acc.items():
        for seed, eps in enumerate((0.0, 0.004, -0.004, 0.002, -0.002)):
            rows.append({"method": m, "setting": s, "seed": seed, "acc_new": base + eps,
                         "acc_unlabeled": base + eps + unl_shift,
                         "acc_labeled": base + eps + 0.1})
    return pd.DataFrame(rows)


GOOD = {("flowdup", "A"): 0.8, ("flowdup-nou", "A"): 0.8, ("flowdup-k4", "A"): 0.4,
        ("fedavg", "A"): 0.45, ("global-subspace", "A"): 0.4, ("cluster", "A"): 0.8,
        ("flowdup", "B"): 0.26, ("fedavg", "B"): 0.26}


def test_claims_reproduced_on_data_built_to_pass():
    out = {c.id: c.verdict for c in claims.check({}, _metrics(GOOD), None)}
    assert all(v == REPRODUCED for v in out.values()), out


def test_claims_not_reproduced_on_data_built_to_fail():
    bad = {**GOOD, ("flowdup", "A"): 0.46, ("flowdup-nou", "A"): 0.6, ("flowdup-k4", "A"): 0.45,
           ("flowdup", "B"): 0.4}
    out = {c.id: c.verdict for c in claims.check({}, _metrics(bad, unl_shift=0.2), None)}
    assert all(v == NOT_REPRODUCED for v in out.values()), out


def test_a_failed_seed_is_named_and_cannot_pass():
    m = _metrics(GOOD)
    m.loc[(m["method"] == "fedavg") & (m["setting"] == "A") & (m["seed"] == 3), "acc_new"] = \
        float("nan")
    out = {c.id: c for c in claims.check({}, m, None)}
    head = out["C1-headline"]
    assert head.verdict == INCONCLUSIVE and head.parts["value"].failed == ("3",)
    assert "seeds 3" in head.to_dict()["note"]
    assert out["C2-personalization"].verdict == REPRODUCED


def test_notes_are_computed_from_the_metrics():
    m = _metrics(GOOD)
    note = {c.id: c.note for c in claims.check({}, m, None)}["C6-negative-control"]
    assert "labeled training clients 0.360" in note          # 0.26 + 0.1, mean over seeds


# --- pipeline ----------------------------------------------------------------------------------
def test_smoke_pipeline_runs_end_to_end(tmp_path):
    import json

    cfg = pipeline.resolve("flowdup", "smoke")
    out = pipeline.run_inprocess(cfg, tmp_path)
    metrics = pd.read_csv(out["metrics"])
    assert len(metrics) == len(grid.runs(cfg))
    assert {"acc_new", "acc_unlabeled", "upload_floats"} <= set(metrics.columns)
    assert metrics["acc_new"].between(0, 1).all()
    doc = json.loads(out["claims"].read_text())
    assert len(doc["claims"]) == 6
    for name in cfg["figures"]:
        assert (out["figures"] / f"{name}.png").exists()


def test_full_profile_methods_and_prior_setting_run():
    cfg = pipeline.resolve("flowdup", "full")
    assert "C" in cfg["settings"] and "oracle-local" in cfg["methods"]
    cfg = pipeline.resolve("flowdup", "smoke")
    cfg["settings"] = {"C": {"kind": "prior", "noise_sd": 1.2, "dirichlet": 0.5}}
    cfg["params"] = {**cfg["params"], "rounds": 3, "n_labeled": 4, "n_unlabeled": 2, "n_new": 3}
    runs = [grid.Run(m, "C", 0) for m in ("oracle-local", "flowdup-pretrained", "flowdup-k2")]
    state, curves = experiment.train(cfg, {}, runs)
    rows = experiment.evaluate(cfg, {}, runs, state, pd.DataFrame(curves))
    assert [r["k"] for r in rows] == [0, 32, 2]
    assert rows[0]["upload_floats"] == 676
    assert all(0 <= r["acc_new"] <= 1 for r in rows)
