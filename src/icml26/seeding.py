"""Seeds and devices. Seeds derive from names (see grid.Run.rng_seed), never from global state."""

from __future__ import annotations

import hashlib

import numpy as np


def derive_seed(*parts) -> int:
    text = "|".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def rng(*parts) -> np.random.Generator:
    """A numpy Generator seeded from the given names and numbers."""
    return np.random.default_rng(derive_seed(*parts))


def torch_device(name: str = "auto"):
    """The torch device for config ``device`` (auto | cpu | cuda); imports torch lazily."""
    import torch

    if name not in ("auto", "cpu", "cuda"):
        raise ValueError(f"device {name!r} is not allowed; allowed: auto, cpu, cuda")
    if name == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device=cuda was asked for but no CUDA device is available")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda":
        # deterministic CUDA kernels where torch has them; on the CPU one thread already gives
        # the same bytes, and this call imports torch._dynamo (~2 CPU-s a job)
        torch.use_deterministic_algorithms(True, warn_only=True)
    return torch.device(name)


def check_device_available(name: str) -> None:
    """``device=cuda`` where CUDA is missing: one line before any job (torch imported only
    then, so other devices cost nothing)."""
    from .errors import ConfigError

    if name != "cuda":
        return
    try:
        import torch
    except ImportError:  # pragma: no cover (torch is a dependency)
        raise ConfigError("config: device=cuda needs torch with CUDA; torch is not installed") \
            from None
    if not torch.cuda.is_available():
        raise ConfigError(
            "config: device=cuda but torch finds no CUDA device here "
            f"(torch {torch.__version__}, built for CUDA {torch.version.cuda}); "
            "allowed here: device=cpu or device=auto")


def seed_torch(seed: int) -> None:
    """Seed torch's global generator.

    CPU jobs run torch single-threaded (``OMP_NUM_THREADS=1``), which makes its CPU kernels
    give the same bytes every run; ``torch.use_deterministic_algorithms`` is not called here
    because it imports ``torch._dynamo`` (about 2 CPU-s a job) and changes nothing on the CPU
    (tests/test_device.py compares the bytes). ``torch_device`` turns it on for CUDA.
    """
    import torch

    torch.manual_seed(seed % (2**63))
