"""Behaviour tests of unirrm: the synthetic world (Q by hand, candidate distances, the
mean-aggregation oracle), the judges' pieces against hand or reference computations (attention
pooling rewrite, torch's MultiheadAttention, the mean over active criteria, Bradley-Terry,
GRPO's group advantage), stacked runs independent of each other, metrics by hand, the claim
checkers on metrics built to fail and to pass, params errors, and the pipeline end to end."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from icml26 import pipeline
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.config import check_params
from icml26.errors import ConfigError
from icml26.papers.unirrm import claims, experiment, models
from icml26.papers.unirrm import world as W

ROOT = Path(__file__).resolve().parents[2]
HP = {"emb_dim": 8, "hidden": 8, "heads": 2, "encoder": "pool", "encoder_layers": 1}


def _world_params(**kw):
    cfg = pipeline.resolve("unirrm", "smoke")
    p = dict(cfg["params"])
    p.update(kw)
    return p


def test_quality_by_hand():
    w = np.array([[1.0, 0.5, 2.0, 0.5], [0.0, 0.0, 0.0, 4.0]])
    dom = np.array([0, 1])
    req = np.zeros((2, W.S))
    req[0, [1, 6]] = 1                       # table format + include example
    lev = np.array([[[5, 1, 2, 3]], [[1, 1, 1, 2]]])
    sat = np.zeros((2, 1, W.S))
    sat[0, 0, 1] = 1                         # met table format, missed the example
    sat[1, 0, 3] = 1                         # met an unrequested constraint: worth 0
    Q = W.quality(w, dom, req, lev, sat, 3.0)
    assert np.allclose(Q[:, 0], [5 + 0.5 + 4 + 1.5 + 3 * (1 - 1), 8.0])


def test_candidates_differ_in_allowed_number_of_attributes():
    p = _world_params()
    rng = np.random.default_rng(0)
    lev, sat = W.sample_candidates(rng, 300, 4, p)
    for a in range(4):
        for b in range(a + 1, 4):
            d = (lev[:, a] != lev[:, b]).sum(-1) + (sat[:, a] != sat[:, b]).sum(-1)
            assert d.min() >= p["diff_min"] and d.max() <= p["diff_max"]
    assert lev.min() >= 1 and lev.max() <= 5


def test_eval_split_is_tie_free_and_thirds():
    p = _world_params()
    rng = np.random.default_rng(1)
    world = W.make_world(rng, p)
    ins, lev, sat, Q, resp, _ = W.build_eval_split(rng, 90, 4, p, world, W.test_cons_counts(90),
                                                   world["test_pairs"], rng)
    assert np.bincount(ins["n_cons"]).tolist() == [30, 30, 30]
    assert (np.abs(Q[:, 0] - Q[:, 1]) > 1e-9).all()
    s = np.sort(Q, -1)
    assert (s[:, -1] - s[:, -2] > 1e-9).all()
    # two-constraint test items use only pairs never seen in training
    seen = {W.PAIRS[i] for i in world["train_pairs"]}
    for r in np.flatnonzero(ins["n_cons"] == 2):
        assert tuple(np.flatnonzero(ins["req"][r])) not in seen


def test_render_languages_disjoint_and_word_order():
    p = _world_params()
    rng = np.random.default_rng(2)
    world = W.make_world(rng, p)
    world["orders"][1] = [3, 2, 1, 0]
    ins = {"dom": np.array([2]), "topic": np.array([5]), "req": np.zeros((1, W.S), np.int8)}
    ins["req"][0, 4] = 1
    conc = W.instruction_concepts(ins, p)
    t0 = W.render(conc, 0, world, p, True)
    t1 = W.render(conc, 1, world, p, True)
    assert not set(t0[0][t0[0] > 0]) & set(t1[0][t1[0] > 0])
    block = W.concept_layout(p["n_domains"], p["n_topics"])["n"]
    # language 1 reverses the slots: constraint first, then topic, domain; PAD last
    assert list(t1[0]) == [W.N_SPECIAL + block + conc[0, 2], W.N_SPECIAL + block + conc[0, 1],
                           W.N_SPECIAL + block + conc[0, 0], W.PAD]


def test_mean_judge_is_plain_mean_with_flat_weights():
    w = np.ones((1, W.G))
    ins = {"dom": np.array([0]), "req": np.zeros((1, W.S), np.int8)}
    ins["req"][0, [0, 2]] = 1
    lev = np.array([[[5, 4, 3, 2]]])
    sat = np.zeros((1, 1, W.S))
    sat[0, 0, 0] = 1
    F = W.mean_judge(w, ins, lev, sat, {})
    assert np.isclose(F[0, 0], (5 + 4 + 3 + 2 + 5 + 1) / 6)


def _params(method, seeds=(0,), vocab=40, hp=HP):
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    return models.init(method, gens, hp, vocab, torch.float64)


def test_attention_pooling_rewrite_matches_the_direct_formula():
    p = _params("unirrm")
    g = torch.Generator().manual_seed(3)
    resp = torch.randint(1, 40, (1, 3, 2, 16), generator=g)
    u = torch.randn(1, 3, 8, generator=g, dtype=torch.float64)
    got = models.read_candidates(p, u, resp)
    e = p["emb"][0][resp[0]]                                   # (3, 2, 16, D)
    bk = torch.randn(8, generator=g, dtype=torch.float64)      # any key bias cancels
    k = e @ p["read.k.W"][0] + bk
    v = e @ p["read.v.W"][0] + p["read.v.b"][0, 0]
    q = u[0] @ p["read.q.W"][0] + p["read.q.b"][0, 0]
    att = torch.softmax((k * q[:, None, None]).sum(-1) / math.sqrt(8), -1)
    want = (att[..., None] * v).sum(-2)
    assert torch.allclose(got[0], want, atol=1e-12)


def test_cross_attention_matches_torch_multihead_attention():
    p = _params("unirrm")
    x = torch.randn(1, 5, 4, 8, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    got = models.mha(p, "cross", x, 2)[0]
    ref = torch.nn.MultiheadAttention(8, 2, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        ref.in_proj_weight.copy_(p["cross.qkv.W"][0].T)
        ref.in_proj_bias.copy_(p["cross.qkv.b"][0, 0])
        ref.out_proj.weight.copy_(p["cross.o.W"][0].T)
        ref.out_proj.bias.copy_(p["cross.o.b"][0, 0])
    want, _ = ref(x[0], x[0], x[0])
    assert torch.allclose(got, want, atol=1e-10)


def test_aggregate_mean_over_active_criteria_by_hand():
    pi_gen = torch.tensor([[[0.25, 0.25, 0.25, 0.25]]], dtype=torch.float64)
    pi_c = torch.zeros(1, 1, W.S, dtype=torch.float64)
    pi_c[0, 0, 3] = 1.0
    s_gen = torch.tensor([[[[1.0, 0.0, -1.0, 3.0]]]], dtype=torch.float64)   # 5, 3, 1, 5 (clip)
    s_con = torch.full((1, 1, 1, W.S), -50.0, dtype=torch.float64)
    s_con[0, 0, 0, 3] = 50.0                                                 # met: 5
    F = models.aggregate(pi_gen, pi_c, s_gen, s_con)
    assert torch.isclose(F[0, 0, 0], torch.tensor((5 + 3 + 1 + 5 + 5) / 5, dtype=torch.float64))
    # the static rubric: generic criteria only, weighted by G * pi
    F2 = models.aggregate(torch.tensor([[[0.5, 0.5, 0.0, 0.0]]], dtype=torch.float64), None,
                          s_gen, s_con)
    assert torch.isclose(F2[0, 0, 0], torch.tensor((2 * 5 + 2 * 3) / 4, dtype=torch.float64))


def test_scalar_rm_scores_each_response_alone():
    p = _params("scalar-rm")
    g = torch.Generator().manual_seed(5)
    ins = torch.randint(1, 40, (1, 6, 4), generator=g)
    resp = torch.randint(1, 40, (1, 6, 2, 16), generator=g)
    pair = models.forward(p, "scalar-rm", HP, ins, resp)["F"]
    alone = torch.cat([models.forward(p, "scalar-rm", HP, ins, resp[:, :, j:j + 1])["F"]
                       for j in (0, 1)], -1)
    assert torch.allclose(pair, alone, atol=1e-12)
    # the generative judge reads the candidates jointly: its pair scores differ from alone
    q = _params("unirrm")
    pair = models.forward(q, "unirrm", HP, ins, resp)["F"]
    alone = torch.cat([models.forward(q, "unirrm", HP, ins, resp[:, :, j:j + 1])["F"]
                       for j in (0, 1)], -1)
    assert not torch.allclose(pair, alone)


def test_stacked_runs_are_independent():
    both = _params("unirrm", seeds=(7, 8))
    one = _params("unirrm", seeds=(8,))
    for k in one:
        assert torch.equal(both[k][1:], one[k])
    g = torch.Generator().manual_seed(6)
    ins = torch.randint(1, 40, (2, 3, 4), generator=g)
    resp = torch.randint(1, 40, (2, 3, 4, 16), generator=g)
    F2 = models.forward(both, "unirrm", HP, ins, resp)["F"]
    F1 = models.forward(one, "unirrm", HP, ins[1:], resp[1:])["F"]
    assert torch.allclose(F2[1:], F1, atol=1e-12)


def test_transformer_encoder_ignores_padding():
    hp = {**HP, "encoder": "transformer"}
    p = _params("unirrm", hp=hp)
    a = torch.tensor([[[3, 5, 0, 0]]])
    b = torch.tensor([[[3, 5, 0, 0]]])
    ua = models.encode_instruction(p, hp, a)
    p2 = {k: v.clone() for k, v in p.items()}
    p2["pos"][0, 2:] += 10.0          # positions of PAD slots change nothing
    assert torch.allclose(ua, models.encode_instruction(p2, hp, b), atol=1e-12)


def test_bradley_terry_loss_by_hand():
    F = torch.tensor([[[0.3, 1.1], [2.0, -1.0]]], dtype=torch.float64)
    label = torch.tensor([[1, 0]])
    got = experiment._pref_loss(torch, F, label, {"pairwise_weight": 1.0}, True)
    want = -(math.log(1 / (1 + math.exp(-(1.1 - 0.3)))) + math.log(1 / (1 + math.exp(-3.0)))) / 2
    assert math.isclose(float(got), want, rel_tol=1e-12)


HPG = {"temperature": 0.6, "reward_acc": 0.8, "reward_format": 0.15, "reward_rubric": 0.05,
       "kl_coef": 0.001}


def test_grpo_group_advantage():
    # a decisive judge: every verdict of the group is the same -> zero advantage, and with
    # the reference equal to the policy the KL term is zero: no loss, no gradient
    F = torch.tensor([[[40.0, 0.0]]], dtype=torch.float64, requires_grad=True)
    ref = torch.log_softmax(F.detach() / 0.6, -1)
    u = torch.rand(1, 1, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    loss = experiment._grpo_loss(torch, F, ref, torch.tensor([[0]]), None, None, u, HPG)
    assert abs(float(loss.detach())) < 1e-12
    # an undecided judge: mixed verdicts; the gradient step raises the labelled candidate
    F = torch.tensor([[[0.0, 0.0]]], dtype=torch.float64, requires_grad=True)
    ref = torch.log_softmax(F.detach() / 0.6, -1)
    u = torch.tensor([[[0.1, 0.2, 0.7, 0.9, 0.3]]], dtype=torch.float64)   # 3 x cand 0, 2 x 1
    loss = experiment._grpo_loss(torch, F, ref, torch.tensor([[0]]), None, None, u, HPG)
    (grad,) = torch.autograd.grad(loss, F)
    assert grad[0, 0, 0] < 0 < grad[0, 0, 1]


def test_run_metrics_by_hand():
    p = _world_params(n_languages=2, n_low_resource=1)
    Q = np.array([[1.0, 2.0, 0.0, 3.0], [5.0, 1.0, 0.0, 2.0], [0.0, 1.0, 4.0, 2.0]])
    te = {"Q": Q, "n_cons": np.array([0, 1, 2]), "req": np.zeros((3, W.S))}
    pair = np.array([[[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]],      # L0: right, right, tie -> 0
                     [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]])     # L1: wrong, right, right
    lst = np.zeros((2, 3, 4))
    lst[:, 0, 3] = lst[:, 1, 0] = lst[:, 2, 1] = 1.0            # right, right, wrong
    pi = np.zeros((2, 3, W.S))
    row = experiment.run_metrics(p, te, {"pair": pair, "list": lst, "point": pair, "pi_c": pi})
    assert math.isclose(row["pair_acc_L0"], 2 / 3) and math.isclose(row["pair_acc_L1"], 2 / 3)
    assert math.isclose(row["pair_acc_c0"], 0.5) and math.isclose(row["pair_acc_c1"], 1.0)
    assert math.isclose(row["list_acc"], 2 / 3)
    assert math.isclose(row["consistency"], 1 / 3)             # only item 1 agrees
    assert math.isclose(row["pair_acc_low"], 2 / 3)


def test_rubric_f1_matches_sklearn():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(0)
    pi = rng.random((50, W.S))
    req = (rng.random((50, W.S)) < 0.2).astype(int)
    want = f1_score(req.ravel(), (pi > 0.5).ravel().astype(int))
    assert math.isclose(experiment.rubric_f1(pi, req), want, rel_tol=1e-12)


def _metrics(gap_c1=0.08, gap_c0=0.0, gap=0.06, point_gap=0.0, n=5):
    rows = []
    rng = np.random.default_rng(0)
    for seed in range(n):
        e = rng.normal(0, 0.003, 8)
        base = {"pair_acc": 0.75 + e[0], "list_acc": 0.6 + e[1], "pair_acc_c1plus": 0.7 + e[2],
                "pair_acc_c0": 0.8 + e[3], "pair_acc_low": 0.65 + e[4], "consistency": 0.5 + e[5],
                "point_acc": 0.75 + e[0], "oracle_mean_pair_acc": 0.98,
                "oracle_mean_list_acc": 0.95, "pair_acc_c2_unseen": 0.7}
        uni = dict(base)
        uni.update(pair_acc=base["pair_acc"] + gap, list_acc=base["list_acc"] + gap,
                   pair_acc_c1plus=base["pair_acc_c1plus"] + gap_c1,
                   pair_acc_c0=base["pair_acc_c0"] + gap_c0,
                   pair_acc_low=base["pair_acc_low"] + gap, consistency=base["consistency"] + gap)
        uni["point_acc"] = uni["pair_acc"] + point_gap
        for m, vals in (("unirrm", uni), ("static-rm", base), ("scalar-rm", base)):
            rows.append({"method": m, "setting": "mixreward", "seed": seed, **vals})
    return pd.DataFrame(rows)


def test_claims_pass_on_metrics_built_to_pass():
    cfg = pipeline.resolve("unirrm", "default")
    out = claims.check(cfg, _metrics(), pd.DataFrame())
    assert [c.verdict for c in out] == [REPRODUCED] * 5, [(c.id, c.verdict) for c in out]
    assert "UniRRM-mini 0.81" in out[0].to_dict()["note"]


def test_claims_fail_on_metrics_built_to_fail():
    cfg = pipeline.resolve("unirrm", "default")
    out = claims.check(cfg, _metrics(gap_c1=0.0, gap_c0=0.06, gap=-0.02, point_gap=-0.08),
                       pd.DataFrame())
    assert [c.verdict for c in out] == [NOT_REPRODUCED] * 5, [(c.id, c.verdict) for c in out]
    # the control fails on the other side too
    out = claims.check(cfg, _metrics(gap_c0=-0.06), pd.DataFrame())
    assert out[1].parts["no constraint: diff >= -0.03"].verdict == NOT_REPRODUCED


def test_failed_run_cannot_support_a_claim():
    cfg = pipeline.resolve("unirrm", "default")
    m = _metrics()
    m.loc[(m["method"] == "unirrm") & (m["seed"] == 2), "pair_acc"] = np.nan
    c = claims.check(cfg, m, pd.DataFrame())[0]
    assert c.verdict != REPRODUCED and "2" in c.to_dict()["note"]


@pytest.mark.parametrize("key,value", [("n_test", -1), ("epochs", 0), ("encoder", "rnn"),
                                       ("teacher_noise", 1.5)])
def test_bad_params_name_the_key(key, value):
    cfg = pipeline.resolve("unirrm", "smoke")
    cfg["params"][key] = value
    with pytest.raises(ConfigError) as info:
        check_params(cfg, ROOT / "config")
    assert "\n" not in str(info.value) and key in str(info.value)


def test_cross_key_params_name_the_key():
    p = _world_params(sft_epochs=9, epochs=3)
    with pytest.raises(ConfigError, match="sft_epochs"):
        experiment.check_params(p)


def test_pipeline_smoke_end_to_end(tmp_path):
    cfg = pipeline.resolve("unirrm", "smoke")
    cfg["params"].update(n_pair_train=60, n_list_train=20, n_val=20, n_test=30, epochs=2,
                         sft_epochs=1)
    cfg["methods"].append("unirrm-norubric")   # the full profile's ablation, exercised here
    paths = pipeline.run_inprocess(cfg, tmp_path)
    m = pd.read_csv(paths["metrics"])
    assert set(m["method"]) == {"unirrm", "static-rm", "scalar-rm", "unirrm-norubric"}
    # only the judges with instruction-specific criteria have a rubric F1
    assert m.set_index("method")["rubric_f1"].notna().to_dict() == {
        "unirrm": True, "static-rm": False, "scalar-rm": False, "unirrm-norubric": True}
    assert m["pair_acc"].between(0, 1).all() and m["consistency"].between(0, 1).all()
    # the data card is part of the report
    assert "data_card" in paths["report_md"].read_text()
