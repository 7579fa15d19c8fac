"""ImpQuant and the PTQ baselines on the tiny VLM's LM (torch).

- ``importance_weights``: ImpQuant's per-token calibration weights (attention received by text
  tokens, contextual redundancy of visual tokens), computed once from the FP model.
- ``modality_weights``: MODALITY-W (MBQ-style) weights, one per modality, from the mean squared
  loss gradient of each modality's LM-input token activations.
- ``quantize_lm``: sequential layer-wise PTQ of the 12 LM Linear layers in forward order; each
  layer's inputs are captured from the already-quantised preceding model; weights by RTN or
  (weighted) GPTQ from ``icml26.lm.quant``; optional static activation quantisation, naive
  (per-tensor absmax) or outlier-aware (top channels in FP, the rest clipped at a percentile).
"""

from __future__ import annotations

import copy

import torch

from icml26.lm import quant

from .model import TinyVLM, block_forward

GROUPS = (("attn.q", "attn.k", "attn.v"), ("attn.o",), ("ffn.fc",), ("ffn.proj",))
LAYERS = tuple(n for g in GROUPS for n in g)   # 6 Linear layers per LM block


def _lm_full(model: TinyVLM, h: torch.Tensor) -> None:
    """All LM blocks on every position (attention probabilities kept by the caller)."""
    for b in model.blocks:
        h = block_forward(b, h)


@torch.no_grad()
def importance_weights(model: TinyVLM, h: torch.Tensor, n_vis: int, k_similar: int = 8,
                       floor: float = 0.05, clip=(0.05, 20.0), parts: str = "both"):
    """ImpQuant token weights (B, T) on the LM input h (B, T, d) of the calibration set.

    Text tokens (INFERRED aggregation, as the spec): a_i = mean over LM layers, heads and the
    other text queries (the ANS query included) of the attention i receives; mean 1 over the
    text tokens of each sample. Visual tokens: r_i = mean cosine similarity of i's hidden state
    (the LM input, i.e. the input of the first LM block; INFERRED) to its ``k_similar`` most
    similar other visual tokens of the sample; v_i = max(1 - r_i, floor), mean 1 over the
    visual tokens of each sample. w = [v | a], renormalised to mean 1 over the sequence,
    clipped to ``clip``. ``parts``: "vis" or "text" keeps only that part (the other gets 1;
    ablations IMPQ-VISONLY / IMPQ-TEXTONLY, INFERRED)."""
    for b in model.blocks:
        b.attn.keep_probs = True
    _lm_full(model, h)
    probs = torch.stack([b.attn.probs for b in model.blocks])      # (L, B, H, T, T)
    for b in model.blocks:
        b.attn.keep_probs, b.attn.probs = False, None
    text = probs[..., n_vis:, n_vis:]                                # queries x keys (text)
    n_text = text.shape[-1]
    # queries other than i
    off = 1.0 - torch.eye(n_text, dtype=text.dtype, device=text.device)
    received = (text * off).sum(-2) / (n_text - 1)                  # (L, B, H, n_text)
    a = received.mean(dim=(0, 2))
    a = a / a.mean(1, keepdim=True)
    v = h[:, :n_vis]
    v = v / v.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    cos = v @ v.transpose(-1, -2)
    cos = cos - 2.0 * torch.eye(n_vis, dtype=cos.dtype, device=cos.device)  # not itself
    r = cos.topk(k_similar, dim=-1).values.mean(-1)
    vis = (1.0 - r).clamp_min(floor)
    vis = vis / vis.mean(1, keepdim=True)
    if parts == "vis":
        a = torch.ones_like(a)
    elif parts == "text":
        vis = torch.ones_like(vis)
    w = torch.cat([vis, a], dim=1)
    w = w / w.mean(1, keepdim=True)
    return w.clamp(*clip)


def modality_weights(model: TinyVLM, h: torch.Tensor, y: torch.Tensor, n_vis: int):
    """MODALITY-W weights (B, T): lambda_mod proportional to the mean over the modality's tokens
    of ||dL/dh_i||^2 (L the answer cross-entropy of the FP model, h the LM input), normalised
    so that the per-token mean over the sequence is 1."""
    h = h.detach().clone().requires_grad_(True)
    logits = model.logits_from(h)
    loss = torch.nn.functional.cross_entropy(logits, y, reduction="sum")
    (g,) = torch.autograd.grad(loss, h)
    sq = g.pow(2).sum(-1)
    lam_vis, lam_text = float(sq[:, :n_vis].mean()), float(sq[:, n_vis:].mean())
    t = h.shape[1]
    norm = (n_vis * lam_vis + (t - n_vis) * lam_text) / t
    w = torch.full(h.shape[:2], lam_text / norm, dtype=h.dtype, device=h.device)
    w[:, :n_vis] = lam_vis / norm
    return w, lam_vis / norm, lam_text / norm


def _get(block, name):
    mod = block
    for part in name.split("."):
        mod = getattr(mod, part)
    return mod


def _set(block, name, new):
    parent, attr = name.rsplit(".", 1)
    setattr(_get(block, parent), attr, new)


@torch.no_grad()
def _capture(model, h, bi, name):
    """Inputs (B*T, d_in) of layer ``name`` of LM block ``bi`` on the LM input h."""
    out = {}
    mod = _get(model.blocks[bi], name)
    hook = mod.register_forward_pre_hook(lambda m, args: out.__setitem__("x", args[0]))
    x = h
    for i in range(bi):
        x = block_forward(model.blocks[i], x)
    block_forward(model.blocks[bi], x)
    hook.remove()
    return out["x"].reshape(-1, out["x"].shape[-1])


def _rel_err(w, wq, x, mask):
    """sum_i ||(W - Q) x_i||^2 / sum_i ||W x_i||^2 over the tokens in mask."""
    xs = x[mask.to(x.device)].double()
    return float(((xs @ (w - wq).T) ** 2).sum() / ((xs @ w.T) ** 2).sum().clamp_min(1e-30))


@torch.no_grad()
def quantize_lm(model: TinyVLM, h_cal: torch.Tensor, *, method: str, w_bits: int,
                a_bits: int | None, token_weights: torch.Tensor | None, masks: dict,
                eval_weights: torch.Tensor, damp: float = 0.01, group_size: int | None = None,
                outlier_aware: bool = False, outlier_frac: float = 0.03,
                outlier_min: int = 2, act_percentile: float = 99.9):
    """A quantised copy of ``model`` (LM Linear layers replaced by ``QuantLinear``).

    method "rtn": round-to-nearest; anything else: GPTQ with the Hessian of ``token_weights``
    (None: uniform). ``masks``: name -> (B*T,) bool token masks for the error diagnostics;
    ``eval_weights``: the ImpQuant weights, for the importance-weighted error of every method.
    Returns (model, per-layer diagnostics)."""
    q = copy.deepcopy(model)
    tw = None if token_weights is None else token_weights.reshape(-1)
    ew = eval_weights.reshape(-1)
    diag = []
    for bi, block in enumerate(q.blocks):
        for group in GROUPS:
            x = _capture(q, h_cal, bi, group[0]).double()
            keep, scale = None, 1.0
            if a_bits is not None:
                if outlier_aware:
                    keep = quant.outlier_channels(x, outlier_frac, outlier_min)
                    rest = torch.ones(x.shape[1], dtype=torch.bool, device=x.device)
                    rest[keep] = False
                    scale = quant.act_scale(x, a_bits, act_percentile, channels=rest)
                else:
                    scale = quant.act_scale(x, a_bits, 100.0)
            for name in group:
                lin = _get(block, name)
                w = lin.weight.detach().double()
                if method == "rtn":
                    wq = quant.rtn(w, w_bits, group_size=group_size, keep=keep)
                else:
                    wq = quant.gptq(w, quant.hessian(x, tw, damp), w_bits,
                                    group_size=group_size, keep=keep)
                d = {"layer": f"{bi}.{name}",
                     "err_uniform": quant.calibration_error(w, wq, x)
                     / float(((x @ w.T) ** 2).sum(1).mean()),
                     "err_impweighted": quant.calibration_error(w, wq, x, ew)
                     / float((ew * ((x @ w.T) ** 2).sum(1)).sum() / ew.sum())}
                for k, m in masks.items():
                    d[f"err_{k}"] = _rel_err(w, wq, x, m)
                diag.append(d)
                _set(block, name, quant.QuantLinear(
                    wq.to(lin.weight.dtype), lin.bias, act_bits=a_bits, act_scale=scale,
                    fp_channels=keep))
    return q, diag
