"""Reinforcement learning with verifiable rewards: a seeded task with an exact checker and the
GRPO pieces (group-normalised advantages, the clipped policy-gradient loss, group sampling).

- ``ArithmeticTask``: prompts (a, b) with operands in 0..n-1 and the exact answer a + b,
  written as one token (vocabulary 0..2n-2) or as decimal digits, most significant first
  (``digits=k``: k tokens in 0..9, zero-padded). ``check`` is the exact verifier;
  ``noisy_reward`` adds a verifier that also accepts a wrong answer with probability ``q``
  (false positives), drawn independently at every check. numpy only.
- ``group_advantages``: A = (r - mean_group) / (std_group + eps) over the last axis (one group
  of completions per prompt). A group whose rewards are all equal has std 0 and advantage
  exactly 0 for every member: it carries no learning signal (``informative_groups`` marks the
  others). Works on numpy arrays and torch tensors alike.
- ``clipped_pg_loss``: the PPO/GRPO surrogate -mean_i min(rho_i A_i, clip(rho_i, 1-c, 1+c) A_i),
  rho = exp(logp - logp_old), with optional per-sample weights (a selection of rollouts) and an
  optional KL penalty to a reference policy (the k3 estimator of GRPO, exp(d) - d - 1 with
  d = logp_ref - logp). Leading axes are kept (e.g. runs stacked side by side), the mean runs
  over the last axis. torch.
- ``clipped_pg_logit_grad``: the closed-form gradient of one sample's clipped term
  min(rho A, clip(rho) A) with respect to the logits of a categorical policy,
  A rho (onehot - pi) where the clip is inactive, 0 where it is active: the per-sample
  gradient of a softmax output layer is this vector times the layer's input. torch.
- ``sample_groups``, ``completion_logprob``: G completions per prompt from a ``GPT`` (icml26.lm)
  with the behaviour log-probabilities, and the differentiable log-probability of given
  completions (both at the sampling temperature, so the first ratio is exactly 1). torch.

torch is imported inside the torch functions only, so numpy papers can use the task and the
advantages without paying for it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# ------------------------------------------------------------------------------------------
# the task and its verifier
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ArithmeticTask:
    """a + b with a, b in 0..n_operands-1. ``digits=0``: the answer is one token (vocabulary
    2 n_operands - 1); ``digits=k``: k decimal digit tokens, most significant first."""

    n_operands: int = 16
    digits: int = 0

    def __post_init__(self):
        if self.n_operands < 1:
            raise ValueError(f"n_operands must be >= 1, got {self.n_operands}")
        if self.digits and 10 ** self.digits <= 2 * (self.n_operands - 1):
            raise ValueError(f"{self.digits} digits cannot write {2 * (self.n_operands - 1)}")

    @property
    def n_tokens(self) -> int:
        """Tokens per answer."""
        return self.digits if self.digits else 1

    @property
    def vocab(self) -> int:
        """Answer-token vocabulary size."""
        return 10 if self.digits else 2 * self.n_operands - 1

    def prompts(self) -> np.ndarray:
        """Every prompt (a, b), shape (n^2, 2), a major."""
        a, b = np.divmod(np.arange(self.n_operands ** 2), self.n_operands)
        return np.stack([a, b], axis=1)

    def sample_prompts(self, rng: np.random.Generator, n: int, pool=None) -> np.ndarray:
        """``n`` distinct prompt indices drawn uniformly from ``pool`` (default: all)."""
        pool = np.arange(self.n_operands ** 2) if pool is None else np.asarray(pool)
        return pool[rng.choice(len(pool), size=n, replace=False)]

    def answer(self, prompts) -> np.ndarray:
        """The correct answer a + b of prompts (..., 2)."""
        p = np.asarray(prompts)
        return p[..., 0] + p[..., 1]

    def encode(self, answers) -> np.ndarray:
        """Answers (...) -> tokens (..., n_tokens)."""
        x = np.asarray(answers, dtype=np.int64)
        if not self.digits:
            return x[..., None]
        powers = 10 ** np.arange(self.digits - 1, -1, -1)
        return (x[..., None] // powers) % 10

    def decode(self, tokens) -> np.ndarray:
        """Tokens (..., n_tokens) -> answers (...)."""
        t = np.asarray(tokens, dtype=np.int64)
        if not self.digits:
            return t[..., 0]
        return t @ (10 ** np.arange(self.digits - 1, -1, -1))

    def check(self, prompts, tokens) -> np.ndarray:
        """The exact verifier: True where the completion's answer equals a + b."""
        return self.decode(tokens) == self.answer(prompts)

    @staticmethod
    def noisy_reward(correct, q: float, uniforms) -> np.ndarray:
        """Reward 1 for a correct answer; a wrong one is accepted (reward 1) where its uniform
        is below ``q``: a false positive. E[reward] = q + (1 - q) P(correct) stays monotone in
        correctness. ``uniforms`` has the shape of ``correct`` (one draw per check)."""
        correct = np.asarray(correct, bool)
        return (correct | (np.asarray(uniforms) < q)).astype(np.float64)


# ------------------------------------------------------------------------------------------
# GRPO pieces
# ------------------------------------------------------------------------------------------
def group_advantages(rewards, eps: float = 1e-6, ddof: int = 0):
    """(r - mean) / (std + eps) over the last axis (the group of one prompt); ``ddof`` 0 is the
    population s.d. A zero-variance group gets advantage 0 exactly. numpy or torch input."""
    if isinstance(rewards, np.ndarray):
        mean = rewards.mean(axis=-1, keepdims=True)
        std = rewards.std(axis=-1, ddof=ddof, keepdims=True)
    else:
        mean = rewards.mean(dim=-1, keepdim=True)
        std = rewards.std(dim=-1, correction=ddof, keepdim=True)
    return (rewards - mean) / (std + eps)


def informative_groups(rewards):
    """True for groups (last axis) whose rewards are not all equal: the only ones with a
    nonzero advantage (DAPO's dynamic sampling keeps these)."""
    if isinstance(rewards, np.ndarray):
        return rewards.max(axis=-1) > rewards.min(axis=-1)
    return rewards.amax(dim=-1) > rewards.amin(dim=-1)


def clipped_pg_loss(logp, logp_old, adv, clip: float = 0.2, weights=None,
                    kl_coef: float = 0.0, logp_ref=None):
    """The clipped surrogate to minimise, averaged over the last axis (leading axes kept).

    term_i = min(rho_i A_i, clip(rho_i, 1 - clip, 1 + clip) A_i), rho_i = exp(logp_i - logp_old_i);
    loss = -sum_i w_i term_i / sum_i w_i (+ kl_coef * sum_i w_i k3_i / sum_i w_i), with
    k3_i = exp(logp_ref_i - logp_i) - (logp_ref_i - logp_i) - 1 >= 0. Weights default to 1; a
    row whose weights are all 0 gives loss 0.
    """
    import torch

    ratio = torch.exp(logp - logp_old)
    term = torch.minimum(ratio * adv, ratio.clamp(1.0 - clip, 1.0 + clip) * adv)
    w = torch.ones_like(term) if weights is None else weights.to(term.dtype)
    denom = w.sum(dim=-1).clamp(min=1e-12)
    loss = -(w * term).sum(dim=-1) / denom
    if kl_coef:
        if logp_ref is None:
            raise ValueError("kl_coef > 0 needs logp_ref")
        d = logp_ref - logp
        loss = loss + kl_coef * (w * (torch.exp(d) - d - 1.0)).sum(dim=-1) / denom
    return loss


def clipped_pg_logit_grad(probs, actions, adv, ratio=None, clip: float = 0.2):
    """d/dz of min(rho A, clip(rho) A) for a softmax policy pi = softmax(z) (ascent direction).

    probs (..., V), actions (...) long, adv (...), ratio (...) (default 1: fresh samples).
    Where the clip binds (rho > 1 + c with A > 0, or rho < 1 - c with A < 0) the term is flat
    and the gradient 0; elsewhere it is A rho (onehot(action) - pi).
    """
    import torch

    if ratio is None:
        ratio = torch.ones_like(adv)
    active = ~(((ratio > 1.0 + clip) & (adv > 0)) | ((ratio < 1.0 - clip) & (adv < 0)))
    onehot = torch.nn.functional.one_hot(actions, probs.shape[-1]).to(probs.dtype)
    return (active.to(probs.dtype) * adv * ratio)[..., None] * (onehot - probs)


def completion_logprob(model, prompts, completions, temperature: float = 1.0):
    """Sum of log p(completion token | prefix) per row, differentiable (model's mode kept),
    under the policy softmax(logits / temperature): pass the sampling temperature of
    ``sample_groups`` so that the importance ratio against its ``logp_old`` starts at 1.

    prompts (B, P) and completions (B, T) token ids on the model's device -> (B,)."""
    import torch
    import torch.nn.functional as F

    seq = torch.cat([prompts, completions], dim=1)
    logits = model(seq[:, :-1])[:, prompts.shape[1] - 1:] / temperature
    logp = F.log_softmax(logits, dim=-1)
    return logp.gather(-1, completions[..., None])[..., 0].sum(dim=-1)


def sample_groups(model, prompts, group_size: int, n_new: int, *, generator,
                  temperature: float = 1.0):
    """``group_size`` completions of ``n_new`` tokens per prompt from a GPT, and their
    behaviour log-probabilities under the sampling temperature's policy (the same as
    ``completion_logprob(..., temperature=temperature)`` before any update).

    prompts (B, P) token ids (equal lengths) -> (completions (B, G, n_new),
    logp_old (B, G)), both on the model's device; the uniforms come from ``generator``
    (``icml26.lm.train.sample``)."""
    import torch

    from .train import device_of, sample

    b, p = prompts.shape
    dev = device_of(model)
    rows = prompts.to(dev).repeat_interleave(group_size, dim=0)
    seq = sample(model, rows, n_new, generator=generator, temperature=temperature)
    completions = seq[:, p:]
    was_training = model.training
    model.eval()
    with torch.no_grad():
        logits = model(seq[:, :-1])[:, p - 1:] / temperature
        logp = torch.log_softmax(logits, dim=-1).gather(-1, completions[..., None])[..., 0]
    model.train(was_training)
    return completions.reshape(b, group_size, n_new), logp.sum(dim=-1).reshape(b, group_size)
