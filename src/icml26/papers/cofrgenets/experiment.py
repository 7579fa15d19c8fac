"""Stages of the cofrgenets paper: prepare (the character corpus), train, evaluate.

Two kinds of settings (``kind`` in the setting's parameters):
- ``lm``: train one char-level GPT per run (method = model, see cffn.py) on the corpus saved
  by prepare; the minibatch sequence is derived from (paper, setting, seed) only, so the four
  models of a seed see the same batches (paired comparison); the initialisation from the run's
  own stream. Curve rows: ``val_bpc_curve`` (bits per character on the first
  ``curve_val_chars`` validation characters) every ``eval_every`` steps; the final bpc on the
  whole validation split is saved as state.
- ``gradient``: the gradient job (gradient_tests.py) for the method ``cf-gradient``: custom
  continuant backward vs analytic / nested autograd / finite differences, random and stress
  sets. Its vectors come from the run's stream.
torch is imported inside train only; prepare and evaluate are numpy.
"""

from __future__ import annotations

import math

import numpy as np

from icml26.lm.corpus import CharTokenizer, load_text, provenance, split_contiguous, to_ascii
from icml26.seeding import derive_seed

GRADIENT_METHOD = "cf-gradient"
LN2 = math.log(2.0)

# full profile: stdlib sources (inspect.getsource) for a fixed, sorted module list
SOURCE_MODULES = tuple(sorted((
    "abc", "argparse", "ast", "asyncio.base_events", "asyncio.tasks", "base64", "bisect",
    "calendar", "codecs", "collections", "configparser", "contextlib", "copy", "csv",
    "dataclasses", "datetime", "decimal", "difflib", "email.message", "enum", "fnmatch",
    "fractions", "ftplib", "functools", "gettext", "glob", "gzip", "heapq", "hmac",
    "html.parser", "http.client", "http.server", "imaplib", "inspect", "ipaddress", "json.decoder",
    "json.encoder", "locale", "logging", "logging.handlers", "mailbox", "mimetypes", "ntpath",
    "numbers", "opcode", "optparse", "os", "pathlib", "pdb", "pickle", "pickletools", "platform",
    "plistlib", "posixpath", "pprint", "pydoc", "queue", "random", "re", "selectors", "shlex",
    "shutil", "smtplib", "socket", "socketserver", "sre_compile", "sre_parse", "ssl",
    "statistics", "string", "subprocess", "tarfile", "tempfile", "textwrap", "threading",
    "timeit", "tokenize", "traceback", "turtle", "types", "typing", "unittest.case",
    "unittest.mock", "urllib.parse", "urllib.request", "uuid", "warnings", "weakref",
    "xml.dom.minidom", "xml.etree.ElementTree", "zipfile",
)))


def setting_params(cfg: dict, setting: str) -> dict:
    return {**cfg["params"], **(cfg["settings"][setting] or {})}


def is_gradient(cfg: dict, setting: str) -> bool:
    return setting_params(cfg, setting).get("kind", "lm") == "gradient"


def stdlib_sources(modules=SOURCE_MODULES) -> str:
    """inspect.getsource of each module in order (missing modules skipped, none network)."""
    import importlib
    import inspect
    import warnings

    parts = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in modules:
            try:
                parts.append(inspect.getsource(importlib.import_module(name)))
            except (ImportError, OSError, TypeError):
                continue
    return "\n\n".join(parts)


def corpus_text(params: dict) -> str:
    """pydoc topics (ASCII, '?' for the rest), optionally + stdlib sources, capped."""
    cap = int(params["max_chars"])
    text = load_text("pydoc_topics")
    if params.get("with_sources", False):
        text = text + "\n\n" + to_ascii(stdlib_sources())
    return text[:cap]


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Corpus ids split 90/10 (contiguous), vocabulary and provenance (python, sha256)."""
    params = cfg["params"]
    text = corpus_text(params)
    tok = CharTokenizer(text)
    train_ids, val_ids = split_contiguous(tok.encode(text), float(params["train_frac"]))
    prov = provenance(text)
    return {
        "train_ids": train_ids.astype(np.int16 if tok.vocab_size < 2**15 else np.int64),
        "val_ids": val_ids.astype(np.int16 if tok.vocab_size < 2**15 else np.int64),
        "vocab": np.array(tok.chars),
        "provenance_keys": np.array(list(prov)),
        "provenance_values": np.array(list(prov.values())),
    }


def _train_lm_run(cfg: dict, data: dict, run, device) -> tuple[dict, list[dict]]:
    """Train one model; returns its final numbers and its curve rows."""
    import time

    import torch
    import torch.nn.functional as F

    from icml26.lm.model import n_params
    from icml26.lm.optim import AdamW, clip_grad_norm, warmup_cosine
    from icml26.lm.train import as_tensor, eval_loss, eval_windows, random_batch

    from .cffn import Cffn, build_model, cffn_param_formula, ladder_shape

    p = setting_params(cfg, run.setting)
    vocab = len(data["vocab"])
    context, batch, steps = int(p["context"]), int(p["batch"]), int(p["steps"])
    torch.manual_seed(run.rng_seed(cfg["paper"], "init") % (2**63))
    model = build_model(run.method, p, vocab).to(device)
    params = list(model.parameters())
    # weight decay on the weight matrices of Linear / Embedding layers only (nanoGPT's rule);
    # the ladder tensors w, b (D, L, p) and v (L, p) are per-channel vectors stacked for
    # speed, so the shared ndim >= 2 rule would wrongly decay the offsets b towards the poles
    matrices = {id(m.weight) for m in model.modules()
                if isinstance(m, (torch.nn.Linear, torch.nn.Embedding))}
    opt = AdamW(params, float(p["lr"]), betas=tuple(p["betas"]),
                weight_decay=float(p["weight_decay"]),
                decay=[id(t) in matrices for t in params])
    final_frac = float(p["final_lr"]) / float(p["lr"])
    train_ids = as_tensor(data["train_ids"].astype(np.int64)).to(device)
    val_all = eval_windows(data["val_ids"].astype(np.int64), context).to(device)
    n_curve = max(1, int(p["curve_val_chars"]) // context)
    val_curve = val_all[:n_curve]
    # batches from (paper, setting, seed): identical for every model of the seed
    gen = torch.Generator().manual_seed(
        derive_seed(cfg["paper"], run.setting, run.seed, "batches") % (2**63))

    curves = []

    def log(step):
        bpc = eval_loss(model, val_curve) / LN2
        curves.append({**run.as_dict(), "step": step, "metric": "val_bpc_curve", "value": bpc})

    eval_every = int(p["eval_every"])
    cpu = 0.0
    model.train()
    for step in range(steps):
        if eval_every and step % eval_every == 0:
            log(step)
        t0 = time.process_time()
        x, y = random_batch(train_ids, batch, context, gen)
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        clip_grad_norm(opt.params, float(p["clip"]))
        opt.step(warmup_cosine(step, steps, int(p["warmup"]), final_frac))
        cpu += time.process_time() - t0
        if step % max(1, eval_every) == 0 or step == steps - 1:
            curves.append({**run.as_dict(), "step": step + 1, "metric": "train_loss",
                           "value": float(loss.detach())})
    log(steps)
    final = {
        "val_bpc": eval_loss(model, val_all) / LN2,
        "n_params": float(n_params(model)),
        "n_params_nonembedding": float(n_params(model, exclude_embeddings=True)),
        "cpu_s_per_step": cpu / max(steps, 1),
        "train_loss_final": float(loss.detach()),
    }
    shape = ladder_shape(run.method, p)
    if shape is not None:  # the spec's parameter formula, checked against the built module
        cffn = next(m for m in model.modules() if isinstance(m, Cffn))
        final["cffn_params"] = float(sum(t.numel() for t in cffn.parameters()))
        final["cffn_params_formula"] = float(cffn_param_formula(int(p["d_model"]), *shape))
    return final, curves


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    from icml26.seeding import torch_device

    from .gradient_tests import run_gradient_tests

    device = torch_device(cfg.get("device", "auto"))
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    for run in runs:
        p = setting_params(cfg, run.setting)
        if is_gradient(cfg, run.setting):
            if run.method != GRADIENT_METHOD:
                raise ValueError(f"setting {run.setting!r} is the gradient job: only method "
                                 f"{GRADIENT_METHOD!r}; exclude {run.method!r} in the config")
            rng = np.random.default_rng(run.rng_seed(cfg["paper"], "vectors"))
            final = run_gradient_tests(rng, int(p["grad_vectors"]), int(p["grad_depth"]),
                                       int(p.get("fd_vectors", 100)))
        else:
            if run.method == GRADIENT_METHOD:
                raise ValueError(f"{GRADIENT_METHOD!r} runs only in a gradient setting")
            final, rows = _train_lm_run(cfg, data, run, device)
            curves.extend(rows)
        for name, value in final.items():
            state[f"{run.key}/{name}"] = np.array([float(value)])
    return state, curves


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    """One row per run: the final numbers saved by train (bpc, parameters, gradient tests)."""
    out = []
    for run in runs:
        prefix = f"{run.key}/"
        out.append({k[len(prefix):]: float(v[0]) for k, v in state.items()
                    if k.startswith(prefix)})
    return out
