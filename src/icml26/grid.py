"""Runs and shards of a paper's grid.

A run is one (method, setting, seed). The grid is the product of the resolved config's
methods, settings and seeds, less the combinations its ``exclude`` list names. A shard is
the group of runs that one train job executes; ``shard_by`` names the grid axes that split
jobs (``[]``: one job per paper; ``[method, setting, seed]``: one job per run).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ConfigError
from .seeding import derive_seed

ALL_SHARD = "all"
SEP = "~"


@dataclass(frozen=True, order=True)
class Run:
    method: str
    setting: str
    seed: int

    @property
    def key(self) -> str:
        """Stable, file-safe identifier of the run (used as array-name prefix)."""
        return f"{self.method}{SEP}{self.setting}{SEP}{self.seed}"

    def as_dict(self) -> dict:
        return {"method": self.method, "setting": self.setting, "seed": self.seed}

    def rng_seed(self, paper: str, stream: str = "") -> int:
        """Seed derived from (paper, method, setting, seed, stream), never from global state."""
        return derive_seed(paper, self.method, self.setting, self.seed, stream)


def _excluded(run: Run, exclude: list[dict]) -> bool:
    return any(all(getattr(run, k) == v for k, v in rule.items()) for rule in exclude)


def setting_seeds(cfg: dict, setting: str) -> list[int]:
    """The seeds a setting runs: the first ``n_seeds`` of the seed list if the setting says so
    (a spec may give one part of a paper fewer seeds than another), else all of them."""
    n = (cfg["settings"][setting] or {}).get("n_seeds")
    if n is None:
        return list(cfg["seeds"])
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(
            f"{cfg['paper']}: setting {setting!r} has n_seeds={n!r}; allowed: an integer >= 1"
        )
    return list(cfg["seeds"][:n])


def runs(cfg: dict) -> list[Run]:
    """All runs of the resolved paper config, in grid order."""
    out = [
        Run(m, s, seed)
        for m in cfg["methods"]
        for s in cfg["settings"]
        for seed in setting_seeds(cfg, s)
        if not _excluded(Run(m, s, seed), cfg["exclude"])
    ]
    if not out:
        raise ConfigError(f"{cfg['paper']}: the grid is empty (every run excluded?)")
    return out


def shard_of(run: Run, shard_by: list[str]) -> str:
    if not shard_by:
        return ALL_SHARD
    return SEP.join(str(getattr(run, axis)) for axis in shard_by)


def shards(cfg: dict) -> list[str]:
    """Shard names in grid order, each once."""
    return list(dict.fromkeys(shard_of(r, cfg["shard_by"]) for r in runs(cfg)))


def runs_in_shard(cfg: dict, shard: str) -> list[Run]:
    out = [r for r in runs(cfg) if shard_of(r, cfg["shard_by"]) == shard]
    if not out:
        raise ConfigError(
            f"{cfg['paper']}: unknown shard {shard!r}; shards: {', '.join(shards(cfg))}"
        )
    return out


def check_run_names(cfg: dict, methods=None, settings=None) -> None:
    """Raise one line if a method or setting name is unknown to the paper module."""
    for kind, names, allowed in (
        ("method", cfg["methods"], methods),
        ("setting", list(cfg["settings"]), settings),
    ):
        if allowed is None:
            continue
        for name in names:
            if name not in allowed:
                raise ConfigError(
                    f"{cfg['paper']}: unknown {kind} {name!r}; allowed: {', '.join(allowed)}"
                )
