"""Part B, full profile: a 2-layer character transformer that answers arithmetic prompts with
multi-token answers (torch; imported only inside the train stage).

Everything below that the spec does not fix is INFERRED (our construction):
- Vocabulary of V = 64 characters: <pad>, <bos>, <eos>, digits and punctuation, padded with
  letters. A sequence is <bos> prompt answer <eos>.
- Old task T': prompt "O" + "x+y=" with 10 <= x, y <= 99 (64 prompts); its one correct answer
  g(j) is str(x + y).
- New task T: prompt "N" + "uu*v=" with 2 <= u <= 30, 2 <= v <= 9 (64 prompts); u is
  zero-padded so that all new prompts have one length (batched sampling). Its four valid
  formats make C(i): "56", "+56", "56.0" and "(56)". a(i) is the format the pretrained model
  prefers, and e(i) != a(i) is the expert's format; both are drawn per prompt.
- Pretraining mirrors the MLP: half old and half new prompts per batch. Old prompts are
  labelled g(j). New prompts get a(i) with probability 0.5, else a random wrong answer (a
  random number in a random format).
- Post-training follows the official recipe (scripts/sft.sh, self_sft.sh, rl.sh;
  core/training/objectives.py), as the MLP does (policy.recipe): AdamW (0.9, 0.95), no weight
  decay, clipping 1.0; the SFT family at post_lr with 3 % warm-up and cosine decay, batch
  sft_batch, loss the token mean of the cross-entropy over every answer token of the batch
  (`CrossEntropyLoss`); the RL family at post_lr * rl_lr_ratio, constant, rl_step_factor
  times as many steps, rl_prompts prompts x group answers sampled at `temperature`, reward
  1[answer in C(i)] (an answer without <eos> within max_answer tokens gets 0), advantages
  (r - mean) / (unbiased std + 1e-8), and per answer the mean over its sampled tokens
  (<eos> included) of A log p_t - beta 0.5 (log p_t - log p_base,t)^2 (`GRPOLoss`, k2 KL),
  then the mean over answers. rl-nokl has beta 0; rl-mean no std division. The absolute
  post_lr is INFERRED (the official 1e-4 is for 1B-8B LLMs).
- Evaluation is exact for accuracies: the probability of each valid answer string (teacher
  forcing). The KL to the base model is estimated from 8 answers per new prompt, sampled with a
  fixed generator (the sum along each sampled answer of the exact per-token KL).

Devices (not a modelling choice): models are initialised on the CPU and moved to the config's
device (``icml26.seeding.torch_device``); every random number (numpy batches, the sampling
uniforms of CPU torch generators) is drawn on the CPU and then moved, so a run's draws are the
same on every device and nothing moves on the CPU.
"""

from __future__ import annotations

import numpy as np

PAD, BOS, EOS = 0, 1, 2
CHARS = list("0123456789+-*=.()ON:") + list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMPQRSTUVW")
VOCAB = ["<pad>", "<bos>", "<eos>"] + CHARS[: 64 - 3]
INDEX = {c: i for i, c in enumerate(VOCAB)}
FORMATS = ("{}", "+{}", "{}.0", "({})")


def encode(text: str) -> list[int]:
    return [INDEX[c] for c in text]


def make_tasks(rng: np.random.Generator, prompts: int) -> dict:
    """Prompt strings and answer strings of both tasks (Python lists; see module docstring)."""
    pairs = set()
    while len(pairs) < prompts:
        pairs.add((int(rng.integers(10, 100)), int(rng.integers(10, 100))))
    old = sorted(pairs)
    prods = set()
    while len(prods) < prompts:
        prods.add((int(rng.integers(2, 31)), int(rng.integers(2, 10))))
    new = sorted(prods)
    a = rng.integers(len(FORMATS), size=prompts)
    e = (a + 1 + rng.integers(len(FORMATS) - 1, size=prompts)) % len(FORMATS)
    return {
        "old_prompts": [f"O{x}+{y}=" for x, y in old],
        "old_answers": [str(x + y) for x, y in old],
        "new_prompts": [f"N{u:02d}*{v}=" for u, v in new],
        "new_values": [u * v for u, v in new],
        "new_correct": [[f.format(u * v) for f in FORMATS] for u, v in new],
        "a": [FORMATS[k].format(u * v) for k, (u, v) in zip(a, new, strict=True)],
        "e": [FORMATS[k].format(u * v) for k, (u, v) in zip(e, new, strict=True)],
    }


class Batcher:
    """Builds padded (prompt + answer + <eos>) id tensors and the mask of answer positions,
    on ``device`` (None: the CPU)."""

    def __init__(self, torch, context: int, device=None):
        self.torch, self.context = torch, context
        self.device = torch.device("cpu") if device is None else torch.device(device)

    def pairs(self, prompts: list[str], answers: list[str]):
        """Inputs x (B, T), targets y (B, T) and a float mask of the answer targets."""
        seqs = [[BOS] + encode(p) + encode(a) + [EOS] for p, a in zip(prompts, answers,
                                                                     strict=True)]
        return self._padded(seqs, [1 + len(p) for p in prompts])

    def rollouts(self, prompts: list[str], ids: np.ndarray):
        """As `pairs`, for sampled answer ids (B, L): each answer's tokens up to and including
        its first <eos>, or all L tokens if it never stopped (they are still the tokens the
        policy produced, so the policy-gradient and KL terms score them)."""
        seqs, starts = [], []
        for p, row in zip(prompts, ids, strict=True):
            stop = np.flatnonzero(row == EOS)
            ans = list(row[: stop[0] + 1]) if stop.size else list(row)
            seqs.append([BOS] + encode(p) + [int(a) for a in ans])
            starts.append(1 + len(p))
        return self._padded(seqs, starts)

    def _padded(self, seqs, starts):
        """Padded next-token inputs and targets of token sequences, and the answer mask: the
        targets from each sequence's first answer token (index ``start``) on."""
        T = max(len(s) for s in seqs) - 1
        x = np.full((len(seqs), T), PAD)
        y = np.full((len(seqs), T), PAD)
        m = np.zeros((len(seqs), T))
        for k, (s, st) in enumerate(zip(seqs, starts, strict=True)):
            x[k, : len(s) - 1] = s[:-1]
            y[k, : len(s) - 1] = s[1:]
            m[k, st - 1: len(s) - 1] = 1.0
        return self._tensors(x, y, m)

    def _tensors(self, x, y, m):
        t, dev = self.torch, self.device
        return (t.as_tensor(x).to(dev), t.as_tensor(y).to(dev),
                t.as_tensor(m, dtype=t.float32).to(dev))


def answer_logprob(model, F, x, y, m):
    """Sum over answer tokens of log p(y_t | y_<t), per sequence (B,), and the log-softmax."""
    tok, logp = token_logprobs(model, F, x, y)
    return (tok * m).sum(-1), logp


def token_logprobs(model, F, x, y):
    """log p(y_t | y_<t) at every position (B, T), and the log-softmax (B, T, V)."""
    logp = F.log_softmax(model(x), dim=-1)
    return logp.gather(-1, y[..., None])[..., 0], logp


def sft_loss(model, F, x, y, m):
    """Official SFT loss (objectives.py `CrossEntropyLoss`): the mean cross-entropy over every
    answer token of the batch (not the mean of per-answer sums)."""
    tok, _ = token_logprobs(model, F, x, y)
    return -(tok * m).sum() / m.sum()


def grpo_loss(torch, model, base, F, x, y, m, adv, beta: float):
    """Official GRPO loss (objectives.py `GRPOLoss`): per answer, the mean over its tokens of
    -(A log p_t - beta 0.5 (log p_t - log p_base,t)^2) (k2 KL on the sampled tokens), then the
    mean over answers."""
    tok, _ = token_logprobs(model, F, x, y)
    per_tok = adv[:, None] * tok
    if beta > 0:
        with torch.no_grad():
            tok_b, _ = token_logprobs(base, F, x, y)
        per_tok = per_tok - beta * 0.5 * (tok - tok_b) ** 2
    return (-(per_tok * m).sum(-1) / m.sum(-1)).mean()


def decode_answers(ids: np.ndarray) -> list:
    """Sampled answer ids (B, L) -> strings (None if no <eos> within L tokens)."""
    out = []
    for row in ids:
        stop = np.flatnonzero(row == EOS)
        if not stop.size or np.any(row[: stop[0]] < 3):
            out.append(None)
        else:
            out.append("".join(VOCAB[i] for i in row[: stop[0]]))
    return out


def sample_answers(torch, model, prompts: list[str], max_answer: int, gen,
                   temperature: float = 1.0, with_ids: bool = False):
    """Sample answers autoregressively (inverse CDF on softmax(logits / temperature); uniforms
    drawn on ``gen``, a CPU generator, and moved to the model's device by lm.train.sample).
    Returns the decoded answers (and the sampled ids (B, max_answer + 1) with ``with_ids``)."""
    from icml26.lm.train import sample

    x = torch.as_tensor(np.array([[BOS] + encode(p) for p in prompts]))
    seq = sample(model, x, max_answer + 1, generator=gen, temperature=temperature)
    model.train()
    ids = seq[:, x.shape[1]:].cpu().numpy()
    return (decode_answers(ids), ids) if with_ids else decode_answers(ids)


class Evaluator:
    """Exact old / new accuracies (teacher-forced probabilities of the valid answers) and the
    sampled estimate of KL(pi_theta || pi_base) on the new prompts."""

    def __init__(self, torch, F, tasks: dict, batcher: Batcher, max_answer: int, seed: int):
        self.torch, self.F, self.tasks, self.max_answer = torch, F, tasks, max_answer
        self.old = batcher.pairs(tasks["old_prompts"], tasks["old_answers"])
        n = len(tasks["new_prompts"])
        flat_p = [p for p in tasks["new_prompts"] for _ in FORMATS]
        flat_a = [a for c in tasks["new_correct"] for a in c]
        self.new = batcher.pairs(flat_p, flat_a)
        self.n_new = n
        self.kl_prompts = [p for p in tasks["new_prompts"] for _ in range(8)]
        self.batcher = batcher
        self.seed = seed

    def __call__(self, model, base) -> tuple[float, float, float]:
        torch, F = self.torch, self.F
        with torch.no_grad():
            model.eval()
            lp_old, _ = answer_logprob(model, F, *self.old)
            lp_new, _ = answer_logprob(model, F, *self.new)
            old_acc = float(lp_old.exp().mean())
            new_acc = float(lp_new.exp().view(self.n_new, len(FORMATS)).sum(-1).mean())
            gen = torch.Generator().manual_seed(self.seed)
            _, ids = sample_answers(torch, model, self.kl_prompts, self.max_answer, gen,
                                    with_ids=True)
            kl = sequence_kl(torch, F, model, base, self.batcher, self.kl_prompts, ids).mean()
        model.train()
        return old_acc, new_acc, float(kl)


def sequence_kl(torch, F, model, base, batcher, prompts, ids):
    """Sum along each sampled answer (ids, see Batcher.rollouts) of the exact per-token
    KL(pi_theta || pi_base)."""
    x, y, m = batcher.rollouts(prompts, ids)
    logp = F.log_softmax(model(x), dim=-1)
    with torch.no_grad():
        logb = F.log_softmax(base(x), dim=-1)
    per_tok = (logp.exp() * (logp - logb)).sum(-1)
    return (per_tok * m).sum(-1)


def build(torch, p: dict, seed: int, device=None):
    """The transformer, initialised on the CPU (same weights on every device), then moved to
    ``device`` (None: stays on the CPU)."""
    from icml26.lm.model import GPT, GPTConfig

    torch.manual_seed(seed % (2 ** 63))
    cfg = GPTConfig(vocab_size=len(VOCAB), context=int(p["context"]), d_model=int(p["d_model"]),
                    n_heads=int(p["heads"]), n_layers=int(p["layers"]))
    model = GPT(cfg)
    return model if device is None else model.to(device)


def pretrain(torch, F, tasks: dict, p: dict, seed: int, device=None):
    """The base model: answers of both tasks, new-task labels a(i) w.p. 1 - label_noise.
    It lives on ``device`` (None: the CPU)."""
    from icml26.lm.optim import AdamW, clip_grad_norm

    rng = np.random.default_rng(seed)
    model = build(torch, p, seed, device)
    opt = AdamW(list(model.parameters()), lr=float(p["pretrain_lr"]), weight_decay=0.0)
    batcher = Batcher(torch, int(p["context"]), device)
    B = int(p["pretrain_batch"])
    n = len(tasks["old_prompts"])
    model.train()
    for _ in range(int(p["pretrain_steps"])):
        jo = rng.integers(n, size=B // 2)
        jn = rng.integers(n, size=B - B // 2)
        prompts = [tasks["old_prompts"][j] for j in jo] + [tasks["new_prompts"][i] for i in jn]
        answers = [tasks["old_answers"][j] for j in jo]
        for i in jn:
            if rng.random() >= float(p["label_noise"]):
                answers.append(tasks["a"][i])
            else:   # a random wrong answer in a random format
                v = int(rng.integers(0, 300))
                v = v + 1 if v == tasks["new_values"][i] else v
                answers.append(FORMATS[int(rng.integers(len(FORMATS)))].format(v))
        x, y, m = batcher.pairs(prompts, answers)
        lp, _ = answer_logprob(model, F, x, y, m)
        loss = -lp.mean()
        opt.zero_grad()
        loss.backward()
        clip_grad_norm(opt.params, 1.0)
        opt.step()
    return model


RL_FAMILY = ("rl", "rl-nokl", "rl-mean")


def post_train(method: str, base, tasks: dict, p: dict, seed: int, log) -> None:
    """Post-train a copy of `base` on new-task prompts with `method` under the official recipe
    (module docstring); log(step, old_acc, new_acc, kl) every log_every SFT-family steps
    (log_every * rl_step_factor RL steps). The copy and every batch live on the device of
    `base`; the random draws stay on the CPU."""
    import copy

    import torch
    import torch.nn.functional as F

    from icml26.lm.optim import AdamW, clip_grad_norm
    from icml26.lm.train import device_of

    from .policy import group_advantages, lr_factor

    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed % (2 ** 63))   # CPU: same draws on every device
    dev = device_of(base)
    model = copy.deepcopy(base)
    base.eval()
    rl = method in RL_FAMILY
    lr = float(p["post_lr"]) * (float(p["rl_lr_ratio"]) if rl else 1.0)
    steps = int(p["steps"]) * (int(p["rl_step_factor"]) if rl else 1)
    every = int(p["log_every"]) * (int(p["rl_step_factor"]) if rl else 1)
    schedule = "constant" if rl else "cosine"
    beta = 0.0 if method == "rl-nokl" else float(p["beta"])
    opt = AdamW(list(model.parameters()), lr=lr, betas=(0.9, 0.95), eps=1e-8,
                weight_decay=0.0)
    batcher = Batcher(torch, int(p["context"]), dev)
    evaluate = Evaluator(torch, F, tasks, batcher, int(p["max_answer"]), seed=12345)
    B, L = int(p["sft_batch"]), int(p["max_answer"])
    n = len(tasks["new_prompts"])
    correct = [set(c) for c in tasks["new_correct"]]
    log(0, *evaluate(model, base))

    def own_dataset():
        prompts = [tasks["new_prompts"][i] for i in range(n) for _ in range(int(p["self_samples"]))]
        ids = [i for i in range(n) for _ in range(int(p["self_samples"]))]
        answers = sample_answers(torch, model, prompts, L, gen)
        keep = [(tasks["new_prompts"][i], a) for i, a in zip(ids, answers, strict=True)
                if a in correct[i]]
        return keep

    dataset = own_dataset() if method in ("self-sft", "iter-self-sft") else None
    model.train()
    for step in range(1, steps + 1):
        if method == "sft":
            idx = rng.integers(n, size=B)
            x, y, m = batcher.pairs([tasks["new_prompts"][i] for i in idx],
                                    [tasks["e"][i] for i in idx])
            loss = sft_loss(model, F, x, y, m)
        elif method in ("self-sft", "iter-self-sft"):
            if method == "iter-self-sft" and step > 1 and (step - 1) % int(p["regen_every"]) == 0:
                dataset = own_dataset()
            loss = None       # no correct own answer at all: nothing to imitate this step
            if dataset:
                pick = rng.integers(len(dataset), size=B)
                x, y, m = batcher.pairs([dataset[k][0] for k in pick],
                                        [dataset[k][1] for k in pick])
                loss = sft_loss(model, F, x, y, m)
        elif rl:
            group = int(p["group"])
            chosen = rng.choice(n, size=int(p["rl_prompts"]), replace=False)
            ids = np.repeat(chosen, group)
            prompts = [tasks["new_prompts"][i] for i in ids]
            answers, sampled = sample_answers(torch, model, prompts, L, gen,
                                              temperature=float(p["temperature"]),
                                              with_ids=True)                 # on-policy
            reward = np.array([float(a in correct[i]) for i, a in zip(ids, answers,
                                                                       strict=True)])
            adv = group_advantages(reward[None, :], group, method != "rl-mean")[0]
            x, y, m = batcher.rollouts(prompts, sampled)
            adv_t = torch.as_tensor(adv, dtype=torch.float32).to(dev)
            loss = grpo_loss(torch, model, base, F, x, y, m, adv_t, beta)
        else:
            raise ValueError(f"method {method!r} does not run in the sequence setting")
        if loss is not None:
            opt.zero_grad()
            loss.backward()
            clip_grad_norm(opt.params, 1.0)
            opt.step(lr_factor(step - 1, steps, float(p["warmup_ratio"]), schedule))
        if step % every == 0 or step == steps:
            log(step, *evaluate(model, base))
