"""Behaviour tests of bear: stacked scorers equal independent ones, the official per-item
scores, the conditional-accuracy diagnosis by hand, the agent controller's tool accounting
(planning gets no tools in the official mode), the features of perfect perception, the claim
checkers on metrics built to pass and to fail, params errors, and the pipeline end to end."""

import json

import numpy as np
import pandas as pd
import pytest

from icml26 import pipeline
from icml26.agents import Budget, run_batch
from icml26.agents.worlds import scenes as W
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.grid import Run
from icml26.papers.bear import claims, experiment
from icml26.papers.bear import features as fx

torch = pytest.importorskip("torch")


def _gens(n, base=0):
    return [torch.Generator().manual_seed(base + i) for i in range(n)]


def test_stacked_cnn_equals_each_seed_alone():
    from icml26.papers.bear import models

    p = models.init(_gens(3), "plain", width=4)
    img = torch.randn(3, 5, 12, 24, 24)
    out = models.cnn(p, img)
    # the grounded scorer of a stacked seed equals that seed alone
    g = W.Generator(np.random.default_rng(4))
    its = [g.make(s) for s in ("P1", "B2", "S2", "K2", "L2")]
    a = fx.item_arrays(its)
    a["img"] = experiment.images(its)
    one = {k: torch.as_tensor(v)[None] for k, v in a.items()}
    three = {k: v.expand(3, *v.shape[1:]) for k, v in one.items()}
    z3 = models.score(p, "plain", three)
    z1 = models.score({k: v[1:2] for k, v in p.items()}, "plain", one)
    assert torch.allclose(z3[1:2], z1, atol=1e-5)
    F = torch.nn.functional
    for s in range(3):
        x = F.relu(F.conv2d(img[s], p["c1.w"][s], p["c1.b"][s]))
        x = F.relu(F.conv2d(x, p["c2.w"][s], p["c2.b"][s], stride=2))
        x = F.conv2d(x, p["c3.w"][s], p["c3.b"][s], stride=2).flatten(1)
        want = x @ p["fc.w"][s] + p["fc.b"][s]
        assert torch.allclose(out[s], want, atol=1e-5)
    # a seed's parameters depend on its own generator only
    q = models.init(_gens(1, base=1), "plain", width=4)
    assert torch.equal(q["c1.w"][0], p["c1.w"][1])


def test_loss_is_the_sum_of_per_seed_mean_cross_entropies():
    from icml26.papers.bear import models

    logits = torch.randn(2, 6, 4)
    key = torch.randint(0, 4, (2, 6))
    want = sum(torch.nn.functional.cross_entropy(logits[s], key[s]) for s in range(2))
    assert torch.allclose(models.loss_fn(logits, key), want)


def _arrs(items, img=False):
    a = fx.item_arrays(items)
    a["slots"] = np.stack([fx.object_list(i) for i in items]).astype(np.float32)
    if img:
        a["img"] = experiment.images(items)
    return {k: torch.as_tensor(v)[None] for k, v in a.items()}


def test_grounded_scorers_learn_pointing():
    """P1 only (which point lies on <colour shape>?): the grounded scorer learns it from the
    ground-truth object list (oracle) and from pixels (plain, w = 4) well above chance (25%) on
    fresh items; the validation loss drives early stopping. Round 4: the items are P1
    sub-questions on 2-object scenes (one distractor on the other object, two off the objects),
    round 3's P1 distribution; full P1 items (one option on each of 4 objects) are not learned
    at this size by any variant (the paper's per-skill table reports it)."""
    from icml26.papers.bear import models

    g = W.Generator(np.random.default_rng(0), n_objects=(2, 2))

    def p1():
        while True:
            sc = g.scene(2, False)
            if sc is not None:
                return g.perception("P1", sc, int(g.rng.integers(sc.n)))

    tr, te = [p1() for _ in range(400)], [p1() for _ in range(200)]
    cfg = {"paper": "bear", "params": {"lr": 0.003, "batch_size": 32, "epochs": 12,
                                       "patience": 3, "size": 24}}
    for kind, want in (("oracle", 0.6), ("plain", 0.45)):
        p = models.init(_gens(1), kind, width=4, slot_dim=fx.slot_dim(4, False))
        curves = []
        p = experiment.fit(cfg, kind, p, _arrs(tr, True), _arrs(te, True),
                           [np.random.default_rng(0)], [Run(kind, "Z1", 0)], "cpu", curves)
        acc = experiment.predict(p, kind, _arrs(te, True))[0].numpy() == fx.item_arrays(te)["key"]
        assert acc.mean() > want, (kind, acc.mean())
        losses = [r["value"] for r in curves if r["metric"] == "train_loss"]
        assert losses[-1] < losses[0] - 0.1


def test_stacked_groups_and_shared_maps_change_no_result():
    """Engineering only: two (variant) groups trained as one stacked computation, each with its
    own stopping, end with the same parameters as each trained alone; a batch carrying the
    frozen encoder's precomputed maps scores like the CNN forward."""
    from icml26.papers.bear import models

    g = W.Generator(np.random.default_rng(3))
    tr = [g.make(s) for s in ("P1", "S1", "K2", "L1") for _ in range(24)]
    va = [g.make(s) for s in ("P1", "S1", "K2", "L1") for _ in range(6)]
    cfg = {"paper": "bear", "params": {"lr": 0.003, "batch_size": 32, "epochs": 3,
                                       "patience": 1, "size": 24}}
    runs = [Run("oracle", "Z1", 0), Run("oracle", "Z2", 0)]
    sd = fx.slot_dim(4, False)
    alone, c_alone = [], []
    for i, run in enumerate(runs):
        p = models.init(_gens(1, base=i), "oracle", slot_dim=sd)
        alone.append(experiment.fit(cfg, "oracle", p, _arrs(tr), _arrs(va),
                                    [np.random.default_rng(i)], [run], "cpu", c_alone))
    p = models.init(_gens(2), "oracle", slot_dim=sd)
    c_both = []
    both = experiment.fit(cfg, "oracle", p, _arrs(tr), _arrs(va),
                          [np.random.default_rng(0), np.random.default_rng(1)], runs, "cpu",
                          c_both, sidx=[0, 0], groups=[0, 1])
    # stacking rounds batched products differently in the last bits, and Adam's normalised
    # steps carry that to ~1e-2 after 9 steps (the same between two identical stacked copies
    # and a model alone); the check that matters is the curves' keys: the same epochs run and
    # the same best epochs chosen per group
    for i in range(2):
        for k in both:
            assert torch.allclose(both[k][i], alone[i][k][0], atol=3e-2), k
    key = ["method", "setting", "seed", "step", "metric"]
    a = pd.DataFrame(c_alone).sort_values(key).reset_index(drop=True)
    b = pd.DataFrame(c_both).sort_values(key).reset_index(drop=True)
    assert a[key].equals(b[key])                  # same epochs run, same best epochs chosen
    loss = a["metric"].str.endswith("loss")       # accuracies may flip an item on a near tie
    assert np.allclose(a.loc[loss, "value"], b.loc[loss, "value"], atol=2e-2)
    q = models.init(_gens(2), "plain", width=4)
    a = _arrs(va, True)
    a2 = {k: v.expand(2, *v.shape[1:]) for k, v in a.items()}
    maps = experiment.encoder_maps(q, a2["img"], chunk=7)
    z0 = models.score(q, "plain", a2)
    z1 = models.score(q, "plain", {**{k: v for k, v in a2.items() if k != "img"}, **maps})
    assert torch.allclose(z0, z1, atol=1e-5)


def test_object_list_matches_tool_slots_on_clean_scenes():
    g = W.Generator(np.random.default_rng(1))
    for skill in ("T1", "S2", "L2"):
        it = g.make(skill)
        dets = W.records_from_detections(W.detect(it.frames()))
        feats = fx.tool_slots(dets, W.spatial_facts(dets), 4, 24)
        base = fx.object_list(it)
        assert np.allclose(feats[:, :-7], base[:, :-1], atol=1e-6)
        assert np.array_equal(feats[:, -1], base[:, -1])


def test_box_pooling_by_hand():
    """The conv1-map mean inside a box and on its 1-px ring (integral image) equals a direct
    computation."""
    from icml26.papers.bear import models

    m1 = torch.rand(1, 1, 2, 22, 22)
    box = torch.tensor([[[[5.0, 6.0, 9.0, 8.0]] * 4]])            # pixels; conv1 index - 1
    out = models._box_pool(m1, box)[0, 0, 0]
    inside = m1[0, 0, :, 4:9, 5:8].mean((-1, -2))
    outer = m1[0, 0, :, 3:10, 4:9]
    ring = (outer.sum((-1, -2)) - m1[0, 0, :, 4:9, 5:8].sum((-1, -2))) / (35 - 15)
    assert torch.allclose(out, torch.cat([inside, ring]), atol=1e-5)


def test_skill_scores_and_conditional_accuracy_by_hand():
    sk = np.array([W.SKILLS.index("P1"), W.SKILLS.index("B1"), W.SKILLS.index("S1"),
                   W.SKILLS.index("S1")])
    key = np.array([0, 1, 2, 3])
    ans = np.array([0, 2, 2, -1])
    opt = np.array([[1, 0, 0, 0], [0.1, 0.6, 0.3, 0], [0, 0, 1, 0], [0, 0, 0, 1]], np.float32)
    acc, score = experiment.skill_table(sk, ans, key, opt)
    assert acc["P1"] == 1.0 and acc["B1"] == 0.0 and acc["S1"] == 0.5
    assert score["B1"] == pytest.approx(0.3) and score["S1"] == 0.5   # unanswered scores 0
    # item 2 (S1, right) has its two subs right; item 3 (S1, wrong) has one sub wrong
    sub_ok = np.array([1, 1, 1, 0])
    parent = np.array([2, 2, 3, 3])
    correct = (ans == key).astype(float)
    right, wrong, frac = experiment.conditional(sk, correct, sub_ok, parent)
    assert (right, wrong, frac) == (1.0, 0.0, 0.5)


def test_agent_controller_official_mode_skips_tools_on_planning():
    g = W.Generator(np.random.default_rng(2))
    items = [g.make(s) for s in ("S1", "K1", "K2", "T2", "P1")]
    w = W.ScenesWorld(cache=True)

    def answer(ids, states):         # the oracle's rule where tools ran, else option 0
        return [W.solve(items[i], s["records"], s["facts"], 24, 24) if s["facts"] else 0
                for i, s in zip(ids, states, strict=True)]

    for mode, want in (("official", [2, 0, 0, 2, 2]), ("all", [2, 2, 2, 2, 2]),
                       ("none", [0, 0, 0, 0, 0])):
        trs = run_batch(w, items, experiment.agent_policy(items, mode, answer), max_steps=10,
                        budgets=[Budget(calls=10) for _ in items])
        assert [sum(a != "answer" for a in t.actions()) for t in trs] == want
        assert all(t.stop == "final" and t.actions()[-1] == "answer" for t in trs)
        if mode == "all":
            assert all(t.success for t in trs)
    # a budget of 2 calls cannot afford visual + spatial + answer: no answer, scored wrong
    trs = run_batch(w, items[:1], experiment.agent_policy(items, "all", answer), max_steps=10,
                    budgets=[Budget(calls=2)])
    assert trs[0].stop == "budget" and trs[0].answer is None and not trs[0].success


def _metrics(cond_gap, oracle_gap, rel_gain, k_gain, flip_ratio, prior_acc, n=5):
    rows = []
    for z in ("Z1", "Z2"):
        for s in range(n):
            e = 0.002 * (s - 2)
            base = {"setting": z, "seed": s, "oracle_rate": 1.0}
            plain = {"acc_given_perception_right": 0.5 + cond_gap + e,
                     "acc_given_perception_wrong": 0.5, "reasoning_acc": 0.4,
                     "overall": 0.4, "overall_acc": 0.4, "frac_perception_right": 0.3,
                     "flip_TL": 0.1 * flip_ratio + e / 10, "flip_S": 0.1,
                     **{f"score_{c}": 0.4 for c in "PBTSKL"}}
            agent = {**plain, "overall": 0.4 * (1 + rel_gain) + e,
                     **{f"score_{c}": 0.5 + e for c in "PBT"},
                     "score_K": 0.4 + k_gain + e}
            rows += [{**base, "method": "plain", **plain},
                     {**base, "method": "agent", **agent},
                     {**base, "method": "agent-all", **agent},
                     {**base, "method": "oracle", **plain, "reasoning_acc": 0.4 + oracle_gap + e},
                     {**base, "method": "prior", **plain, "overall_acc": prior_acc + e}]
    return pd.DataFrame(rows)


CFG = {"settings": {"Z1": {}, "Z2": {}}}


def test_claims_pass_on_metrics_built_to_pass():
    out = {c.id: c.verdict for c in claims.check(CFG, _metrics(0.3, 0.3, 0.3, 0.0, 3.0, 0.26),
                                                 None)}
    assert set(out.values()) == {REPRODUCED}


def test_claims_fail_on_metrics_built_to_fail():
    out = {c.id: c.verdict for c in claims.check(CFG, _metrics(0.02, 0.02, 0.01, 0.3, 1.0, 0.5),
                                                 None)}
    for cid in ("C1-perception-bottleneck", "C2-agent-gain", "C3-gain-through-perception",
                "C4-spatiotemporal-instability", "C5-language-prior"):
        assert out[cid] == NOT_REPRODUCED, cid
    m = _metrics(0.3, 0.3, 0.3, 0.0, 3.0, 0.26)
    m.loc[(m["method"] == "plain") & (m["seed"] == 1), "oracle_rate"] = 0.99
    out = {c.id: c.verdict for c in claims.check(CFG, m, None)}
    assert out["S1-oracle-solves-from-tools"] == NOT_REPRODUCED


def test_bad_params_are_one_config_error_line():
    from pathlib import Path

    from icml26.config import check_params
    from icml26.errors import ConfigError

    root = Path(__file__).resolve().parents[2] / "config"
    for key, bad in (("epochs", 0), ("n_objects", [2]), ("noise_sd", -0.1), ("max_turn", 3)):
        cfg = pipeline.resolve("bear", "default")
        cfg["params"][key] = bad
        with pytest.raises(ConfigError) as info:
            check_params(cfg, root)
        assert "\n" not in str(info.value) and key in str(info.value)
    cfg = pipeline.resolve("bear", "default")
    with pytest.raises(ConfigError, match="n_objects"):
        experiment.check_params({**cfg["params"], "n_objects": [2, 5]})


def test_pipeline_smoke(tmp_path):
    cfg = pipeline.resolve("bear", "smoke")
    cfg["settings"]["Z1"]["n_train"] = 120
    cfg["params"].update(epochs=1, n_val=24, n_test_per_skill=4)
    out = pipeline.run_inprocess(cfg, tmp_path)
    doc = json.loads(out["claims"].read_text())
    by_id = {c["id"]: c for c in doc["claims"]}
    assert by_id["S1-oracle-solves-from-tools"]["measured"] == {"oracle_rate": 1.0}
    m = pd.read_csv(out["metrics"])
    agent = m[m["method"] == "agent"].iloc[0]
    # official mode: 2 tool calls per item except task planning, which gets none
    assert agent["tool_calls_K"] == 0 and agent["tool_calls_S"] == 2
    assert (m.loc[m["method"] == "plain", "tool_calls"] == 0).all()
    assert (m["unanswered"] == 0).all()


def test_named_objects_are_looked_up_by_identity():
    """An object list names its objects: the oracle / tool pathway finds a named object (an
    option's or the question's) by its (colour, shape), one-hot on that object's slot, and
    flags a named option absent from the scene."""
    from icml26.papers.bear import models

    g = W.Generator(np.random.default_rng(5))
    it = None
    for _ in range(200):
        cand = g.make("S2")
        ids = {cand.scene.ident(j) for j in range(cand.scene.n)}
        if any(o not in ids for o in cand.options):
            it = cand
            break
    a = _arrs([it])
    slots = a["slots"]
    named, found = models.named_lookup(slots, a, 4)
    order = sorted(it.scene.ident(j) for j in range(it.scene.n))      # slot order of features
    ids = set(order)
    for k, o in enumerate(it.options):
        want = np.zeros(fx.N_SLOTS)
        if o in ids:
            want[order.index(o)] = 1
        assert np.array_equal(named[0, 0, k].numpy(), want), (k, o)
        assert found[0, 0, k, 0].item() == float(o in ids)
    t = it.targets[0]
    assert named[0, 0, 4].argmax().item() == order.index(t) and named[0, 0, 4].sum() == 1
    assert named[0, 0, 5].sum() == 0                                  # S2 names one object


def test_oracle_scorer_learns_named_object_skills():
    """The perfect-perception scorer learns skills that name objects (P1, B1, S2, K1) from a
    few hundred mixed items, well above chance on fresh items (round 4 stayed at chance: a
    learned name attention and a 2-epoch patience that kept the first epoch's parameters)."""
    from icml26.papers.bear import models

    g = W.Generator(np.random.default_rng(6))
    sk = ("P1", "B1", "S2", "K1")
    tr = g.mixed(sk, 320, subs=False)
    va = g.mixed(sk, 120, subs=False)
    te = g.mixed(sk, 200, subs=False)
    cfg = {"paper": "bear", "params": {"lr": 0.002, "batch_size": 64, "epochs": 30,
                                       "patience": 4, "size": 24}}
    p = models.init(_gens(1), "oracle", slot_dim=fx.slot_dim(4, False))
    curves = []
    p = experiment.fit(cfg, "oracle", p, _arrs(tr), _arrs(va), [np.random.default_rng(0)],
                       [Run("oracle", "Z1", 0)], "cpu", curves)
    acc = experiment.predict(p, "oracle", _arrs(te))[0].numpy() == fx.item_arrays(te)["key"]
    assert acc.mean() > 0.6, acc.mean()
    assert [r["value"] for r in curves if r["metric"] == "best_epoch"][0] > 1
