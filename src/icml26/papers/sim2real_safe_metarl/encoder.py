"""Full profile: the learned PEARL-style context encoder (stand-in restored from the spec's
full profile; smoke and default use the closed-form posterior of ``agents.ContextPosterior``).

Encoder (as in PEARL, arXiv 1903.08254): a small MLP maps each context item (here one
deceleration observation y) to a Gaussian factor Psi(z | y) = N(f_mean(y), 1 / f_prec(y)) on
the latent context z, and the posterior is the product of the factors,
q(z | c) ∝ p(z) prod_k Psi(z | y_k). The latent is one-dimensional and in friction units
(z plays mu's role in the critic's bins) and the prior p(z) = N(0.8, 0.15^2) is the spec's
prior; including it as a factor means an empty context gives q = p (INFERRED, ours: PEARL
leaves the prior out of the product and keeps it in the KL only).

The factor network outputs a correction to the closed-form factor mean y / 7 and the log
precision; its last layer starts near the closed form (mean y / 7, precision (7 / 0.5)^2), so
training learns where that factor is wrong (saturated y ~ 6 on grippy roads, the delayed first
braking step with y ~ 0) (INFERRED, ours).

Objective (PEARL's KL-regularised, information-bottleneck form): for simulator tasks
(mu ~ U(0.55, 1.05), delay p ~ U(0, 0.2), a random margin) with a random-size context,
    L = E_{z ~ q(z|c)} [ (z - mu)^2 / (2 dec_sd^2) ] + beta * KL(q(z|c) || p(z)),
with the reparameterisation trick. PEARL's data term is the critic's Bellman loss; here it is
the Gaussian log-likelihood of the task's context under z (INFERRED, ours), because the critic
is indexed by the context bin, so what z must carry is where mu lies. With beta = 1 this is a
negative ELBO.

Training imports torch inside ``train`` only; deployment evaluates the trained MLP in numpy
(``factors``) from the weights, which are stored with the run. Training runs on ``device``
(config ``device`` through ``icml26.seeding.torch_device``): the network, its optimizer and the
task tensors live there, while the initial weights and every minibatch draw come from CPU
generators and are moved (the same draws on every device). Deployment (numpy, a few scalars per
step) stays on the CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import braking

Y_SCALE = 6.0      # inputs are y / 6


@dataclass
class EncoderParams:
    hidden: int = 32
    n_tasks: int = 2000          # simulator tasks (one context each) in the training set
    episodes_per_task: int = 3   # episodes whose observations form a task's context pool
    iters: int = 2000
    batch: int = 64
    lr: float = 3e-3
    beta: float = 1.0            # KL weight
    dec_sd: float = 0.05         # sd of the data term (half a bin)
    log_prec_max: float = 12.0   # clamp of a factor's log precision


def kl_gauss(mean, sd, mean0, sd0):
    """KL(N(mean, sd^2) || N(mean0, sd0^2)); works on numpy arrays and torch tensors."""
    var, var0 = sd * sd, sd0 * sd0
    return 0.5 * (var / var0 + (mean - mean0) ** 2 / var0 - 1.0) + (
        (sd0 / sd).log() if hasattr(sd, "log") else np.log(sd0 / sd))


def product_of_gaussians(prior_mean, prior_prec, f_mean, f_prec, mask):
    """Posterior (mean, precision) of the prior times the masked factors along the last axis."""
    prec = prior_prec + (mask * f_prec).sum(-1)
    mean = (prior_prec * prior_mean + (mask * f_prec * f_mean).sum(-1)) / prec
    return mean, prec


def factors(weights: dict, obs: np.ndarray):
    """Numpy forward pass: (mean, precision) arrays of obs's shape (NaN obs give factors too;
    callers mask them)."""
    x = np.nan_to_num(np.asarray(obs, float), nan=0.0)[..., None] / Y_SCALE
    h = np.tanh(x @ weights["W1"] + weights["b1"])
    h = np.tanh(h @ weights["W2"] + weights["b2"])
    out = h @ weights["W3"] + weights["b3"]
    log_prec = np.minimum(out[..., 1], float(weights["log_prec_max"]))
    return out[..., 0] + x[..., 0] * Y_SCALE / braking.FRICTION_DECEL, np.exp(log_prec)


def simulator_tasks(n_tasks: int, episodes: int, margins, rng: np.random.Generator,
                    acc_sd: float, obs_sd: float, max_obs: int):
    """Training contexts: per task mu, delay p and the observations of ``episodes`` episodes
    at random margins, (n_tasks, episodes * max_obs) with NaN where there is none."""
    mu = rng.uniform(*braking.SIM_MU, size=n_tasks)
    p = rng.uniform(*braking.SIM_DELAY, size=n_tasks)
    shape = (n_tasks * episodes,)
    noise = braking.draw_noise(rng, shape, braking.n_steps_max())
    margin = rng.choice(np.asarray(margins, float), size=shape)
    out = braking.rollout(np.repeat(mu, episodes), np.repeat(p, episodes), margin, noise,
                          acc_sd, obs_sd, max_obs)
    return mu, out.obs.reshape(n_tasks, episodes * max_obs)


def train(mu: np.ndarray, obs: np.ndarray, prior_mean: float, prior_sd: float,
          prm: EncoderParams, seed: int, device=None) -> dict[str, np.ndarray]:
    """Fit the factor MLP by minimising the KL-regularised objective; returns numpy weights.

    Each minibatch draws tasks and, per task, a context of the first n observations of its
    pool with n ~ U{0, ..., pool size} (n = 0 is the empty context)."""
    import torch

    from icml26.rl.optim import Adam
    from icml26.seeding import seed_torch

    dev = torch.device("cpu") if device is None else torch.device(device)
    seed_torch(seed)
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(seed % (2**63))
    H = int(prm.hidden)
    net = torch.nn.Sequential(torch.nn.Linear(1, H), torch.nn.Tanh(), torch.nn.Linear(H, H),
                              torch.nn.Tanh(), torch.nn.Linear(H, 2)).double()
    with torch.no_grad():   # start at the closed-form factor: mean y / 7, precision (7/0.5)^2
        net[-1].weight.mul_(0.1)
        net[-1].bias.copy_(torch.tensor([0.0, np.log((braking.FRICTION_DECEL / 0.5) ** 2)]))
    net = net.to(dev)  # initialised on the CPU, then moved
    opt = Adam(net.parameters(), lr=float(prm.lr))  # torch.optim.Adam's update
    y_all = torch.as_tensor(obs, dtype=torch.float64, device=dev)
    has_all = torch.isfinite(y_all).double()
    y_all = torch.nan_to_num(y_all, nan=0.0)
    mu_all = torch.as_tensor(mu, dtype=torch.float64, device=dev)
    pos = torch.arange(y_all.shape[1], dtype=torch.float64, device=dev)
    p_mean, p_prec = float(prior_mean), 1.0 / float(prior_sd) ** 2
    for _ in range(int(prm.iters)):
        # drawn on the CPU generator, then moved
        idx = torch.randint(0, len(mu_all), (int(prm.batch),), generator=gen).to(dev)
        y, has, target = y_all[idx], has_all[idx], mu_all[idx]
        n_ctx = torch.floor(torch.rand(len(idx), generator=gen, dtype=torch.float64).to(dev)
                            * (y.shape[1] + 1))
        mask = has * (pos[None, :] < n_ctx[:, None]).double()
        out = net(y[..., None] / Y_SCALE)
        f_mean = out[..., 0] + y / braking.FRICTION_DECEL
        f_prec = torch.exp(torch.clamp(out[..., 1], max=float(prm.log_prec_max)))
        mean, prec = product_of_gaussians(p_mean, p_prec, f_mean, f_prec, mask)
        sd = prec.rsqrt()
        z = mean + sd * torch.randn(len(idx), generator=gen, dtype=torch.float64).to(dev)
        data = (z - target) ** 2 / (2.0 * float(prm.dec_sd) ** 2)
        kl = kl_gauss(mean, sd, torch.tensor(p_mean, dtype=torch.float64, device=dev),
                      torch.tensor(float(prior_sd), dtype=torch.float64, device=dev))
        loss = (data + float(prm.beta) * kl).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    lin = [m for m in net if isinstance(m, torch.nn.Linear)]
    w = {}
    for i, layer in enumerate(lin, start=1):
        w[f"W{i}"] = layer.weight.detach().cpu().numpy().T.copy()
        w[f"b{i}"] = layer.bias.detach().cpu().numpy().copy()
    w["log_prec_max"] = np.asarray(float(prm.log_prec_max))
    return w
