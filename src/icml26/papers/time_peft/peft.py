"""Mini-MOMENT pretraining and the fine-tuning methods of time-peft (torch).

Every method runs R runs (datasets x seeds) at once: the frozen backbone is one module whose
batch axis holds all runs' windows, and each trainable tensor carries a leading run axis, so
one Adam step updates R independent runs (Adam is element-wise; the loss is the sum of the
runs' own MSEs, so no gradient crosses runs). LoRA runs the shared `add_lora` model under
torch.func.vmap with the runs' stacked LoRA factors; the channel adapter likewise.

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

import numpy as np
import torch
from torch.func import functional_call, stack_module_state, vmap

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
class Method:
    """R stacked runs of one method on a frozen backbone `bb`."""

    def __init__(self, name: str, bb: PatchTransformer, R: int, C: int, p: dict,
                 init_seeds: list[int], device):
        self.name, self.bb, self.R, self.C, self.p = name, bb, R, C, p
        self.params: dict[str, torch.Tensor] = {}
        self.lrs: dict[str, float] = {}
        self.freq = name in ("time-peft", "time-peft-nochan")
        self.chan = name in ("time-peft", "time-peft-nofreq")
        if name == "linear-probe":
            self._add("head.weight", bb.head.weight.detach().expand(R, -1, -1), p["head_lr"])
            self._add("head.bias", bb.head.bias.detach().expand(R, -1), p["head_lr"])
        if name == "lora":
            models = []
            for s in init_seeds:
                m = copy.deepcopy(bb)
                add_lora(m, p["lora_rank"], p["lora_alpha"], LORA_TARGETS,
                         generator=torch.Generator().manual_seed(s % (2**63)))
                models.append(m)
            stacked, _ = stack_module_state(models)
            for k, v in stacked.items():
                if "lora_" in k:
                    self._add(k, v, p["adapter_lr"])
            self.frozen = {k: v for k, v in models[0].state_dict().items() if "lora_" not in k}
            self.lora_model = models[0]
        if self.freq:
            self.fa = FrequencyAdapter(C, p["lookback"], bb.horizon, p["top_k"]).to(device)
            for k, v in self.fa.named_parameters():     # g = 1, lam = 0, w = 0 (no-op init)
                self._add(f"freq.{k}", v.detach().expand(R, *v.shape), p["adapter_lr"])
        if self.chan:
            adapters = []
            for s in init_seeds:
                torch.manual_seed(s % (2**63))
                adapters.append(ChannelAdapter(bb.position.shape[1], p["n_recent"], bb.horizon,
                                               p["d_adapter"]).to(device))
            stacked, _ = stack_module_state(adapters)
            for k, v in stacked.items():
                self._add(f"chan.{k}", v, p["adapter_lr"])
            self.ca = adapters[0]
        for k in self.params:
            self.params[k] = self.params[k].to(device)

    def _add(self, name, value, lr):
        self.params[name] = value.detach().clone().contiguous().requires_grad_(True)
        self.lrs[name] = lr

    def n_trainable(self) -> int:
        return int(sum(v[0].numel() for v in self.params.values()))

    def forward(self, params: dict, z: torch.Tensor) -> torch.Tensor:
        """z (R, B, C, L) normalised lookbacks -> forecasts (R, B, C, H), normalised scale."""
        R, B, C, L = z.shape
        bb = self.bb
        if self.name == "lora":
            frozen, model = self.frozen, self.lora_model

            def one(tp, zz):
                return functional_call(model, ({**frozen, **tp},), (zz,))
            return vmap(one)(params, z)
        flat = z.reshape(R * B, C, L)
        y_freq = None
        if self.freq:
            with torch.no_grad():   # the harmonics are a fixed function of the data
                filtered, waves = self.fa.harmonics(flat)
            filtered = filtered.reshape(R, B, C, L)
            waves = waves.reshape(R, B, C, self.p["top_k"], -1)
            lam, g, w = params["freq.lam"], params["freq.gains"], params["freq.w"]
            # FrequencyAdapter.forward with a run axis on its parameters
            z_in = (z + lam[:, None, :, None] * (filtered - z)).reshape(R * B, C, L)
            y_freq = w[:, None, :, None] * torch.einsum("rk,rbckh->rbch", g, waves)
            tokens = bb.encode(z_in)
        else:
            with torch.no_grad():
                tokens = bb.encode(flat)
        if self.name == "linear-probe":
            feats = tokens.flatten(-2).reshape(R, B, C, -1)
            return (torch.einsum("rbcf,rhf->rbch", feats, params["head.weight"])
                    + params["head.bias"][:, None, None, :])
        y = bb.decode(tokens).reshape(R, B, C, -1)
        if y_freq is not None:
            y = y + y_freq
        if self.chan:
            pooled = tokens.mean(dim=-2).reshape(R, B, C, -1)
            cp = {k[5:]: v for k, v in params.items() if k.startswith("chan.")}
            ca = self.ca

            def one(tp, tok, zz):
                return functional_call(ca, (tp,), (tok, zz))
            y = y + vmap(one)(cp, pooled, z)
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


def _predict(method: Method, params, z: torch.Tensor, chunk: int) -> torch.Tensor:
    with torch.no_grad():
        return torch.cat([method.forward(params, z[:, i:i + chunk])
                          for i in range(0, z.shape[1], chunk)], dim=1)


def run_method(method: Method, series: torch.Tensor, starts: np.ndarray, batch_rngs: list,
               val: tuple, test_z: torch.Tensor, p: dict) -> dict:
    """Train the R stacked runs of `method` for p['steps'] Adam steps (batch p['batch']
    windows per run, indices from each run's own generator), validating at step 0 and every
    p['eval_every'] steps; each run keeps its lowest-validation-MSE parameters (the spec's
    early stopping; step 0 = the untouched pretrained model). Returns test predictions,
    validation curves, best steps and the trained parameters (numpy)."""
    L, H = p["lookback"], method.bb.horizon
    zv, yv = val
    params = method.params
    names = list(params)
    steps = p["steps"] if names else 0
    chunk = p["eval_chunk"]

    def val_mse():
        pred = _predict(method, params, zv, chunk)
        return ((pred - yv) ** 2).mean(dim=(1, 2, 3))

    best = val_mse()
    best_step = torch.zeros(method.R, dtype=torch.long)
    best_params = {k: v.detach().clone() for k, v in params.items()}
    curve_steps, curve_vals = [0], [best.cpu().numpy()]
    if steps:
        opt = torch.optim.Adam([{"params": [params[k]], "lr": method.lrs[k]} for k in names])
        starts_t = torch.as_tensor(starts, device=series.device)
        for step in range(1, steps + 1):
            idx = np.stack([g.integers(0, len(starts), p["batch"]) for g in batch_rngs])
            z, y = _gather(series, starts_t[torch.as_tensor(idx, device=series.device)], L, H)
            err = (method.forward(params, z) - y) ** 2
            loss = err.mean(dim=(1, 2, 3)).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
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
    pred = _predict(method, best_params, test_z, chunk)
    return {"pred": pred.cpu().numpy().astype(np.float32),
            "val_steps": np.array(curve_steps), "val_mse": np.stack(curve_vals, axis=1),
            "best_step": best_step.numpy(), "best_val": best.cpu().numpy(),
            "params": {k: v.detach().cpu().numpy() for k, v in best_params.items()}}
