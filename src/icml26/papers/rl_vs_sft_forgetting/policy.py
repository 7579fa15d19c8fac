"""Part B: a tiny shared-weight policy network post-trained on a new task by SFT, Self-SFT,
iterative Self-SFT or GRPO-style RL (with or without KL, two advantage estimators), with the
official optimisers, schedules, batch sizes and RL settings (see `recipe`).

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
so a run's numbers do not depend on which runs share the batch. Pretraining (the "base
model") uses plain SGD: the official runs start from instruct LLMs, so it has no counterpart.
"""

from __future__ import annotations

import math

import numpy as np

from icml26.npoptim import Adam

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
SFT_FAMILY = ("sft", "self-sft", "iter-self-sft")
RL_FAMILY = ("rl", "rl-nokl", "rl-mean")
SPEC_METHODS = ("sft-spec", "rl-spec")
METHODS = SFT_FAMILY + RL_FAMILY + SPEC_METHODS


def recipe(method: str, hp: dict) -> dict:
    """Everything one method's post-training loop needs, from params.policy.

    Official (scripts/sft.sh, self_sft.sh, rl.sh; core/training/{sft,rl}.py, objectives.py):
    AdamW (betas 0.9/0.95, eps 1e-8, no weight decay) with global-norm clipping at 1.0 for
    every method; the SFT family at lr_sft with 3 % linear warm-up then cosine to 0; the RL
    family at lr_sft * rl_lr_ratio, constant, for rl_step_factor times as many steps, with
    rl_prompts prompts x group answers sampled at `temperature`, GRPO advantages
    (r - mean) / (std_unbiased + 1e-8) and the k2 KL penalty beta * 0.5 (log pi - log pi_ref)^2
    on the sampled answer. rl-nokl drops the KL (beta 0); rl-mean drops the std division.
    The earlier reading of the spec (sft-spec, rl-spec; labelled variants, no claim): plain SGD
    at constant lr, 64 samples per step, RL 8 prompts x 8 answers at temperature 1,
    (r - mean) / (std + 1e-6) with the population std, no KL, no clipping.
    """
    if method in SFT_FAMILY:
        return {"kind": method, "optimizer": "adamw", "lr": float(hp["lr_sft"]),
                "schedule": hp["sft_schedule"], "steps": int(hp["steps"]),
                "batch": int(hp["sft_batch"]), "log_every": int(hp["log_every"])}
    if method in RL_FAMILY:
        return {"kind": "rl", "optimizer": "adamw",
                "lr": float(hp["lr_sft"]) * float(hp["rl_lr_ratio"]),
                "schedule": hp["rl_schedule"],
                "steps": int(hp["steps"]) * int(hp["rl_step_factor"]),
                "prompts": int(hp["rl_prompts"]), "group": int(hp["group"]),
                "temperature": float(hp["temperature"]),
                "beta": 0.0 if method == "rl-nokl" else float(hp["beta"]),
                "normalise": method != "rl-mean", "ddof": 1, "std_eps": 1e-8,
                "log_every": int(hp["log_every"]) * int(hp["rl_step_factor"])}
    s = hp["spec_reading"]
    if method == "sft-spec":
        return {"kind": "sft", "optimizer": "sgd", "lr": float(s["lr_sft"]),
                "schedule": "constant", "steps": int(s["steps"]), "batch": int(s["batch"]),
                "log_every": int(s["log_every"])}
    if method == "rl-spec":
        return {"kind": "rl", "optimizer": "sgd", "lr": float(s["lr_rl"]),
                "schedule": "constant", "steps": int(s["steps"]),
                "prompts": int(s["batch"]) // int(s["group"]), "group": int(s["group"]),
                "temperature": 1.0, "beta": 0.0, "normalise": True, "ddof": 0,
                "std_eps": 1e-6, "log_every": int(s["log_every"])}
    raise ValueError(f"method {method!r} does not run in the policy setting; "
                     f"known: {', '.join(METHODS)}")


def lr_factor(step0: int, total: int, warmup_ratio: float, schedule: str) -> float:
    """The learning-rate multiplier of the optimiser step with 0-based index step0, as
    transformers.get_scheduler builds it for the official scripts (the scheduler steps after
    the optimiser, so step k uses the factor of k - 1):
    - "constant" (rl.sh): 1;
    - "cosine" (sft.sh, self_sft.sh): linear warm-up over W = ceil(warmup_ratio * total) steps
      from 0 (step0 / W), then 0.5 (1 + cos(pi progress)) with progress = (step0 - W) / (total - W).
    """
    if schedule == "constant":
        return 1.0
    if schedule != "cosine":
        raise ValueError(f"schedule must be 'cosine' or 'constant', got {schedule!r}")
    warm = math.ceil(total * warmup_ratio)
    if step0 < warm:
        return step0 / max(1, warm)
    progress = (step0 - warm) / max(1, total - warm)
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))


def clip_per_run(grads: dict, max_norm: float) -> np.ndarray:
    """Global-norm clipping of each run's gradient (over W1, b1, W2, b2 together), as
    torch's clip_grad_norm_: scale by min(1, max_norm / (norm + 1e-6)). Returns the norms."""
    sq = sum((grads[k] ** 2).reshape(grads[k].shape[0], -1).sum(axis=1) for k in PARAM_NAMES)
    norm = np.sqrt(sq)
    coef = np.minimum(1.0, max_norm / (norm + 1e-6))
    for k in PARAM_NAMES:
        grads[k] *= coef.reshape((-1,) + (1,) * (grads[k].ndim - 1))
    return norm


def self_generated_dataset(params: dict, mask: np.ndarray, rngs: list, per_prompt: int):
    """The current model's own answers, per_prompt samples per new prompt (temperature 1;
    INFERRED: the official Self-SFT data are a pre-generated file), filtered to correct.

    Returns per run the (prompt, answer) pairs kept (variable length, so a list of arrays).
    """
    prompts = mask.shape[-2]
    R = len(rngs)
    ids = np.tile(np.repeat(np.arange(prompts), per_prompt), (R, 1))
    _, logp = forward(params, inputs(np.full_like(ids, NEW), ids, prompts))
    y = sample(logp, np.stack([g.random(ids.shape[1]) for g in rngs]))
    ok = mask[np.arange(R)[:, None], ids, y]
    return [(ids[k][ok[k]], y[k][ok[k]]) for k in range(R)]


def group_advantages(reward: np.ndarray, group: int, normalise: bool, ddof: int = 1,
                     eps: float = 1e-8) -> np.ndarray:
    """GRPO advantages over groups of `group` answers to the same prompt (last axis).

    reward - group mean, divided by (group std + eps) when `normalise`. Official
    (objectives.py `GRPOLoss`): torch's unbiased std (ddof 1) and eps 1e-8; the spec's
    reading: population std (ddof 0) and 1e-6. An all-equal group gets advantage 0.
    """
    R, B = reward.shape
    g = reward.reshape(R, B // group, group)
    adv = g - g.mean(axis=-1, keepdims=True)
    if normalise:
        adv = adv / (g.std(axis=-1, ddof=ddof, keepdims=True) + eps)
    return adv.reshape(R, B)


def rl_dz(logp: np.ndarray, y: np.ndarray, adv: np.ndarray, delta: np.ndarray,
          beta: float) -> np.ndarray:
    """d/dlogits of the official GRPO loss on single-token answers,
    mean_b [-A_b log pi(y_b) + beta * 0.5 * delta_b^2] with delta_b = log pi(y_b) -
    log pi_ref(y_b) (the k2 estimator; the per-token mean of a one-token answer is the token):
    (-A_b + beta delta_b) (onehot(y_b) - p_b) / B."""
    R, B, _ = logp.shape
    onehot = np.zeros_like(logp)
    onehot[np.arange(R)[:, None], np.arange(B)[None, :], y] = 1.0
    coef = -adv + beta * delta
    return coef[..., None] * (onehot - np.exp(logp)) / B


def post_train(method: str, base: dict, tasks: dict, mask: np.ndarray, rngs: list, hp: dict,
               log) -> dict:
    """Post-train the base models (one per run) with `method` (see `recipe`); log(step, params)
    every recipe log_every steps (step 0 = base). Returns the final parameters.

    - sft: cross-entropy on (i, e(i)) for `batch` random new prompts (off-policy expert data);
    - self-sft: cross-entropy on `batch` pairs drawn from a FIXED dataset of the base model's
      own samples (self_samples per prompt) filtered to correct ones (approximately on-policy
      at the start);
    - iter-self-sft: the same, but the dataset is regenerated from the current model every
      `regen_every` steps (closer to on-policy; not in the official code);
    - rl family: `prompts` distinct prompts x `group` answers sampled from the current policy
      at `temperature` (the loss uses the untempered log-probabilities, as the official code
      does), reward 1[y in C(i)], GRPO advantages, optional k2 KL to the base model.
    """
    rc = recipe(method, hp)
    prompts = tasks["g"].shape[-1]
    R = len(rngs)
    r = np.arange(R)[:, None]
    steps = rc["steps"]
    params = {k: v.copy() for k, v in base.items()}
    _, base_new = all_logp(base, prompts)
    opt = None
    if rc["optimizer"] == "adamw":
        # weight decay 0, so torch's AdamW is Adam; elementwise, so stacked runs stay apart
        opt = Adam([params[k] for k in PARAM_NAMES], rc["lr"], betas=tuple(hp["betas"]),
                   eps=float(hp["adam_eps"]))
    log(0, params)

    dataset = None
    if rc["kind"] in ("self-sft", "iter-self-sft"):
        dataset = self_generated_dataset(params, mask, rngs, int(hp["self_samples"]))

    for step in range(1, steps + 1):
        if rc["kind"] == "sft":
            prompt = np.stack([g.integers(prompts, size=rc["batch"]) for g in rngs])
            X = inputs(np.full_like(prompt, NEW), prompt, prompts)
            h, logp = forward(params, X)
            dz = cross_entropy_dz(logp, tasks["e"][r, prompt])

        elif rc["kind"] in ("self-sft", "iter-self-sft"):
            if (rc["kind"] == "iter-self-sft" and step > 1
                    and (step - 1) % int(hp["regen_every"]) == 0):
                dataset = self_generated_dataset(params, mask, rngs, int(hp["self_samples"]))
            pick = [g.integers(len(d[0]), size=rc["batch"])
                    for g, d in zip(rngs, dataset, strict=True)]
            prompt = np.stack([d[0][k] for d, k in zip(dataset, pick, strict=True)])
            y = np.stack([d[1][k] for d, k in zip(dataset, pick, strict=True)])
            X = inputs(np.full_like(prompt, NEW), prompt, prompts)
            h, logp = forward(params, X)
            dz = cross_entropy_dz(logp, y)

        else:   # rl family
            group = rc["group"]
            chosen = np.stack([g.choice(prompts, size=rc["prompts"], replace=False)
                               for g in rngs])
            prompt = np.repeat(chosen, group, axis=1)
            X = inputs(np.full_like(prompt, NEW), prompt, prompts)
            h, logp = forward(params, X)
            B = prompt.shape[1]
            # on-policy answers from softmax(z / T): sample() normalises exp(logp / T) itself
            y = sample(logp / rc["temperature"], np.stack([g.random(B) for g in rngs]))
            reward = mask[r, prompt, y].astype(float)
            adv = group_advantages(reward, group, rc["normalise"], rc["ddof"], rc["std_eps"])
            lp = np.take_along_axis(logp, y[..., None], -1)[..., 0]
            delta = lp - base_new[r, prompt, y]
            dz = rl_dz(logp, y, adv, delta, rc["beta"])

        grads = backward(params, X, h, dz)
        factor = lr_factor(step - 1, steps, float(hp["warmup_ratio"]), rc["schedule"])
        if opt is not None:
            clip_per_run(grads, float(hp["clip"]))
            opt.lr = rc["lr"] * factor
            opt.step([grads[k] for k in PARAM_NAMES])
        else:
            for k in PARAM_NAMES:
                params[k] -= rc["lr"] * factor * grads[k]
        if step % rc["log_every"] == 0 or step == steps:
            log(step, params)
    return params
