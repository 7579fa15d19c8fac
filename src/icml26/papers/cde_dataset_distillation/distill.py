"""Dataset distillation methods (imports torch): DM, GM, TM (MTT-lite) and the random real
subset they all start from.

A run (method, setting, seed) distils one synthetic set per IPC of the grid. Its sets are
stored concatenated, IPC by IPC, each block class-major (IPC rows of class 0, then class 1,
...), with hard labels. Every set starts from random real training images (``initial_subset``,
shared by all methods of a seed: the random-subset baseline is exactly that start) and is
optimised with Adam (lr 0.05, pixels unconstrained) for a fixed number of iterations.
Jobs (runs) are stacked on a leading axis; each keeps its own random streams (numpy and
torch generators seeded from the run), so a run's numbers do not depend on its batch-mates.
Within one run the sets of all IPC values see the same random networks, real batches and
augmentation draws at each iteration (common random numbers across k; their losses are
separate sums, and Adam is elementwise, so each set is still optimised on its own).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from icml26.rl.optim import Adam

from . import nets
from .configs import hidden_sizes, shift_table

N_CLASSES = 10


def layout(ipcs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels (N,), ipc of each row (N,), block offsets (n_ipc + 1,)) of the concatenated sets."""
    labels, which, offs = [], [], [0]
    for q in ipcs:
        labels.append(np.repeat(np.arange(N_CLASSES), q))
        which.append(np.full(N_CLASSES * q, q))
        offs.append(offs[-1] + N_CLASSES * q)
    return np.concatenate(labels), np.concatenate(which), np.array(offs)


def initial_subset(y_train: np.ndarray, ipcs, seeds_per_ipc) -> np.ndarray:
    """Rows of the training set forming each IPC's random real subset (class-major, drawn
    without replacement from each class with the generator seeded ``seeds_per_ipc[i]``)."""
    rows = []
    for q, s in zip(ipcs, seeds_per_ipc, strict=True):
        g = np.random.default_rng(int(s))
        for c in range(N_CLASSES):
            members = np.flatnonzero(y_train == c)
            rows.append(g.choice(members, size=q, replace=False))
    return np.concatenate(rows)


class RealSampler:
    """Per-run real batches: ``per_class`` distinct images of every class per call."""

    def __init__(self, y_train: np.ndarray, per_class: int, rng: np.random.Generator):
        counts = np.bincount(y_train, minlength=N_CLASSES)
        self.members = np.zeros((N_CLASSES, counts.max()), dtype=np.int64)
        self.valid = np.zeros_like(self.members, dtype=bool)
        for c in range(N_CLASSES):
            m = np.flatnonzero(y_train == c)
            self.members[c, : len(m)] = m
            self.valid[c, : len(m)] = True
        self.k = min(int(per_class), int(counts.min()))
        self.rng = rng

    def draw(self) -> np.ndarray:
        keys = self.rng.random(self.members.shape)
        keys[~self.valid] = 2.0
        pos = np.argsort(keys, axis=1)[:, : self.k]
        return np.take_along_axis(self.members, pos, axis=1).ravel()   # class-major


class SiameseAug:
    """The sampled configuration's augmentation applied to real and synthetic batches alike
    (DSA-style: one translation per run and iteration for both; noise drawn per pixel)."""

    def __init__(self, side: int, sigma: float, device):
        self.table = torch.as_tensor(shift_table(side), device=device)
        self.sigma, self.device = float(sigma), device

    def __call__(self, xs, kinds, shifts, tgens, noise=True):
        """xs: tensors (R, ..., d); kinds[r] none|noise|translate; shifts[r] shift id."""
        out = []
        for x in xs:
            R = x.shape[0]
            if noise and any(k == "noise" for k in kinds):
                z = torch.zeros(x.shape)
                for r in range(R):
                    if kinds[r] == "noise":
                        z[r] = torch.randn(x.shape[1:], generator=tgens[r]) * self.sigma
                x = x + z.to(x.device)
            if any(k == "translate" for k in kinds):
                ids = torch.as_tensor([s if k == "translate" else 4
                                       for k, s in zip(kinds, shifts, strict=True)],
                                      device=x.device)
                idx = self.table[ids]                                      # (R, d)
                shape = x.shape
                flat = x.reshape(R, -1, shape[-1])
                pad = torch.cat([flat, torch.zeros(R, flat.shape[1], 1, device=x.device,
                                                   dtype=x.dtype)], dim=2)
                flat = torch.gather(pad, 2, idx[:, None, :].expand(-1, flat.shape[1], -1))
                x = flat.reshape(shape)
            out.append(x)
        return out

    def translate_adjoint(self, g, kinds, shifts):
        """Adjoint of the translation of ``__call__`` (the opposite shift, zero padded)."""
        return self([g], kinds, [8 - s for s in shifts], None, noise=False)[0]


def _gens(seeds):
    return ([np.random.default_rng(int(s)) for s in seeds],
            [torch.Generator().manual_seed(int(s) % (2**63)) for s in seeds])


# ------------------------------------------------------------------------------------------
# DM: distribution matching (Zhao & Bilen 2023)
# ------------------------------------------------------------------------------------------
def random_feature_net(arch: str, d: int, gen: torch.Generator, width: int = 64):
    """A freshly initialised feature extractor of the architecture: the penultimate layer of
    the MLPs (nn.Linear's default U(-1/sqrt(d), 1/sqrt(d)) for W and b), and for the linear
    model a random ReLU projection to ``width`` dimensions with the same initialisation
    (INFERRED). Returned as (W (d, width), b (width,), tanh?) with unused columns zero."""
    bound = 1.0 / np.sqrt(d)
    W = (torch.rand(d, width, generator=gen) * 2 - 1) * bound
    b = (torch.rand(width, generator=gen) * 2 - 1) * bound
    h = width if arch == "linear" else hidden_sizes(arch)[0]
    if h < width:
        W[:, h:] = 0.0
        b[h:] = 0.0
    return W, b, arch == "mlp64tanh"


def distill_dm(S0, ipcs, X_train, y_train, families, seeds, p, side, device, log_every=10):
    """DM for R runs at once. S0 (R, N, d) initial sets; X_train (R, n, d) / y_train list of
    (n,) arrays: each run's training set; families[r]: the configurations run r samples from
    (uniformly, one per iteration); seeds[r]: its random-stream seed. Returns (S, curve rows).

    The gradient of sum_(IPC, class) ||mu_real - mu_syn||^2 w.r.t. the pixels is written out
    (tested against autograd): d/dS = T_s^T[(M^T 2 (mu_syn - mu_real) * act'(z)) W^T], with
    T_s the translation (its adjoint is the opposite translation) and noise additive.
    """
    R, N, d = S0.shape
    _, _, offs = layout(ipcs)
    G = len(ipcs) * N_CLASSES
    M = torch.zeros(G, N)                   # class means of each IPC block
    for i, q in enumerate(ipcs):
        for c in range(N_CLASSES):
            M[i * N_CLASSES + c, offs[i] + c * q: offs[i] + (c + 1) * q] = 1.0 / q
    M = M.to(device)
    group_class = torch.as_tensor(np.tile(np.arange(N_CLASSES), len(ipcs)), device=device)
    nrng, tgens = _gens(seeds)
    samplers = [RealSampler(y_train[r], p["real_per_class"], nrng[r]) for r in range(R)]
    aug = SiameseAug(side, p["noise_sigma"], device)
    n_tr = X_train.shape[1]
    flat_train = X_train.reshape(R * n_tr, d)
    base = (np.arange(R) * n_tr)[:, None]
    S = S0.clone()
    opt = nets.adam_for([S], p["syn_lr"])
    curve = []
    for it in range(int(p["iterations"])):
        cfgs = [families[r][int(nrng[r].integers(len(families[r])))] for r in range(R)]
        nets_ = [random_feature_net(c[0], d, tgens[r], p["dm_width"]) for r, c in enumerate(cfgs)]
        W = torch.stack([w for w, _, _ in nets_]).to(device)
        b = torch.stack([v for _, v, _ in nets_])[:, None, :].to(device)
        tanh = [r for r, (_, _, t) in enumerate(nets_) if t]
        rows = np.stack([s.draw() for s in samplers]) + base
        real = flat_train.index_select(0, torch.as_tensor(rows.ravel(), device=device))
        real = real.reshape(R, -1, d)
        kinds = [c[2] for c in cfgs]
        shifts = [int(nrng[r].integers(0, 9)) for r in range(R)]
        real, syn = aug([real, S], kinds, shifts, tgens)
        resid, grad = dm_grad(syn, real, W, b, tanh, M, group_class)
        if any(k == "translate" for k in kinds):                        # adjoint translation
            grad = aug.translate_adjoint(grad, kinds, shifts)
        opt.step([grad])
        if it % log_every == 0 or it == int(p["iterations"]) - 1:
            per = (resid ** 2).sum(2).reshape(R, len(ipcs), N_CLASSES).sum(2)
            curve.append((it, per.cpu().numpy()))
    return S, curve


def dm_grad(syn, real, W, b, tanh, M, group_class):
    """(residual mu_syn - mu_real (R, G, width), dL/d syn) of the DM loss, by hand; ``tanh``
    lists the runs whose feature is tanh (the others ReLU)."""
    R = syn.shape[0]
    zr = torch.baddbmm(b, real, W)
    zs = torch.baddbmm(b, syn, W)
    fr, fs = torch.relu(zr), torch.relu(zs)
    if tanh:
        ti = torch.as_tensor(tanh, device=syn.device)
        fr[ti] = torch.tanh(zr[ti])
        fs[ti] = torch.tanh(zs[ti])
    mu_real = fr.reshape(R, N_CLASSES, -1, W.shape[2]).mean(2)
    resid = torch.matmul(M, fs) - mu_real[:, group_class]               # (R, G, width)
    dfeat = torch.matmul(M.T, 2.0 * resid)
    dz = dfeat * (zs > 0)
    if tanh:
        dz[ti] = dfeat[ti] * (1.0 - fs[ti] ** 2)
    return resid, torch.bmm(dz, W.transpose(1, 2))


def dm_loss(S, real, W, b, tanh, M, group_class):
    """The DM loss by autograd-friendly ops (the reference for the hand-written gradient)."""
    def feat(x):
        z = torch.baddbmm(b, x, W)
        return torch.tanh(z) if tanh else torch.relu(z)
    R = S.shape[0]
    mu_real = feat(real).reshape(R, N_CLASSES, -1, W.shape[2]).mean(2)
    return ((torch.matmul(M, feat(S)) - mu_real[:, group_class]) ** 2).sum()


# ------------------------------------------------------------------------------------------
# GM: gradient matching (Zhao, Mopuri, Bilen 2021)
# ------------------------------------------------------------------------------------------
def _padded_index(ipcs, offs):
    """Per (IPC block, class) padded row indices into the concatenated set (dummy = N)."""
    qmax, N = max(ipcs), int(offs[-1])
    idx = np.full((len(ipcs), N_CLASSES, qmax), N, dtype=np.int64)
    mask = np.zeros(idx.shape, dtype=np.float32)
    for i, q in enumerate(ipcs):
        for c in range(N_CLASSES):
            idx[i, c, :q] = offs[i] + c * q + np.arange(q)
            mask[i, c, :q] = 1.0 / q
    return idx, mask


def layer_cosine_distance(g_real, g_syn, eps: float = 1e-8):
    """sum over layers of (1 - cos) between flattened (W, b) gradients, per stacked model."""
    total = 0.0
    for i in range(0, len(g_real), 2):
        a = torch.cat([g_real[i].flatten(1), g_real[i + 1].flatten(1)], 1)
        b = torch.cat([g_syn[i].flatten(1), g_syn[i + 1].flatten(1)], 1)
        cos = (a * b).sum(1) / (a.norm(dim=1) * b.norm(dim=1) + eps)
        total = total + (1.0 - cos)
    return total


def _onehot(n_models, per, device):
    """(n_models, 10 * per... ) one-hot labels of class-major blocks: model j is class j % 10
    when ``per`` rows belong to one class."""
    y = torch.arange(N_CLASSES, device=device).repeat(n_models // N_CLASSES)
    return F.one_hot(y, N_CLASSES).float()[:, None, :].expand(-1, per, -1)


def distill_gm(S0, ipcs, X_train, y_train, config, seeds, p, side, device, log_every=10):
    """GM for R runs of one configuration. Each IPC set of each run is a problem with its own
    network (stacked per IPC); a fresh network every ``gm_outer`` iterations, ``gm_inner``
    steps of the configuration's optimizer on the (detached) set after each update of the
    set. The per-class CE gradients are written out (nets.ce_grads) so that the synthetic
    side stays differentiable without double backward."""
    arch, opt_name, aug_kind = config
    R, N, d = S0.shape
    _, _, offs = layout(ipcs)
    nrng, tgens = _gens(seeds)
    samplers = [RealSampler(y_train[r], p["real_per_class"], nrng[r]) for r in range(R)]
    per = samplers[0].k
    aug = SiameseAug(side, p["noise_sigma"], device)
    n_tr = X_train.shape[1]
    flat_train = X_train.reshape(R * n_tr, d)
    base = (np.arange(R) * n_tr)[:, None]
    onehot_real = _onehot(R * N_CLASSES, per, device)
    onehot_syn = {q: _onehot(R * N_CLASSES, q, device) for q in ipcs}
    onehot_set = {q: F.one_hot(torch.arange(N_CLASSES, device=device).repeat_interleave(q),
                               N_CLASSES).float()[None].expand(R, -1, -1) for q in ipcs}
    S = S0.clone().requires_grad_(True)
    opt = Adam([S], lr=p["syn_lr"])
    curve = []
    layers = net_opts = None
    for it in range(int(p["iterations"])):
        if it % int(p["gm_outer"]) == 0:
            layers, net_opts = [], []
            for _ in ipcs:
                init = [int(nrng[r].integers(2**62)) for r in range(R)]
                L = [[w.detach(), b.detach()] for w, b in nets.init_layers(arch, d, init, device)]
                layers.append(L)
                net_opts.append(nets.Optimizer([t for layer in L for t in layer], opt_name, p))
        rows = np.stack([s.draw() for s in samplers]) + base
        real = flat_train.index_select(0, torch.as_tensor(rows.ravel(), device=device))
        shifts = [int(nrng[r].integers(0, 9)) for r in range(R)]
        real, syn = aug([real.reshape(R, -1, d), S], [aug_kind] * R, shifts, tgens)
        xr = real.reshape(R * N_CLASSES, per, d)
        total, per_ipc = 0.0, []
        for i, q in enumerate(ipcs):
            # one copy of the network per (run, class): one gradient per class
            rep = [[w.repeat_interleave(N_CLASSES, 0), b.repeat_interleave(N_CLASSES, 0)]
                   for w, b in layers[i]]
            with torch.no_grad():
                g_real = nets.ce_grads(rep, xr, onehot_real, arch)
            xs = syn[:, offs[i]:offs[i + 1]].reshape(R * N_CLASSES, q, d)
            g_syn = nets.ce_grads(rep, xs, onehot_syn[q], arch)
            dist = layer_cosine_distance(g_real, g_syn)               # (R * 10,)
            total = total + dist.sum()
            per_ipc.append(dist.detach().reshape(R, N_CLASSES).sum(1))
        (g,) = torch.autograd.grad(total, [S])
        opt.step([g])
        if it % log_every == 0 or it == int(p["iterations"]) - 1:
            curve.append((it, torch.stack(per_ipc, 1).cpu().numpy()))
        # inner loop: each problem's network trains on its own (detached) set
        with torch.no_grad():
            for i, q in enumerate(ipcs):
                block = S[:, offs[i]:offs[i + 1]]
                for _ in range(int(p["gm_inner"])):
                    net_opts[i].step(nets.ce_grads(layers[i], block, onehot_set[q], arch))
    return S.detach(), curve


# ------------------------------------------------------------------------------------------
# TM: trajectory matching, MTT-lite (Cazenavette et al. 2022)
# ------------------------------------------------------------------------------------------
def flatten(layers) -> torch.Tensor:
    return torch.cat([t.detach().flatten(1) for layer in layers for t in layer], 1)


def unflatten(flat: torch.Tensor, arch: str, d: int) -> list:
    sizes = [d] + hidden_sizes(arch)
    out, pos = [], 0
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        w = flat[:, pos: pos + a * b].reshape(-1, a, b)
        pos += a * b
        bias = flat[:, pos: pos + b].reshape(-1, 1, b)
        pos += b
        out.append([w, bias])
    return out


def distill_tm(S0, ipcs, experts, config, seeds, p, device, log_every=10):
    """MTT-lite for R runs of one configuration. ``experts[r]`` (E, T + 1, n_params): run r's
    expert checkpoints (one per epoch) from training on its full set. Per iteration each set
    starts from a random expert's checkpoint at a random epoch t <= tm_max_start, takes
    ``tm_syn_steps`` plain SGD steps on the set with its learnable step size (MTT), and is
    scored by ||theta_hat - theta_(t+M)||^2 / ||theta_t - theta_(t+M)||^2, M = tm_horizon."""
    arch = config[0]
    R, N, d = S0.shape
    n_ipc = len(ipcs)
    P = R * n_ipc
    _, _, offs = layout(ipcs)
    cls_idx, cls_w = _padded_index(ipcs, offs)
    qmax = max(ipcs)
    cls_idx_t = torch.as_tensor(cls_idx.reshape(n_ipc, -1), device=device)
    w_t = torch.as_tensor(cls_w.reshape(n_ipc, -1) / N_CLASSES, device=device)
    onehot = F.one_hot(torch.arange(N_CLASSES, device=device).repeat_interleave(qmax),
                       N_CLASSES).float()[None].expand(P, -1, -1)
    nrng, _ = _gens(seeds)
    S = S0.clone().requires_grad_(True)
    log_lr = torch.full((P,), float(np.log(p["tm_lr_init"])), device=device, requires_grad=True)
    opt_s = Adam([S], lr=p["syn_lr"])
    opt_lr = Adam([log_lr], lr=p["tm_lr_lr"])
    zero = torch.zeros(R, 1, d, device=device)
    M = int(p["tm_horizon"])
    curve = []
    for it in range(int(p["iterations"])):
        start, target = [], []
        for r in range(R):
            E, T1, _ = experts[r].shape
            for _ in range(n_ipc):
                e = int(nrng[r].integers(E))
                t = int(nrng[r].integers(0, min(int(p["tm_max_start"]), T1 - 1 - M) + 1))
                start.append(experts[r][e, t])
                target.append(experts[r][e, t + M])
        start = torch.stack(start).to(device)
        target = torch.stack(target).to(device)
        x = torch.cat([S, zero], 1)[:, cls_idx_t].reshape(P, -1, d)
        w = w_t[None].expand(R, -1, -1).reshape(P, -1)
        lr = torch.exp(log_lr)
        theta = start
        for _ in range(int(p["tm_syn_steps"])):
            # the CE gradient written out (nets.ce_grads): differentiable in S and lr
            g = nets.ce_grads(unflatten(theta, arch, d), x, onehot, arch, weights=w)
            theta = theta - lr[:, None] * torch.cat([t.flatten(1) for t in g], 1)
        num = ((theta - target) ** 2).sum(1)
        den = ((start - target) ** 2).sum(1).clamp_min(1e-12)
        per = num / den
        gs, gl = torch.autograd.grad(per.sum(), [S, log_lr])
        opt_s.step([gs])
        opt_lr.step([gl])
        if it % log_every == 0 or it == int(p["iterations"]) - 1:
            curve.append((it, per.detach().reshape(R, n_ipc).cpu().numpy()))
    return S.detach(), curve
