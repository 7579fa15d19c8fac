"""The student agent (stand-in for the fine-tuned LLM): a character CNN policy, behaviour-cloned
on teacher trajectories, acting greedily (pass@1, temperature 0). Imports torch.

Observation -> action logits:
  chars of the current string (truncated / padded to ``max_len``) -> embedding (dim 16) ->
  Conv1d(16 -> width, k=5) -> ReLU -> Conv1d(width -> width, k=5) -> ReLU -> global max-pool;
  concatenated with an embedding of the last action (8 dims), the last-step error bit and a
  one-hot of the step index -> MLP(-> hidden -> n_tools).
Padding positions are zero before each convolution and after it, and the max-pool reads only
the string's own positions (all activations are >= 0 after the ReLU, so zeros never win over
a real position), so a batch cropped to its longest string gives the same logits as the full
``max_len`` window (tested); batches are bucketed by length to make that crop pay off.
The full profile's alternative student (``arch: gru``) swaps the two convolutions for a
one-layer GRU over the characters, max-pooled the same way.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from icml26.rl.optim import Adam

from .features import VOCAB, char_ids


def _uniform(gen, shape, fan_in):
    b = 1.0 / math.sqrt(fan_in)
    return (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1).mul_(b).float()


def init_params(seed: int, n_tools: int, max_steps: int, p: dict, device) -> dict:
    """PyTorch's default initialisation (uniform +-1/sqrt(fan_in); embeddings N(0, 1)), drawn
    on a CPU generator from ``seed`` and then moved to ``device``."""
    gen = torch.Generator().manual_seed(int(seed) % (2**63))
    E, W, H, A = p["char_dim"], p["width"], p["hidden"], p["action_dim"]
    k = p["kernel"]
    P = {"emb": torch.randn((VOCAB, E), generator=gen),
         "act": torch.randn((n_tools + 1, A), generator=gen)}
    if p["arch"] == "cnn":
        P.update(w1=_uniform(gen, (W, E, k), E * k), b1=_uniform(gen, (W,), E * k),
                 w2=_uniform(gen, (W, W, k), W * k), b2=_uniform(gen, (W,), W * k))
    else:   # gru: torch.nn.GRU's layout and initialisation (uniform +-1/sqrt(W))
        P.update(w_ih=_uniform(gen, (3 * W, E), W), w_hh=_uniform(gen, (3 * W, W), W),
                 b_ih=_uniform(gen, (3 * W,), W), b_hh=_uniform(gen, (3 * W,), W))
    d_in = W + A + 1 + max_steps
    P.update(m1=_uniform(gen, (H, d_in), d_in), c1=_uniform(gen, (H,), d_in),
             m2=_uniform(gen, (n_tools, H), H), c2=_uniform(gen, (n_tools,), H))
    return {k: v.to(device).requires_grad_(True) for k, v in P.items()}


def _gru(P, x):
    """One-layer GRU over (B, L, E) in torch's gate order (r, z, n); returns (B, L, W)."""
    B, L, _ = x.shape
    W = P["w_hh"].shape[1]
    h = x.new_zeros(B, W)
    gi = x @ P["w_ih"].T + P["b_ih"]
    out = []
    for t in range(L):
        gh = h @ P["w_hh"].T + P["b_hh"]
        ir, iz, in_ = gi[:, t].chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
        n = torch.tanh(in_ + r * hn)
        h = (1 - z) * n + z * h
        out.append(h)
    return torch.stack(out, 1)


def forward(P, ids, lens, last, err, step, max_steps: int):
    """Logits (B, n_tools). ``ids`` may be cropped to the batch's longest string."""
    L = ids.shape[1]
    mask = (torch.arange(L, device=ids.device)[None, :] < lens[:, None]).float()
    x = P["emb"][ids] * mask[..., None]                                # (B, L, E)
    if "w1" in P:
        pad = P["w1"].shape[2] // 2
        h = torch.relu(F.conv1d(x.transpose(1, 2), P["w1"], P["b1"], padding=pad))
        h = h * mask[:, None, :]
        h = torch.relu(F.conv1d(h, P["w2"], P["b2"], padding=pad)) * mask[:, None, :]
    else:
        h = torch.relu(_gru(P, x)).transpose(1, 2) * mask[:, None, :]
    pooled = h.amax(2) if L else h.new_zeros(h.shape[:2])
    onehot = F.one_hot(step.clamp(max=max_steps - 1), max_steps).float()
    z = torch.cat([pooled, P["act"][last + 1], err[:, None].float(), onehot], 1)
    z = torch.relu(z @ P["m1"].T + P["c1"])
    return z @ P["m2"].T + P["c2"]


def _batches(lens: np.ndarray, batch: int, bucket: int, rng: np.random.Generator):
    """Random minibatches of similar lengths: shuffle, sort within chunks of ``bucket``
    batches by length, cut, shuffle the batch order."""
    perm = rng.permutation(len(lens))
    out = []
    for c in range(0, len(perm), batch * bucket):
        chunk = perm[c:c + batch * bucket]
        chunk = chunk[np.argsort(lens[chunk], kind="stable")]
        out += [chunk[i:i + batch] for i in range(0, len(chunk), batch)]
    return [out[i] for i in rng.permutation(len(out))]


def behaviour_clone(P: dict, pairs: dict, *, epochs: int, lr: float, batch: int, bucket: int,
                    max_steps: int, rng: np.random.Generator, device) -> list[tuple]:
    """Cross-entropy on the teacher's action at every step (observations are inputs only, as
    the official SFT records mask the user turns). Adam; returns [(epoch, loss, accuracy)]."""
    ids = torch.as_tensor(pairs["ids"], device=device)
    lens_np = pairs["lens"]
    lens = torch.as_tensor(lens_np, device=device)
    last = torch.as_tensor(pairs["last"], device=device)
    err = torch.as_tensor(pairs["err"], device=device)
    step = torch.as_tensor(pairs["t"], device=device)
    y = torch.as_tensor(pairs["act"], device=device)
    opt = Adam(list(P.values()), lr=lr)
    log = []
    for epoch in range(1, epochs + 1):
        tot, hit = 0.0, 0
        for b in _batches(lens_np, batch, bucket, rng):
            bi = torch.as_tensor(b, device=device)
            crop = max(int(lens_np[b].max()), 1)
            logits = forward(P, ids[bi, :crop], lens[bi], last[bi], err[bi], step[bi],
                             max_steps)
            loss = F.cross_entropy(logits, y[bi])
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * len(b)
            hit += int((logits.argmax(1) == y[bi]).sum())
        log.append((epoch, tot / max(len(lens_np), 1), hit / max(len(lens_np), 1)))
    return log


class GreedyPolicy:
    """Batched greedy policy for ``run_batch``: one forward pass over all live episodes."""

    def __init__(self, P, tools, max_len: int, max_steps: int, device):
        self.P, self.tools, self.max_len = P, tuple(tools), max_len
        self.max_steps, self.device = max_steps, device

    @torch.no_grad()
    def __call__(self, states, trajs, live):
        from icml26.agents import Call

        ids, lens = char_ids([s["s"] for s in states], self.max_len)
        crop = max(int(lens.max()), 1)
        t = lambda a: torch.as_tensor(np.asarray(a), device=self.device)  # noqa: E731
        logits = forward(self.P, t(ids[:, :crop]), t(lens), t([s["last"] for s in states]),
                         t([s["err"] for s in states]), t([s["t"] for s in states]),
                         self.max_steps)
        return [Call(self.tools[int(a)]) for a in logits.argmax(1).cpu().numpy()]
