"""Behaviour of the shared tiny-language-model blocks (icml26.lm)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from icml26.errors import ConfigError
from icml26.lm import corpus
from icml26.lm.model import GPT, MLP, CausalSelfAttention, GPTConfig, n_params
from icml26.lm.optim import AdamW, Muon, MuonAdamW, newton_schulz5, warmup_cosine
from icml26.lm.train import eval_loss, eval_windows, sample, token_logprobs, train_lm


def small(vocab=11, **kw):
    return GPTConfig(vocab_size=vocab, context=kw.pop("context", 16), d_model=16, n_heads=2,
                     n_layers=2, **kw)


# --- corpus -------------------------------------------------------------------------------
def test_pydoc_topics_loads_and_provenance_is_stable():
    text = corpus.load_text("pydoc_topics")
    assert len(text) > 100_000 and set(text) <= corpus.PRINTABLE
    p1, p2 = corpus.provenance(text), corpus.provenance(corpus.load_text("pydoc_topics"))
    assert p1 == p2 and len(p1["sha256"]) == 64


def test_stdlib_docstrings_reaches_min_chars():
    text = corpus.stdlib_docstrings(min_chars=200_000)
    assert len(text) >= 200_000


def test_unknown_corpus_source_is_one_clear_error():
    with pytest.raises(ConfigError, match="allowed: pydoc_topics, stdlib_docstrings"):
        corpus.load_text("wikipedia")


def test_char_tokenizer_roundtrip():
    tok = corpus.CharTokenizer("hello world")
    ids = tok.encode("low hello")
    assert tok.decode(ids) == "low hello" and tok.vocab_size == 8
    with pytest.raises(ValueError, match="not in the vocabulary"):
        tok.encode("z")


def test_word_tokenizer_splits_as_specified():
    assert corpus.WordTokenizer.split("Foo_bar 12 x== !!?") == ["foo_bar", "12", "x", "==",
                                                              "!!", "?"]
    tok = corpus.WordTokenizer("a a a b b c", size=2)
    assert tok.words == ["a", "b", "<unk>"]
    assert tok.encode("a c b").tolist() == [0, 2, 1]


def test_split_and_windows():
    tr, va = corpus.split_contiguous(np.arange(10), 0.9)
    assert tr.tolist() == list(range(9)) and va.tolist() == [9]
    assert corpus.windows(np.arange(7), 3).tolist() == [[0, 1, 2], [3, 4, 5]]
    w = eval_windows(np.arange(8), 3)
    assert w.tolist() == [[0, 1, 2, 3], [3, 4, 5, 6]]


# --- model --------------------------------------------------------------------------------
def test_causal_mask_future_tokens_never_change_earlier_logits():
    torch.manual_seed(0)
    model = GPT(small()).eval()
    x = torch.randint(0, 11, (2, 16))
    y = x.clone()
    y[:, 9:] = (y[:, 9:] + 3) % 11
    with torch.no_grad():
        a, b = model(x), model(y)
    assert torch.allclose(a[:, :9], b[:, :9], atol=1e-6)
    assert not torch.allclose(a[:, 9:], b[:, 9:])


def test_pluggable_blocks_are_used():
    calls = []

    def ffn(config, layer):
        calls.append(layer)
        return MLP(config, layer)

    model = GPT(small(), attention=CausalSelfAttention, ffn=ffn)
    assert calls == [0, 1]
    cfg = small()
    # tied embeddings counted once: tok 11*16 + pos 16*16 + 2 blocks + final LN
    per_block = 2 * 32 + (16 * 48 + 48) + (16 * 16 + 16) + (16 * 64 + 64) + (64 * 16 + 16)
    assert n_params(model) == 11 * 16 + cfg.context * 16 + 2 * per_block + 32


def test_loss_falls_on_a_memorisable_string():
    text = "the quick brown fox jumps over the lazy dog. " * 40
    tok = corpus.CharTokenizer(text)
    ids = tok.encode(text)
    torch.manual_seed(0)
    model = GPT(small(vocab=tok.vocab_size, context=32))
    windows = eval_windows(ids, 32)
    before = eval_loss(model, windows)
    opt = AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)
    train_lm(model, opt, ids, steps=300, batch=16, context=32, seed=0, warmup=10)
    after = eval_loss(model, windows)
    assert before > math.log(tok.vocab_size) - 0.3
    assert after < 0.4, (before, after)   # near-deterministic text: loss near 0


def test_training_is_deterministic_from_seed():
    ids = np.arange(500) % 11

    def run():
        torch.manual_seed(1)
        model = GPT(small())
        opt = AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
        curve = train_lm(model, opt, ids, steps=20, batch=4, context=16, seed=5,
                         eval_every=10, eval_fn=lambda m: eval_loss(m, eval_windows(ids, 16)))
        return curve, [p.detach().clone() for p in model.parameters()]

    (c1, p1), (c2, p2) = run(), run()
    assert c1 == c2 and all(torch.equal(a, b) for a, b in zip(p1, p2, strict=True))
    assert [s for s, _ in c1] == [0, 10, 20]


def test_sampling_reproducible_and_respects_nucleus():
    torch.manual_seed(0)
    model = GPT(small())
    prompt = torch.randint(0, 11, (3, 4))
    a = sample(model, prompt, 20, generator=torch.Generator().manual_seed(7), top_p=0.9)
    b = sample(model, prompt, 20, generator=torch.Generator().manual_seed(7), top_p=0.9)
    assert torch.equal(a, b) and a.shape == (3, 24) and torch.equal(a[:, :4], prompt)
    assert model.training                     # sampling restores the caller's mode
    # a peaked distribution with top_p=0.5 always picks the top token
    with torch.no_grad():
        model.head.weight.mul_(0)
    model.config = small(tied=False)
    lp = token_logprobs(model, prompt)
    assert torch.allclose(lp.exp().sum(-1), torch.ones(3, 4))


def test_nucleus_keeps_only_top_mass():
    class Fixed(torch.nn.Module):
        config = small(vocab=4)

        def forward(self, idx):
            logits = torch.log(torch.tensor([0.6, 0.3, 0.08, 0.02]))
            return logits.expand(idx.shape[0], idx.shape[1], 4)

    seq = sample(Fixed(), torch.zeros(2000, 1, dtype=torch.long), 1,
                 generator=torch.Generator().manual_seed(0), top_p=0.85)
    counts = torch.bincount(seq[:, 1], minlength=4).float() / 2000
    assert counts[2] == 0 and counts[3] == 0          # 0.6 + 0.3 reaches 0.85
    assert abs(counts[0] - 2 / 3) < 0.04


# --- optimizers ---------------------------------------------------------------------------
def test_warmup_cosine_values():
    assert warmup_cosine(0, 100, 10, 0.1) == pytest.approx(0.1)
    assert warmup_cosine(9, 100, 10, 0.1) == pytest.approx(1.0)
    assert warmup_cosine(99, 100, 10, 0.1) == pytest.approx(0.1)
    assert warmup_cosine(10 + 89 // 2, 100, 10, 0.1) == pytest.approx(0.55, abs=0.02)


def test_adamw_matches_torch_optim():
    torch.manual_seed(0)
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    w2, b2 = w.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    ours = AdamW([w, b], lr=0.01, betas=(0.9, 0.95), weight_decay=0.1, decay=[True, True])
    ref = torch.optim.AdamW([w2, b2], lr=0.01, betas=(0.9, 0.95), weight_decay=0.1)
    x = torch.randn(8, 5)
    for _ in range(5):
        for params, opt in (((w, b), ours), ((w2, b2), ref)):
            opt.zero_grad()
            ((x @ params[0] + params[1]) ** 2).sum().backward()
            opt.step()
    assert torch.allclose(w, w2, atol=1e-6) and torch.allclose(b, b2, atol=1e-6)


def test_newton_schulz_orthogonalises():
    torch.manual_seed(0)
    for shape in ((8, 20), (20, 8)):
        g = torch.randn(*shape)
        x = newton_schulz5(g)
        assert x.shape == g.shape
        s = torch.linalg.svdvals(x)
        assert s.min() > 0.5 and s.max() < 1.3          # NS5 lands in roughly [0.7, 1.2]
        u, _, vh = torch.linalg.svd(g, full_matrices=False)
        cos = (x * (u @ vh)).sum() / (x.norm() * (u @ vh).norm())
        assert cos > 0.97                                # same direction as U V^T


def test_muon_step_is_its_definition():
    torch.manual_seed(0)
    w = torch.randn(6, 3, requires_grad=True)
    w0 = w.detach().clone()
    opt = Muon([w], lr=0.1, momentum=0.95, weight_decay=0.01)
    g1, g2 = torch.randn(6, 3), torch.randn(6, 3)
    w.grad = g1.clone()
    opt.step()
    w.grad = g2.clone()
    opt.step(scale=0.5)
    m1 = g1
    w1 = w0 - 0.1 * (newton_schulz5(g1 + 0.95 * m1) * math.sqrt(2) + 0.01 * w0)
    m2 = 0.95 * m1 + g2
    w2 = w1 - 0.05 * (newton_schulz5(g2 + 0.95 * m2) * math.sqrt(2) + 0.01 * w1)
    assert torch.allclose(w.detach(), w2, atol=1e-6)
    with pytest.raises(ValueError, match="2-D"):
        Muon([torch.zeros(3, requires_grad=True)], lr=0.1)


def test_muon_adamw_routing_and_deepcopy_independence():
    model = GPT(small())
    opt = MuonAdamW(model, lr=0.02, adamw_lr=1e-3)
    hidden = {id(p) for p in opt.muon.params}
    names = {n for n, p in model.named_parameters() if id(p) in hidden}
    assert names and all(n.startswith("blocks.") and n.endswith("weight") for n in names)
    assert not any("ln" in n for n in names)
    assert len(opt.params) == len(list(model.parameters()))
    twin = copy.deepcopy((model, opt))
    x = torch.randint(0, 11, (2, 16))
    twin[0](x).sum().backward()
    twin[1].step()
    assert all(float(m.abs().sum()) == 0 for m in opt.muon.m)


def test_stdlib_docstrings_do_not_depend_on_what_was_imported():
    import subprocess
    import sys

    code = ("import hashlib; from icml26.lm.corpus import stdlib_docstrings as s; "
            "print(hashlib.sha256(s().encode()).hexdigest())")
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    loaded = subprocess.run([sys.executable, "-c", "import logging.handlers, email.mime.text; "
                             + code], capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout == loaded.stdout


def test_kv_cache_view_equals_the_full_forward_and_sampling():
    from icml26.lm.model import KVCachedGPT, MathCausalAttention

    torch.manual_seed(0)
    m = GPT(GPTConfig(vocab_size=11, context=16, d_model=16, n_heads=2, n_layers=2)).eval()
    idx = torch.randint(0, 11, (3, 12))
    view = KVCachedGPT(m)
    assert torch.allclose(view(idx[:, :5]), m(idx[:, :5])[:, -1:], atol=1e-5)
    for t in range(6, 13):  # one new token per call, as in sampling
        assert torch.allclose(view(idx[:, :t]), m(idx[:, :t])[:, -1:], atol=1e-5)
    with pytest.raises(ValueError, match="grow within the context"):
        view(idx[:, :12])                       # did not grow
    draws = [sample(m, idx[:, :4], 8, generator=torch.Generator().manual_seed(3),
                    temperature=0.9, top_p=0.95, kv_cache=kv) for kv in (False, True)]
    assert torch.equal(draws[0], draws[1])
    with pytest.raises(ValueError, match="exceed the context 16"):
        sample(m, idx[:, :10], 7, generator=torch.Generator(), kv_cache=True)
    # the math attention (same function) is accepted; another block is refused
    KVCachedGPT(GPT(m.config, attention=MathCausalAttention))

    class Other(torch.nn.Module):
        def __init__(self, config, layer):
            super().__init__()

        def forward(self, x):
            return x

    with pytest.raises(TypeError, match="CausalSelfAttention"):
        KVCachedGPT(GPT(m.config, attention=Other))


# --- Muon: the MuLoCo authors' options (opt-in; the defaults above are unchanged) -----------
def test_newton_schulz_per_step_coefficients_end_near_one():
    from icml26.lm.optim import NS_COEFFS_PER_STEP

    torch.manual_seed(0)
    for shape in ((8, 20), (20, 8)):
        g = torch.randn(*shape)
        s = torch.linalg.svdvals(newton_schulz5(g, coeffs=NS_COEFFS_PER_STEP))
        assert s.min() > 0.97 and s.max() < 1.16       # the fixed triple: ~[0.7, 1.2]
        fixed = torch.linalg.svdvals(newton_schulz5(g))
        assert fixed.min() < 0.9                         # ... which leaves some well below 1
    with pytest.raises(ValueError, match="5 \\(a, b, c\\) triples"):
        newton_schulz5(torch.randn(3, 4), coeffs=NS_COEFFS_PER_STEP[:4])


def _ns_scalar(s: float, coeffs) -> float:
    """Newton-Schulz on one singular value: s <- a s + b s^3 + c s^5 per iteration."""
    for a, b, c in coeffs:
        s = a * s + b * s ** 3 + c * s ** 5
    return s


def test_muon_plain_momentum_spectral_scale_hand_case():
    """A (3, 6) matrix whose gradients have equal singular values, so NS is a scalar map:
    E1 = [I | 0], E2 = [0 | I]; g1 = E1, g2 = E2. Plain momentum orthogonalises
    M2 = 0.9 E1 + E2 (Nesterov would take g2 + 0.9 M2); the spectral scale is sqrt(3/6)."""
    from icml26.lm.optim import NS_COEFFS_PER_STEP

    e1 = torch.cat([torch.eye(3), torch.zeros(3, 3)], dim=1)
    e2 = torch.cat([torch.zeros(3, 3), torch.eye(3)], dim=1)
    w = torch.full((3, 6), 0.5, requires_grad=True)
    w0 = w.detach().clone()
    opt = Muon([w], lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=False,
               scale="spectral", coeffs=NS_COEFFS_PER_STEP)
    w.grad = e1.clone()
    opt.step()
    w.grad = e2.clone()
    opt.step(scale=0.5)
    # X = M / ||M||_F has all three singular values 1/sqrt(3) in both steps
    phi = _ns_scalar(1 / math.sqrt(3), NS_COEFFS_PER_STEP)
    assert 0.97 < phi < 1.16
    w1 = w0 - 0.1 * (phi * e1 * math.sqrt(0.5) + 0.01 * w0)
    m2 = 0.9 * e1 + e2
    w2 = w1 - 0.05 * (phi * m2 / math.sqrt(1.81) * math.sqrt(0.5) + 0.01 * w1)
    assert torch.allclose(w.detach(), w2, atol=1e-5)
    # the default (Nesterov, max1 = 1 for a wide matrix, fixed triple) is another step
    v = w0.clone().requires_grad_(True)
    ref = Muon([v], lr=0.1, momentum=0.9, weight_decay=0.01)
    v.grad = e1.clone()
    ref.step()
    assert not torch.allclose(v.detach(), w1, atol=1e-3)
    with pytest.raises(ValueError, match="unknown Muon scale"):
        Muon([torch.zeros(2, 2, requires_grad=True)], lr=0.1, scale="rms")


def test_muon_adamw_passes_options_and_decays_every_param():
    from icml26.lm.optim import NS_COEFFS_PER_STEP

    model = GPT(small())
    opt = MuonAdamW(model, lr=0.02, adamw_lr=0.02, nesterov=False, scale="spectral",
                    coeffs=NS_COEFFS_PER_STEP, adamw_weight_decay=0.1, adamw_decay_all=True)
    assert (opt.muon.nesterov, opt.muon.scale) == (False, "spectral")
    assert opt.muon.coeffs == [tuple(c) for c in NS_COEFFS_PER_STEP]
    assert all(opt.adamw.decay) and any(p.ndim == 1 for p in opt.adamw.params)
    default = MuonAdamW(model, lr=0.02, adamw_lr=1e-3)
    assert not all(default.adamw.decay)                 # matrices only, as before
    assert (default.muon.nesterov, default.muon.scale, default.muon.coeffs) == (True, "max1",
                                                                                None)
