"""Mini-MOMENT pretraining and the fine-tuning methods of time-peft (torch).

Every method runs R runs (datasets x seeds) at once: the frozen backbone is one module whose
batch axis holds all runs' windows (run-major), and each trainable tensor carries a leading run
axis, so one Adam step updates R independent runs (Adam is element-wise; the loss is the sum of
the runs' own MSEs, so no gradient crosses runs). LoRA wraps the backbone's target linears in
`_RunLoRA`, which adds each run's own low-rank update to its own rows (initialised exactly as
the shared `add_lora` per run; a test pins the forward to it); the channel adapter's forward is
written with a run axis on its weights (pinned to the shared `ChannelAdapter` by a test).
What a method computes from a window without any trained tensor (`Method.frozen`: the
backbone tokens for zero-shot, linear probe and Time-PEFT -freq, whose backbone pass does not
depend on what they train; the frequency adapter's harmonics for Time-PEFT and -chan) is
computed once per window and shared by the methods that need it: the same numbers as a pass
at every step, once instead of at every draw.

Methods (all on the RevIN-normalised scale; the backbone is built without its own RevIN and
gets windows normalised once, per window and channel, by the data pipeline):
- zero-shot: the pretrained backbone unchanged.
- linear-probe: the forecasting head only, from its pretrained value (lr head_lr).
- lora: rank-r LoRA (alpha, B = 0 at init) on q, k, v, o, ff1, ff2 of both layers and on the
  head (our reading of "plus the head": a LoRA factor on it too, which gives the spec's
  ~6k trainable parameters; a fully trained head would be 6,160 on its own).
- time-peft: frequency adapter (top-k rFFT filter of the lookback mixed in by lam, harmonic
  extrapolation added with weight w and rank gains g) + channel adapter (one-head attention
  across channels on pooled tokens and the last 16 values) on the frozen backbone. Adapter
  internals are INFERRED (spec); the shared FrequencyAdapter / ChannelAdapter implement them.
- time-peft-nofreq / time-peft-nochan: the ablations without one adapter.
"""
from __future__ import annotations

import copy
import math

import numpy as np
import torch
from torch import nn

from icml26.rl.optim import Adam
from icml26.timeseries.models import (
    ChannelAdapter,
    FrequencyAdapter,
    PatchTransformer,
    add_lora,
    fit,
    freeze,
    revin_normalise,
)

METHODS = ("zero-shot", "linear-probe", "lora", "time-peft", "time-peft-nofreq",
           "time-peft-nochan")
LORA_TARGETS = ("q", "k", "v", "o", "ff1", "ff2", "head")


def build_backbone(p: dict, horizon: int) -> PatchTransformer:
    """Mini-MOMENT: channel-independent patch transformer (RevIN applied outside)."""
    return PatchTransformer(p["lookback"], horizon, p["patch_len"], p["patch_len"], p["d_model"],
                            p["n_heads"], p["d_ff"], p["n_layers"], revin=False, pre_norm=True)


def pretrain(p: dict, corpus: np.ndarray, horizon: int, seed: int, device) -> tuple[dict, dict]:
    """2,000 Adam steps (lr 1e-3, batch 64 windows) of MSE on the normalised scale (spec).
    Returns the weights (name -> array) and the shared `fit` history."""
    torch.manual_seed(seed % (2**63))
    model = build_backbone(p, horizon).to(device)
    L = p["lookback"]
    x = torch.tensor(corpus[:, None, :], dtype=torch.float32)
    z, mean, sd = revin_normalise(x[..., :L])
    y = (x[..., L:L + horizon] - mean) / (sd + 1e-5)
    gen = torch.Generator().manual_seed((seed + 1) % (2**63))
    groups = [{"params": list(model.parameters()), "lr": p["pretrain_lr"]}]
    hist = fit(lambda b: model.decode(model.encode(b)), groups, z.to(device), y.to(device),
               steps=p["pretrain_steps"], batch=p["pretrain_batch"], generator=gen)
    weights = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
    return weights, hist


def load_backbone(p: dict, horizon: int, weights: dict, device) -> PatchTransformer:
    model = build_backbone(p, horizon)
    model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
    return freeze(model.to(device)).eval()


# ------------------------------------------------------------------------------------------
# the methods: trainable tensors (run axis first), their learning rates, the forward map
# ------------------------------------------------------------------------------------------
class _RunLoRA(nn.Module):
    """A frozen base linear plus one LoRA update per run: the input's leading rows are
    run-major (R x N rows per run), and run r's rows go through W + scaling B_r A_r (and the
    base bias), the function the shared `LoRALinear` computes for one run (W x + scaling
    B A x), with the update merged into the weight: one batched product per layer instead of
    three. The factors are read from `slot` (the stacked trainable tensors of the current
    forward)."""

    def __init__(self, base: nn.Linear, scaling: float, key: str, slot: dict):
        super().__init__()
        self.base, self.scaling, self.key, self.slot = base, scaling, key, slot

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        A = self.slot["params"][f"{self.key}.lora_A"]               # (R, rank, in)
        B = self.slot["params"][f"{self.key}.lora_B"]               # (R, out, rank)
        W = torch.baddbmm(self.base.weight, B, A, alpha=self.scaling)  # (R, out, in)
        xs = x.reshape(A.shape[0], -1, x.shape[-1])
        out = torch.baddbmm(self.base.bias[:, None].T, xs, W.transpose(1, 2))
        return out.reshape(*x.shape[:-1], W.shape[1])


def _run_linear(params: dict, name: str, x: torch.Tensor) -> torch.Tensor:
    """nn.Linear with a run axis on its weights: x (R, ..., in) -> (R, ..., out)."""
    w, b = params[f"{name}.weight"], params[f"{name}.bias"]
    R = w.shape[0]
    out = torch.baddbmm(b[:, None, :], x.reshape(R, -1, x.shape[-1]), w.transpose(1, 2))
    return out.reshape(*x.shape[:-1], w.shape[1])


def channel_adapter(params: dict, tokens: torch.Tensor, z: torch.Tensor,
                    n_recent: int) -> torch.Tensor:
    """The shared `ChannelAdapter.forward` with a run axis on its weights: tokens (R, B, C, d)
    pooled per channel, z (R, B, C, L) -> (R, B, C, H)."""
    u = _run_linear(params, "inp", torch.cat([tokens, z[..., -n_recent:]], dim=-1))
    att = _run_linear(params, "q", u) @ _run_linear(params, "k", u).transpose(-2, -1) \
        / math.sqrt(u.shape[-1])
    u = u + torch.softmax(att, dim=-1) @ _run_linear(params, "v", u)
    return _run_linear(params, "out", u)


class Method:
    """R stacked runs of one method on a frozen backbone `bb`."""

    def __init__(self, name: str, bb: PatchTransformer, R: int, C: int, p: dict,
                 init_seeds: list[int], device):
        self.name, self.bb, self.R, self.C, self.p = name, bb, R, C, p
        self.params: dict[str, torch.Tensor] = {}
        self.lrs: dict[str, float] = {}
        self.freq = name in ("time-peft", "time-peft-nochan")
        self.chan = name in ("time-peft", "time-peft-nofreq")
        # the backbone pass does not depend on the trained tensors: computed once per window
        self.cacheable = name in ("zero-shot", "linear-probe", "time-peft-nofreq")
        if name == "linear-probe":
            self._add("head.weight", bb.head.weight.detach().expand(R, -1, -1), p["head_lr"])
            self._add("head.bias", bb.head.bias.detach().expand(R, -1), p["head_lr"])
        if name == "lora":
            # each run's factors drawn exactly as the shared add_lora draws them for that run
            stacked: dict[str, list] = {}
            for s in init_seeds:
                m = copy.deepcopy(bb)
                add_lora(m, p["lora_rank"], p["lora_alpha"], LORA_TARGETS,
                         generator=torch.Generator().manual_seed(s % (2**63)))
                for k, v in m.named_parameters():
                    if "lora_" in k:
                        stacked.setdefault(k, []).append(v.detach())
            for k, v in stacked.items():
                self._add(k, torch.stack(v), p["adapter_lr"])
            self.slot: dict = {}
            self.lora_model = copy.deepcopy(bb)
            for parent_name, parent in list(self.lora_model.named_modules()):
                for child_name, child in list(parent.named_children()):
                    if child_name in LORA_TARGETS and isinstance(child, nn.Linear):
                        key = f"{parent_name}.{child_name}" if parent_name else child_name
                        setattr(parent, child_name, _RunLoRA(
                            child, p["lora_alpha"] / p["lora_rank"], key, self.slot))
        if self.freq:
            self.fa = FrequencyAdapter(C, p["lookback"], bb.horizon, p["top_k"]).to(device)
            for k, v in self.fa.named_parameters():     # g = 1, lam = 0, w = 0 (no-op init)
                self._add(f"freq.{k}", v.detach().expand(R, *v.shape), p["adapter_lr"])
        if self.chan:
            stacked = {}
            for s in init_seeds:
                torch.manual_seed(s % (2**63))
                ca = ChannelAdapter(bb.position.shape[1], p["n_recent"], bb.horizon,
                                    p["d_adapter"])
                for k, v in ca.named_parameters():
                    stacked.setdefault(k, []).append(v.detach())
            for k, v in stacked.items():
                self._add(f"chan.{k}", torch.stack(v), p["adapter_lr"])
        for k in self.params:
            self.params[k] = self.params[k].to(device)

    def _add(self, name, value, lr):
        self.params[name] = value.detach().clone().contiguous().requires_grad_(True)
        self.lrs[name] = lr

    def n_trainable(self) -> int:
        return int(sum(v[0].numel() for v in self.params.values()))

    def frozen(self, z: torch.Tensor) -> dict:
        """What the method computes from a window without any trained tensor, cached once per
        window by `run_method`: lookbacks (..., C, L) -> the backbone's encoder tokens (...,
        C, n_patches, d) for zero-shot, linear probe and -freq; the frequency adapter's
        top-k filtered lookback (..., C, L) and harmonic waves (..., C, k, H) for Time-PEFT
        and -chan; nothing for LoRA."""
        lead, flat = z.shape[:-2], z.reshape(-1, *z.shape[-2:])
        with torch.no_grad():
            if self.cacheable:
                tok = self.bb.encode(flat)
                return {"tokens": tok.reshape(*lead, *tok.shape[1:])}
            if self.freq:
                filtered, waves = self.fa.harmonics(flat)
                return {"filtered": filtered.reshape(z.shape),
                        "waves": waves.reshape(*lead, *waves.shape[1:])}
        return {}

    def frozen_bytes(self) -> int:
        """Bytes of `frozen` per window."""
        C, L, H, k = self.C, self.p["lookback"], self.bb.horizon, self.p["top_k"]
        if self.cacheable:
            return 4 * C * self.bb.n_patches * self.bb.position.shape[1]
        return 4 * C * (L + k * H) if self.freq else 0

    def forward(self, params: dict, z: torch.Tensor, frozen: dict | None = None) -> torch.Tensor:
        """z (R, B, C, L) normalised lookbacks -> forecasts (R, B, C, H), normalised scale;
        `frozen` is `self.frozen(z)` when the caller has it."""
        R, B, C, L = z.shape
        if frozen is None:
            frozen = self.frozen(z)
        bb = self.bb
        if self.name == "lora":
            self.slot["params"] = params
            try:
                model = self.lora_model
                return model.decode(model.encode(z.reshape(R * B, C, L))).reshape(R, B, C, -1)
            finally:
                self.slot.pop("params", None)
        if self.cacheable:
            tokens = frozen["tokens"]
            if self.name == "linear-probe":
                return (torch.einsum("rbcf,rhf->rbch", tokens.flatten(-2), params["head.weight"])
                        + params["head.bias"][:, None, None, :])
            with torch.no_grad():
                y = bb.decode(tokens)
        else:
            # FrequencyAdapter.forward with a run axis on its parameters; the harmonics are a
            # fixed function of the data
            filtered, waves = frozen["filtered"], frozen["waves"]
            lam, g, w = params["freq.lam"], params["freq.gains"], params["freq.w"]
            z_in = (z + lam[:, None, :, None] * (filtered - z)).reshape(R * B, C, L)
            y_freq = w[:, None, :, None] * torch.einsum("rk,rbckh->rbch", g, waves)
            tokens = bb.encode(z_in).reshape(R, B, C, *bb.position.shape)
            y = bb.decode(tokens) + y_freq
        if self.chan:
            cp = {k[5:]: v for k, v in params.items() if k.startswith("chan.")}
            y = y + channel_adapter(cp, tokens.mean(dim=-2), z, self.p["n_recent"])
        return y


# ------------------------------------------------------------------------------------------
# stacked training with early stopping on validation MSE
# ------------------------------------------------------------------------------------------
def _gather(series: torch.Tensor, starts: torch.Tensor, L: int, H: int):
    """series (R, C, T), starts (R, B) -> normalised lookbacks (R, B, C, L) and targets
    (R, B, C, H)."""
    R, C, _ = series.shape
    pos = starts[:, :, None] + torch.arange(L + H, device=series.device)      # (R, B, L+H)
    w = series[torch.arange(R, device=series.device)[:, None, None, None],
               torch.arange(C, device=series.device)[None, None, :, None], pos[:, :, None, :]]
    z, mean, sd = revin_normalise(w[..., :L])
    return z, (w[..., L:] - mean) / (sd + 1e-5)


def _predict(method: Method, params, z: torch.Tensor, chunk: int, frozen=None) -> torch.Tensor:
    """Forecasts of every run on windows z (R, N, C, L), `chunk` windows per pass."""
    with torch.no_grad():
        return torch.cat([method.forward(params, z[:, i:i + chunk], None if frozen is None else
                                         {k: v[:, i:i + chunk] for k, v in frozen.items()})
                          for i in range(0, z.shape[1], chunk)], dim=1)


class FrozenCache(dict):
    """(run key, part, kind) -> frozen per-window tensors, with the bytes of the training
    parts held (bounded by p['cache_mb'])."""

    nbytes = 0


def _cached(cache: dict, key, make):
    if key not in cache:
        cache[key] = make()
    return cache[key]


def _run_frozen(method: Method, z: torch.Tensor, chunk: int) -> dict:
    """`method.frozen` of one run's windows z (N, C, L), `chunk` windows per pass (a fixed
    size whatever the number of stacked runs, so cached numbers do not depend on stacking)."""
    parts = [method.frozen(z[i:i + chunk]) for i in range(0, len(z), chunk)]
    return {k: torch.cat([q[k] for q in parts]) for k in parts[0]} if parts else {}


def _stack_rows(per_run: list, rows=None) -> dict:
    """Per-run dicts of (N_r, ...) tensors -> one dict of (R, B, ...) (rows (R, B) of each, or
    all N when rows is None)."""
    return {k: torch.stack([f[k] if rows is None else f[k][rows[r]]
                            for r, f in enumerate(per_run)]) for k in per_run[0]}


def draw_batches(batch_rngs: list, n: int, steps: int, batch: int) -> np.ndarray:
    """(steps, R, batch) window indices: at each step every run draws `batch` indices from its
    own generator, in run order (the order the training loop has always used)."""
    out = np.empty((steps, len(batch_rngs), batch), dtype=np.int64)
    for step in range(steps):
        for r, g in enumerate(batch_rngs):
            out[step, r] = g.integers(0, n, batch)
    return out


def run_method(method: Method, series: torch.Tensor, starts: np.ndarray, batch_rngs: list,
               val: tuple, test_z: torch.Tensor, p: dict, keys: list | None = None,
               cache: dict | None = None) -> dict:
    """Train the R stacked runs of `method` for p['steps'] Adam steps (batch p['batch']
    windows per run, indices from each run's own generator), validating at step 0 and every
    p['eval_every'] steps; each run keeps its lowest-validation-MSE parameters (the spec's
    early stopping; step 0 = the untouched pretrained model). Returns test predictions,
    validation curves, best steps and the trained parameters (numpy).

    What a method computes from a window without any trained tensor (`Method.frozen`: the
    backbone tokens of zero-shot, linear probe and -freq, the harmonics of Time-PEFT and -chan)
    is computed once per window it sees (the distinct training windows its runs draw, the
    validation and the test windows), run by run, and kept in `cache` under keys[r] (a run's
    dataset and seed: every method of one (dataset, seed) draws the same windows, so the
    methods with the same frozen part share it), as long as the cached training parts fit
    p['cache_mb'] in all; otherwise it is computed at every step (the same numbers, up to float
    rounding). `cache` is a `FrozenCache` shared by the calls of one train job."""
    L, H = p["lookback"], method.bb.horizon
    zv, yv = val
    params = method.params
    names = list(params)
    steps = p["steps"] if names else 0
    chunk = p["eval_chunk"]
    R, dev = method.R, series.device
    idx = draw_batches(batch_rngs, len(starts), steps, p["batch"]) if steps else None
    kind = "tokens" if method.cacheable else "harmonics" if method.freq else None
    cache = FrozenCache() if cache is None else cache
    keys = list(range(R)) if keys is None else keys
    uniq = [np.unique(idx[:, r]) for r in range(R)] if steps else []
    new = sum(len(uniq[r]) for r in range(len(uniq)) if (keys[r], "train", kind) not in cache)
    cached = kind is not None and cache.nbytes + new * method.frozen_bytes() <= \
        p["cache_mb"] * 2**20
    if cached:
        cache.nbytes += new * method.frozen_bytes()

    def frozen_of(part, z):
        if not cached:
            return None
        return _stack_rows([_cached(cache, (keys[r], part, kind),
                                    lambda r=r: _run_frozen(method, z[r], chunk))
                            for r in range(R)])

    fv = frozen_of("val", zv)

    def val_mse():
        pred = _predict(method, params, zv, chunk, fv)
        return ((pred - yv) ** 2).mean(dim=(1, 2, 3))

    best = val_mse()
    best_step = torch.zeros(R, dtype=torch.long)
    best_params = {k: v.detach().clone() for k, v in params.items()}
    curve_steps, curve_vals = [0], [best.cpu().numpy()]
    if steps:
        starts_t = torch.as_tensor(starts, device=dev)
        if cached:
            # each run's distinct windows, their frozen part; pos: (steps, R, batch) rows
            ft = []
            for r in range(R):
                def make(r=r):
                    z, _ = _gather(series[r:r + 1], starts_t[torch.as_tensor(uniq[r][None],
                                                                           device=dev)], L, H)
                    return uniq[r], _run_frozen(method, z[0], chunk)
                u, f = _cached(cache, (keys[r], "train", kind), make)
                if not np.array_equal(u, uniq[r]):
                    raise ValueError(f"cached training windows of {keys[r]} differ")
                ft.append(f)
            pos = np.stack([np.searchsorted(uniq[r], idx[:, r]) for r in range(R)], axis=1)
        opts = [Adam([params[k] for k in names if method.lrs[k] == lr], lr=lr)
                for lr in sorted({method.lrs[k] for k in names})]
        for step in range(1, steps + 1):
            z, y = _gather(series, starts_t[torch.as_tensor(idx[step - 1], device=dev)], L, H)
            out = method.forward(params, z, _stack_rows(ft, torch.as_tensor(
                pos[step - 1], device=dev)) if cached else None)
            loss = ((out - y) ** 2).mean(dim=(1, 2, 3)).sum()
            for opt in opts:
                opt.zero_grad()
            loss.backward()
            for opt in opts:
                opt.step()
            if step % p["eval_every"] == 0 or step == steps:
                v = val_mse()
                better = v < best
                best = torch.where(better, v, best)
                best_step = torch.where(better.cpu(), torch.tensor(step), best_step)
                with torch.no_grad():
                    for k in names:
                        mask = better.view(-1, *([1] * (params[k].dim() - 1)))
                        best_params[k] = torch.where(mask, params[k], best_params[k])
                curve_steps.append(step)
                curve_vals.append(v.cpu().numpy())
    pred = _predict(method, best_params, test_z, chunk, frozen_of("test", test_z))
    return {"pred": pred.cpu().numpy().astype(np.float32),
            "val_steps": np.array(curve_steps), "val_mse": np.stack(curve_vals, axis=1),
            "best_step": best_step.numpy(), "best_val": best.cpu().numpy(),
            "params": {k: v.detach().cpu().numpy() for k, v in best_params.items()}}
