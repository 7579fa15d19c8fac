"""Config of the workflow and of each paper: loading, validation, resolution per scale.

The workflow config (config/config.yaml, overridden with ``--config``) picks the scale,
papers, seeds and sharding. Each paper's file config/papers/<slug>.yaml holds its grid and
hyperparameters: a ``common`` block deep-merged under the block of the chosen scale. The
resolved paper config is a plain dict, passed to every job of that paper as ``params``
(so editing one paper's file reruns that paper only).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml

from .catalog import CATALOG
from .errors import ConfigError

SCALES = ("smoke", "default", "full")
DEVICES = ("auto", "cpu", "cuda")
GRID_AXES = ("method", "setting", "seed")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+-]*$")
CATALOG_SLUGS = tuple(row[1] for row in CATALOG)


def _schema_errors(instance: Any, schema_path: Path, what: str) -> None:
    """Validate against a JSON schema (YAML file); raise one line naming key and allowed values."""
    import jsonschema

    schema = yaml.safe_load(schema_path.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    if not errors:
        return
    err = errors[0]
    where = ".".join(str(p) for p in err.path) or "(top level)"
    if err.validator == "additionalProperties":
        allowed = sorted(err.schema.get("properties", {}))
        extra = sorted(set(err.instance) - set(allowed))
        raise ConfigError(
            f"{what}: unknown key {', '.join(map(repr, extra))} at {where}; "
            f"allowed keys: {', '.join(allowed)}"
        )
    if err.validator == "enum":
        raise ConfigError(
            f"{what}: {where}={err.instance!r} is not allowed; "
            f"allowed values: {', '.join(map(str, err.validator_value))}"
        )
    top = schema.get("properties", {}).get(err.path[0], {}) if err.path else {}
    hint = f" ({top['description']})" if "description" in top else ""
    raise ConfigError(f"{what}: {where}: {err.message}{hint}")


def available_papers(config_dir: Path) -> list[str]:
    """Slugs with a config file, in catalog order."""
    present = {p.stem for p in (config_dir / "papers").glob("*.yaml")}
    return [s for s in CATALOG_SLUGS if s in present]


def validate_workflow_config(config: dict, config_dir: Path) -> dict:
    """Validate the workflow config and return it with ``papers`` expanded to a list."""
    _schema_errors(config, config_dir / "schemas" / "config.schema.yaml", "config")
    config = dict(config)
    available = available_papers(config_dir)
    papers = config.get("papers", "all")
    if papers == "all" or papers == ["all"]:
        papers = list(available)
    if isinstance(papers, str):
        papers = [papers]
    for slug in papers:
        if slug not in available:
            hint = " (in the catalog but not implemented yet)" if slug in CATALOG_SLUGS else ""
            raise ConfigError(
                f"config: unknown paper {slug!r}{hint}; available papers: {', '.join(available)}"
            )
    config["papers"] = list(dict.fromkeys(papers))
    return config


def deep_merge(base: dict, over: dict) -> dict:
    """Recursive dict merge; values of ``over`` win; lists are replaced, not concatenated."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_paper_file(slug: str, config_dir: Path) -> dict:
    path = config_dir / "papers" / f"{slug}.yaml"
    if not path.exists():
        raise ConfigError(f"paper config {path} not found")
    raw = yaml.safe_load(path.read_text()) or {}
    _schema_errors(raw, config_dir / "schemas" / "paper.schema.yaml", f"config/papers/{slug}.yaml")
    return raw


def resolve_paper(slug: str, workflow_config: dict, config_dir: Path) -> dict:
    """The paper's config at the chosen scale, with workflow overrides applied.

    Keys of the result: paper, scale, device, methods, settings (name -> dict), seeds,
    params, exclude, shard_by, figures, labels.
    """
    raw = load_paper_file(slug, config_dir)
    scale = workflow_config.get("scale", "default")
    if scale not in raw["scales"]:
        raise ConfigError(
            f"config/papers/{slug}.yaml has no scale {scale!r}; it has: {', '.join(raw['scales'])}"
        )
    merged = deep_merge(raw.get("common", {}), raw["scales"][scale])
    settings = merged.get("settings", {"default": {}})
    if isinstance(settings, list):
        settings = {name: {} for name in settings}
    seeds = workflow_config.get("seeds") or merged.get("seeds", [0])
    offset = int(workflow_config.get("seed_offset", 0))
    shard_by = workflow_config.get("shard_by")
    if shard_by is None:  # the scale's own, else the paper's local default
        shard_by = merged.get("shard_by", raw.get("shard_by", []))
    resolved = {
        "paper": slug,
        "scale": scale,
        "device": workflow_config.get("device", "auto"),
        "methods": list(merged["methods"]),
        "labels": dict(merged.get("labels", {})),
        "settings": {str(k): (v or {}) for k, v in settings.items()},
        "seeds": [int(s) + offset for s in seeds],
        "params": merged.get("params", {}),
        "exclude": list(merged.get("exclude", [])),
        "shard_by": list(shard_by),
        "figures": dict(raw.get("figures", {})),
    }
    _check_names(resolved)
    return resolved


def _check_names(cfg: dict) -> None:
    slug = cfg["paper"]
    for kind, names in (("method", cfg["methods"]), ("setting", list(cfg["settings"]))):
        for name in names:
            if not NAME_RE.match(name):
                raise ConfigError(
                    f"config/papers/{slug}.yaml: {kind} name {name!r} is not file-safe; "
                    "allowed: letters, digits, '.', '+', '-'"
                )
    for seed in cfg["seeds"]:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ConfigError(f"{slug}: seed {seed!r} is not allowed; seeds are integers >= 0")
    for axis in cfg["shard_by"]:
        if axis not in GRID_AXES:
            raise ConfigError(
                f"{slug}: shard_by axis {axis!r} is not allowed; allowed: {', '.join(GRID_AXES)}"
            )
    for rule in cfg["exclude"]:
        for key, value in rule.items():
            allowed = {"method": cfg["methods"], "setting": list(cfg["settings"])}.get(key)
            if allowed is None or value not in allowed:
                raise ConfigError(
                    f"config/papers/{slug}.yaml: exclude {key}={value!r} names no "
                    f"{key} of the grid; allowed: {', '.join(map(str, allowed or GRID_AXES[:2]))}"
                )
