"""Mini-UniRRM, Static-RM and Scalar-RM in PyTorch, stacked over R independent runs (seeds).

Every weight has a leading run axis, so R models train side by side as R separate ones would
(the loss is a sum over runs and Adam is elementwise). Shapes: tokens (R, B, ...), u (R, B, H),
candidate readings (R, B, K, H), scores F (R, B, K).

Stages of the judge (UniRRM-mini):
1. analysis: instruction encoder u (mean of token embeddings -> MLP, or at full a 2-layer
   transformer encoder);
2. adaptive rubric: generic weights pi_gen = softmax(W_g u) and constraint relevance
   pi_c = sigmoid(W_c u);
3. evaluation: attention pooling over each candidate's tokens with query u, one 4-head
   self-attention layer across the candidate set, a per-criterion head s_j (G + S values);
   the candidate's score is the MEAN over the active criteria on the 1-5 scale (official
   aggregation, evaluation/src/templates/unirrm.py 'final_score: the average score across all
   rubrics'), each generic criterion counted G * pi_gen,g times and each constraint pi_c times.
"""

from __future__ import annotations

import math

import torch

from .world import G, S

METHODS = ("unirrm", "static-rm", "scalar-rm", "unirrm-norubric")
RUBRIC = {"unirrm": "adaptive", "unirrm-norubric": "adaptive", "static-rm": "static"}


def _uniform(gen, R, fan_in, shape):
    bound = 1.0 / math.sqrt(fan_in)
    return (torch.rand((R,) + tuple(shape), generator=gen, dtype=torch.float64) * 2 - 1) * bound


def _linear(gen, R, n_in, n_out):
    return {"W": _uniform(gen, R, n_in, (n_in, n_out)), "b": _uniform(gen, R, n_in, (1, n_out))}


def lin(x, layer):
    """x (R, ..., in) -> (R, ..., out) with per-run weights."""
    R = x.shape[0]
    flat = x.reshape(R, -1, x.shape[-1])
    out = torch.baddbmm(layer["b"], flat, layer["W"])
    return out.reshape(x.shape[:-1] + (out.shape[-1],))


def init(method: str, gens: list, p: dict, vocab: int, dtype=torch.float32) -> dict:
    """Parameters of R runs, run r drawn from its own generator gens[r] (so a run's weights do
    not depend on which runs share the job). Returns a flat dict name -> (R, ...) tensor."""
    D, H = p["emb_dim"], p["hidden"]

    def one(gen):
        q = {"emb": torch.randn((1, vocab, D), generator=gen, dtype=torch.float64) * 0.5}
        if p["encoder"] == "transformer":
            q["pos"] = torch.randn((1, 4, D), generator=gen, dtype=torch.float64) * 0.1
            for layer in range(p["encoder_layers"]):
                q.update(_flat(f"enc{layer}.qkv", _linear(gen, 1, D, 3 * D)))
                q.update(_flat(f"enc{layer}.o", _linear(gen, 1, D, D)))
                q.update(_flat(f"enc{layer}.ff1", _linear(gen, 1, D, 2 * D)))
                q.update(_flat(f"enc{layer}.ff2", _linear(gen, 1, 2 * D, D)))
        q.update(_flat("enc.1", _linear(gen, 1, D, H)))
        q.update(_flat("enc.2", _linear(gen, 1, H, H)))
        q.update(_flat("read.q", _linear(gen, 1, H, H)))
        # (the key bias b_k is left out: b_k . q is the same for every token and cancels)
        q["read.k.W"] = _linear(gen, 1, D, H)["W"]
        q.update(_flat("read.v", _linear(gen, 1, D, H)))
        if method == "scalar-rm":
            q.update(_flat("score.1", _linear(gen, 1, 3 * H, H)))
            q.update(_flat("score.2", _linear(gen, 1, H, 1)))
            return q
        q.update(_flat("cross.qkv", _linear(gen, 1, H, 3 * H)))
        q.update(_flat("cross.o", _linear(gen, 1, H, H)))
        q.update(_flat("crit.1", _linear(gen, 1, H, H)))
        q.update(_flat("crit.2", _linear(gen, 1, H, G + S)))
        if RUBRIC[method] == "adaptive":
            q.update(_flat("rubric.g", _linear(gen, 1, H, G)))
            q.update(_flat("rubric.c", _linear(gen, 1, H, S)))
        else:   # one learned global weight vector over the G generic criteria
            q["static_w"] = torch.zeros((1, 1, G), dtype=torch.float64)
        return q

    per_run = [one(g) for g in gens]
    return {k: torch.cat([q[k] for q in per_run]).to(dtype) for k in per_run[0]}


def _flat(name, layer):
    return {f"{name}.W": layer["W"], f"{name}.b": layer["b"]}


def _layer(params, name):
    return {"W": params[f"{name}.W"], "b": params[f"{name}.b"]}


def embed(params, tokens):
    """Token ids (R, ...) -> embeddings (R, ..., D) from each run's own table."""
    return _lookup(params["emb"], tokens)


def _lookup(E, tokens):
    """Rows of per-run tables E (R, V, D) at token ids (R, ...) -> (R, ..., D)."""
    R, V, D = E.shape
    offs = (torch.arange(R, device=tokens.device) * V).view((R,) + (1,) * (tokens.dim() - 1))
    # F.embedding: its backward is a dense index_add (advanced indexing's is a slow index_put)
    return torch.nn.functional.embedding(tokens.long() + offs, E.reshape(R * V, D))


def mha(params, name, x, heads, mask=None):
    """Multi-head self-attention over axis -2 of x (R, B, K, H); mask (R, B, K) True = keep."""
    R, B, K, H = x.shape
    qkv = lin(x, _layer(params, f"{name}.qkv")).reshape(R, B, K, 3, heads, H // heads)
    q, k, v = qkv.unbind(3)
    # (R, B, i, j, heads): broadcast products (the sets are short, K <= 4 tokens/candidates)
    att = (q[:, :, :, None] * k[:, :, None]).sum(-1) / math.sqrt(H // heads)
    if mask is not None:
        att = att.masked_fill(~mask[:, :, None, :, None], float("-inf"))
    out = (att.softmax(3)[..., None] * v[:, :, None]).sum(3).reshape(R, B, K, H)
    return lin(out, _layer(params, f"{name}.o"))


def _norm(x):
    return torch.nn.functional.layer_norm(x, x.shape[-1:])


def encode_instruction(params, p, ins):
    """Stage 1 (analysis): u from the instruction tokens (R, B, 4); PAD = 0 is ignored."""
    mask = ins != 0
    x = embed(params, ins)
    if p["encoder"] == "transformer":     # full profile: 2-layer pre-LN transformer encoder
        x = x + params["pos"][:, None]
        for layer in range(p["encoder_layers"]):
            x = x + mha(params, f"enc{layer}", _norm(x), p["heads"], mask)
            h = torch.relu(lin(_norm(x), _layer(params, f"enc{layer}.ff1")))
            x = x + lin(h, _layer(params, f"enc{layer}.ff2"))
    m = mask.to(x.dtype)[..., None]
    pooled = (x * m).sum(-2) / m.sum(-2).clamp_min(1.0)
    return lin(torch.relu(lin(pooled, _layer(params, "enc.1"))), _layer(params, "enc.2"))


def read_candidates(params, u, resp):
    """Attention pooling over each candidate's tokens (R, B, K, L) with the query q = W_q u:
    weights softmax_l(k_l . q / sqrt(H)) with k_l = W_k e_l + b_k, reading v_l = W_v e_l + b_v.

    Computed in the embedding space (the same numbers): k_l . q = e_l . (W_k q) + b_k . q, and
    the last term is the same for every token, so it cancels in the softmax; the weighted sum
    of v_l is W_v (sum_l a_l e_l) + b_v because the weights sum to 1.
    """
    x = embed(params, resp)                                       # (R, B, K, L, D)
    q = lin(u, _layer(params, "read.q"))                          # (R, B, H)
    qe = torch.einsum("rdh,rbh->rbd", params["read.k.W"], q)      # W_k q: (R, B, D)
    att = (x * qe[:, :, None, None, :]).sum(-1) / math.sqrt(q.shape[-1])
    pooled = (att.softmax(-1)[..., None] * x).sum(-2)             # (R, B, K, D)
    return lin(pooled, _layer(params, "read.v"))


def rubric(params, method, u):
    """Stage 2: (pi_gen (R, B, G), pi_c (R, B, S) or None)."""
    if RUBRIC[method] == "adaptive":
        return (lin(u, _layer(params, "rubric.g")).softmax(-1),
                torch.sigmoid(lin(u, _layer(params, "rubric.c"))))
    w = params["static_w"].softmax(-1)
    return w.expand(u.shape[:-1] + (G,)), None


def forward(params, method, p, ins, resp) -> dict:
    """Scores F (R, B, K) of the candidates resp (R, B, K, L) of instructions ins (R, B, 4),
    with the rubric and per-criterion outputs of the generative judges."""
    u = encode_instruction(params, p, ins)
    h = read_candidates(params, u, resp)
    if method == "scalar-rm":
        # official ScalarRMEngine: each response scored on its own (no cross-candidate view)
        z = torch.cat([u[:, :, None].expand_as(h), h, u[:, :, None] * h], -1)
        F = lin(torch.relu(lin(z, _layer(params, "score.1"))), _layer(params, "score.2"))
        return {"F": F[..., 0]}
    h = h + mha(params, "cross", h, p["heads"])       # the judge reads all candidates jointly
    s = lin(torch.relu(lin(h, _layer(params, "crit.1"))), _layer(params, "crit.2"))
    s_gen, s_con = s[..., :G], s[..., G:]
    pi_gen, pi_c = rubric(params, method, u)
    return {"F": aggregate(pi_gen, pi_c, s_gen, s_con), "pi_gen": pi_gen, "pi_c": pi_c,
            "s_gen": s_gen, "s_con": s_con}


def aggregate(pi_gen, pi_c, s_gen, s_con):
    """The verdict score: the mean over the active criteria of 1-5 criterion scores.

    Generic criterion g counts G * pi_gen,g times (pi_gen sums to 1), constraint c counts
    pi_c times (None: no instruction-specific criteria). Shapes: pi (R, B, .), s (R, B, K, .).
    """
    # criterion scores live on the official 1-5 scale (target of s_gen: (lev - 3) / 2)
    score_gen = (3.0 + 2.0 * s_gen).clamp(1.0, 5.0)
    num = (G * pi_gen[:, :, None] * score_gen).sum(-1)
    den = torch.full_like(num, float(G))
    if pi_c is not None:
        score_con = 1.0 + 4.0 * torch.sigmoid(s_con)      # 1 (unmet) .. 5 (met)
        num = num + (pi_c[:, :, None] * score_con).sum(-1)
        den = den + pi_c.sum(-1)[:, :, None]
    return num / den
