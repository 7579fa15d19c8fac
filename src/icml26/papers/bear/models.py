"""The tiny vision-question scorers (torch), stacked over seeds: every parameter has a leading
axis S (one independent model per seed; convolutions are grouped by seed), so one forward pass
trains or scores all seeds of a zoo model at once.

- image/clip encoder (plain; frozen in the agent, which reads its embedding only, the spec's
  [image embedding; tool-output embedding]): frames on channels (3F x H x W) ->
  Conv(3F->w, 3) -> ReLU -> Conv(w->2w, 3, stride 2) -> ReLU -> Conv(2w->2w, 3, stride 2) ->
  flatten -> Linear(->128) (the spec's encoder);
- object-list encoder (oracle perception: ground-truth objects; agent: the tools' detections);
- question encoder: sum of embeddings of the skill, the named objects and the extreme word;
- option encoder: MLP on normalised coordinates (points, boxes) + embeddings of categorical
  tokens (directions, relations, counts, object names, free / not free);
- **grounding (ours, a departure from the spec's concatenation scorer):** each option is also
  grounded in the context, the same way for every variant that has one. With an image, a
  candidate point / box reads the feature maps at its location (the first conv map pooled
  inside the box and on its 1-px ring, the second sampled at its centre: "pointing by
  features"), and every named object (options, question targets, plus a skill query that can
  find e.g. the moving or the leftmost object) is found by attention over the second conv
  map's 10 x 10 cells (soft position + pooled features). With an object list, a candidate
  point / box is compared with every object (option minus each object's box and per-frame
  centre, through a small MLP, pooled with the question's attention over objects) and named
  objects are looked up by identity (an object list names its objects; issue 18), the skill
  query by a learned attention over the objects. Relational features (option position minus
  each question entity's position) follow in both cases;
- scorer: MLP([context; question; option; grounding] -> 128 -> 1), softmax over the 4 options.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .features import TOK_OBJ, VOCAB

D_Q = 32
D_OPT = 32
D_CTX = 128
HIDDEN = 128
DA = 16          # attention key / query width
DV = 32          # attended value width
DR = 32          # option-object relation width
DG = 64          # grounding output width of a pathway


def _token_identity() -> torch.Tensor:
    """(VOCAB, 7): colour and shape one-hot of each object token (features.obj_token), zero for
    every other token."""
    t = torch.zeros(VOCAB, 7)
    for c in range(4):
        for s in range(3):
            k = TOK_OBJ + 3 * c + s
            t[k, c] = 1.0
            t[k, 4 + s] = 1.0
    return t


TOK_IDENT = _token_identity()


def _uniform(gens, shape, fan_in):
    b = 1.0 / math.sqrt(fan_in)
    return torch.stack([(torch.rand(shape, generator=g) * 2 - 1) * b for g in gens])


def _normal(gens, shape, sd=0.3):
    return torch.stack([torch.randn(shape, generator=g) * sd for g in gens])


def _linear(gens, n_in, n_out, name, p):
    p[f"{name}.w"] = _uniform(gens, (n_in, n_out), n_in)
    p[f"{name}.b"] = _uniform(gens, (n_out,), n_in)


def conv_out(size: int) -> int:
    s = size - 2                      # 3x3, no padding
    s = (s - 3) // 2 + 1              # stride 2
    return (s - 3) // 2 + 1


def conv2_out(size: int) -> int:
    return (size - 2 - 3) // 2 + 1


def _pathway(gens, p, pre, d_tok, d_pos, d_geo, d_key=None, d_extra=0):
    """Parameters of one grounding pathway over tokens of width d_tok with positions d_pos
    (``d_key``: width of the attention keys' input, default d_tok; ``d_extra``: fixed
    per-option features appended before the output layer)."""
    _linear(gens, d_tok if d_key is None else d_key, DA, f"{pre}.key", p)
    _linear(gens, d_tok, DV, f"{pre}.val", p)
    p[f"{pre}.q_obj"] = _normal(gens, (VOCAB, DA))
    p[f"{pre}.q_skill"] = _normal(gens, (12, DA))
    p[f"{pre}.q_aux"] = _normal(gens, (5, DA))
    _linear(gens, d_geo, DG, f"{pre}.geo", p)
    n_in = DG + 4 * DV + 4 * d_pos + 3 * d_pos + d_extra
    _linear(gens, n_in, DG, f"{pre}.out", p)


def init(gens, kind: str, *, width: int = 8, frames: int = 4, size: int = 24,
         slot_dim: int = 0) -> dict:
    """Parameters of S stacked models (one CPU generator per seed). ``kind``: plain (CNN
    context), agent (frozen CNN + tool object list), oracle (ground-truth object list) or prior
    (no context). ``width`` is the CNN width (plain and agent: the frozen encoder's)."""
    p: dict = {}
    w, c = width, 3 * frames
    if kind == "plain":
        p["c1.w"] = _uniform(gens, (w, c, 3, 3), c * 9)
        p["c1.b"] = _uniform(gens, (w,), c * 9)
        p["c2.w"] = _uniform(gens, (2 * w, w, 3, 3), w * 9)
        p["c2.b"] = _uniform(gens, (2 * w,), w * 9)
        p["c3.w"] = _uniform(gens, (2 * w, 2 * w, 3, 3), 2 * w * 9)
        p["c3.b"] = _uniform(gens, (2 * w,), 2 * w * 9)
        _linear(gens, 2 * w * conv_out(size) ** 2, D_CTX, "fc", p)
    if kind == "plain":
        _pathway(gens, p, "img", 2 * w, 2, 4 * w)
    if kind in ("oracle", "agent"):
        _linear(gens, slot_dim, DR, "rel_slot", p)
        _linear(gens, 4 + 2 * frames, DR, "rel_geo", p)
        _linear(gens, DR, DR, "rel2", p)
        _pathway(gens, p, "obj", slot_dim, 2 * frames, 3 * DR, d_key=slot_dim + 1, d_extra=1)
        _linear(gens, DV, D_CTX, "octx", p)
    p["e_skill"] = _normal(gens, (12, D_Q))
    p["e_obj"] = _normal(gens, (13, D_Q))
    p["e_aux"] = _normal(gens, (5, D_Q))
    _linear(gens, 4, D_OPT, "g1", p)
    _linear(gens, D_OPT, D_OPT, "g2", p)
    p["e_tok"] = _normal(gens, (VOCAB, D_OPT))
    n_ctx = {"plain": D_CTX + DG, "oracle": D_CTX + DG, "agent": 2 * D_CTX + DG,
             "prior": 0}[kind]
    _linear(gens, n_ctx + D_Q + D_OPT, HIDDEN, "s1", p)
    _linear(gens, HIDDEN, 1, "s2", p)
    return p


def _lin(p, name, x):
    """x (S, ..., in) @ w (S, in, out) + b."""
    S = x.shape[0]
    y = torch.bmm(x.reshape(S, -1, x.shape[-1]), p[f"{name}.w"])
    return (y + p[f"{name}.b"][:, None]).reshape(*x.shape[:-1], -1)


def cnn_maps(p, img):
    """img (S, B, 3F, H, W) -> conv1 map (S, B, w, H-2, W-2), conv2 map (S, B, 2w, h2, h2),
    global embedding (S, B, 128); seeds are the groups of the convolutions."""
    S, B = img.shape[:2]
    x = img.transpose(0, 1).reshape(B, S * img.shape[2], *img.shape[3:])
    m1 = F.relu(F.conv2d(x, p["c1.w"].flatten(0, 1), p["c1.b"].flatten(), groups=S))
    m2 = F.relu(F.conv2d(m1, p["c2.w"].flatten(0, 1), p["c2.b"].flatten(), stride=2, groups=S))
    x = F.conv2d(m2, p["c3.w"].flatten(0, 1), p["c3.b"].flatten(), stride=2, groups=S)
    x = x.reshape(B, S, -1).transpose(0, 1)

    def unstack(m):
        return m.reshape(B, S, -1, *m.shape[2:]).transpose(0, 1)
    return unstack(m1), unstack(m2), _lin(p, "fc", x)


def cnn(p, img):
    """The global image embedding (S, B, 128)."""
    return cnn_maps(p, img)[2]


def _gather(table, tok):
    """table (S, V, d), tok (S, ...) -> (S, ..., d)."""
    S = table.shape[0]
    idx = torch.arange(S, device=tok.device).reshape(S, *([1] * (tok.dim() - 1)))
    return table[idx, tok]


def _queries(p, pre, batch):
    """(S, B, 7, DA): the 4 options' object queries, the 2 named targets, the skill query."""
    qo = _gather(p[f"{pre}.q_obj"], batch["o_tok"][..., 0])
    qt = _gather(p[f"{pre}.q_obj"], batch["q_obj"])
    qs = (_gather(p[f"{pre}.q_skill"], batch["q_skill"])
          + _gather(p[f"{pre}.q_aux"], batch["q_aux"]))[:, :, None]
    return torch.cat([qo, qt, qs], 2)


def _attend(p, pre, tok, pos, mask, batch, named=None, key_in=None):
    """Attention of the 7 queries over the tokens: weights (S, B, 7, N), positions (.., Dp),
    values (.., DV). ``named`` (S, B, 6, N): fixed weights of the 6 named-object queries (the
    object-list pathway: a name is looked up by its identity); the skill query stays learned.
    ``key_in``: the keys' input (default the tokens)."""
    k = _lin(p, f"{pre}.key", tok if key_in is None else key_in)     # (S, B, N, DA)
    logit = torch.einsum("sbqd,sbnd->sbqn", _queries(p, pre, batch), k) / math.sqrt(DA)
    if mask is not None:
        logit = logit.masked_fill(~mask[:, :, None], -1e9)
    a = torch.softmax(logit, -1)
    if named is not None:
        a = torch.cat([named, a[:, :, 6:]], 2)
    return a, a @ pos, a @ _lin(p, f"{pre}.val", tok)


def _combine(p, pre, geo, a_pos, a_val, opt_pos, batch, extra=None):
    """Per option: [geometric features; option value; 4 question-entity values; option minus
    entity positions; entity position differences] -> DG."""
    isobj = batch["o_isobj"][..., None]
    pos_k = torch.where(isobj > 0, a_pos[:, :, :4], opt_pos)          # (S, B, 4, Dp)
    ent = a_pos[:, :, 4:]                                             # (S, B, 3, Dp)
    diffs = (pos_k[:, :, :, None] - ent[:, :, None]).flatten(-2)      # (S, B, 4, 3 Dp)
    qv = a_val[:, :, 4:].flatten(-2)[:, :, None].expand(-1, -1, 4, -1)
    qp = torch.cat([ent[:, :, 0] - ent[:, :, 1], ent[:, :, 2] - ent[:, :, 0], ent[:, :, 2]],
                   -1)[:, :, None].expand(-1, -1, 4, -1)
    g = F.relu(_lin(p, f"{pre}.geo", geo)) * batch["o_isgeo"][..., None]
    x = torch.cat([g, a_val[:, :, :4] * isobj, qv, diffs, pos_k, qp]
                  + ([] if extra is None else [extra]), -1)
    return F.relu(_lin(p, f"{pre}.out", x))


def integral(m1):
    """Zero-padded integral image of the conv1 map: (S, B, C, h + 1, w + 1)."""
    return F.pad(m1.cumsum(-1).cumsum(-2), (1, 0, 1, 0))


class _Integral:
    """A precomputed integral image standing in for the conv1 map in ``_box_pool``."""

    def __init__(self, ii):
        self.ii = ii
        S, B, C, h1, w1 = ii.shape
        self.shape = (S, B, C, h1 - 1, w1 - 1)


def _box_pool(m1, geo_px):
    """Mean of the conv1 map inside each option's box and on its 1-px ring (integral image).
    m1 (S, B, C, h, w), geo_px (S, B, 4, 4) pixel boxes (y0, x0, y1, x1) -> (S, B, 4, 2C)."""
    S, B, C, h, w = m1.shape
    # (S, B, C, (h+1)(w+1))
    ii = (m1.ii if isinstance(m1, _Integral) else integral(m1)).flatten(-2)

    def rect(y0, x0, y1, x1):              # inclusive conv1 index boxes, clipped
        y0, y1 = y0.clamp(0, h - 1), y1.clamp(0, h - 1)
        x0, x1 = x0.clamp(0, w - 1), x1.clamp(0, w - 1)
        y1, x1 = torch.maximum(y1, y0), torch.maximum(x1, x0)
        idx = torch.stack([(y1 + 1) * (w + 1) + x1 + 1, y0 * (w + 1) + x1 + 1,
                           (y1 + 1) * (w + 1) + x0, y0 * (w + 1) + x0], -1)   # (S, B, 4, 4)
        v = torch.gather(ii, 3, idx.reshape(S, B, 1, 16).expand(-1, -1, C, -1))
        v = v.reshape(S, B, C, 4, 4)
        tot = v[..., 0] - v[..., 1] - v[..., 2] + v[..., 3]             # (S, B, C, 4)
        n = ((y1 - y0 + 1) * (x1 - x0 + 1)).float()                     # (S, B, 4)
        return tot.transpose(2, 3), n[..., None]

    g = geo_px.round().long() - 1                                         # pixel -> conv1 index
    y0, x0, y1, x1 = g.unbind(-1)
    s_in, n_in = rect(y0, x0, y1, x1)
    s_out, n_out = rect(y0 - 1, x0 - 1, y1 + 1, x1 + 1)
    ring = (s_out - s_in) / (n_out - n_in).clamp(min=1)
    return torch.cat([s_in / n_in, ring], -1)


def image_ground(p, m1, m2, batch, size):
    """The image pathway: (S, B, 4, DG)."""
    S, B, C2, h2, _ = m2.shape
    tok = m2.flatten(-2).transpose(-1, -2)                               # (S, B, N, C2)
    j = torch.arange(h2, device=m2.device, dtype=tok.dtype)
    cy, cx = torch.meshgrid((2 * j + 2) / size, (2 * j + 2) / size, indexing="ij")
    pos = torch.stack([cy.flatten(), cx.flatten()], -1).expand(S, B, -1, -1)
    a, a_pos, a_val = _attend(p, "img", tok, pos, None, batch)
    geo = batch["o_geo"]                                                  # normalised boxes
    opt_pos = torch.stack([(geo[..., 0] + geo[..., 2]) / 2, (geo[..., 1] + geo[..., 3]) / 2], -1)
    pooled = _box_pool(m1, geo * size)
    # conv2 sampled at the option's centre (bilinear; conv2 cell j sits at pixel 2j + 2)
    c = opt_pos * size
    grid = ((c - 2) / 2 / (h2 - 1) * 2 - 1).flip(-1).reshape(S * B, 4, 1, 2)
    samp = F.grid_sample(m2.reshape(S * B, C2, h2, h2), grid, align_corners=True)
    samp = samp.reshape(S, B, C2, 4).transpose(2, 3)
    return _combine(p, "img", torch.cat([pooled, samp], -1), a_pos, a_val, opt_pos, batch)


def named_lookup(slots, batch, frames):
    """Perfect (or tool) perception names every object, so a named object (each option's and
    the question's two) is looked up by identity (colour, shape), not by a learned attention:
    weights (S, B, 6, N) (one-hot on the object with that identity, zero when the scene has
    none) and a found flag per option (S, B, 4, 1; object options only)."""
    mask = slots[..., -1] > 0
    ident = slots[..., 6 * frames:6 * frames + 7]                           # colour, shape
    toks = torch.cat([batch["o_tok"][..., 0], batch["q_obj"]], -1)          # (S, B, 6)
    tv = TOK_IDENT.to(slots.device)[toks]                                   # (S, B, 6, 7)
    named = ((torch.einsum("sbqc,sbnc->sbqn", tv, ident) > 1.5) & mask[:, :, None]).float()
    found = named[:, :, :4].sum(-1, keepdim=True) * batch["o_isobj"][..., None]
    return named, found


def object_ground(p, slots, batch, frames):
    """The object-list pathway (slots: (S, B, 4, slot_dim), laid out as features.SLOT_*):
    (S, B, 4, DG) and a pooled context (S, B, D_CTX)."""
    mask = slots[..., -1] > 0
    cen = slots[..., :2 * frames]                                           # per-frame centres
    box0 = slots[..., 2 * frames:2 * frames + 4]                            # frame-0 box
    named, found = named_lookup(slots, batch, frames)
    # the skill query's keys also see each object's motion (displacement first -> last frame)
    disp = (cen[..., -2:] - cen[..., :2]).norm(dim=-1, keepdim=True)
    a, a_pos, a_val = _attend(p, "obj", slots, cen, mask, batch, named=named,
                              key_in=torch.cat([slots, disp], -1))
    geo = batch["o_geo"]
    opt_c = torch.stack([(geo[..., 0] + geo[..., 2]) / 2, (geo[..., 1] + geo[..., 3]) / 2], -1)
    # option x object relations: option box minus object box, option centre minus centres
    rel = torch.cat([geo[:, :, :, None] - box0[:, :, None],
                     (opt_c.repeat(1, 1, 1, frames)[:, :, :, None] - cen[:, :, None])], -1)
    h = F.relu(_lin(p, "rel_geo", rel) + _lin(p, "rel_slot", slots)[:, :, None])
    h = F.relu(_lin(p, "rel2", h))                                         # (S, B, 4, N, DR)
    wt = a[:, :, 4:]                                                        # targets, skill query
    pooled = torch.einsum("sbqn,sbknd->sbkqd", wt[:, :, [0, 2]], h).flatten(-2)
    mx = h.masked_fill(~mask[:, :, None, :, None], 0.0).amax(3)          # h >= 0 (ReLU)
    opt_pos = opt_c.repeat(1, 1, 1, frames)
    g = _combine(p, "obj", torch.cat([pooled, mx], -1), a_pos, a_val, opt_pos, batch,
                 extra=found)
    ctx = _lin(p, "octx", (a_val[:, :, 4:]).mean(2))
    return g, ctx


def score(p, kind, batch, encoder=None, size: int = 24):
    """Option logits (S, B, 4). ``batch`` holds the item arrays stacked (S, B, ...);
    ``encoder``: the agent's frozen image encoder (the plain model's parameters). A batch that
    carries ``ii``, ``m2``, ``emb`` (a frozen encoder's maps: the conv1 integral image, conv2,
    embedding) skips the CNN."""
    ctx = []
    if kind == "plain":
        if "ii" in batch:             # the frozen encoder's maps, computed once per item
            m1, m2, emb = _Integral(batch["ii"]), batch["m2"], batch["emb"]
        else:
            m1, m2, emb = cnn_maps(p, batch["img"])
        ctx += [emb, image_ground(p, m1, m2, batch, size)]
    elif kind == "agent":             # the spec's [image embedding; tool-output embedding]
        if "emb" in batch:            # the frozen encoder's embedding, computed once per item
            emb = batch["emb"]
        else:
            with torch.no_grad():
                emb = cnn(encoder, batch["img"])
        ctx += [emb]
    if kind in ("oracle", "agent"):
        frames = (p["rel_geo.w"].shape[1] - 4) // 2
        g, octx = object_ground(p, batch["slots"], batch, frames)
        ctx += [octx, g]
    q = (_gather(p["e_skill"], batch["q_skill"]) + _gather(p["e_aux"], batch["q_aux"])
         + _gather(p["e_obj"], batch["q_obj"]).sum(-2))
    g = _lin(p, "g2", F.relu(_lin(p, "g1", batch["o_geo"]))) * batch["o_isgeo"][..., None]
    opt = g + _gather(p["e_tok"], batch["o_tok"]).sum(-2)
    parts = [q[:, :, None].expand(-1, -1, 4, -1), opt]
    for c in ctx:
        parts.insert(0, c[:, :, None].expand(-1, -1, 4, -1) if c.dim() == 3 else c)
    h = F.relu(_lin(p, "s1", torch.cat(parts, -1)))
    return _lin(p, "s2", h)[..., 0]


def loss_fn(logits, key):
    """Sum over seeds of each seed's mean cross-entropy (each seed's gradient is its own)."""
    S, B = key.shape
    return F.cross_entropy(logits.reshape(S * B, 4), key.reshape(-1), reduction="sum") / B


def numpy_params(p) -> dict:
    return {k: v.detach().cpu().numpy() for k, v in p.items()}


def as_tensors(arrs: dict, dev) -> dict:
    import numpy as np

    return {k: torch.as_tensor(np.ascontiguousarray(v), device=dev) for k, v in arrs.items()}
