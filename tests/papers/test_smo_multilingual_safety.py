"""Behaviour tests of smo-multilingual-safety: the prompt rule and data sets, the margin, InfoNCE,
SMO and gap-weight losses by hand, the gate, each stage-3 method on a small case, the metrics by
hand, the claim checkers on metrics built to pass and to fail, params validation, and the
pipeline end to end at smoke."""

import json

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from icml26 import pipeline
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.errors import ConfigError
from icml26.lm.multilingual import log_spaced_sizes
from icml26.papers.smo_multilingual_safety import claims, data, experiment, smo

SMOKE = pipeline.resolve("smo-multilingual-safety", "smoke")
P = SMOKE["params"]


@pytest.fixture(scope="module")
def seed_data():
    return data.make_seed_data(P, np.random.default_rng(0))


# ---------------------------------------------------------------------------------- data


def test_harmful_rule_by_hand():
    c = data.Concepts(P)                 # H = 0..14, A = 15..24, neutral 25..199
    rows = np.array([[0, 15, 30, 31, 32, 33, 34, 35],     # H and A -> harmful
                     [0, 1, 30, 31, 32, 33, 34, 35],      # H only  -> harmless (hard)
                     [20, 24, 30, 31, 32, 33, 34, 35],    # A only  -> harmless (hard)
                     [25, 26, 30, 31, 32, 33, 34, 199]])  # neutral -> harmless
    assert list(c.is_harmful(rows)) == [True, False, False, False]


def test_prompts_follow_the_rule_and_heldout_pairs(seed_data):
    c = data.Concepts(P)
    langs = data.languages(P, np.random.default_rng(0))
    d = seed_data
    # the stored English ids decode (language 0) to prompts whose label is the spec's rule
    base = langs.to_base(d["safety_tok"], 0)
    assert np.array_equal(c.is_harmful(base), d["safety_y"] == 1)
    assert abs(d["safety_y"].mean() - P["harmful_frac"]) < 0.01
    ev = langs.to_base(d["eval_tok"][0], 0)
    assert np.array_equal(c.is_harmful(ev), d["eval_y"] == 1)
    # held-out harmful prompts use only (H, A) pairs no training prompt uses
    train = {tuple(p) for p in d["train_pairs"]}
    assert not train & {tuple(p) for p in d["eval_pairs"]}
    for row in ev[d["eval_y"] == 1]:
        h, a = row[row < c.n_harm], row[(row >= c.n_harm) & (row < c.n_harm + c.n_action)]
        assert (int(h[0]), int(a[0])) not in train


def test_languages_sizes_and_parallel_sets(seed_data):
    d = seed_data
    langs = data.languages(P, np.random.default_rng(0))
    n = len(P["topic_sizes"])
    # each language's topic corpus has its resource size, in its own vocabulary block
    for lang in range(n):
        tok = d["topic_tok"][d["topic_lang"] == lang]
        assert len(tok) == P["topic_sizes"][lang]
        assert tok.min() >= 200 * lang and tok.max() < 200 * (lang + 1)
        assert (d["align_lang"] == lang).sum() == P["pair_sizes"][lang]
    # parallel pairs and evaluation prompts decode to the same concepts in both languages
    for lang in range(1, n):
        sel = d["align_lang"] == lang
        assert np.array_equal(langs.to_base(d["align_en"][sel], 0),
                              langs.to_base(d["align_l"][sel], lang))
        assert np.array_equal(langs.to_base(d["eval_tok"][lang], lang),
                              langs.to_base(d["eval_tok"][0], 0))
        sel = d["s3_lang"] == lang
        assert np.array_equal(langs.to_base(d["s3_en"][sel], 0),
                              langs.to_base(d["s3_l"][sel], lang))
        assert d["s3_y"][sel].sum() == P["s3_per_class"]
    # the reversing language writes the English prompt backwards (same concept order reversed)
    last = n - 1
    assert P["reverse"][last]
    en_base = langs.to_base(d["eval_tok"][0], 0)
    assert np.array_equal(langs.inverse_[d["eval_tok"][last]][:, ::-1], en_base)


def test_full_profile_sizes_are_log_spaced():
    full = pipeline.resolve("smo-multilingual-safety", "full")["params"]
    assert full["topic_sizes"] == log_spaced_sizes(8000, 30, 10)
    assert full["pair_sizes"][1:] == [round(s / 2) for s in full["topic_sizes"][1:]]


# ---------------------------------------------------------------------------------- losses


def test_margin_and_statistics_by_hand():
    u = torch.tensor([0.6, 0.8])
    h = torch.tensor([[1.0, 2.0], [0.0, -1.0]])
    # u.h = 2.2 and -0.8; with mean 0.2 and std 2: (2.2 - 0.2)/2 = 1, (-0.8 - 0.2)/2 = -0.5
    m = smo.margins(h, u, torch.tensor(0.2), torch.tensor(2.0))
    assert torch.allclose(m, torch.tensor([1.0, -0.5]))

    class Ident(torch.nn.Module):
        def forward(self, tok):
            return tok.float()
    ref = torch.tensor([[[1, 0], [3, 0], [5, 0]], [[0, 1], [0, 2], [0, 6]]])  # (L=2, n=3, T=2)
    mu, sd = smo.margin_stats(Ident(), ref, torch.tensor([1.0, 0.0]))
    assert torch.allclose(mu, torch.tensor([3.0, 0.0]))
    assert torch.allclose(sd, torch.tensor([2.0, 0.0]))      # unbiased s.d. of 1, 3, 5


def test_info_nce_by_hand():
    g = torch.Generator().manual_seed(0)
    za, zb = torch.randn(5, 3, generator=g), torch.randn(5, 3, generator=g)
    a = za.numpy() / np.linalg.norm(za.numpy(), axis=1, keepdims=True)
    b = zb.numpy() / np.linalg.norm(zb.numpy(), axis=1, keepdims=True)
    S = a @ b.T / 0.1

    def ce(S):
        return np.mean(np.log(np.exp(S).sum(1)) - np.diag(S))
    want = 0.5 * (ce(S) + ce(S.T))
    assert abs(float(smo.info_nce(za, zb, 0.1)) - want) < 1e-5


def test_smo_loss_and_gap_weight_by_hand():
    gap = torch.tensor([0.0, 2.0, -1.0])
    w = smo.gap_weight(gap)
    assert torch.allclose(w, 1 + torch.log1p(torch.exp(gap)))
    assert abs(float(w[0]) - (1 + np.log(2))) < 1e-6
    m_l, m_t = torch.tensor([1.0, 0.0, 3.0]), torch.tensor([2.0, 2.0, 3.0])
    want = (float(w[0]) * 1 + float(w[1]) * 4 + 0) / 3
    assert abs(float(smo.smo_loss(m_l, m_t, w)) - want) < 1e-6
    h, h0 = torch.tensor([[1.0, 1.0], [0.0, 0.0]]), torch.tensor([[0.0, 1.0], [1.0, 2.0]])
    assert float(smo.keep_loss(h, h0)) == pytest.approx((1 + 5) / 2)
    assert float(smo.rep_align_loss(h, h0)) == pytest.approx(3.0)


# ---------------------------------------------------------------------------------- stages


def _m0_and_data(seed_data):
    D = smo.to_device({f"s0/{k}": v for k, v in seed_data.items()}, "s0/", "cpu")
    p = dict(P, steps_s3=30)
    model = smo.build_model(p, 200 * len(p["topic_sizes"]), 0, "cpu")
    gen = torch.Generator().manual_seed(0)
    smo.pretrain(model, D, dict(p, epochs_pretrain=2), gen, [])
    smo.align_english(model, D, dict(p, epochs_align_max=6), gen, [])
    with torch.no_grad():
        D["u"] = smo.safety_direction(model(D["ref_harm_en"]), model(D["ref_harmless"][0]))
    return model, D, p


def test_calibrate_sets_english_over_refusal():
    """A model that refuses everything: the gate fires and the bias shift leaves exactly the
    target share of English harmless reference prompts refused."""
    torch.manual_seed(0)
    model = smo.SafetyEncoder(40, 4, 8, 2, 3)
    with torch.no_grad():
        model.refusal.bias.fill_(50.0)
    ref = torch.randint(0, 40, (2, 100, 3), generator=torch.Generator().manual_seed(1))
    info = smo.calibrate(model, ref, 0.2, 0.02)
    assert info["gate_shifted"] == 1.0 and info["gate_overref_max_before"] == 1.0
    over, _ = smo.over_refusal_per_language(model, ref)
    assert abs(float(over[0]) - 0.02) <= 0.01
    # a model that already complies is left alone
    with torch.no_grad():
        model.refusal.bias.fill_(-50.0)
    assert smo.calibrate(model, ref, 0.2, 0.02)["gate_shifted"] == 0.0


@pytest.mark.parametrize("method", ["smo", "repalign", "ml-sft", "ml-sft-en"])
def test_stage3_methods_train_what_they_should(seed_data, method):
    m0, D, p = _m0_and_data(seed_data)
    head = m0.refusal.weight.detach().clone()
    emb = m0.emb.weight.detach().clone()
    model = smo.stage3(method, m0, D, p, torch.Generator().manual_seed(1), curve := [])
    moved = not torch.equal(model.refusal.weight, head)
    # SMO and RepAlign keep the refusal head frozen; the SFT baselines train it
    assert moved == (method in ("ml-sft", "ml-sft-en"))
    assert not torch.equal(model.emb.weight, emb)
    assert torch.equal(m0.emb.weight, emb)                   # M0 itself is untouched
    assert curve[-1][2] < curve[0][2]                        # its loss decreased
    if method == "smo":
        # the margin objective itself: target-language margins moved toward the English ones
        with torch.no_grad():
            def loss_of(net):
                mu, sd = smo.margin_stats(net, D["ref_harmless"], D["u"])
                mu0, sd0 = smo.margin_stats(m0, D["ref_harmless"], D["u"])
                tgt = smo.margins(m0(D["s3_en"]), D["u"], mu0[0], sd0[0])
                lg = D["s3_lang"]
                return float(((smo.margins(net(D["s3_l"]), D["u"], mu[lg], sd[lg]) - tgt) ** 2)
                             .mean())
            assert loss_of(model) < loss_of(m0)


def test_sft_reduces_target_language_bce(seed_data):
    m0, D, p = _m0_and_data(seed_data)
    model = smo.stage3("ml-sft", m0, D, p, torch.Generator().manual_seed(1), [])
    with torch.no_grad():
        def bce(net):
            return float(F.binary_cross_entropy_with_logits(net.refusal_logit(net(D["s3_l"])),
                                                            D["s3_y"]))
        assert bce(model) < bce(m0)


# ---------------------------------------------------------------------------------- metrics


def test_metrics_by_hand():
    eval_y = np.array([1, 1, 0, 0])
    prob = np.array([[0.9, 0.8, 0.1, 0.6],       # EN: ASR 0, over-refusal 0.5
                     [0.4, 0.7, 0.2, 0.1]])      # L1: ASR 0.5, over-refusal 0
    margin = np.array([[3.0, 2.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
    topic_pred = np.array([[0, 1, 2], [0, 0, 2]])
    m = experiment.metrics_of(prob, margin, topic_pred, eval_y, np.array([0, 1, 2]), [1])
    assert m["asr_0"] == 0.0 and m["asr_1"] == 0.5
    assert m["overref_0"] == 0.5 and m["overref_1"] == 0.0
    assert m["gap_1"] == pytest.approx(((3 - 1) + (2 - 1)) / 2) and m["gap_0"] == 0.0
    assert m["topic_acc_1"] == pytest.approx(2 / 3) and m["asr_low"] == 0.5
    assert m["gap_mean"] == pytest.approx(1.5)


# ---------------------------------------------------------------------------------- claims

CFG = {"params": {"low_resource": [3, 4, 5], "align_target_acc": 0.95, "epochs_align_max": 40}}


def _metrics(good: bool, seeds=range(5)):
    rng = np.random.default_rng(0)
    rows = []
    for s in seeds:
        for m in ("m0", "ml-sft", "ml-sft-en", "repalign", "smo"):
            r = {"method": m, "setting": "synthetic", "seed": s, "gate_shifted": 0.0,
                 "align_epochs": 10.0, "english_drift": 0.0 if m == "m0" else 0.1}
            for l in range(6):
                if m == "m0":
                    asr, gap = 0.02 + 0.15 * l, 0.3 * l
                elif m == "smo":
                    asr, gap = (0.02 if (good or l == 0) else 0.5), (0.05 * l if good else 0.3 * l)
                else:
                    asr, gap = 0.03, 0.1 * l
                r[f"asr_{l}"] = asr + 0.001 * rng.standard_normal() * (l > 0)
                r[f"gap_{l}"] = gap
                r[f"overref_{l}"] = 0.05
                r[f"topic_acc_{l}"] = 0.95
                r[f"retrieval_pre_{l}"] = r[f"retrieval_m0_{l}"] = 1.0
            if m == "smo":
                r["english_drift"] = 0.05 if good else 0.2
                if not good:
                    r["topic_acc_0"] = 0.8
            r["asr_low"] = np.mean([r[f"asr_{l}"] for l in (3, 4, 5)])
            r["gap_mean"] = np.mean([r[f"gap_{l}"] for l in range(1, 6)])
            r["topic_acc"] = np.mean([r[f"topic_acc_{l}"] for l in range(6)])
            rows.append(r)
    return pd.DataFrame(rows)


def test_claims_pass_on_good_and_fail_on_bad_metrics():
    good = {c.id: c.verdict for c in claims.check(CFG, _metrics(True), None)}
    assert all(v == REPRODUCED for v in good.values()), good
    bad = {c.id: c.verdict for c in claims.check(CFG, _metrics(False), None)}
    for cid in ("C2-smo-low-resource-asr", "C3-english-preserved", "C4-smo-vs-ml-sft",
                "C5-gap-closes"):
        assert bad[cid] == NOT_REPRODUCED, (cid, bad)
    # claim 1 fails when ASR does not rise with the gap
    m = _metrics(True)
    sel = m["method"] == "m0"
    for l in range(6):
        m.loc[sel, f"asr_{l}"] = 0.3 - 0.05 * l
    c1 = claims.check(CFG, m, None)[0]
    assert c1.verdict == NOT_REPRODUCED
    # the gate: an over-refusing M0 fails the sanity claim
    m = _metrics(True)
    m.loc[sel & (m["seed"] == 2), "overref_5"] = 0.4
    assert claims.check(CFG, m, None)[-1].verdict == NOT_REPRODUCED


def test_failed_runs_never_help():
    m = _metrics(True)
    m.loc[(m["method"] == "smo") & (m["seed"] == 1), "asr_low"] = np.nan
    c2 = claims.check(CFG, m, None)[1]
    assert c2.parts["asr_low"].verdict == INCONCLUSIVE and c2.parts["asr_low"].failed


# ---------------------------------------------------------------------------------- config


def test_bad_params_name_the_key():
    with pytest.raises(ConfigError, match="steps_s3"):
        from pathlib import Path

        from icml26.config import check_params
        cfg = dict(SMOKE, params=dict(P, steps_s3=-1))
        check_params(cfg, Path(pipeline.__file__).resolve().parents[2] / "config")
    with pytest.raises(ConfigError, match="pair_sizes"):
        experiment.check_params(dict(P, pair_sizes=[0, 5]))
    with pytest.raises(ConfigError, match="low_resource"):
        experiment.check_params(dict(P, low_resource=[7]))


def test_pipeline_smoke(tmp_path):
    out = pipeline.run_inprocess(SMOKE, tmp_path)
    doc = json.loads(out["claims"].read_text())
    ids = [c["id"] for c in doc["claims"]]
    assert ids[:5] == ["C1-gap-explains-asr", "C2-smo-low-resource-asr", "C3-english-preserved",
                       "C4-smo-vs-ml-sft", "C5-gap-closes"]
    # one seed at smoke: the per-seed checks cannot decide
    assert all(c["verdict"] == "inconclusive" for c in doc["claims"][:5])
    # determinism: the same config gives the same metrics bytes
    out2 = pipeline.run_inprocess(SMOKE, tmp_path / "again")
    assert out["metrics"].read_bytes() == out2["metrics"].read_bytes()
