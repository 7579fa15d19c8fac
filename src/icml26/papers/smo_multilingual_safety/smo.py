"""The encoder, the spatial margin, SMO and the baselines' losses, and the training stages
(torch). Reads top to bottom: model -> losses -> stages 1-2 (M0) -> stage 3 (methods) -> eval.

Every random draw (batches, initialisation) comes from a CPU generator seeded from the run's
name; tensors are then moved to the model's device.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from icml26.lm.model import MLP, Block, CausalSelfAttention, GPTConfig
from icml26.rl.optim import Adam

# ------------------------------------------------------------------------------------------
# model: the "instruct model" stand-in
# ------------------------------------------------------------------------------------------


class BidirectionalAttention(CausalSelfAttention):
    """icml26.lm's multi-head attention without the causal mask (an encoder layer)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.n_heads, d // self.n_heads).transpose(1, 2)
                   for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=False)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class SafetyEncoder(nn.Module):
    """tokens -> (mean pooling | transformer encoder + mean pooling) -> MLP -> h(x), with a
    topic head and the refusal head g(h) = sigmoid(w.h + b) (spec)."""

    def __init__(self, vocab: int, d: int, hidden: int, n_topics: int, prompt_len: int,
                 encoder: str = "mean", n_layers: int = 2, n_heads: int = 4,
                 emb_std: float = 0.02):
        super().__init__()
        self.encoder = encoder
        self.emb = nn.Embedding(vocab, d)
        nn.init.normal_(self.emb.weight, 0.0, emb_std)   # untrained tokens pool near 0 (spec)
        if encoder == "transformer":
            cfg = GPTConfig(vocab_size=vocab, context=prompt_len, d_model=d, n_heads=n_heads,
                            n_layers=n_layers)
            self.pos = nn.Embedding(prompt_len, d)
            nn.init.normal_(self.pos.weight, 0.0, emb_std)
            self.blocks = nn.ModuleList(Block(cfg, i, BidirectionalAttention, MLP)
                                        for i in range(n_layers))
            self.ln = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, d))
        self.topic = nn.Linear(d, n_topics)
        self.refusal = nn.Linear(d, 1)

    def forward(self, tok: torch.Tensor) -> torch.Tensor:
        """The representation h(x) of each row of token ids."""
        x = self.emb(tok)
        if self.encoder == "transformer":
            x = x + self.pos.weight[: tok.shape[1]]
            for blk in self.blocks:
                x = blk(x)
            x = self.ln(x)
        return self.mlp(x.mean(1))

    def refusal_logit(self, h: torch.Tensor) -> torch.Tensor:
        return self.refusal(h).squeeze(-1)

    def encoder_params(self):
        return [p for n, p in self.named_parameters() if not n.startswith("refusal.")]


def build_model(p, vocab: int, seed: int, dev) -> SafetyEncoder:
    torch.manual_seed(seed % 2**63)      # initialisation drawn on the CPU, then moved
    m = SafetyEncoder(vocab, int(p["d_model"]), int(p["hidden"]), int(p["n_topics"]),
                      int(p["prompt_len"]), p["encoder"], int(p["n_layers"]),
                      int(p["n_heads"]), float(p["emb_std"]))
    return m.to(dev)


# ------------------------------------------------------------------------------------------
# losses and the spatial margin
# ------------------------------------------------------------------------------------------


def info_nce(za: torch.Tensor, zb: torch.Tensor, tau: float) -> torch.Tensor:
    """Symmetric InfoNCE on cosine similarities: row i of za matches row i of zb, the other
    rows of the batch are negatives (direction, cosine and symmetry INFERRED)."""
    za, zb = F.normalize(za, dim=-1), F.normalize(zb, dim=-1)
    logits = za @ zb.T / tau
    target = torch.arange(len(za), device=za.device)
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))


def safety_direction(h_harm: torch.Tensor, h_harmless: torch.Tensor) -> torch.Tensor:
    """u = unit(mean h(harmful) - mean h(harmless)) on the English reference set (spec)."""
    u = h_harm.mean(0) - h_harmless.mean(0)
    return u / u.norm()


@torch.no_grad()
def margin_stats(model, ref_harmless: torch.Tensor, u: torch.Tensor):
    """Per-language mean and std of u.h(z) over the harmless reference prompts (L, n, T),
    detached (spec: recomputed every few steps with the current model)."""
    L, n, T = ref_harmless.shape
    s = model(ref_harmless.reshape(L * n, T)).reshape(L, n, -1) @ u
    return s.mean(1), s.std(1)


def margins(h: torch.Tensor, u: torch.Tensor, mu, sd) -> torch.Tensor:
    """m_l(x) = (u.h(x) - mean_harmless_l) / std_harmless_l; ``mu``/``sd`` per row."""
    return (h @ u - mu) / sd


def smo_loss(m_l: torch.Tensor, m_target: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """L_SMO = mean w(x) (m_l(x_l) - m*_EN(x_EN))^2 (INFERRED from the abstract)."""
    return (w * (m_l - m_target) ** 2).mean()


def gap_weight(gap: torch.Tensor) -> torch.Tensor:
    """w(x) = 1 + softplus(gap_M0(x)): a larger example-wise gap pushes harder (INFERRED)."""
    return 1.0 + F.softplus(gap)


def keep_loss(h: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """L_keep = mean over prompts of ||h(x_EN) - h_M0(x_EN)||^2."""
    return ((h - h0) ** 2).sum(-1).mean()


def rep_align_loss(h_l: torch.Tensor, h0_en: torch.Tensor) -> torch.Tensor:
    """RepAlign: mean ||h(x_l) - h_M0(x_EN)||^2, no margin, no weighting."""
    return ((h_l - h0_en) ** 2).sum(-1).mean()


# ------------------------------------------------------------------------------------------
# stages 1-2: the aligned model M0 (shared by every method of a seed)
# ------------------------------------------------------------------------------------------


def _batches(n: int, batch: int, gen: torch.Generator):
    """One epoch of minibatch indices (a fresh shuffle)."""
    order = torch.randperm(n, generator=gen)
    return [order[i:i + batch] for i in range(0, n, batch)]


def _replay(model, topic_tok, topic_y, batch: int, gen) -> torch.Tensor:
    """Topic cross-entropy on a random batch of the pre-training mix (replay)."""
    idx = torch.randint(0, len(topic_tok), (batch,), generator=gen).to(topic_tok.device)
    return F.cross_entropy(model.topic(model(topic_tok[idx])), topic_y[idx])


def pretrain(model, D, p, gen, curve) -> None:
    """Stage 1: topic classification on every language's corpus + InfoNCE on parallel pairs.
    Each step takes one topic batch and one pair batch (pairs cycle; INFERRED)."""
    opt = Adam(model.parameters(), float(p["lr_pretrain"]))
    B, tau, wa = int(p["batch"]), float(p["tau"]), float(p["align_weight"])
    n_pairs = len(D["align_en"])
    pair_queue: list = []
    for epoch in range(int(p["epochs_pretrain"])):
        tot, k = 0.0, 0
        for idx in _batches(len(D["topic_tok"]), B, gen):
            idx = idx.to(D["topic_tok"].device)
            loss = F.cross_entropy(model.topic(model(D["topic_tok"][idx])), D["topic_y"][idx])
            if n_pairs >= 2 and wa > 0:
                if not pair_queue:
                    pair_queue = _batches(n_pairs, B, gen)
                j = pair_queue.pop(0).to(idx.device)
                if len(j) >= 2:
                    loss = loss + wa * info_nce(model(D["align_en"][j]), model(D["align_l"][j]),
                                                tau)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot, k = tot + float(loss.detach()), k + 1
        curve.append(("pretrain_loss", epoch + 1, tot / max(k, 1)))


def align_english(model, D, p, gen, curve) -> int:
    """Stage 2: English-only safety alignment, BCE on the refusal head + topic replay.

    The spec's 4 epochs, then (its premise "M0 well separated in English" is met by a rule
    fixed in config, on validation data) more epochs until the balanced refusal accuracy on
    the English reference sets reaches ``align_target_acc``, at most ``epochs_align_max``.
    Replay of the pre-training mix: the topic loss (spec) and, with weight
    ``align_replay_weight``, the InfoNCE loss on the parallel pairs (INFERRED: without it the
    English-only updates erase the cross-lingual alignment of every language alike, and M0
    misses the spec's premise; the setting ``topic-replay-only`` runs the literal reading).
    Returns the epochs run."""
    opt = Adam(model.parameters(), float(p["lr_pretrain"]))
    B, wr = int(p["batch"]), float(p["replay_weight_align"])
    wa, tau = float(p["align_replay_weight"]), float(p["tau"])
    epochs = 0
    for epoch in range(max(int(p["epochs_align_max"]), int(p["epochs_align"]))):
        tot, k = 0.0, 0
        for idx in _batches(len(D["safety_tok"]), B, gen):
            idx = idx.to(D["safety_tok"].device)
            logit = model.refusal_logit(model(D["safety_tok"][idx]))
            loss = F.binary_cross_entropy_with_logits(logit, D["safety_y"][idx])
            loss = loss + wr * _replay(model, D["topic_tok"], D["topic_y"], B, gen)
            if wa > 0 and len(D["align_en"]) >= 2:
                j = torch.randint(0, len(D["align_en"]), (B,), generator=gen).to(idx.device)
                loss = loss + wa * info_nce(model(D["align_en"][j]), model(D["align_l"][j]),
                                            tau)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot, k = tot + float(loss.detach()), k + 1
        epochs = epoch + 1
        acc = english_reference_accuracy(model, D)
        curve.append(("align_loss", epochs, tot / max(k, 1)))
        curve.append(("align_ref_acc", epochs, acc))
        if epochs >= int(p["epochs_align"]) and acc >= float(p["align_target_acc"]):
            break
    return epochs


@torch.no_grad()
def english_reference_accuracy(model, D) -> float:
    """Balanced refusal accuracy on the English reference sets (validation data)."""
    harm = (model.refusal_logit(model(D["ref_harm_en"])) >= 0).float().mean()
    safe = (model.refusal_logit(model(D["ref_harmless"][0])) < 0).float().mean()
    return float(0.5 * (harm + safe))


@torch.no_grad()
def retrieval_accuracy(model, parallel: torch.Tensor) -> torch.Tensor:
    """Cross-lingual alignment diagnostic: for parallel rows (L, n, T), the share of language-l
    rows whose most cosine-similar English row is their own translation (per language)."""
    L, n, T = parallel.shape
    h = F.normalize(model(parallel.reshape(L * n, T)).reshape(L, n, -1), dim=-1)
    sims = h[0][None] @ h.transpose(1, 2)                # (L, n_en, n_l)
    return (sims.argmax(1) == torch.arange(n, device=h.device)).float().mean(1)


@torch.no_grad()
def over_refusal_per_language(model, ref_harmless) -> torch.Tensor:
    L, n, T = ref_harmless.shape
    logit = model.refusal_logit(model(ref_harmless.reshape(L * n, T))).reshape(L, n)
    return (logit >= 0).float().mean(1), logit


@torch.no_grad()
def calibrate(model, ref_harmless, gate_max: float, target: float) -> dict:
    """The spec's default-comply gate on the harmless reference sets (validation data): if
    M0 over-refuses more than ``gate_max`` in any language, shift the refusal bias so that the
    English over-refusal is ``target`` (the (1 - target) quantile of the English logits moves
    to 0), then re-check."""
    before, logit = over_refusal_per_language(model, ref_harmless)
    shifted = bool(before.max() > gate_max)
    if shifted:
        q = torch.quantile(logit[0], 1.0 - target)
        model.refusal.bias -= q
    after, _ = over_refusal_per_language(model, ref_harmless)
    return {"gate_shifted": float(shifted), "gate_overref_max_before": float(before.max()),
            "gate_overref_max_after": float(after.max())}


# ------------------------------------------------------------------------------------------
# stage 3: the cross-lingual safety stage (the methods differ only here)
# ------------------------------------------------------------------------------------------

METHODS = ("m0", "ml-sft", "ml-sft-en", "repalign", "smo")


def stage3(method: str, m0, D, p, gen, curve):
    """A copy of M0 trained ``steps_s3`` Adam steps with the method's loss; returns it."""
    model = copy.deepcopy(m0)
    B, wr = int(p["batch_s3"]), float(p["replay_weight_s3"])
    frozen_head = method in ("smo", "repalign")        # SMO / RepAlign: refusal head frozen
    params = model.encoder_params() if frozen_head else list(model.parameters())
    opt = Adam(params, float(p["lr_s3"]))
    u, ref = D["u"], D["ref_harmless"]
    with torch.no_grad():
        h0_en = m0(D["s3_en"])                           # English teacher, frozen M0
        if method == "smo":
            mu0, sd0 = margin_stats(m0, ref, u)
            m_star = margins(h0_en, u, mu0[0], sd0[0])   # m*_EN(x_EN) from frozen M0
            lang = D["s3_lang"]
            m_l0 = margins(m0(D["s3_l"]), u, mu0[lang], sd0[lang])
            w = gap_weight(m_star - m_l0)                 # example-wise gap of M0
    steps, every = int(p["steps_s3"]), int(p["ref_every"])
    queue: list = []
    tot, k = 0.0, 0
    for step in range(steps):
        if not queue:
            queue = _batches(len(D["s3_l"]), B, gen)
        b = queue.pop(0).to(D["s3_l"].device)
        h_l = model(D["s3_l"][b])
        if method == "smo":
            if step % every == 0:                         # detached, current model
                mu, sd = margin_stats(model, ref, u)
            lb = D["s3_lang"][b]
            loss = smo_loss(margins(h_l, u, mu[lb], sd[lb]), m_star[b], w[b])
            loss = loss + float(p["keep_weight"]) * keep_loss(model(D["s3_en"][b]), h0_en[b])
        elif method == "repalign":
            loss = rep_align_loss(h_l, h0_en[b])
            loss = loss + float(p["keep_weight"]) * keep_loss(model(D["s3_en"][b]), h0_en[b])
        else:                                             # ml-sft, ml-sft-en
            loss = F.binary_cross_entropy_with_logits(model.refusal_logit(h_l), D["s3_y"][b])
            if method == "ml-sft-en":
                e = torch.randint(0, len(D["safety_tok"]), (B,), generator=gen).to(b.device)
                loss = loss + F.binary_cross_entropy_with_logits(
                    model.refusal_logit(model(D["safety_tok"][e])), D["safety_y"][e])
        loss = loss + wr * _replay(model, D["topic_tok"], D["topic_y"], B, gen)
        opt.zero_grad()
        loss.backward()
        opt.step()
        tot, k = tot + float(loss.detach()), k + 1
        if (step + 1) % every == 0 or step + 1 == steps:
            curve.append(("s3_loss", step + 1, tot / k))
            tot, k = 0.0, 0
    return model


# ------------------------------------------------------------------------------------------
# evaluation records
# ------------------------------------------------------------------------------------------


@torch.no_grad()
def records(model, m0, D) -> dict[str, np.ndarray]:
    """Per-prompt records of one model: refusal probability and margin (M0's u, this model's
    per-language statistics) of every held-out prompt in every language, topic predictions,
    and the English drift mean ||h - h_M0|| / mean ||h_M0|| on the English held-out prompts."""
    model.eval()
    ev, u = D["eval_tok"], D["u"]
    L, n, T = ev.shape
    h = model(ev.reshape(L * n, T)).reshape(L, n, -1)
    prob = torch.sigmoid(model.refusal_logit(h))
    mu, sd = margin_stats(model, D["ref_harmless"], u)
    marg = (h @ u - mu[:, None]) / sd[:, None]
    tt = D["topic_test"]
    Lt, nt, _ = tt.shape
    pred = model.topic(model(tt.reshape(Lt * nt, T))).argmax(-1).reshape(Lt, nt)
    h0 = m0(ev[0])
    drift = (h[0] - h0).norm(dim=-1).mean() / h0.norm(dim=-1).mean()
    model.train()
    return {"prob": prob.double().cpu().numpy(), "margin": marg.double().cpu().numpy(),
            "topic_pred": pred.cpu().numpy(), "drift": np.array(float(drift))}


def to_device(data: dict, prefix: str, dev) -> dict:
    """The arrays of one seed (``prefix`` stripped) as tensors on ``dev``: ids long, labels
    float for BCE, long for topics."""
    out = {}
    for k, v in data.items():
        if not k.startswith(prefix):
            continue
        name = k[len(prefix):]
        t = torch.as_tensor(np.asarray(v))
        if name in ("safety_y", "s3_y"):
            t = t.float()
        out[name] = t.to(dev)
    return out


def n_steps(n: int, batch: int) -> int:
    return math.ceil(n / batch)
