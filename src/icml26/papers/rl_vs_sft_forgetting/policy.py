"""Part B: a tiny shared-weight policy network post-trained on a new task by SFT, Self-SFT,
iterative Self-SFT or GRPO-style RL (with or without KL, two advantage estimators).

Network (numpy, manual backprop): input one-hot(task in {old, new}) + one-hot(prompt id)
(2 + 64 = 66 dims) -> tanh hidden (64) -> softmax over V = 32 answer tokens. Both tasks share
every weight except their one-hot input rows, so a change made for the new task leaks into the
old task through the hidden and output layers: that is the forgetting being measured.

Tasks (drawn per (setting, seed)):
- old task T': prompt j has one correct answer g(j);
- new task T: prompt i has a set C(i) of 4 correct answers, a(i) in C(i) is the answer the
  pretrained model prefers, e(i) in C(i), e != a, the "expert" answer of another model family.

Every array has a leading run axis R (the seeds of one method, or one base model per seed), so
one call trains several runs together. Each run draws from its own numpy generator, and the
batched matrix products (np.matmul over the leading axis) compute each run's slice on its own,
so a run's numbers do not depend on which runs share the batch.
"""

from __future__ import annotations

import numpy as np

OLD, NEW = 0, 1
PARAM_NAMES = ("W1", "b1", "W2", "b2")


# ---------------------------------------------------------------------------------------------
# tasks and network
# ---------------------------------------------------------------------------------------------
def make_tasks(rng: np.random.Generator, prompts: int, vocab: int, n_correct: int) -> dict:
    """g (old answers), C (new-task correct sets, column 0 = a, column 1 = e)."""
    g = rng.integers(vocab, size=prompts)
    C = np.stack([rng.choice(vocab, size=n_correct, replace=False) for _ in range(prompts)])
    return {"g": g, "C": C, "a": C[:, 0].copy(), "e": C[:, 1].copy()}


def correct_mask(C: np.ndarray, vocab: int) -> np.ndarray:
    """(prompts, vocab) boolean: token y is a correct answer to new prompt i."""
    mask = np.zeros((C.shape[0], vocab), dtype=bool)
    np.put_along_axis(mask, C, True, axis=1)
    return mask


def init_params(rngs: list, n_in: int, hidden: int, vocab: int) -> dict:
    """INFERRED initialisation: W1 ~ N(0, 1) (an input has two active units, so the
    pre-activations have unit-order variance), W2 ~ N(0, 1/hidden), zero biases."""
    W1 = np.stack([g.standard_normal((n_in, hidden)) for g in rngs])
    W2 = np.stack([g.standard_normal((hidden, vocab)) / np.sqrt(hidden) for g in rngs])
    R = len(rngs)
    return {"W1": W1, "b1": np.zeros((R, hidden)), "W2": W2, "b2": np.zeros((R, vocab))}


def inputs(task: np.ndarray, prompt: np.ndarray, prompts: int) -> np.ndarray:
    """One-hot(task) + one-hot(prompt id): (R, B) index arrays -> (R, B, 2 + prompts)."""
    R, B = prompt.shape
    X = np.zeros((R, B, 2 + prompts))
    r = np.arange(R)[:, None]
    b = np.arange(B)[None, :]
    X[r, b, task] = 1.0
    X[r, b, 2 + prompt] = 1.0
    return X


def forward(params: dict, X: np.ndarray):
    """Hidden activations and log-probabilities, (R, B, H) and (R, B, V)."""
    h = np.tanh(X @ params["W1"] + params["b1"][:, None, :])
    z = h @ params["W2"] + params["b2"][:, None, :]
    z = z - z.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return h, logp


def backward(params: dict, X: np.ndarray, h: np.ndarray, dz: np.ndarray) -> dict:
    """Gradients of a loss whose gradient w.r.t. the logits is dz (R, B, V)."""
    dh = (dz @ np.swapaxes(params["W2"], 1, 2)) * (1.0 - h ** 2)
    return {
        "W1": np.swapaxes(X, 1, 2) @ dh,
        "b1": dh.sum(axis=1),
        "W2": np.swapaxes(h, 1, 2) @ dz,
        "b2": dz.sum(axis=1),
    }


def sgd(params: dict, grads: dict, lr: float) -> dict:
    return {k: params[k] - lr * grads[k] for k in PARAM_NAMES}


def cross_entropy_dz(logp: np.ndarray, y: np.ndarray) -> np.ndarray:
    """d/dlogits of the mean cross-entropy -mean log p(y): (softmax - onehot(y)) / B."""
    dz = np.exp(logp)
    R, B, _ = logp.shape
    dz[np.arange(R)[:, None], np.arange(B)[None, :], y] -= 1.0
    return dz / B


def sample(logp: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Vectorised inverse-CDF sampling: the first token whose cumulative probability exceeds u."""
    cdf = np.cumsum(np.exp(logp), axis=-1)
    idx = (cdf < uniforms[..., None] * cdf[..., -1:]).sum(axis=-1)
    return np.minimum(idx, logp.shape[-1] - 1)


def all_logp(params: dict, prompts: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact log-probabilities over the vocabulary for every old and every new prompt."""
    R = params["W1"].shape[0]
    ids = np.tile(np.arange(prompts), (R, 1))
    _, old = forward(params, inputs(np.full_like(ids, OLD), ids, prompts))
    _, new = forward(params, inputs(np.full_like(ids, NEW), ids, prompts))
    return old, new


def evaluate(params: dict, tasks: dict, mask: np.ndarray, base_new: np.ndarray | None = None):
    """Exact accuracies (no test noise): old = mean_j P(g(j) | j); new = mean_i P(y in C(i) | i);
    and KL(pi_theta || pi_base) averaged over the new prompts (0 without a base)."""
    prompts = tasks["g"].shape[-1]
    old, new = all_logp(params, prompts)
    old_acc = np.exp(np.take_along_axis(old, tasks["g"][..., None], axis=-1))[..., 0].mean(-1)
    new_acc = (np.exp(new) * mask).sum(-1).mean(-1)
    if base_new is None:
        kl = np.zeros_like(old_acc)
    else:
        kl = (np.exp(new) * (new - base_new)).sum(-1).mean(-1)
    return old_acc, new_acc, kl


# ---------------------------------------------------------------------------------------------
# pretraining: the "base model"
# ---------------------------------------------------------------------------------------------
def pretrain(tasks: dict, rngs: list, steps: int, lr: float, batch: int, hidden: int,
             vocab: int, label_noise: float) -> dict:
    """SGD on half old prompts (label g(j)) and half new prompts (label a(i) with probability
    1 - label_noise, else a uniformly random token). The base model thus prefers a(i) and puts
    little mass on the other correct answers, in particular on the expert answer e(i)."""
    prompts = tasks["g"].shape[-1]
    R = len(rngs)
    params = init_params(rngs, 2 + prompts, hidden, vocab)
    half = batch // 2
    task = np.concatenate([np.full((R, half), OLD), np.full((R, batch - half), NEW)], axis=1)
    r = np.arange(R)[:, None]
    for _ in range(steps):
        prompt = np.stack([g.integers(prompts, size=batch) for g in rngs])
        keep = np.stack([g.random(batch - half) >= label_noise for g in rngs])
        noise = np.stack([g.integers(vocab, size=batch - half) for g in rngs])
        y_old = tasks["g"][r, prompt[:, :half]]
        y_new = np.where(keep, tasks["a"][r, prompt[:, half:]], noise)
        y = np.concatenate([y_old, y_new], axis=1)
        X = inputs(task, prompt, prompts)
        h, logp = forward(params, X)
        params = sgd(params, backward(params, X, h, cross_entropy_dz(logp, y)), lr)
    return params


# ---------------------------------------------------------------------------------------------
# post-training on new-task prompts only
# ---------------------------------------------------------------------------------------------
def self_generated_dataset(params: dict, mask: np.ndarray, rngs: list, per_prompt: int):
    """The current model's own answers, per_prompt samples per new prompt, filtered to correct.

    Returns per run the (prompt, answer) pairs kept (variable length, so a list of arrays).
    """
    prompts = mask.shape[-2]
    R = len(rngs)
    ids = np.tile(np.repeat(np.arange(prompts), per_prompt), (R, 1))
    _, logp = forward(params, inputs(np.full_like(ids, NEW), ids, prompts))
    y = sample(logp, np.stack([g.random(ids.shape[1]) for g in rngs]))
    ok = mask[np.arange(R)[:, None], ids, y]
    return [(ids[k][ok[k]], y[k][ok[k]]) for k in range(R)]


def group_advantages(reward: np.ndarray, group: int, normalise: bool) -> np.ndarray:
    """GRPO advantages over groups of `group` answers to the same prompt (last axis).

    reward - group mean, divided by the group std (+1e-6) when `normalise` (the default RL),
    or left as is for the mean-baseline estimator.
    """
    R, B = reward.shape
    g = reward.reshape(R, B // group, group)
    adv = g - g.mean(axis=-1, keepdims=True)
    if normalise:
        adv = adv / (g.std(axis=-1, keepdims=True) + 1e-6)
    return adv.reshape(R, B)


def kl_dz(logp: np.ndarray, base_logp: np.ndarray) -> np.ndarray:
    """d/dlogits of KL(pi_theta || pi_base) = sum_y p (log p - log p_base) (exact over tokens):
    p_k [(log p_k - log b_k) - KL]."""
    p = np.exp(logp)
    diff = logp - base_logp
    kl = (p * diff).sum(-1, keepdims=True)
    return p * (diff - kl)


def post_train(method: str, base: dict, tasks: dict, mask: np.ndarray, rngs: list, hp: dict,
               log_every: int, log) -> dict:
    """Post-train the base models (one per run) with `method`; log(step, params) every
    log_every steps (step 0 = base). Returns the final parameters.

    Every method sees `batch` = 64 new-task samples per step:
    - sft: cross-entropy on (i, e(i)) for 64 random new prompts (off-policy expert data);
    - self-sft: cross-entropy on 64 pairs drawn from a FIXED dataset of the base model's own
      samples (8 per prompt) filtered to correct ones (approximately on-policy at the start);
    - iter-self-sft: the same, but the dataset is regenerated from the current model every
      `regen_every` steps (closer to on-policy);
    - rl / rl-kl / rl-mean: GRPO-style; 8 prompts x 8 sampled answers, reward 1[y in C(i)],
      loss -mean(A log pi(y|x)) (+ beta KL(pi_theta || pi_base) for rl-kl, exact over tokens);
      advantage normalised by the group std, except rl-mean (reward - group mean only).
    """
    prompts = tasks["g"].shape[-1]
    R = len(rngs)
    r = np.arange(R)[:, None]
    B = int(hp["batch"])
    steps = int(hp["steps"])
    params = {k: v.copy() for k, v in base.items()}
    _, base_new = all_logp(base, prompts)
    log(0, params)

    dataset = None
    if method in ("self-sft", "iter-self-sft"):
        dataset = self_generated_dataset(params, mask, rngs, int(hp["self_samples"]))

    for step in range(1, steps + 1):
        if method == "sft":
            prompt = np.stack([g.integers(prompts, size=B) for g in rngs])
            X = inputs(np.full_like(prompt, NEW), prompt, prompts)
            h, logp = forward(params, X)
            dz = cross_entropy_dz(logp, tasks["e"][r, prompt])
            lr = hp["lr_sft"]

        elif method in ("self-sft", "iter-self-sft"):
            if method == "iter-self-sft" and step > 1 and (step - 1) % int(hp["regen_every"]) == 0:
                dataset = self_generated_dataset(params, mask, rngs, int(hp["self_samples"]))
            pick = [g.integers(len(d[0]), size=B) for g, d in zip(rngs, dataset, strict=True)]
            prompt = np.stack([d[0][k] for d, k in zip(dataset, pick, strict=True)])
            y = np.stack([d[1][k] for d, k in zip(dataset, pick, strict=True)])
            X = inputs(np.full_like(prompt, NEW), prompt, prompts)
            h, logp = forward(params, X)
            dz = cross_entropy_dz(logp, y)
            lr = hp["lr_sft"]

        elif method in ("rl", "rl-kl", "rl-mean"):
            group = int(hp["group"])
            chosen = np.stack([g.choice(prompts, size=B // group, replace=False) for g in rngs])
            prompt = np.repeat(chosen, group, axis=1)
            X = inputs(np.full_like(prompt, NEW), prompt, prompts)
            h, logp = forward(params, X)
            y = sample(logp, np.stack([g.random(B) for g in rngs]))   # on-policy answers
            reward = mask[r, prompt, y].astype(float)
            adv = group_advantages(reward, group, normalise=(method != "rl-mean"))
            # loss = -mean_b A_b log pi(y_b | x_b): d/dlogits = -A_b (onehot(y_b) - p_b) / B
            onehot = np.zeros_like(logp)
            onehot[r, np.arange(B)[None, :], y] = 1.0
            dz = -adv[..., None] * (onehot - np.exp(logp)) / B
            if method == "rl-kl":
                # beta * mean over the batch's prompts of the exact KL to the base policy
                # (each prompt appears `group` times, so the mean over B is that mean)
                dz = dz + hp["beta"] * kl_dz(logp, base_new[r, prompt]) / B
            lr = hp["lr_rl"]
        else:
            raise ValueError(f"method {method!r} does not run in the policy setting")

        params = sgd(params, backward(params, X, h, dz), float(lr))
        if step % log_every == 0 or step == steps:
            log(step, params)
    return params
