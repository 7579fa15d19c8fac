"""icml26.lm.grpo: the arithmetic task and its verifiers, group advantages computed by hand,
the clipped loss on a tiny case by hand (and its gradient against autograd), group sampling
from a GPT against the model's own distribution."""

import math

import numpy as np
import pytest
import torch

from icml26.lm import grpo
from icml26.lm.model import GPT, GPTConfig


def test_task_prompts_answers_and_exact_checker():
    t = grpo.ArithmeticTask(4)
    p = t.prompts()
    assert p.shape == (16, 2) and p[5].tolist() == [1, 1] and p[15].tolist() == [3, 3]
    assert t.vocab == 7 and t.n_tokens == 1
    assert t.answer(p).tolist() == [a + b for a in range(4) for b in range(4)]
    tok = t.encode(np.array([6, 0]))
    assert tok.tolist() == [[6], [0]]
    assert t.check(np.array([[3, 3], [1, 2]]), tok).tolist() == [True, False]


def test_task_digits_round_trip():
    t = grpo.ArithmeticTask(32, digits=2)
    assert t.vocab == 10 and t.n_tokens == 2
    assert t.encode(np.array([62, 7, 40])).tolist() == [[6, 2], [0, 7], [4, 0]]
    assert t.decode(np.array([[6, 2], [0, 7]])).tolist() == [62, 7]
    assert t.check(np.array([[31, 31]]), np.array([[6, 2]])).tolist() == [True]
    with pytest.raises(ValueError):
        grpo.ArithmeticTask(60, digits=1)


def test_noisy_reward_false_positive_rate():
    correct = np.array([True, False, False, True])
    u = np.array([0.01, 0.10, 0.20, 0.99])
    assert grpo.ArithmeticTask.noisy_reward(correct, 0.15, u).tolist() == [1, 1, 0, 1]
    rng = np.random.default_rng(0)
    r = grpo.ArithmeticTask.noisy_reward(np.zeros(200_000, bool), 0.15, rng.random(200_000))
    assert abs(r.mean() - 0.15) < 0.005


def test_group_advantages_by_hand_and_zero_variance_group():
    r = np.array([[1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 0.0]])
    a = grpo.group_advantages(r, eps=1e-6)
    # group 0: mean 0.5, s.d. 0.5; group 1: s.d. 0 -> all zero; group 2: mean 0.25,
    # s.d. sqrt(3)/4
    assert np.allclose(a[0], np.array([1, -1, -1, 1]) * 0.5 / (0.5 + 1e-6))
    assert np.array_equal(a[1], np.zeros(4))
    s = math.sqrt(3) / 4
    assert np.allclose(a[2], (np.array([0.75, -0.25, -0.25, -0.25])) / (s + 1e-6))
    # sample s.d. (ddof 1) for group 0: sqrt(1/3)
    a1 = grpo.group_advantages(r, ddof=1)
    assert np.allclose(a1[0], np.array([1, -1, -1, 1]) * 0.5 / (math.sqrt(1 / 3) + 1e-6))
    at = grpo.group_advantages(torch.tensor(r), eps=1e-6)
    assert np.allclose(at.numpy(), a)
    assert grpo.informative_groups(r).tolist() == [True, False, True]
    assert grpo.informative_groups(torch.tensor(r)).tolist() == [True, False, True]


def test_clipped_loss_on_a_tiny_case_by_hand():
    logp_old = torch.log(torch.tensor([0.5, 0.5, 0.5, 0.5]))
    # ratios 1.5, 0.5, 1.1, 0.7 with advantages +1, -1, +2, +1
    logp = logp_old + torch.log(torch.tensor([1.5, 0.5, 1.1, 0.7]))
    adv = torch.tensor([1.0, -1.0, 2.0, 1.0])
    # terms: min(1.5, 1.2) = 1.2; min(-0.5, -0.8) = -0.8; min(2.2, 2.2) = 2.2; min(0.7, 0.8) = 0.7
    loss = grpo.clipped_pg_loss(logp, logp_old, adv, clip=0.2)
    assert float(loss) == pytest.approx(-(1.2 - 0.8 + 2.2 + 0.7) / 4, abs=1e-6)
    w = torch.tensor([1.0, 0.0, 1.0, 0.0])
    assert float(grpo.clipped_pg_loss(logp, logp_old, adv, weights=w)) == pytest.approx(
        -(1.2 + 2.2) / 2, abs=1e-6)
    # KL (k3) to a reference equal to logp_old: d = -log rho, k3 = 1/rho + log rho - 1
    rho = np.array([1.5, 0.5, 1.1, 0.7])
    k3 = (1 / rho + np.log(rho) - 1).mean()
    got = grpo.clipped_pg_loss(logp, logp_old, adv, kl_coef=0.1, logp_ref=logp_old)
    assert float(got) == pytest.approx(-(1.2 - 0.8 + 2.2 + 0.7) / 4 + 0.1 * k3, abs=1e-6)
    # leading axes are kept: two runs side by side give their own losses
    two = grpo.clipped_pg_loss(torch.stack([logp, logp]), torch.stack([logp_old, logp_old]),
                               torch.stack([adv, -adv]))
    assert two.shape == (2,) and float(two[0]) == pytest.approx(float(loss), abs=1e-7)


def test_logit_grad_matches_autograd():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(6, 5, generator=g, dtype=torch.float64, requires_grad=True)
    actions = torch.tensor([0, 1, 2, 3, 4, 0])
    adv = torch.tensor([1.0, -1.0, 0.5, -2.0, 1.5, 0.0], dtype=torch.float64)
    logp_old = torch.tensor([-1.0, -3.0, -1.2, -0.2, -2.5, -1.0], dtype=torch.float64)
    logp = torch.log_softmax(z, -1).gather(-1, actions[:, None])[:, 0]
    ratio = torch.exp(logp - logp_old)
    # the summed (not averaged) clipped terms, whose per-row gradient is each row's own
    term = torch.minimum(ratio * adv, ratio.clamp(0.8, 1.2) * adv).sum()
    (grad,) = torch.autograd.grad(term, z)
    mine = grpo.clipped_pg_logit_grad(torch.softmax(z, -1).detach(), actions, adv,
                                      ratio.detach(), clip=0.2)
    assert torch.allclose(grad, mine, atol=1e-12)
    assert (ratio > 1.2).any() or (ratio < 0.8).any()  # the case exercises a binding clip


def _gpt(seed=0, vocab=6):
    torch.manual_seed(seed)
    return GPT(GPTConfig(vocab_size=vocab, context=8, d_model=16, n_heads=2, n_layers=1))


def test_sample_groups_logprobs_and_frequencies():
    model = _gpt()
    with torch.no_grad():   # a sharp, non-uniform next-token distribution
        model.head.weight.mul_(40.0)
    prompts = torch.tensor([[1, 2, 3], [4, 0, 5]])
    gen = torch.Generator().manual_seed(1)
    comp, logp_old = grpo.sample_groups(model, prompts, 4000, 1, generator=gen)
    assert comp.shape == (2, 4000, 1) and logp_old.shape == (2, 4000)
    probs = torch.softmax(model(prompts)[:, -1], -1).detach()
    for i in range(2):
        freq = torch.bincount(comp[i, :, 0], minlength=6).double() / 4000
        assert torch.allclose(freq, probs[i].double(), atol=0.03)
        assert torch.allclose(logp_old[i], torch.log(probs[i][comp[i, :, 0]]), atol=1e-5)
    # multi-token completions: the stored log-prob is the differentiable one, summed
    gen = torch.Generator().manual_seed(2)
    comp, logp_old = grpo.sample_groups(model, prompts, 3, 2, generator=gen)
    flat = comp.reshape(6, 2)
    rows = prompts.repeat_interleave(3, dim=0)
    lp = grpo.completion_logprob(model, rows, flat)
    assert lp.requires_grad
    assert torch.allclose(lp.detach(), logp_old.reshape(6), atol=1e-5)
    # same generator seed -> same completions
    again, _ = grpo.sample_groups(model, prompts, 3, 2, generator=torch.Generator().manual_seed(2))
    assert torch.equal(again, comp)


def _bandit_grpo(q: float, sign: float = 1.0, steps: int = 300, epochs: int = 2) -> float:
    """GRPO on a one-step bandit: a softmax over 4 answer tokens (logits start at 0, so the
    expected reward is 0.25), reward 1 for token 2 (noisy verifier with false-positive rate q),
    16 groups of 8 samples per step, ``epochs`` clipped updates per batch (the second one runs at
    ratio != 1), Adam lr 0.05. Returns the final probability of the rewarded token."""
    from icml26.rl.optim import Adam

    gen = torch.Generator().manual_seed(0)
    rng = np.random.default_rng(0)
    z = torch.zeros(4, requires_grad=True)
    opt = Adam([z], lr=0.05)
    for _ in range(steps):
        with torch.no_grad():
            probs = torch.softmax(z, -1)
            act = torch.multinomial(probs.expand(16, 4), 8, replacement=True, generator=gen)
            logp_old = torch.log(probs)[act]
        correct = (act == 2).numpy()
        r = grpo.ArithmeticTask.noisy_reward(correct, q, rng.random(correct.shape))
        adv = sign * grpo.group_advantages(torch.as_tensor(r, dtype=torch.float32))
        for _ in range(epochs):
            logp = torch.log_softmax(z, -1)[act]
            loss = grpo.clipped_pg_loss(logp.reshape(-1), logp_old.reshape(-1), adv.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
    return float(torch.softmax(z.detach(), -1)[2])


def test_grpo_learns_a_bandit():
    """Group advantages + the clipped loss must drive the expected reward from 0.25 to ~1, with
    a clean and with a noisy verifier (E[reward] = q + (1 - q) P(correct) stays monotone); the
    same loop with the advantage sign flipped must drive it to ~0 (the test can fail)."""
    assert _bandit_grpo(0.0) > 0.97
    assert _bandit_grpo(0.15) > 0.97
    assert _bandit_grpo(0.0, sign=-1.0) < 0.02


def test_grpo_learns_with_a_gpt_policy():
    """The shared pieces end to end on a GPT: sample_groups (behaviour log-probs), the
    verifier, group advantages and completion_logprob inside the clipped loss. Four prompts,
    each rewarded for one answer token (false positives at q = 0.15); the expected reward under
    the GPT's softmax must rise from ~0.17 to > 0.9 within 80 steps."""
    from icml26.rl.optim import Adam

    model = _gpt()
    opt = Adam(list(model.parameters()), lr=0.015)
    gen = torch.Generator().manual_seed(1)
    rng = np.random.default_rng(0)
    prompts = torch.tensor([[1, 2, 3], [4, 0, 5], [2, 2, 1], [5, 1, 0]])
    target = prompts.sum(1) % 6
    G = 12

    def expected_reward():
        with torch.no_grad():
            return float(torch.softmax(model(prompts)[:, -1], -1)[torch.arange(4), target].mean())

    assert expected_reward() < 0.3
    for _ in range(80):
        comp, logp_old = grpo.sample_groups(model, prompts, G, 1, generator=gen)
        correct = (comp[..., 0] == target[:, None]).numpy()
        r = grpo.ArithmeticTask.noisy_reward(correct, 0.15, rng.random(correct.shape))
        adv = grpo.group_advantages(torch.as_tensor(r, dtype=torch.float32))
        logp = grpo.completion_logprob(model, prompts.repeat_interleave(G, 0),
                                       comp.reshape(-1, 1))
        loss = grpo.clipped_pg_loss(logp, logp_old.reshape(-1), adv.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert expected_reward() > 0.9


def test_logprob_at_the_sampling_temperature_gives_ratio_one():
    """At temperature 0.5 the behaviour log-probs of sample_groups are those of
    softmax(logits / 0.5); completion_logprob at the same temperature reproduces them (the first
    clipped update is on-policy, ratio 1), and at the default temperature 1 it does not."""
    model = _gpt(3)
    prompts = torch.tensor([[1, 2, 3], [4, 0, 5]])
    comp, logp_old = grpo.sample_groups(model, prompts, 5, 2, generator=torch.Generator()
                                        .manual_seed(4), temperature=0.5)
    rows, flat = prompts.repeat_interleave(5, dim=0), comp.reshape(10, 2)
    lp = grpo.completion_logprob(model, rows, flat, temperature=0.5).detach()
    assert torch.allclose(lp, logp_old.reshape(10), atol=1e-5)
    lp1 = grpo.completion_logprob(model, rows, flat).detach()
    assert not torch.allclose(lp1, logp_old.reshape(10), atol=1e-3)
