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
The CNN is computed on packed batches (every string's own positions only, no padding), with
its gradients written out, and the students of a seed train side by side as one stack
(parameters with a leading model axis, each model its own initialisation, batch stream and
Adam state): the same numbers as training each alone, up to float rounding (tested).
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


def pack(ids: np.ndarray, lens: np.ndarray, gap: int) -> tuple[np.ndarray, np.ndarray]:
    """Pack a batch's strings into one row, ``gap`` pad ids after each string (the CNN's
    convolutions reach ``gap`` = kernel // 2 positions, padding is zero before and after each
    of them, so no string sees another). Returns (flat ids (T,), pool index (B, crop)): the
    packed position of each string's characters, -1 past a string's end."""
    lens = np.asarray(lens, np.int64)
    crop = max(int(lens.max()) if len(lens) else 0, 1)
    starts = np.concatenate([[0], np.cumsum(lens + gap)[:-1]]).astype(np.int64)
    cols = np.arange(crop)
    inside = cols[None, :] < lens[:, None]
    pos = starts[:, None] + cols[None, :]
    flat = np.zeros(int((lens + gap).sum()), np.int64)
    flat[pos[inside]] = ids[:, :crop][inside]
    return flat, np.where(inside, pos, -1)


class PackedBatch:
    """One minibatch for each of G models (the active ones of a stack), packed into one row:
    model g's strings (``pack``) fill rows [seg[g], seg[g + 1]); per-example inputs are padded
    to the largest batch (``valid`` marks the real rows), the pool index of every padding or
    past-the-end position points at row T (a zero row)."""

    def __init__(self, ids_list, lens_list, last_list, err_list, step_list, gap: int, device):
        G = len(ids_list)
        flats, pools, seg = [], [], [0]
        for ids, lens in zip(ids_list, lens_list, strict=True):
            fl, po = pack(ids, lens, gap)
            flats.append(fl)
            pools.append(po)
            seg.append(seg[-1] + len(fl))
        T = seg[-1]
        Bm = max(max((len(x) for x in lens_list), default=0), 1)
        crop = max((p.shape[1] for p in pools), default=1)
        pool = np.full((G, Bm, crop), T, np.int64)
        per = np.zeros((3, G, Bm), np.int64)
        valid = np.zeros((G, Bm), bool)
        for g, po in enumerate(pools):
            B, c = po.shape
            pool[g, :B, :c] = np.where(po >= 0, po + seg[g], T)
            per[0, g, :B], per[1, g, :B] = last_list[g], err_list[g]
            per[2, g, :B] = step_list[g]
            valid[g, :B] = True
        flat = np.concatenate(flats) if flats else np.zeros(0, np.int64)
        row_model = np.repeat(np.arange(G), np.diff(seg))
        # the example each row belongs to (g * B + b); gap rows to a spare slot G * B
        row_ex = np.full(T, G * Bm, np.int64)
        inside = pool < T
        row_ex[pool[inside]] = np.broadcast_to(
            np.arange(G * Bm).reshape(G, Bm, 1), pool.shape)[inside]
        t = lambda a: torch.as_tensor(a, device=device)  # noqa: E731
        self.G, self.T, self.seg = G, T, seg
        self.flat, self.row_model, self.row_ex = t(flat), t(row_model), t(row_ex)
        self.B = Bm
        self.last, self.err, self.step = t(per[0]), t(per[1]), t(per[2])
        self.valid = t(valid)
        self.n = t(valid.sum(1))


def _unfold(h, k: int):
    """Windows of a same-padded Conv1d over the rows of ``h`` (T, C): (T, k C), column
    j C + c = tap j, channel c (five contiguous copies; a strided unfold is slower)."""
    T = h.shape[0]
    hp = F.pad(h, (0, 0, k // 2, k // 2))
    return torch.cat([hp[j:j + T] for j in range(k)], 1)


def _conv_mats(w):
    """Conv1d weights (G, C_out, C_in, k) as the (G, C_out, k C_in) matrices ``_unfold``'s
    columns need."""
    G, c_out, c_in, k = w.shape
    return w.permute(0, 1, 3, 2).reshape(G, c_out, k * c_in)


def _flipped_mats(w):
    """The matrices of the input gradient of a same-padded convolution (the kernel flipped,
    input and output channels swapped): (G, C_in, k C_out)."""
    G, c_out, c_in, k = w.shape
    return w.flip(3).permute(0, 2, 3, 1).reshape(G, c_in, k * c_out)


def _segment_mm(x, mats, seg, bias=None):
    """Row block [seg[g], seg[g + 1]) of ``x`` times ``mats[g]``^T (+ ``bias[g]``)."""
    out = x.new_empty(x.shape[0], mats.shape[1])
    for g in range(len(seg) - 1):
        s, e = seg[g], seg[g + 1]
        if bias is None:
            torch.mm(x[s:e], mats[g].T, out=out[s:e])
        else:
            torch.addmm(bias[g], x[s:e], mats[g].T, out=out[s:e])
    return out


def stacked_forward(P, pb: PackedBatch, max_steps: int):
    """The CNN of G models (parameters stacked on a leading axis, one per model of ``pb``) on
    their packed batches: the same function as ``forward`` per model (tested), computed on the
    strings' own positions only, channels last, each convolution one matrix product of the
    unfolded windows per model (torch's CPU convolution rebuilds its kernel for every new
    input length, which costs more than the arithmetic at these sizes). Returns the logits
    (G, B, n_tools) and what ``stacked_backward`` needs."""
    G, V, E = P["emb"].shape
    W, _, k = P["w1"].shape[1:]
    m = (pb.flat > 0).to(P["emb"].dtype)[:, None]                        # (T, 1)
    x = P["emb"].reshape(G * V, E).index_select(0, pb.row_model * V + pb.flat) * m
    u1 = _unfold(x, k)
    h1 = _segment_mm(u1, _conv_mats(P["w1"]), pb.seg, P["b1"]).clamp_(min=0).mul_(m)
    u2 = _unfold(h1, k)
    h2 = _segment_mm(u2, _conv_mats(P["w2"]), pb.seg, P["b2"]).clamp_(min=0).mul_(m)
    # global max-pool per string: every activation is >= 0 and a pad position is 0, so the
    # max over a string's rows, starting from 0, is the padded window's max
    B = pb.B
    pe = h2.new_zeros(G * B + 1, W).scatter_reduce_(
        0, pb.row_ex[:, None].expand(-1, W), h2, "amax", include_self=True)
    pooled = pe[:-1].view(G, B, W)
    n_act = P["act"].shape[1]
    a_idx = (torch.arange(G, device=pb.last.device)[:, None] * n_act + pb.last + 1)
    act = P["act"].reshape(G * n_act, -1).index_select(0, a_idx.reshape(-1)).view(G, B, -1)
    onehot = F.one_hot(pb.step.clamp(max=max_steps - 1), max_steps).to(pooled.dtype)
    z0 = torch.cat([pooled, act, pb.err[..., None].to(pooled.dtype), onehot], 2)
    z1 = torch.baddbmm(P["c1"][:, None, :], z0, P["m1"].transpose(1, 2)).clamp_(min=0)
    logits = torch.baddbmm(P["c2"][:, None, :], z1, P["m2"].transpose(1, 2))
    return logits, (m, x, u1, h1, u2, h2, pe, a_idx, z0, z1)


def stacked_backward(P, pb: PackedBatch, cache, gl) -> dict:
    """Gradients of every stacked parameter from d loss / d logits ``gl`` (G, B, n_tools),
    written out (autograd's rules, including amax's: the gradient is shared equally among tied
    maxima; padding rows of ``gl`` must be zero)."""
    m, x, u1, h1, u2, h2, pe, a_idx, z0, z1 = cache
    G, V, E = P["emb"].shape
    W, _, k = P["w1"].shape[1:]
    A = P["act"].shape[2]
    Gr = {"m2": gl.transpose(1, 2) @ z1, "c2": gl.sum(1)}
    gz1 = (gl @ P["m2"]) * (z1 > 0)
    Gr["m1"], Gr["c1"] = gz1.transpose(1, 2) @ z0, gz1.sum(1)
    gz0 = gz1 @ P["m1"]
    Gr["act"] = torch.zeros_like(P["act"]).view(-1, A).index_add_(
        0, a_idx.reshape(-1), gz0[..., W:W + A].reshape(-1, A)).view_as(P["act"])
    # amax's rule: the gradient is shared equally among a string's rows at its max; where the
    # max is 0 the ReLU passes nothing back, so only positive maxima count
    tie = ((h2 == pe.index_select(0, pb.row_ex)) & (h2 > 0)).to(h2.dtype)
    cnt = torch.zeros_like(pe).index_add_(0, pb.row_ex, tie).clamp_(min=1)
    gp = torch.cat([gz0[..., :W].reshape(-1, W), gz0.new_zeros(1, W)]) / cnt
    ga = tie.mul_(gp.index_select(0, pb.row_ex))
    seg = pb.seg
    rm = pb.row_model

    def weight_grads(u, ga_):
        gw = torch.stack([ga_[seg[j]:seg[j + 1]].T @ u[seg[j]:seg[j + 1]] for j in range(G)])
        return gw, h2.new_zeros(G, ga_.shape[1]).index_add_(0, rm, ga_)

    gw2, Gr["b2"] = weight_grads(u2, ga)
    Gr["w2"] = gw2.view(G, W, k, W).permute(0, 1, 3, 2)
    # input gradient of a same-padded convolution: the flipped kernel over the output grads
    ga = _segment_mm(_unfold(ga, k), _flipped_mats(P["w2"]), seg).mul_(h1 > 0)
    gw1, Gr["b1"] = weight_grads(u1, ga)
    Gr["w1"] = gw1.view(G, W, k, E).permute(0, 1, 3, 2)
    gx = _segment_mm(_unfold(ga, k), _flipped_mats(P["w1"]), seg).mul_(m)
    Gr["emb"] = torch.zeros_like(P["emb"]).view(G * V, E).index_add_(
        0, rm * V + pb.flat, gx).view_as(P["emb"])
    return Gr


def forward_packed(P, flat, pool, last, err, step, max_steps: int):
    """One model's logits (B, n_tools) on a batch packed by ``pack``."""
    pb = PackedBatch.__new__(PackedBatch)
    T = int(flat.shape[0])
    pb.G, pb.T, pb.seg, pb.flat = 1, T, [0, T], flat
    pb.row_model = torch.zeros_like(flat)
    B = pool.shape[0]
    pb.B = B
    pb.row_ex = torch.full((T,), B, dtype=flat.dtype, device=flat.device)
    ex = torch.arange(B, device=flat.device)[:, None].expand_as(pool)
    pb.row_ex[pool[pool >= 0]] = ex[pool >= 0]
    pb.last, pb.err, pb.step = last[None], err[None], step[None]
    return stacked_forward({k_: v[None] for k_, v in P.items()}, pb, max_steps)[0][0]


class StackedAdam:
    """``icml26.rl.optim.Adam`` for G models whose parameters lie end to end in the rows of
    one (G, n) tensor, each model with its own step count, so a model that sits out a step
    (its data ran out before the others') keeps its weights and moments unchanged."""

    def __init__(self, flat, lr: float, betas=(0.9, 0.999), eps: float = 1e-8):
        self.p, self.lr, self.b1, self.b2, self.eps = flat, float(lr), betas[0], betas[1], eps
        self.m, self.v = torch.zeros_like(flat), torch.zeros_like(flat)
        self.t = np.zeros(flat.shape[0], np.int64)

    @torch.no_grad()
    def step(self, grads, active: np.ndarray) -> None:
        """One update of the models ``active`` (indices, ascending) from ``grads`` (len(active),
        n)."""
        full = len(active) == self.p.shape[0]
        sel = None if full else torch.as_tensor(active, device=self.p.device)
        p, m, v = ((self.p, self.m, self.v) if full else
                   (self.p[sel], self.m[sel], self.v[sel]))
        self.t[active] += 1
        t = self.t[active].astype(np.float64)
        c1, c2 = 1 - self.b1 ** t, 1 - self.b2 ** t
        m.lerp_(grads, 1 - self.b1)
        v.mul_(self.b2).addcmul_(grads, grads, value=1 - self.b2)
        col = lambda a: torch.as_tensor(a, dtype=p.dtype, device=p.device)[:, None]  # noqa
        denom = v.sqrt().div_(col(c2 ** 0.5)).add_(self.eps)
        p.addcdiv_(m, denom.mul_(col(c1 / self.lr)), value=-1.0)
        if not full:
            self.p[sel], self.m[sel], self.v[sel] = p, m, v


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


def stack_params(models: list[dict]) -> dict:
    """Per-model parameter dicts -> one dict of (G, ...) tensors."""
    return {k: torch.stack([m_[k].detach() for m_ in models]) for k in models[0]}


def unstack_params(P: dict) -> list[dict]:
    G = next(iter(P.values())).shape[0]
    return [{k: v[g].clone() for k, v in P.items()} for g in range(G)]


def behaviour_clone_stacked(P: dict, pairs_list: list[dict], *, epochs: int, lr: float,
                            batch: int, bucket: int, max_steps: int, rngs: list,
                            device) -> tuple[dict, list[list[tuple]]]:
    """Behaviour cloning of G CNN students at once: model g starts from ``P``'s row g, trains
    on ``pairs_list[g]`` with its own batch order from ``rngs[g]`` (the draws ``behaviour_clone``
    makes alone) and its own Adam; at each step every model that still has a batch takes
    one (its cross-entropy, as in ``_behaviour_clone_autograd``; gradients written out). The
    models share nothing but the interpreter's time, so each ends where it would alone, up to
    float rounding (tested). Returns (trained stacked parameters, per-model [(epoch, loss,
    accuracy)])."""
    names = list(P)
    G = next(iter(P.values())).shape[0]
    shapes = {k: P[k].shape[1:] for k in names}
    sizes = [int(np.prod(shapes[k])) for k in names]
    flat = torch.cat([P[k].detach().reshape(G, -1) for k in names], 1).to(device)
    opt = StackedAdam(flat, lr)
    gap = P["w1"].shape[3] // 2
    sched = [[(e, b) for e in range(epochs) for b in _batches(pr["lens"], batch, bucket, r)]
             for pr, r in zip(pairs_list, rngs, strict=True)]
    tot = np.zeros((G, epochs))
    hit = np.zeros((G, epochs))
    with torch.no_grad():
        for i in range(max((len(s_) for s_ in sched), default=0)):
            active = np.array([g for g in range(G) if i < len(sched[g])], np.int64)
            bs = [sched[g][i][1] for g in active]
            prs = [pairs_list[g] for g in active]
            pb = PackedBatch([pr["ids"][b] for pr, b in zip(prs, bs, strict=True)],
                             [pr["lens"][b] for pr, b in zip(prs, bs, strict=True)],
                             [pr["last"][b] for pr, b in zip(prs, bs, strict=True)],
                             [pr["err"][b] for pr, b in zip(prs, bs, strict=True)],
                             [pr["t"][b] for pr, b in zip(prs, bs, strict=True)], gap, device)
            rows = flat if len(active) == G else flat[torch.as_tensor(active, device=device)]
            Pa = {k: v.reshape(len(active), *shapes[k]) for k, v in
                  zip(names, rows.split(sizes, 1), strict=True)}
            logits, cache = stacked_forward(Pa, pb, max_steps)
            y = np.zeros(pb.valid.shape, np.int64)
            for j, (pr, b) in enumerate(zip(prs, bs, strict=True)):
                y[j, :len(b)] = pr["act"][b]
            y = torch.as_tensor(y, device=device)
            logp = logits.log_softmax(2)
            vmask = pb.valid.to(logits.dtype)
            nll = -logp.gather(2, y[..., None])[..., 0] * vmask
            gl = logp.exp()
            gl.scatter_add_(2, y[..., None], -torch.ones_like(y[..., None], dtype=gl.dtype))
            gl.mul_((vmask / pb.n[:, None].to(gl.dtype))[..., None])
            Gr = stacked_backward(Pa, pb, cache, gl)
            opt.step(torch.cat([Gr[k].reshape(len(active), -1) for k in names], 1), active)
            hits = ((logits.argmax(2) == y) & pb.valid).sum(1)
            for g, s_, h_ in zip(active, nll.sum(1).tolist(), hits.tolist(), strict=True):
                tot[g, sched[g][i][0]] += s_
                hit[g, sched[g][i][0]] += h_
    out = {k: v.reshape(G, *shapes[k]) for k, v in zip(names, flat.split(sizes, 1),
                                                          strict=True)}
    logs = []
    for g, pr in enumerate(pairs_list):
        n = max(len(pr["lens"]), 1)
        logs.append([(e + 1, float(tot[g, e] / n), float(hit[g, e] / n))
                     for e in range(epochs)])
    return out, logs


def behaviour_clone(P: dict, pairs: dict, *, epochs: int, lr: float, batch: int, bucket: int,
                    max_steps: int, rng: np.random.Generator, device) -> list[tuple]:
    """Cross-entropy on the teacher's action at every step (observations are inputs only, as
    the official SFT records mask the user turns). Adam; returns [(epoch, loss, accuracy)].
    ``P`` is updated in place. The CNN goes through ``behaviour_clone_stacked`` (one model),
    the GRU through autograd."""
    if "w1" not in P:
        return _behaviour_clone_autograd(P, pairs, epochs=epochs, lr=lr, batch=batch,
                                         bucket=bucket, max_steps=max_steps, rng=rng,
                                         device=device)
    out, logs = behaviour_clone_stacked(stack_params([P]), [pairs], epochs=epochs, lr=lr,
                                        batch=batch, bucket=bucket, max_steps=max_steps,
                                        rngs=[rng], device=device)
    with torch.no_grad():
        for k in P:
            P[k].copy_(out[k][0])
    return logs[0]


def _behaviour_clone_autograd(P: dict, pairs: dict, *, epochs: int, lr: float, batch: int,
                              bucket: int, max_steps: int, rng: np.random.Generator,
                              device) -> list[tuple]:
    """``behaviour_clone`` with autograd on padded batches (cropped to the longest string):
    the GRU's path, and the reference the CNN's written-out gradients are tested against."""
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
        t = lambda a: torch.as_tensor(np.asarray(a), device=self.device)  # noqa: E731
        rest = (t([s["last"] for s in states]), t([s["err"] for s in states]),
                t([s["t"] for s in states]))
        if "w1" in self.P:      # the CNN on the strings' own positions (no padding)
            flat, pool = pack(ids, lens, self.P["w1"].shape[2] // 2)
            logits = forward_packed(self.P, t(flat), t(pool), *rest, self.max_steps)
        else:
            crop = max(int(lens.max()), 1)
            logits = forward(self.P, t(ids[:, :crop]), t(lens), *rest, self.max_steps)
        return [Call(self.tools[int(a)]) for a in logits.argmax(1).cpu().numpy()]


class StackedGreedyPolicy:
    """Greedy policy of G stacked CNN students for one ``run_batch`` over all their episodes:
    episode i belongs to model ``owner[i]``; each step is one stacked forward pass."""

    def __init__(self, P, owner, tools, max_len: int, max_steps: int, device):
        self.P, self.owner, self.tools = P, np.asarray(owner), tuple(tools)
        self.max_len, self.max_steps, self.device = max_len, max_steps, device
        self.G = next(iter(P.values())).shape[0]

    @torch.no_grad()
    def __call__(self, states, trajs, live):
        from icml26.agents import Call

        ids, lens = char_ids([s["s"] for s in states], self.max_len)
        per = np.array([[s["last"], s["err"], s["t"]] for s in states], np.int64).reshape(-1, 3)
        own = self.owner[np.asarray(live, np.int64)]
        groups = [np.flatnonzero(own == g) for g in range(self.G)]
        active = [g for g in range(self.G) if len(groups[g])]
        pb = PackedBatch([ids[groups[g]] for g in active], [lens[groups[g]] for g in active],
                         [per[groups[g], 0] for g in active], [per[groups[g], 1] for g in active],
                         [per[groups[g], 2] for g in active], self.P["w1"].shape[3] // 2,
                         self.device)
        sel = torch.as_tensor(active, device=self.device)
        logits, _ = stacked_forward({k: v.index_select(0, sel) for k, v in self.P.items()}, pb,
                                    self.max_steps)
        best = logits.argmax(2).cpu().numpy()
        act = np.empty(len(states), np.int64)
        for j, g in enumerate(active):
            act[groups[g]] = best[j, :len(groups[g])]
        return [Call(self.tools[int(a)]) for a in act]
