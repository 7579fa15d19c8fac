"""The tiny arithmetic policy, stacked over runs (torch).

Spec: embeddings E_a, E_b in R^32 (separate tables) -> concat -> Linear 64 -> 64, tanh ->
Linear 64 -> V logits. Two operand codes (``code``):
- "table" (the spec): free embedding tables, E_a[a] a learned row per operand value (one-hot
  code); nothing learned about one operand value transfers to another;
- "thermometer" (our deviation, see FIDELITY): E_a[a] = c(a) T_a, with c(a) in {-1, +1}^(n-1)
  the fixed thermometer code of a (bit i is +1 iff a > i) and T_a (n-1, d) learned, separately
  for a and b. The code is ordinal, so a + b is a linear function of (c(a), c(b)) and what the
  warm start learns on some operand pairs carries over, in part, to pairs it never saw.

Every tensor carries a leading run axis R, so all runs of a job train side by side with their
own weights (a loss summed over runs gives each run its own gradient; Adam is elementwise).
With multi-token answers (full profile: tens digit, then units digit) the policy also reads an
embedding of the previous answer token (BOS for the first), so log pi(answer | p) = sum_t log
pi(token_t | p, token_<t).

Initialisation (INFERRED, torch's defaults): embeddings N(0, 1), linear layers
U(-1/sqrt(fan_in), 1/sqrt(fan_in)); thermometer projections N(0, 1/(n-1)), so that an
embedding entry has variance 1 as with a table; drawn on a CPU generator per seed, then moved.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

CODES = ("table", "thermometer")


def init(seeds, n_operands: int, vocab: int, n_tokens: int, embed: int, hidden: int,
         device, code: str = "table") -> dict:
    """Stacked parameters, one slice per entry of ``seeds`` (leaf tensors on ``device``).
    Operand embeddings are tables "Ea", "Eb" (code "table") or thermometer projections "Ta",
    "Tb" (code "thermometer"); the keys present tell ``hidden`` which code the policy uses."""
    if code not in CODES:
        raise ValueError(f"unknown operand code {code!r}; expected one of {CODES}")
    per = []
    d_in = embed * (3 if n_tokens > 1 else 2)
    for seed in seeds:
        g = torch.Generator().manual_seed(int(seed) % 2**63)
        if code == "table":
            p = {"Ea": torch.randn(n_operands, embed, generator=g),
                 "Eb": torch.randn(n_operands, embed, generator=g)}
        else:
            bits = max(n_operands - 1, 1)
            p = {"Ta": torch.randn(bits, embed, generator=g) / math.sqrt(bits),
                 "Tb": torch.randn(bits, embed, generator=g) / math.sqrt(bits)}
        p["Ep"] = torch.randn(vocab + 1, embed, generator=g)
        for w, b, fi, fo in (("W1", "b1", d_in, hidden), ("W2", "b2", hidden, vocab)):
            bound = 1.0 / math.sqrt(fi)
            p[w] = (torch.rand(fi, fo, generator=g) * 2 - 1) * bound
            p[b] = (torch.rand(1, fo, generator=g) * 2 - 1) * bound
        per.append(p)
    return {k: torch.stack([q[k] for q in per]).to(device).requires_grad_(True) for k in per[0]}


def _rows(table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """table (R, n, d), idx (R, N) -> (R, N, d)."""
    return torch.gather(table, 1, idx[..., None].expand(-1, -1, table.shape[-1]))


def thermometer(idx: torch.Tensor, bits: int) -> torch.Tensor:
    """The +-1 thermometer code of idx (...) -> (..., bits): bit i is +1 iff idx > i."""
    return torch.where(torch.arange(bits, device=idx.device) < idx[..., None], 1.0, -1.0)


def embed_operands(params: dict, a, b) -> list:
    """The two operand embeddings (R, N, d) of prompts a, b (R, N) under the policy's code."""
    if "Ta" in params:
        bits = params["Ta"].shape[1]
        return [torch.bmm(thermometer(a, bits).to(params["Ta"].dtype), params["Ta"]),
                torch.bmm(thermometer(b, bits).to(params["Tb"].dtype), params["Tb"])]
    return [_rows(params["Ea"], a), _rows(params["Eb"], b)]


def hidden(params: dict, a, b, prev=None) -> torch.Tensor:
    """Last hidden layer h (R, N, H) for prompts a, b (R, N) and previous token ``prev``."""
    parts = embed_operands(params, a, b)
    if prev is not None:
        parts.append(_rows(params["Ep"], prev))
    return torch.tanh(torch.baddbmm(params["b1"], torch.cat(parts, -1), params["W1"]))


def logits_of(params: dict, h: torch.Tensor) -> torch.Tensor:
    return torch.baddbmm(params["b2"], h, params["W2"])


def token_pass(params: dict, a, b, tokens, n_tokens: int, vocab: int,
               temperature: float = 1.0):
    """Teacher-forced pass over answer tokens (R, N, T): per token the hidden layer (R, N, T, H),
    the log-probabilities (R, N, T, V); and the answer's log-prob (R, N), all under the policy
    softmax(logits / temperature) (RL passes its sampling temperature, so the behaviour
    log-prob and the updated one are of the policy that drew the rollouts)."""
    hs, lps = [], []
    for t in range(n_tokens):
        prev = None
        if n_tokens > 1:
            prev = torch.full_like(a, vocab) if t == 0 else tokens[..., t - 1]
        h = hidden(params, a, b, prev)
        hs.append(h)
        lps.append(F.log_softmax(logits_of(params, h) / temperature, -1))
    h, lp = torch.stack(hs, 2), torch.stack(lps, 2)
    logp = lp.gather(-1, tokens[..., None])[..., 0].sum(-1)
    return h, lp, logp


@torch.no_grad()
def sample(params: dict, a, b, uniforms: torch.Tensor, n_tokens: int, vocab: int,
           temperature: float = 1.0):
    """Answer tokens (R, N, T) by inverse CDF from ``uniforms`` (R, N, T), token by token."""
    toks = []
    for t in range(n_tokens):
        prev = None
        if n_tokens > 1:
            prev = torch.full_like(a, vocab) if t == 0 else toks[-1]
        probs = F.softmax(logits_of(params, hidden(params, a, b, prev)) / temperature, -1)
        nxt = (probs.cumsum(-1) < uniforms[..., t:t + 1]).sum(-1).clamp(max=vocab - 1)
        toks.append(nxt)
    return torch.stack(toks, -1)


@torch.no_grad()
def greedy(params: dict, a, b, n_tokens: int, vocab: int) -> torch.Tensor:
    """Greedy answer tokens (R, N, T) (argmax token by token)."""
    toks = []
    for t in range(n_tokens):
        prev = None
        if n_tokens > 1:
            prev = torch.full_like(a, vocab) if t == 0 else toks[-1]
        toks.append(logits_of(params, hidden(params, a, b, prev)).argmax(-1))
    return torch.stack(toks, -1)


def accuracy(params: dict, task, prompts: np.ndarray, idx: np.ndarray, n_tokens: int,
             vocab: int, device) -> np.ndarray:
    """Clean greedy accuracy per run on the prompt indices ``idx`` (R, N) -> (R,)."""
    p = prompts[idx]
    a = torch.as_tensor(p[..., 0]).to(device)
    b = torch.as_tensor(p[..., 1]).to(device)
    toks = greedy(params, a, b, n_tokens, vocab).cpu().numpy()
    return task.check(p, toks).mean(axis=-1)


@torch.no_grad()
def correct_prob(params: dict, task, prompts: np.ndarray, idx: np.ndarray, temperature: float,
                 device) -> np.ndarray:
    """Per run and prompt of ``idx`` (R, N), the probability that one rollout at
    ``temperature`` is correct (the prompt's exact pass rate) -> (R, N)."""
    p = prompts[idx]
    a = torch.as_tensor(p[..., 0]).to(device)
    b = torch.as_tensor(p[..., 1]).to(device)
    tokens = torch.as_tensor(task.encode(task.answer(p))).to(device)
    _, _, logp = token_pass(params, a, b, tokens, task.n_tokens, task.vocab, temperature)
    return logp.exp().cpu().numpy()


def sft(params: dict, opt, task, prompts: np.ndarray, idx: np.ndarray, steps: int, device,
        stop_pass: float | None = None) -> np.ndarray:
    """Supervised warm start: full-batch cross-entropy on the correct answers of the prompts
    ``idx`` (R, N) (teacher forcing), at most ``steps`` Adam steps. With ``stop_pass``, a run
    stops (its parameters stay as they are from then on) at the first step where its mean
    probability of the correct answer on these prompts reaches ``stop_pass``. Returns the Adam
    steps each run took (R,)."""
    p = prompts[idx]
    a = torch.as_tensor(p[..., 0]).to(device)
    b = torch.as_tensor(p[..., 1]).to(device)
    tokens = torch.as_tensor(task.encode(task.answer(p))).to(device)
    r = idx.shape[0]
    done = torch.zeros(r, dtype=torch.bool, device=device)
    taken = torch.zeros(r, dtype=torch.long, device=device)
    frozen = {k: v.detach().clone() for k, v in params.items()}
    for _ in range(steps):
        _, _, logp = token_pass(params, a, b, tokens, task.n_tokens, task.vocab)
        if stop_pass is not None:
            newly = (logp.detach().exp().mean(-1) >= stop_pass) & ~done
            with torch.no_grad():
                for k, v in params.items():
                    frozen[k][newly] = v[newly]
            done |= newly
            if bool(done.all()):
                break
        loss = -logp.mean(-1).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        taken += (~done).long()
        if stop_pass is not None and bool(done.any()):
            with torch.no_grad():
                for k, v in params.items():
                    v[done] = frozen[k][done]
    return taken.cpu().numpy()
