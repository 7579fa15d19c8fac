"""Behaviour tests of ctf-dojo: the training pairs the student sees, the collection recipe
(verified / unverified / simulated) on teachers with known behaviour, the step-limit rule, the
student network (cropped = padded logits, the GRU against torch.nn.GRU, behaviour cloning of a
perfectly separable case), the claim checkers on metrics built to fail and to pass, params
validation and a tiny end-to-end run."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from icml26 import pipeline
from icml26.agents import Call, run_episode
from icml26.agents.worlds import ctf
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.papers.ctf_dojo import claims, experiment
from icml26.papers.ctf_dojo.features import char_ids

P = {"eps_plain": 0.35, "eps_hint": 0.12, "attempts": 3, "step_factor": 1.6,
     "extra_ops": False}


def test_step_limit_rule_gives_the_spec_8():
    assert experiment.max_steps(P) == 8
    assert experiment.max_steps({**P, "step_factor": 2.0}) == 10


def test_decision_pairs_by_hand():
    task = ctf.make_challenge("flag{ab}", ["rev", "base64"], key=9)
    world = ctf.MiniDojo()
    calls = iter([Call("hexd"), Call("b64d"), Call("submit"), Call("rev"), Call("submit")])
    tr = run_episode(world, task, lambda s, t: next(calls), max_steps=8)
    pairs = experiment.decision_pairs(task, tr)
    mid = "}ba{galf"
    assert pairs == [(task.artefact, -1, 0, 0, "hexd"),       # invalid: string unchanged
                     (task.artefact, "hexd", 1, 1, "b64d"),
                     (mid, "b64d", 0, 2, "submit"),           # wrong submit: error bit next
                     (mid, "submit", 1, 3, "rev"),
                     ("flag{ab}", "rev", 0, 4, "submit")]


def _pool(n, frac=0.5, seed=0):
    return ctf.generate(np.random.default_rng(seed), n, ctf.SPLITS["dojo"], frac)


def test_collect_with_a_perfect_teacher_keeps_every_first_attempt():
    pool = _pool(30)
    p = {**P, "eps_plain": 0.0, "eps_hint": 0.0}
    first, kept, st = experiment.collect(ctf.MiniDojo(), pool, p, np.random.default_rng(0),
                                         20, 3)
    assert st["kept"] == 20 and st["visited"] == 20
    assert st["att_hint"] + st["att_plain"] == 20 and st["ver_hint"] + st["ver_plain"] == 20
    assert [c for c, _ in kept] == pool[:20]
    assert all(f.success for f in first)


def test_collect_with_a_random_teacher_counts_attempts_and_stops_at_the_pool():
    pool = _pool(40, seed=1)
    p = {**P, "eps_plain": 1.0, "eps_hint": 1.0}
    first, kept, st = experiment.collect(ctf.MiniDojo(), pool, p, np.random.default_rng(0),
                                         1000, 3)
    assert st["visited"] == 40                              # pool exhausted before N
    n_ver = st["ver_hint"] + st["ver_plain"]
    assert n_ver == len(kept) < 40
    # a challenge that was never verified used all 3 attempts
    assert st["att_hint"] + st["att_plain"] >= 3 * (40 - n_ver) + n_ver
    assert all(ctf.MiniDojo().verify(c, tr.answer) for c, tr in kept)


def test_hints_lower_the_teacher_noise_per_challenge():
    pool = _pool(4)
    t = ctf.NoisyOracle(pool, np.random.default_rng(0), 0.0, 1.0, [True, False, True, False])
    assert t.eps == [0.0, 1.0, 0.0, 1.0]
    st = [ctf.MiniDojo().start(c) for c in pool]
    calls = t(st, [None] * 4, [0, 1, 2, 3])
    assert calls[0] == Call(ctf.oracle_tool(pool[0], pool[0].artefact))
    assert calls[2] == Call(ctf.oracle_tool(pool[2], pool[2].artefact))


def test_simulator_without_noise_is_the_runtime_and_keeps_only_true_flags():
    pool = _pool(30, seed=2)
    a = experiment.collect(ctf.MiniDojo(), pool, P, np.random.default_rng(5), 25, 3)
    b = experiment.collect(ctf.ImaginedDojo(np.random.default_rng(9), 0.0), pool, P,
                           np.random.default_rng(5), 25, 3)
    assert a[2] == b[2]
    assert [tr.actions() for _, tr in a[1]] == [tr.actions() for _, tr in b[1]]
    noisy = experiment.collect(ctf.ImaginedDojo(np.random.default_rng(9), 0.3), pool, P,
                               np.random.default_rng(5), 25, 3)
    assert all(tr.answer == c.flag for c, tr in noisy[1])
    wrong = sum(experiment._imagined_errors(c, tr) for c, tr in noisy[1])
    assert wrong > 0 and sum(experiment._imagined_errors(c, tr) for c, tr in a[1]) == 0


def _params(arch="cnn"):
    return {"char_dim": 16, "width": 8, "hidden": 16, "action_dim": 8, "kernel": 5,
            "arch": arch}


def test_cropped_batch_gives_the_padded_logits():
    torch = pytest.importorskip("torch")
    from icml26.papers.ctf_dojo import student

    P0 = student.init_params(3, 7, 8, _params(), torch.device("cpu"))
    ids, lens = char_ids(["abc", "flag{x}", "", "Zm9v"], 96)
    t = torch.as_tensor
    args = (t(lens), t([-1, 0, 3, 6]), t([0, 1, 0, 1]), t([0, 2, 7, 9]))
    with torch.no_grad():
        full = student.forward(P0, t(ids), *args, max_steps=8)
        crop = student.forward(P0, t(ids[:, :7]), *args, max_steps=8)
    assert torch.allclose(full, crop, atol=1e-6)


def test_char_ids_match_the_alphabet_by_hand():
    from icml26.papers.ctf_dojo.features import CHARS

    ids, lens = char_ids(["flag{ab}", "", "A\xe9%" + "z" * 200, "\u0100b"], 6)
    assert lens.tolist() == [6, 0, 6, 2]
    idx = {c: i + 2 for i, c in enumerate(CHARS)}
    assert ids[0].tolist() == [idx[c] for c in "flag{a"]
    assert ids[1].tolist() == [0] * 6
    assert ids[2].tolist() == [idx["A"], 1, idx["%"], idx["z"], idx["z"], idx["z"]]
    assert ids[3].tolist() == [1, idx["b"], 0, 0, 0, 0]


def _tiny_pairs(seed, n):
    rng = np.random.default_rng(seed)
    alphabet = list("ABCxyz0129+/={}")
    strs = ["".join(rng.choice(alphabet, rng.integers(0, 30))) for _ in range(n)]
    ids, lens = char_ids(strs, 96)
    return {"ids": ids, "lens": lens, "last": rng.integers(-1, 7, n), "err": rng.integers(0, 2, n),
            "t": rng.integers(0, 10, n), "act": rng.integers(0, 7, n)}


def test_packed_stacked_forward_and_written_out_gradients_match_autograd():
    """Two stacked models on packed batches: the logits equal the padded ``forward`` per model
    and the written-out gradients equal autograd's through it."""
    torch = pytest.importorskip("torch")
    from icml26.papers.ctf_dojo import student

    Ps = [student.init_params(s, 7, 8, _params(), torch.device("cpu")) for s in (1, 2)]
    prs = [_tiny_pairs(0, 9), _tiny_pairs(1, 5)]
    pb = student.PackedBatch([p["ids"] for p in prs], [p["lens"] for p in prs],
                             [p["last"] for p in prs], [p["err"] for p in prs],
                             [p["t"] for p in prs], 2, torch.device("cpu"))
    S = student.stack_params(Ps)
    with torch.no_grad():
        logits, cache = student.stacked_forward(S, pb, 8)
    gl = torch.zeros_like(logits)
    t = torch.as_tensor
    for g, (P, pr) in enumerate(zip(Ps, prs, strict=True)):
        B = len(pr["lens"])
        ref = student.forward(P, t(pr["ids"]), t(pr["lens"]), t(pr["last"]), t(pr["err"]),
                              t(pr["t"]), 8)
        assert torch.allclose(logits[g, :B], ref, atol=1e-5)
        loss = torch.nn.functional.cross_entropy(ref, t(pr["act"]))
        gref = dict(zip(P, torch.autograd.grad(loss, list(P.values())), strict=True))
        gl[g, :B] = (ref.detach().softmax(1) - torch.nn.functional.one_hot(
            t(pr["act"]), 7).float()) / B
        if g == 0:
            first = gref
    G = student.stacked_backward(S, pb, cache, gl)
    for g, P in enumerate(Ps):
        P_ = {k: v for k, v in P.items()}
        ref_g = first if g == 0 else gref
        for k in P_:
            scale = float(ref_g[k].abs().max()) + 1e-8
            assert float((G[k][g] - ref_g[k]).abs().max()) / scale < 1e-4, (g, k)


def test_stacked_training_equals_training_alone():
    """Three students of different data sizes (so the small ones sit out the last steps) trained
    as one stack end where each ends alone (autograd, torch-layout Adam) up to float rounding,
    with the same loss curves."""
    torch = pytest.importorskip("torch")
    from icml26.papers.ctf_dojo import student

    Ps = [student.init_params(s, 7, 8, _params(), torch.device("cpu")) for s in (3, 4, 5)]
    prs = [_tiny_pairs(2, 40), _tiny_pairs(3, 100), _tiny_pairs(4, 17)]
    kw = dict(epochs=3, lr=0.01, batch=16, bucket=2, max_steps=8, device=torch.device("cpu"))
    out, logs = student.behaviour_clone_stacked(
        student.stack_params(Ps), prs, rngs=[np.random.default_rng(10 + g) for g in range(3)],
        **kw)
    for g, (P, pr) in enumerate(zip(Ps, prs, strict=True)):
        alone = student._behaviour_clone_autograd(P, pr, rng=np.random.default_rng(10 + g), **kw)
        assert np.allclose([r[1] for r in alone], [r[1] for r in logs[g]], rtol=1e-5)
        assert [r[2] for r in alone] == [r[2] for r in logs[g]]
        for k in P:
            assert torch.allclose(out[k][g], P[k].detach(), atol=1e-5, rtol=1e-4), (g, k)


def test_stacked_greedy_policy_matches_each_model_alone():
    torch = pytest.importorskip("torch")
    from icml26.papers.ctf_dojo import student

    Ps = [student.init_params(s, 7, 8, _params(), torch.device("cpu")) for s in (6, 7)]
    strs = ["flag{ab}", "ZmxhZ3s=", "", "666c6167", "}ba{galf", "Zz09"]
    states = [{"s": s, "last": i % 8 - 1, "err": i % 2, "t": i} for i, s in enumerate(strs)]
    owner = [0, 1, 1, 0, 1, 0]
    live = [0, 2, 3, 4, 5]                       # episode 1 has ended
    pol = student.StackedGreedyPolicy(student.stack_params(Ps), owner, ctf.TOOLS, 96, 8,
                                      torch.device("cpu"))
    got = pol([states[i] for i in live], [None] * len(live), live)
    for i, call in zip(live, got, strict=True):
        alone = student.GreedyPolicy(Ps[owner[i]], ctf.TOOLS, 96, 8, torch.device("cpu"))
        assert alone([states[i]], [None], [0]) == [call]


def test_gru_student_matches_torch_gru():
    torch = pytest.importorskip("torch")
    from icml26.papers.ctf_dojo import student

    P0 = student.init_params(1, 7, 8, _params("gru"), torch.device("cpu"))
    ref = torch.nn.GRU(16, 8, batch_first=True)
    with torch.no_grad():
        for name in ("w_ih", "w_hh", "b_ih", "b_hh"):
            getattr(ref, f"{name.replace('w_', 'weight_').replace('b_', 'bias_')}_l0").copy_(
                P0[name])
        x = torch.randn(3, 5, 16, generator=torch.Generator().manual_seed(0))
        assert torch.allclose(student._gru(P0, x), ref(x)[0], atol=1e-6)


def test_behaviour_cloning_fits_a_separable_case():
    """Strings that start with 'A' -> action 0, with 'z' -> action 6: cloning must reach
    accuracy 1 and the greedy policy must follow the rule."""
    torch = pytest.importorskip("torch")
    from icml26.papers.ctf_dojo import student

    rng = np.random.default_rng(0)
    strs = [("A" if i % 2 else "z") + "".join(rng.choice(list("0123456789"), 5))
            for i in range(128)]
    ids, lens = char_ids(strs, 96)
    pairs = {"ids": ids, "lens": lens, "last": np.full(128, -1), "err": np.zeros(128, int),
             "t": np.zeros(128, int), "act": np.array([0 if s[0] == "A" else 6 for s in strs])}
    P0 = student.init_params(0, 7, 8, _params(), torch.device("cpu"))
    log = student.behaviour_clone(P0, pairs, epochs=40, lr=0.01, batch=32, bucket=2,
                                  max_steps=8, rng=np.random.default_rng(1),
                                  device=torch.device("cpu"))
    assert log[-1][2] == 1.0 and log[-1][1] < log[0][1]
    pol = student.GreedyPolicy(P0, ctf.TOOLS, 96, 8, torch.device("cpu"))
    st = [{"s": "A123", "last": -1, "err": 0, "t": 0}, {"s": "z999", "last": -1, "err": 0,
                                                         "t": 0}]
    assert pol(st, [None, None], [0, 1]) == [Call("b64d"), Call("submit")]


def _metrics(gain, unver_gap, sim_gap, scale_gain, y_hint, y_plain, seeds=range(5)):
    rows = []
    base = {"intercode": 30.0, "nyu": 20.0, "cybench": 10.0}
    for s in seeds:
        jit = 0.1 * s
        for m, off in (("base", 0.0), ("verified", gain), ("unverified", gain - unver_gap),
                       ("simulated", gain - sim_gap), ("verified-n1", gain - scale_gain),
                       ("verified-n2", gain - scale_gain / 2), ("scripted", None)):
            r = {"method": m, "setting": "main", "seed": s}
            for b, v in base.items():
                r[f"pass1_{b}"] = 100.0 if off is None else v + off + jit
            r["pass1_avg"] = np.mean([r[f"pass1_{b}"] for b in base])
            r.update(yield_hint=y_hint + jit, yield_plain=y_plain, n_verified=486.0,
                     unverified_success=60.0, invalid_rate=0.1, sim_wrong_obs_rate=0.2,
                     sim_yield=50.0)
            rows.append(r)
    return pd.DataFrame(rows)


CFG = {"seeds": list(range(5)), "params": {"n_scaling": [60, 180, 486]}}


def test_claims_pass_on_metrics_built_to_pass():
    out = claims.check(CFG, _metrics(20.0, 8.0, 5.0, 10.0, 90.0, 50.0), None)
    assert all(c.verdict == REPRODUCED for c in out), [(c.id, c.verdict) for c in out]


def test_claims_fail_on_metrics_built_to_fail():
    out = {c.id: c for c in claims.check(CFG, _metrics(5.0, 2.0, 1.0, 2.0, 80.0, 60.0), None)}
    for cid in ("C1-headline", "C2-verification", "C3-execution-grounding", "C4-data-scaling",
                "C5-hint-yield"):
        assert out[cid].verdict == NOT_REPRODUCED, cid
    # one seed below the bar on average fails "in every seed" even when the mean passes
    m = _metrics(20.0, 8.0, 5.0, 10.0, 90.0, 50.0)
    sel = (m["method"] == "verified") & (m["seed"] == 3)
    m.loc[sel, [f"pass1_{b}" for b in ("intercode", "nyu", "cybench")] + ["pass1_avg"]] -= 15
    c1 = claims.check(CFG, m, None)[0]
    assert c1.parts["every_seed_avg_gain"].verdict == NOT_REPRODUCED


def test_a_failed_run_cannot_pass_a_claim():
    m = _metrics(20.0, 8.0, 5.0, 10.0, 90.0, 50.0)
    m.loc[(m["method"] == "unverified") & (m["seed"] == 1), "pass1_avg"] = np.nan
    c2 = claims.check(CFG, m, None)[1]
    assert c2.verdict != REPRODUCED and "1" in c2.to_dict()["note"]


def test_bad_params_are_one_config_error_line():
    from icml26.config import check_params
    from icml26.errors import ConfigError

    root = Path(__file__).resolve().parents[2] / "config"
    for key, bad in (("eps_plain", 1.5), ("epochs", 0), ("n_scaling", [60, 180]),
                     ("arch", "lstm"), ("kernel", 4), ("epoch", 3)):
        cfg = pipeline.resolve("ctf-dojo", "default")
        cfg["params"][key] = bad
        with pytest.raises(ConfigError) as info:
            check_params(cfg, root)
        assert "\n" not in str(info.value) and key in str(info.value)


def test_pipeline_tiny_run_is_deterministic(tmp_path):
    cfg = pipeline.resolve("ctf-dojo", "smoke")
    cfg["seeds"] = [0, 1, 2]
    cfg["params"].update(n_pool=24, n_single_pool=12, n_base=6, n_scaling=[4, 8, 12],
                         n_bench=6, epochs=1, base_epochs=1, width=4, hidden=8)
    a = pipeline.run_inprocess(cfg, tmp_path / "a")
    b = pipeline.run_inprocess(cfg, tmp_path / "b")
    assert Path(a["metrics"]).read_bytes() == Path(b["metrics"]).read_bytes()
    doc = json.loads(Path(a["claims"]).read_text())
    verdicts = {c["id"]: c["verdict"] for c in doc["claims"]}
    assert verdicts["S1-scripted-solver"] == REPRODUCED
    m = pd.read_csv(a["metrics"])
    assert (m.loc[m["method"] == "scripted", "pass1_avg"] == 100.0).all()
