"""The compact sanitizer (the "<= 4B model" stand-in) and the attribute tagger (torch).

Sanitizer: token embedding (48) -> two residual 1-D convolution blocks (kernel 5, GELU) ->
FiLM conditioning on the instruction (mean of the instruction-token embeddings -> MLP ->
per-channel scale and shift) -> linear head over the tags {keep, remove, abstract}. The full
profile swaps the second conv block for two transformer layers (INFERRED: no absolute
positions, the conv block gives local order, so whole records longer than the training chunks
stay in distribution). Trained with token cross-entropy on the decomposed chunks (AdamW);
used on whole records at test time (official run_benchmark.py: one prompt per record).

Attribute tagger (full-profile baseline): the same trunk without instruction conditioning,
predicting the subject-attribute category of each token (none + 14); its tags are mapped to
actions by rule (a category the instruction targets gets that action; linked attributes are
not handled: "knows PII, ignores instruction nuance").
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from icml26.lm.optim import AdamW

from .generator import A_ABSTRACT, A_KEEP, A_REMOVE, N_CAT, OWNER_SUBJECT, PAD, V

N_INSTR = 1 + 3 * N_CAT   # (category, action) pairs; 0 = padding


def instruction_ids(act) -> np.ndarray:
    """(n_records, 14) actions -> (n_records, 14) instruction-token ids (0 = none)."""
    act = np.asarray(act, dtype=np.int64)
    cat = np.arange(act.shape[-1])
    return np.where(act > 0, 1 + 3 * cat + (act - 1), 0)


class ConvBlock(nn.Module):
    def __init__(self, d: int, kernel: int):
        super().__init__()
        self.conv = nn.Conv1d(d, d, kernel, padding=kernel // 2)

    def forward(self, x, mask):          # x (B, d, L), mask (B, 1, L): channels first,
        return (x + nn.functional.gelu(self.conv(x))) * mask   # no transposed copies


class Tagger(nn.Module):
    """Conv (or conv + transformer) tagger, FiLM-conditioned on the instruction if film."""

    def __init__(self, d=48, kernel=5, film_hidden=64, n_out=3, arch="conv", film=True,
                 heads=4):
        super().__init__()
        self.emb = nn.Embedding(V, d, padding_idx=PAD)
        self.block1 = ConvBlock(d, kernel)
        self.arch = arch
        if arch == "conv":
            self.block2 = ConvBlock(d, kernel)
        else:
            self.layers = nn.ModuleList(
                nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, batch_first=True,
                                           norm_first=True) for _ in range(2))
        self.film = film
        if film:
            self.instr = nn.Embedding(N_INSTR, d, padding_idx=0)
            self.mlp = nn.Sequential(nn.Linear(d, film_hidden), nn.GELU(),
                                     nn.Linear(film_hidden, 2 * d))
        self.head = nn.Linear(d, n_out)

    def forward(self, tok, instr=None):
        mask = (tok != PAD).unsqueeze(1).to(self.emb.weight.dtype)      # (B, 1, L)
        h = self.emb(tok).transpose(1, 2).contiguous() * mask             # (B, d, L)
        h = self.block1(h, mask)
        if self.arch == "conv":
            h = self.block2(h, mask)
        else:
            h = h.transpose(1, 2)
            for layer in self.layers:
                h = layer(h, src_key_padding_mask=tok == PAD) * mask.transpose(1, 2)
            h = h.transpose(1, 2)
        if self.film:
            e = self.instr(instr)
            n = (instr != 0).sum(1, keepdim=True).clamp(min=1).to(e.dtype)
            gamma, beta = self.mlp(e.sum(1) / n).chunk(2, dim=-1)
            h = h * (1 + gamma[:, :, None]) + beta[:, :, None]
        return self.head(h.transpose(1, 2))


def n_params(model) -> int:
    return sum(p.numel() for p in model.parameters())


def _pad_rows(flat, ranges, fill=PAD):
    L = max(int(b - a) for a, b in ranges)
    out = np.full((len(ranges), L), fill, dtype=np.int64)
    for i, (a, b) in enumerate(ranges):
        out[i, :b - a] = flat[a:b]
    return out


def attribute_targets(split) -> np.ndarray:
    """Per-token subject-attribute category + 1 (0: not a subject attribute)."""
    y = np.zeros(len(split["tok"]), dtype=np.int64)
    for _, s, n, o, c in split["spans"]:
        if o == OWNER_SUBJECT:
            y[s:s + n] = c + 1
    return y


def bucketed_batches(rng, lengths, B: int, pool: int = 16) -> list:
    """One epoch of batches: a random permutation, cut into pools of ``pool`` batches, each
    pool sorted by length (less padding), batches in random order; every chunk once."""
    order = rng.permutation(len(lengths))
    batches = []
    for s in range(0, len(order), pool * B):
        part = order[s:s + pool * B]
        part = part[np.argsort(lengths[part], kind="stable")]
        batches += [part[i:i + B] for i in range(0, len(part), B)]
    return [batches[i] for i in rng.permutation(len(batches))]


def train_tagger(split, labels, chunk_idx, p, seed: int, device, n_steps=None,
                 attribute=False):
    """Train on the chunks ``chunk_idx`` of ``split`` with per-token ``labels``.

    Batches of p["batch"] chunks, exactly ``n_steps`` steps (default: 2 epochs), cycling
    through reshuffled passes. Returns the model, the per-step losses and steps per epoch.
    """
    torch.manual_seed(seed % (2**63))
    model = Tagger(p["d_model"], p["kernel"], p["film_hidden"],
                   n_out=N_CAT + 1 if attribute else 3, arch=p["arch"],
                   film=not attribute).to(device)
    opt = AdamW(model.parameters(), lr=p["lr"], betas=(0.9, 0.999),
                weight_decay=p["weight_decay"])
    chunks = split["chunks"][chunk_idx]
    ranges = [(int(a), int(b)) for _, a, b in chunks]
    tok = torch.as_tensor(_pad_rows(split["tok"], ranges))
    lab = torch.as_tensor(_pad_rows(labels, ranges, fill=-100))
    lab[tok == PAD] = -100
    ins = torch.as_tensor(instruction_ids(split["act"][chunks[:, 0]]))
    tok, lab, ins = tok.to(device), lab.to(device), ins.to(device)
    rng = np.random.default_rng(seed)
    B = int(p["batch"])
    per_epoch = int(np.ceil(len(ranges) / B))
    total = int(n_steps) if n_steps is not None else per_epoch * int(p.get("epochs", 2))
    lengths = np.array([b - a for a, b in ranges])
    losses, batches = [], []
    for _step in range(total):
        if not batches:
            batches = bucketed_batches(rng, lengths, B)
        idx = torch.as_tensor(batches.pop(), device=device)
        t = tok[idx]
        L = int((t != PAD).sum(1).max())
        logits = model(t[:, :L], ins[idx])
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                           lab[idx][:, :L].reshape(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return model, np.array(losses), per_epoch


@torch.no_grad()
def predict(model, split, device, batch: int = 64, attribute=False) -> np.ndarray:
    """Tags over a split's flat tokens, one whole record per sequence (no chunking)."""
    model.eval()
    off = split["rec_off"]
    out = np.zeros(len(split["tok"]), dtype=np.int64)
    ins_all = instruction_ids(split["act"])
    n = len(off) - 1
    for s in range(0, n, batch):
        rs = range(s, min(s + batch, n))
        ranges = [(int(off[r]), int(off[r + 1])) for r in rs]
        tok = torch.as_tensor(_pad_rows(split["tok"], ranges), device=device)
        ins = torch.as_tensor(ins_all[list(rs)], device=device)
        pred = model(tok, None if attribute else ins).argmax(-1).cpu().numpy()
        for i, (a, b) in enumerate(ranges):
            out[a:b] = pred[i, :b - a]
    model.train()
    return out


def attribute_to_tags(split, cats) -> np.ndarray:
    """Rule: a token tagged as category c gets the instruction's action for c."""
    tags = np.zeros(len(split["tok"]), dtype=np.int8)
    off = split["rec_off"]
    for r in range(len(off) - 1):
        a, b = int(off[r]), int(off[r + 1])
        c = np.asarray(cats[a:b])
        act = np.concatenate([[0], split["act"][r]])[c]
        tags[a:b] = np.where(act == A_REMOVE, 1, np.where(act == A_ABSTRACT, 2, 0))
    return tags


__all__ = ["Tagger", "train_tagger", "predict", "attribute_to_tags", "attribute_targets",
           "instruction_ids", "n_params", "A_KEEP"]
