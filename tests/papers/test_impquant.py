"""impquant: scenes, token weights, sequential PTQ, metrics and claims on hand-built cases."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from icml26 import pipeline  # noqa: E402
from icml26.claims import NOT_REPRODUCED, REPRODUCED  # noqa: E402
from icml26.config import check_params  # noqa: E402
from icml26.errors import ConfigError  # noqa: E402
from icml26.lm import quant  # noqa: E402
from icml26.papers.impquant import claims, experiment, ptq, scenes  # noqa: E402
from icml26.papers.impquant.model import TinyVLM, block_forward  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cfg():
    return pipeline.resolve("impquant", "default")


# ------------------------------------------------------------------ scenes
def test_scenes_answers_match_the_pixels():
    d = scenes.generate(np.random.default_rng(0), 400)
    assert np.bincount(d["qtype"]).tolist() == [100] * 4
    img = (d["patches"].reshape(400, 8, 8, 4, 4, 3).transpose(0, 1, 3, 2, 4, 5)
           .reshape(400, 32, 32, 3))
    words = [[scenes.VOCAB[t] for t in row] for row in d["text"]]
    ex = d["qtype"] == 0
    assert 0.35 < np.mean(d["answer"][ex] == scenes.A["yes"]) < 0.65
    for i in range(400):
        colours_present = {c for c in range(4)
                           if np.any(np.all(np.isclose(img[i], scenes.RGB[c]), axis=-1))}
        n_obj = int(d["boxes"][i, :, 2].sum())
        assert d["objmask"][i].sum() == 4 * n_obj               # 2x2 patches per object
        q = words[i]
        if q[0] == "is":                                        # EXIST
            c = scenes.COLOURS.index(q[3])
            if d["answer"][i] == scenes.A["yes"]:
                assert c in colours_present
        if q[0] == "what":                                      # COLOUR
            assert scenes.ANSWERS[d["answer"][i]] in [scenes.COLOURS[c]
                                                      for c in colours_present]
        if q[0] == "where" and n_obj == 1:                      # quadrant of the only object
            r, col = d["boxes"][i, 0, :2]
            assert scenes.ANSWERS[d["answer"][i]] == scenes.quadrant((r, col))
        assert q[-1] == "[ANS]"


def test_absent_probes_are_adversarial():
    d = scenes.generate(np.random.default_rng(1), 400)
    img = (d["patches"].reshape(400, 8, 8, 4, 4, 3).transpose(0, 1, 3, 2, 4, 5)
           .reshape(400, 32, 32, 3))
    n_no = 0
    for i in np.nonzero((d["qtype"] == 0) & (d["answer"] == scenes.A["no"]))[0]:
        c = scenes.COLOURS.index(scenes.VOCAB[d["text"][i, 3]])
        s = scenes.VOCAB[d["text"][i, 4]]
        has_colour = np.any(np.all(np.isclose(img[i], scenes.RGB[c]), axis=-1))
        # the asked shape present in another colour: some object patch block matches its mask
        has_shape = False
        for r, col, on in d["boxes"][i]:
            if on:
                block = img[i, 4 * r: 4 * r + 8, 4 * col: 4 * col + 8]
                fg = np.any([np.all(np.isclose(block, rgb), -1) for rgb in scenes.RGB], 0)
                has_shape |= bool(np.array_equal(fg, scenes.MASKS[s]))
        assert has_colour or has_shape
        n_no += 1
    assert n_no > 30


# ------------------------------------------------------------------ token weights
def _model(seed=0):
    torch.manual_seed(seed)
    return TinyVLM().double().eval()


def test_importance_weights_by_hand():
    """60 identical background tokens (r = 1 -> v = 0.05) and 4 mutually orthogonal object
    tokens (r = 0 -> v = 1): after mean-1 normalisation background 0.05 * 64 / 7, objects
    64 / 7. With zero q / k projections attention is uniform, so every text token gets a = 1."""
    m = _model()
    with torch.no_grad():
        for b in m.blocks:
            for lin in (b.attn.q, b.attn.k):
                lin.weight.zero_()
                lin.bias.zero_()
    h = torch.zeros(2, 71, 64, dtype=torch.float64)
    for i in range(4):
        h[:, i, i] = 1.0
    h[:, 4:64, 10] = 1.0
    h[:, 64:] = torch.randn(2, 7, 64, dtype=torch.float64)
    w = ptq.importance_weights(m, h, 64)
    assert torch.allclose(w[:, :4], torch.full((2, 4), 64 / 7, dtype=torch.float64))
    assert torch.allclose(w[:, 4:64], torch.full((2, 60), 0.05 * 64 / 7, dtype=torch.float64))
    assert torch.allclose(w[:, 64:], torch.ones(2, 7, dtype=torch.float64))
    wv = ptq.importance_weights(m, h, 64, parts="text")
    assert torch.allclose(wv, torch.ones_like(wv))   # text-only: visual part set to 1


def test_text_weights_follow_received_attention():
    """Keys that only one text token can match: that token receives all the attention."""
    m = _model(1)
    with torch.no_grad():
        for b in m.blocks:
            b.attn.q.weight.zero_()
            b.attn.q.bias.fill_(1.0)
            b.attn.k.weight.zero_()
            b.attn.k.bias.zero_()
            b.attn.k.weight[:, 0] = 100.0              # key ~ channel 0 of the LN input
    h = torch.zeros(1, 71, 64, dtype=torch.float64)
    h[:, :64, 5] = torch.randn(64, dtype=torch.float64)
    h[:, 64:, 1] = 1.0
    h[:, 66, 0] = 1.0                                   # text token 2 stands out on channel 0
    w = ptq.importance_weights(m, h, 64, clip=(0.0, 1e9))
    a = w[0, 64:]
    assert int(a.argmax()) == 2 and float(a[2]) > 5 * float(a[torch.arange(7) != 2].max())


def test_modality_weights_normalised_and_by_hand():
    m = _model(2)
    h = torch.randn(3, 71, 64, dtype=torch.float64)
    y = torch.tensor([0, 3, 5])
    w, lv, lt = ptq.modality_weights(m, h, y, 64)
    assert float(w.mean()) == pytest.approx(1.0)
    hh = h.clone().requires_grad_(True)
    loss = sum(torch.nn.functional.cross_entropy(m.logits_from(hh[i: i + 1]), y[i: i + 1])
               for i in range(3))
    g = torch.autograd.grad(loss, hh)[0].pow(2).sum(-1)
    assert lv / lt == pytest.approx(float(g[:, :64].mean() / g[:, 64:].mean()), rel=1e-9)


# ------------------------------------------------------------------ sequential PTQ
def _masks(n):
    obj = torch.zeros(n, 71, dtype=torch.bool)
    obj[:, :4] = True
    vis = torch.zeros(n, 71, dtype=torch.bool)
    vis[:, :64] = True
    return {"obj": obj.reshape(-1), "bg": (vis & ~obj).reshape(-1), "text": (~vis).reshape(-1)}


def test_quantize_lm_sequential_gptq_by_hand():
    """Layer by layer: q/k/v of block 0 are GPTQ on the FP inputs; block 0's o-projection is
    GPTQ on inputs captured after q/k/v were quantised (the sequential rule)."""
    m = _model(3)
    h = torch.randn(4, 71, 64, dtype=torch.float64)
    tw = torch.rand(4, 71, dtype=torch.float64) + 0.5
    qm, diag = ptq.quantize_lm(m, h, method="impquant", w_bits=3, a_bits=None,
                               token_weights=tw, masks=_masks(4), eval_weights=tw)
    assert len(diag) == 12
    x0 = m.blocks[0].ln1(h).reshape(-1, 64)
    exp_q = quant.gptq(m.blocks[0].attn.q.weight, quant.hessian(x0, tw.reshape(-1)), 3)
    assert torch.allclose(qm.blocks[0].attn.q.weight, exp_q)
    # o's input: the attention mix computed with the quantised q, k, v
    cap = {}
    hook = qm.blocks[0].attn.o.register_forward_pre_hook(
        lambda mod, args: cap.__setitem__("x", args[0]))
    partial = TinyVLM().double()
    partial.load_state_dict(m.state_dict())
    for name in ("q", "k", "v"):
        getattr(partial.blocks[0].attn, name).weight.data = getattr(qm.blocks[0].attn,
                                                                    name).weight.clone()
    hook.remove()
    cap2 = {}
    hk = partial.blocks[0].attn.o.register_forward_pre_hook(
        lambda mod, args: cap2.__setitem__("x", args[0]))
    with torch.no_grad():
        block_forward(partial.blocks[0], h)
    hk.remove()
    exp_o = quant.gptq(m.blocks[0].attn.o.weight, quant.hessian(cap2["x"].reshape(-1, 64),
                                                                 tw.reshape(-1)), 3)
    assert torch.allclose(qm.blocks[0].attn.o.weight, exp_o)
    assert not cap  # the quantised model itself was not run by the check


def test_uniform_importance_equals_gptq_and_rtn_is_rtn():
    m = _model(4)
    h = torch.randn(2, 71, 64, dtype=torch.float64)
    ones = torch.ones(2, 71, dtype=torch.float64)
    kw = {"w_bits": 3, "a_bits": None, "masks": _masks(2), "eval_weights": ones}
    a, _ = ptq.quantize_lm(m, h, method="gptq", token_weights=None, **kw)
    b, _ = ptq.quantize_lm(m, h, method="impquant", token_weights=ones, **kw)
    r, _ = ptq.quantize_lm(m, h, method="rtn", token_weights=None, **kw)
    for x, y in zip(a.blocks.parameters(), b.blocks.parameters(), strict=True):
        assert torch.equal(x, y)
    for blk, qb in zip(m.blocks, r.blocks, strict=True):
        assert torch.allclose(qb.ffn.fc.weight, quant.rtn(blk.ffn.fc.weight, 3))
    # 8-bit weights barely change the model's output
    q8, _ = ptq.quantize_lm(m, h, method="gptq", token_weights=None, **(kw | {"w_bits": 8}))
    with torch.no_grad():
        assert torch.allclose(q8.logits_from(h), m.logits_from(h), atol=1e-2)


def test_outlier_aware_activations_keep_outlier_channels():
    m = _model(5)
    h = torch.randn(2, 71, 64, dtype=torch.float64)
    ones = torch.ones(2, 71, dtype=torch.float64)
    q, _ = ptq.quantize_lm(m, h, method="gptq", w_bits=4, a_bits=6, token_weights=None,
                           masks=_masks(2), eval_weights=ones, outlier_aware=True)
    layer = q.blocks[0].attn.q
    x = m.blocks[0].ln1(h).reshape(-1, 64)
    keep = quant.outlier_channels(x, 0.03, 2)
    assert layer.fp_mask.sum() == 2 and torch.equal(torch.nonzero(layer.fp_mask)[:, 0], keep)
    # the outlier channels (LN gain 8.0 at channels 7, 41) are the ones kept in FP
    assert set(keep.tolist()) == {7, 41}
    # FP columns are not rounded (they still absorb the error of earlier columns)
    w0 = m.blocks[0].attn.q.weight.detach()
    assert torch.allclose(layer.weight, quant.gptq(w0, quant.hessian(x), 4, keep=keep))
    r, _ = ptq.quantize_lm(m, h, method="rtn", w_bits=4, a_bits=6, token_weights=None,
                           masks=_masks(2), eval_weights=ones, outlier_aware=True)
    assert torch.equal(r.blocks[0].attn.q.weight[:, keep], w0[:, keep])
    rest = torch.ones(64, dtype=torch.bool)
    rest[keep] = False
    assert layer.act_scale == pytest.approx(quant.act_scale(x, 6, 99.9, channels=rest))
    naive, _ = ptq.quantize_lm(m, h, method="gptq", w_bits=4, a_bits=6, token_weights=None,
                               masks=_masks(2), eval_weights=ones)
    assert naive.blocks[0].attn.q.act_scale == pytest.approx(quant.act_scale(x, 6))


# ------------------------------------------------------------------ metrics and claims
def test_answer_metrics_by_hand():
    A = scenes.A
    d = {"answer": np.array([A["yes"], A["no"], A["no"], A["red"], A["2"], A["top-left"]]),
         "qtype": np.array([0, 0, 0, 1, 2, 3])}
    pred = np.array([A["yes"], A["yes"], A["no"], A["red"], A["3"], A["top-left"]])
    m = experiment.answer_metrics(pred, d)
    assert m["acc"] == pytest.approx(4 / 6)
    assert m["acc_exist"] == pytest.approx(2 / 3) and m["acc_count"] == 0.0
    assert m["false_yes"] == pytest.approx(0.5)
    assert m["exist_f1"] == pytest.approx(2 * 1 / (2 * 1 + 1 + 0))


def _metrics(imp_gain, fy_gap, noimp_gap, bg_ratio, fp=0.95, seeds=range(5)):
    rows = []
    for s in seeds:
        base = 0.6 + 0.01 * s
        for setting in ("W3A16", "W4A6"):
            for m in ("rtn", "gptq", "modality-w", "impq-noimp", "impquant"):
                acc = base + (imp_gain if m == "impquant" else 0.0)
                if m == "impq-noimp":
                    acc = base + imp_gain + noimp_gap
                rows.append({"method": m, "setting": setting, "seed": s, "acc": acc,
                             "false_yes": 0.3 + (fy_gap if m == "impquant" else 0.0),
                             "fp_acc": fp + 0.001 * s, "fp_false_yes": 0.1,
                             **{f"fp_acc_{t}": fp for t in experiment.TYPES},
                             "err_obj": 0.01, "err_bg": 0.01, "imp_w_obj": 2.0,
                             "imp_w_bg": 2.0 * bg_ratio})
    return pd.DataFrame(rows)


def test_claims_pass_on_data_built_to_pass(cfg):
    out = {c.id: c.verdict for c in claims.check(cfg, _metrics(0.05, -0.02, 0.0, 0.3), None)}
    assert set(out.values()) == {REPRODUCED}


def test_claims_fail_on_data_built_to_fail(cfg):
    out = {c.id: c.verdict for c in claims.check(
        cfg, _metrics(-0.03, 0.05, 0.02, 0.8, fp=0.5), None)}
    assert set(out.values()) == {NOT_REPRODUCED}


def test_failed_seed_cannot_pass(cfg):
    m = _metrics(0.05, -0.02, 0.0, 0.3)
    m.loc[(m["method"] == "impquant") & (m["seed"] == 2), "acc"] = np.nan
    c = {c.id: c for c in claims.check(cfg, m, None)}["C2-headline-w3a16"]
    assert c.verdict != REPRODUCED and "2" in c.to_dict()["note"]


def test_bad_params_value_names_the_key(cfg):
    bad = {**cfg, "params": {**cfg["params"], "n_calib": 0}}
    with pytest.raises(ConfigError, match="n_calib"):
        check_params(bad, REPO / "config")
    bad = {**cfg, "settings": {"W3A16": {"w_bits": 3, "act_bits": 6}}}
    with pytest.raises(ConfigError, match="act_bits"):
        check_params(bad, REPO / "config")


# ------------------------------------------------------------------ FP training
def _tiny_cfg(cfg, **kw):
    p = {**cfg["params"], "d_model": 16, "heads": 2, "ffn": 16, "lm_blocks": 1,
         "outlier_channels": [1, 5], "n_train": 16, "epochs": 3, "batch": 8, "warmup": 1,
         "loss_every": 2, "n_val": 8, "val_every": 2, **kw}
    return {**cfg, "params": p}


def test_position_embeddings_use_pos_std():
    torch.manual_seed(0)
    m = TinyVLM(d=64, pos_std=1.0)
    assert 0.8 < float(m.vpos.std()) < 1.2 and 0.7 < float(m.tpos.std()) < 1.3
    assert float(TinyVLM(d=64, pos_std=0.02).vpos.std()) < 0.05


def test_fp_training_stops_at_the_validation_target_and_is_deterministic(cfg):
    tr = scenes.generate(np.random.default_rng(0), 16)
    va = scenes.generate(np.random.default_rng(1), 8)
    c = _tiny_cfg(cfg, stop_acc=0.0)                      # any accuracy meets the target
    model, curve, info = experiment.train_fp(c, 0, tr, "cpu", va)
    assert info["steps"] == 2                             # the first validation check
    assert {m for m, _, _ in curve} == {"fp_train_loss", "fp_val_loss", "fp_val_acc"}
    c = _tiny_cfg(cfg, stop_acc=1.01)                     # never met: runs to the step cap
    m1, curve1, info1 = experiment.train_fp(c, 0, tr, "cpu", va)
    assert info1["steps"] == 6 and [s for m, s, _ in curve1 if m == "fp_val_acc"] == [2, 4, 6]
    m2, curve2, _ = experiment.train_fp(c, 0, tr, "cpu", va)
    assert curve1 == curve2
    assert all(torch.equal(a, b) for a, b in zip(m1.parameters(), m2.parameters(),
                                                 strict=True))
