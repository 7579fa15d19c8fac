"""Behaviour tests of clasp: the task and teacher, failure attribution, the CLASP map (k-means
against scikit-learn, region statistics, demo starts, weights by hand), the baselines' choosers,
the batched learner, the claim checkers on data built to fail, and the pipeline end to end."""

import copy

import numpy as np
import pandas as pd
import pytest

from icml26 import grid, pipeline
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.papers.clasp import baselines, claims, clasp, env


# --------------------------------------------------------------------------------------------
# task, teacher, diagnostics
# --------------------------------------------------------------------------------------------
def test_wall_and_gaps():
    e = env.TaskEnv(4, "two_gap", 0.0)
    pts = np.array([[0.5, 0.5], [0.5, 0.2], [0.5, 0.75], [0.5, 0.05]])
    assert e.collides(pts).tolist() == [True, False, False, True]


def test_teacher_solves_the_task_through_both_gaps():
    rng = np.random.default_rng(0)
    for name in env.MAPS:
        starts = env.task_starts(rng, 300)
        ep = env.teacher_eval(name, starts, env.noise_tape(1, 60, 300), 2, 60, 0.005)
        assert ep.success.mean() >= 0.95
        gaps = env.gap_used(name, ep.states)
        # the route follows the spec's rule: start y >= split -> the upper gap
        want = env.route(name, starts[:, 1])
        assert np.mean(gaps[ep.success] == want[ep.success]) > 0.99
        assert 14 <= ep.length[ep.success].mean() <= 25


def test_novice_mostly_demonstrates_the_wide_gap():
    starts = env.novice_starts(np.random.default_rng(0), 4000)
    frac_a = np.mean(env.route("two_gap", starts[:, 1]) == 0)
    assert 0.84 <= frac_a <= 0.93  # P(Beta(2,5) < 0.5) = 0.89


def test_teacher_from_inside_a_gap_and_right_of_the_wall():
    wp, first = env.waypoints("two_gap", np.array([[0.47, 0.75], [0.7, 0.3], [0.42, 0.6]]))
    assert first.tolist() == [1, 2, 0]
    assert np.allclose(wp[2, 0], [0.40, 0.75])  # y >= 0.5 -> gap B centre
    demos = env.teacher_demos("two_gap", np.array([[0.7, 0.3]]), 0, 0.005, 60, 25)
    S, A = demos[0]
    assert len(S) == len(A) and len(S) <= 8
    assert np.all(np.linalg.norm(A, axis=1) <= 0.05 + 1e-12)


def test_failing_step_collision_stall_and_progress():
    T = 30
    goal = np.asarray(env.GOAL)
    s = np.zeros((T + 1, 3, 2))
    # 0: collided at step 7 -> index 7; 1: approaches for 5 steps then stalls -> 5;
    # 2: keeps approaching by 0.02 per step -> final state
    for t in range(T + 1):
        s[t, 0] = goal - [0.6 - 0.05 * min(t, 7), 0]
        s[t, 1] = goal - [0.6 - 0.05 * min(t, 5), 0]
        s[t, 2] = goal - [0.8 - 0.02 * t, 0]
    out = env.failing_step(s, np.array([7, T, T]), np.array([True, False, False]))
    assert out.tolist() == [7, 5, T]


def test_entropy_bits():
    assert env.entropy_bits([5, 5]) == pytest.approx(1.0)
    assert env.entropy_bits([10, 0]) == 0.0
    assert env.entropy_bits([0, 0]) == 0.0


# --------------------------------------------------------------------------------------------
# the CLASP map
# --------------------------------------------------------------------------------------------
def test_kmeans_matches_sklearn_inertia():
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(c, 0.03, (40, 2)) for c in rng.uniform(0, 1, (8, 2))])
    _, ours = clasp.kmeans(X, 8, 10, np.random.default_rng(1))
    ref = KMeans(8, n_init=10, random_state=0).fit(X).inertia_
    assert ours <= ref * 1.01


def _practice():
    # 3 rollouts on a line; anchors at x = 0.1 and x = 0.9 -> regions 0 (x < 0.5), 1 (x > 0.5)
    T1 = 11
    s = np.zeros((T1, 3, 2))
    s[:, 0, 0] = np.linspace(0.0, 1.0, T1)      # succeeds, visits both regions
    s[:, 1, 0] = np.linspace(0.0, 1.0, T1)      # fails at index 8 (region 1)
    s[:, 2, 0] = 0.1                            # fails at index 3 (region 0), never leaves
    return clasp.Practice(s, np.array([10, 10, 10]), np.array([True, False, False]),
                          np.array([0, 8, 3]))


def test_failure_map_statistics_by_hand():
    fmap = clasp.failure_map(np.array([[0.1, 0.0], [0.9, 0.0]]), _practice())
    assert fmap.n_visit.tolist() == [3, 2]
    assert fmap.n_fail.tolist() == [1, 1]
    assert np.allclose(fmap.f, [(1 + 1) / (3 + 2), (1 + 1) / (2 + 2)])
    assert fmap.fail_region.tolist() == [-1, 1, 0]
    assert fmap.top(3).tolist() == [1, 0]


def test_map_starts_go_back_along_the_failed_rollout():
    pr = _practice()
    fmap = clasp.failure_map(np.array([[0.1, 0.0], [0.9, 0.0]]), pr)
    starts = clasp.map_starts(fmap, pr, 400, np.random.default_rng(0), top_k=3, back=5)
    # region 1 -> rollout 1, state index 8 - 5 = 3; region 0 -> rollout 2, index max(3-5, 0)
    assert set(map(tuple, np.round(starts, 9))) == {(0.3, 0.0), (0.1, 0.0)}
    share = np.mean(np.isclose(starts[:, 0], 0.3))
    p1 = 0.5 ** 2 / (0.5 ** 2 + 0.4 ** 2)      # proportional to f^2
    assert abs(share - p1) < 0.07
    # nothing failed -> no map-guided start
    ok = clasp.Practice(pr.states, pr.length, np.ones(3, bool), pr.fail_idx)
    assert clasp.map_starts(clasp.failure_map(fmap.anchors, ok), ok, 2,
                            np.random.default_rng(0)) is None


def test_difficulty_weights_formula():
    fmap = clasp.FailureMap(np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([0.2, 0.6]),
                            np.zeros(2), np.zeros(2), np.zeros(0))
    S = np.array([[0.1, 0.0], [0.9, 0.0], [0.95, 0.0]])
    raw = 1 + 2 * np.array([0.2, 0.6, 0.6]) / 0.4
    assert np.allclose(clasp.difficulty_weights(fmap, S, 2.0), raw / raw.mean())
    assert np.isnan(clasp.targeting(fmap, S, top_k=1))  # no region holds a failing state


# --------------------------------------------------------------------------------------------
# baselines
# --------------------------------------------------------------------------------------------
def test_failure_replay_uses_start_states_of_failures():
    pr = _practice()
    starts = baselines.failure_replay_starts(pr.states, pr.success, 50,
                                             np.random.default_rng(0))
    assert set(map(tuple, starts)) == {(0.0, 0.0), (0.1, 0.0)}
    assert baselines.failure_replay_starts(pr.states, np.ones(3, bool), 2,
                                           np.random.default_rng(0)) is None


def test_active_uncertainty_picks_largest_disagreement():
    acts = np.array([[[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]],
                     [[0.0, 0.0], [-1.0, 0.0], [0.2, 0.0]]])
    d = baselines.disagreement(acts)
    assert np.allclose(d, [0.0, 1.0, 0.01])
    cands = np.arange(6.0).reshape(3, 2)
    assert baselines.most_uncertain(cands, d, 2).tolist() == [[2.0, 3.0], [4.0, 5.0]]


# --------------------------------------------------------------------------------------------
# learner
# --------------------------------------------------------------------------------------------
def test_batched_learner_fits_and_is_batch_independent():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)  # as in the train jobs (tiny matmuls: threads only add overhead)
    from icml26.papers.clasp.learner import BatchedPolicy, numpy_forward

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (3, 40, 2)).astype(np.float32)
    Y = np.stack([np.tile([0.03, -0.02], (40, 1))] * 3).astype(np.float32)
    W = np.ones((3, 40), np.float32)
    W[2, 20:] = 0.0                              # padding rows of net 2
    net = BatchedPolicy([1, 2, 3])
    alone = BatchedPolicy([3])
    loss = net.fit(X, Y, W, 150, 3e-3)
    alone.fit(X[2:], Y[2:], W[2:], 150, 3e-3)
    assert loss < 1e-5                           # learns the constant action
    for a, b in zip(net.export(2), alone.export(0), strict=True):
        assert np.array_equal(a, b)             # same numbers whatever shares the batch
    out = net.act(X)
    assert np.allclose(numpy_forward(net.export(1), X[1]), out[1], atol=1e-6)
    assert np.abs(out).max() <= 0.05


# --------------------------------------------------------------------------------------------
# claims on data built to fail
# --------------------------------------------------------------------------------------------
def _metrics(values: dict, seeds=range(5)):
    rows = []
    for m, v in values.items():
        for s in seeds:
            rows.append({"method": m, "setting": "two-gap", "seed": s, **v(s)})
    return pd.DataFrame(rows)


def _cfg():
    return {"settings": {"two-gap": {"map": "two_gap"}}}


def test_claims_not_reproduced_on_failing_metrics():
    rng = np.random.default_rng(0)

    def row(sid, ssh, div, tgt):
        return lambda s: {"success_id": sid + 0.01 * rng.standard_normal(),
                          "success_shift": ssh + 0.01 * rng.standard_normal(),
                          "diversity": div + 0.01 * rng.standard_normal(),
                          "targeting": tgt + 0.01 * rng.standard_normal(),
                          "teacher_success_id": 0.5}

    bad = _metrics({
        "BC-offline": row(0.70, 0.70, 0.9, np.nan),
        "Novice-interactive": row(0.70, 0.6, 0.9, 0.3),
        "Failure-replay": row(0.95, 0.9, 0.9, 0.4),
        "Active-uncertainty": row(0.80, 0.9, 0.9, 0.4),
        "CLASP": row(0.72, 0.72, 0.3, 0.35),
        "CLASP-map-only": row(0.9, 0.9, 0.9, 0.4),
        "CLASP-weight-only": row(0.72, 0.7, 0.9, 0.3),
    })
    out = {c.id: c.verdict for c in claims.check(_cfg(), bad, pd.DataFrame())}
    assert out == {k: NOT_REPRODUCED for k in
                   ("C1-headline", "C2-noninferior", "C3-shift", "C4-diversity",
                    "C5-mechanism", "S1-teacher")}

    good = _metrics({
        "BC-offline": row(0.6, 0.2, 0.4, np.nan),
        "Novice-interactive": row(0.7, 0.5, 0.5, 0.2),
        "Failure-replay": row(0.95, 0.9, 0.9, 0.4),
        "Active-uncertainty": row(0.9, 0.9, 0.9, 0.4),
        "CLASP": row(0.99, 0.99, 0.95, 0.6),
        "CLASP-map-only": row(0.99, 0.9, 0.9, 0.6),
        "CLASP-weight-only": row(0.8, 0.7, 0.6, 0.2),
    })
    good["teacher_success_id"] = 1.0
    out = {c.id: c.verdict for c in claims.check(_cfg(), good, pd.DataFrame())}
    assert set(out.values()) == {REPRODUCED}


def test_claim1_seed_fraction_and_failed_run():
    """"Better in >= 4 of 5 seeds" is a fraction: a large mean gain carried by 3 of 5 seeds
    fails that part; a NaN seed is named and cannot count as better."""
    gains = [0.5, 0.5, 0.5, -0.01, -0.01]

    def rows(m):
        return lambda s: {"success_id": 0.4 + (gains[s] if m == "CLASP" else 0.0),
                          "success_shift": 0.5, "diversity": 0.9, "targeting": 0.3,
                          "teacher_success_id": 1.0}

    m = _metrics({k: rows(k) for k in ("BC-offline", "Novice-interactive", "CLASP")})
    c1 = {c.id: c for c in claims.check(_cfg(), m, pd.DataFrame())}["C1-headline"]
    frac = c1.parts["seeds CLASP > BC-offline"]
    assert frac.measured == pytest.approx(0.6) and frac.verdict == NOT_REPRODUCED
    gains[:] = [0.5] * 5
    m = _metrics({k: rows(k) for k in ("BC-offline", "Novice-interactive", "CLASP")})
    m.loc[(m.method == "CLASP") & (m.seed == 4), "success_id"] = np.nan
    c1 = {c.id: c for c in claims.check(_cfg(), m, pd.DataFrame())}["C1-headline"]
    assert c1.parts["seeds CLASP > BC-offline"].measured == pytest.approx(0.8)
    assert c1.parts["CLASP - BC-offline"].verdict == INCONCLUSIVE
    assert "seeds 4" in c1.to_dict()["note"]


# --------------------------------------------------------------------------------------------
# protocol and pipeline
# --------------------------------------------------------------------------------------------
def _tiny_cfg(methods):
    cfg = copy.deepcopy(pipeline.resolve("clasp", "smoke"))
    cfg["methods"] = list(methods)
    cfg["params"].update({"bc_steps": 30, "offline_steps": 60, "M": 8, "n_eval": 20,
                          "n_candidates": 16})
    return cfg


def test_results_do_not_depend_on_sharding():
    from icml26.papers.clasp import experiment

    both = _tiny_cfg(["Failure-replay", "CLASP"])
    alone = _tiny_cfg(["CLASP"])
    s_both, _ = experiment.train(both, {}, grid.runs(both))
    s_alone, _ = experiment.train(alone, {}, grid.runs(alone))
    key = grid.Run("CLASP", "two-gap", 0).key
    for name in ("id_success", "demo_starts", "member0/W2", "map_f"):
        assert np.array_equal(s_both[f"{key}/{name}"], s_alone[f"{key}/{name}"])


def test_protocol_spends_the_budget_and_active_ensemble_has_three_members():
    from icml26.papers.clasp import experiment

    cfg = _tiny_cfg(["Novice-interactive", "Active-uncertainty", "BC-offline"])
    state, curves = experiment.train(cfg, {}, grid.runs(cfg))
    for m in ("Novice-interactive", "Active-uncertainty", "BC-offline"):
        key = grid.Run(m, "two-gap", 0).key
        assert len(state[f"{key}/demo_starts"]) == 4          # b0 + (R - 1) b at smoke
    key = grid.Run("Active-uncertainty", "two-gap", 0).key
    assert f"{key}/member2/W1" in state and f"{key}/member3/W1" not in state
    # BC-offline and Novice-interactive get the very same novice demonstrations
    a = state[grid.Run("BC-offline", "two-gap", 0).key + "/demo_starts"]
    b = state[grid.Run("Novice-interactive", "two-gap", 0).key + "/demo_starts"]
    assert np.array_equal(a, b)


def test_full_profile_maps_run():
    """CLASP on the full profile's two extra maps: every successful evaluation rollout crossed
    the wall through one of that map's gaps (three on three_gap), the last point of the
    success curve is the final in-distribution evaluation, round 0 uses the novice's
    demonstrations, and the map's region statistics are Laplace-smoothed rates."""
    from icml26.papers.clasp import experiment
    from icml26.papers.clasp.teaching import novice_pool, params

    cfg = _tiny_cfg(["CLASP"])
    cfg["settings"] = {"three-gap": {"map": "three_gap"},
                       "moving-obstacle": {"map": "moving_obstacle"}}
    state, curves = experiment.train(cfg, {}, grid.runs(cfg))
    prm = params(cfg)
    for s, spec in cfg["settings"].items():
        key = grid.Run("CLASP", s, 0).key
        ok, gap = state[f"{key}/id_success"].astype(bool), state[f"{key}/id_gap"]
        n_gaps = len(env.get_map(spec["map"])["gaps"])
        assert set(np.unique(gap[ok])) <= set(range(n_gaps))
        assert state[f"{key}/success_curve"][-1] == pytest.approx(ok.mean())
        assert len(state[f"{key}/success_curve"]) == prm["R"]
        pool_starts, _ = novice_pool(cfg["paper"], spec["map"], s, 0, prm)
        assert np.array_equal(state[f"{key}/demo_starts"][:prm["b0"]], pool_starts[:prm["b0"]])
        assert len(state[f"{key}/demo_starts"]) == prm["b0"] + (prm["R"] - 1) * prm["b"]
        f = state[f"{key}/map_f"]
        assert f.shape == (prm["R"] - 1, prm["K"]) and ((f > 0) & (f < 1)).all()
        # a region's rate (n_fail + 1) / (n_visit + 2) has a denominator of at most M + 2
        assert (f >= 1 / (prm["M"] + 2) - 1e-12).all()


def test_moving_obstacle_moves():
    e = env.TaskEnv(1, "moving_obstacle", 0.0)
    p = np.array([[0.70, 0.50]])
    e.t = np.array([0])
    assert e.collides(p)[0]
    e.t = np.array([5])                            # centre at y = 0.57: (0.70, 0.50) is clear
    assert not e.collides(p)[0]


def test_pipeline_smoke(tmp_path):
    out = pipeline.run_inprocess(pipeline.resolve("clasp", "smoke"), tmp_path)
    metrics = pd.read_csv(out["metrics"])
    assert set(metrics["method"]) == {"BC-offline", "CLASP"}
    assert metrics[["success_id", "success_shift", "diversity"]].notna().all().all()
    assert (out["figures"] / "success_vs_demos.png").exists()
    assert (out["figures"] / "failure_map.png").exists()
