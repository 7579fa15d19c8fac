"""Telescope Perplexity and the zero-shot baselines, as closed-form statistics of log-probs (torch).

A text is ``ids`` of shape (N, T): an 8-token prompt then the scored continuation, positions
``start .. T-1`` (start = 8). One forward pass of a causal LM over the T tokens gives, at every
position j, the log-distribution ``lp[:, j]`` = log p(. | s_0 .. s_j) over the next token.

- Next-token log-prob of continuation token s_i: ``lp[:, i-1, s_i]`` (i = start .. T-1).
- Telescope probability of s_i: ``lp[:, i, s_i]`` = log p(s_i | s_0 .. s_i), the mass the model
  puts on the token it has just read appearing again (an immediate repeat).
Both are one gather from the same pass.

Every detector returns a raw statistic per text and has a fixed orientation ``sign`` (+1: higher
means machine, -1: lower means machine), chosen a priori and never flipped on data; ``sign * raw``
is the machine-ness score used for AUROC. Telescope, perplexity (LogLik), Binoculars,
DetectLLM LRR and Fast-DetectGPT take the orientations of the authors' scoring script
(ChrisNassif/Telescope, scripts/compute_roc_and_f1score_from_metrics.py: only perplexity and
the Binoculars score are negated, label 1 = machine); the others follow the spec.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


# --------------------------------------------------------------------------------------------
# gathers from one log-prob tensor lp (N, T, V) of the scorer on ids (N, T)
# --------------------------------------------------------------------------------------------
def next_token_logp(lp: torch.Tensor, ids: torch.Tensor, start: int) -> torch.Tensor:
    """log p(s_i | s_<i) for the continuation tokens, (N, T - start)."""
    return lp[:, start - 1 : -1].gather(-1, ids[:, start:, None])[..., 0]


def telescope_logp(lp: torch.Tensor, ids: torch.Tensor, start: int) -> torch.Tensor:
    """log tau_i = log p(s_i | s_<=i) for the continuation tokens, (N, T - start)."""
    return lp[:, start:].gather(-1, ids[:, start:, None])[..., 0]


def predictive(lp: torch.Tensor, start: int) -> torch.Tensor:
    """The next-token log-distributions that predict the continuation tokens, (N, n, V)."""
    return lp[:, start - 1 : -1]


def log_ppl(lp, ids, start) -> torch.Tensor:
    """log PPL(x) = -(1/n) sum_i log p(s_i | s_<i) over the n continuation tokens."""
    return -next_token_logp(lp, ids, start).mean(1)


def log_tppl(lp, ids, start) -> torch.Tensor:
    """log TPPL(x) = -(1/n) sum_i log tau_i over the n continuation tokens."""
    return -telescope_logp(lp, ids, start).mean(1)


# --------------------------------------------------------------------------------------------
# the statistics: lps maps a model role ("scorer", "performer") to its log-prob tensor
# --------------------------------------------------------------------------------------------
def telescope(lps, ids, start):
    """Telescope: log TPPL(x) = mean_i -log p(s_i | s_<=i), the plain mean cross-entropy of the
    current token under the scorer's next-token distribution, not exponentiated and not divided
    by anything (official: llm_text_detectors.py, ``_compute_telescope_perplexity``). Higher ->
    machine (the official scoring script does not negate it)."""
    return log_tppl(lps["scorer"], ids, start)


def telescope_ratio(lps, ids, start):
    """Variant "Telescope-ratio": T(x) = log PPL(x) / log TPPL(x), the spec's INFERRED decision
    statistic (it appears nowhere in the authors' code). Lower -> machine."""
    lp = lps["scorer"]
    return log_ppl(lp, ids, start) / log_tppl(lp, ids, start)


def loglik(lps, ids, start):
    """Mean log-likelihood of the continuation (Solaiman et al.; GLTR). Higher -> machine."""
    return next_token_logp(lps["scorer"], ids, start).mean(1)


def logrank(lps, ids, start):
    """-mean log rank of each token (rank 1 = the most probable token; ties count in the
    token's favour). Higher -> machine."""
    lp = lps["scorer"]
    target = next_token_logp(lp, ids, start)
    rank = 1 + (predictive(lp, start) > target[..., None]).sum(-1)
    return -torch.log(rank.to(lp.dtype)).mean(1)


def entropy(lps, ids, start):
    """Mean predictive entropy H(p(. | s_<i)) over the continuation. Lower -> machine."""
    q = predictive(lps["scorer"], start)
    return -(q.exp() * q).sum(-1).mean(1)


def fast_detectgpt(lps, ids, start):
    """Analytic Fast-DetectGPT (Bao et al. 2024), sampling model = scoring model:
    (sum_i log p_i - sum_i mu_i) / sqrt(sum_i sigma_i^2) with mu_i = E_{v~p_i}[log p_i(v)] and
    sigma_i^2 = Var_{v~p_i}[log p_i(v)]. Higher -> machine."""
    lp = lps["scorer"]
    q = predictive(lp, start)
    p = q.exp()
    mu = (p * q).sum(-1)
    var = (p * q * q).sum(-1) - mu * mu
    return (next_token_logp(lp, ids, start).sum(1) - mu.sum(1)) / var.sum(1).sqrt()


def binoculars(lps, ids, start):
    """Binoculars (Hans et al. 2024): log PPL_S(x) / X-PPL with X-PPL = mean_i of
    -sum_v p_P(v | s_<i) log p_S(v | s_<i). In the authors' roles (llm_text_detectors.py,
    ``compute_binoculars_score``) the scorer S is the *performer* (it gives the perplexity and
    the log-probabilities of the cross-entropy) and P the *observer* (it gives the weights
    p_P). Lower -> machine."""
    qs = predictive(lps["scorer"], start)
    qp = predictive(lps["performer"], start)
    xppl = -(qp.exp() * qs).sum(-1).mean(1)
    return log_ppl(lps["scorer"], ids, start) / xppl


def lrr(lps, ids, start):
    """DetectLLM log-rank ratio (Su et al. 2023), a baseline of the paper's table:
    |sum_i log p(s_i | s_<i) / (sum_i log rank_i + 1e-6)| over the continuation tokens, rank as
    in ``logrank`` (official: llm_text_detectors.py, ``_compute_log_rank_ratio``; the 1e-6
    guards a text whose every token has rank 1). Higher -> machine (not negated officially).
    The official helper drops the text's last token (targets ids[1:-1]); we score all
    continuation tokens, as every other detector here does."""
    lp = lps["scorer"]
    target = next_token_logp(lp, ids, start)
    rank = 1 + (predictive(lp, start) > target[..., None]).sum(-1)
    return (target.sum(1) / (torch.log(rank.to(lp.dtype)).sum(1) + 1e-6)).abs()


@dataclass(frozen=True)
class Detector:
    stat: object           # (lps, ids, start) -> (N,) raw statistic
    roles: tuple           # model roles it needs, one forward pass each
    sign: int              # +1: higher raw -> machine; -1: lower raw -> machine (fixed a priori)


DETECTORS = {
    "Telescope": Detector(telescope, ("scorer",), +1),
    "Telescope-ratio": Detector(telescope_ratio, ("scorer",), -1),
    "LogLik": Detector(loglik, ("scorer",), +1),
    "LogRank": Detector(logrank, ("scorer",), +1),
    "Entropy": Detector(entropy, ("scorer",), -1),
    "Fast-DetectGPT": Detector(fast_detectgpt, ("scorer",), +1),
    "Binoculars": Detector(binoculars, ("scorer", "performer"), -1),
    "LRR": Detector(lrr, ("scorer",), +1),
}


@torch.no_grad()
def log_probs(model, ids: torch.Tensor) -> torch.Tensor:
    """One forward pass: log-softmax of the model's next-token logits, (N, T, V)."""
    return F.log_softmax(model(ids), dim=-1)


@torch.no_grad()
def score(name: str, models: dict, ids: torch.Tensor, start: int, batch: int = 100):
    """Run detector ``name`` end to end on ``ids``: its own forward pass of each model it needs,
    then its statistic. Returns (raw statistic (N,) float64 numpy, forward passes per text).
    ``ids`` should lie on the models' device (the statistic is computed there)."""
    det = DETECTORS[name]
    out, calls = [], 0
    for i in range(0, len(ids), batch):
        chunk = ids[i : i + batch]
        lps = {}
        for role in det.roles:
            lps[role] = log_probs(models[role], chunk)
            calls += 1
        out.append(det.stat(lps, chunk, start).double())
    n_batches = (len(ids) + batch - 1) // batch
    return torch.cat(out).cpu().numpy(), calls / max(n_batches, 1)

