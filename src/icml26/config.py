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


def load_yaml(path: Path, what: str | None = None) -> Any:
    """Parse a YAML file; a syntax error is one line naming the file, line and column."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{what or path}"
        if mark is not None:
            where += f":{mark.line + 1}:{mark.column + 1}"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        detail = f"{context}, {problem}" if context else problem
        raise ConfigError(f"{where}: YAML syntax error: {detail}") from None


def _schema_errors(instance: Any, schema_path: Path, what: str) -> None:
    """Validate against a JSON schema (YAML file); raise one line naming key and allowed values."""
    import jsonschema

    schema = load_yaml(schema_path)
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
    described = err.schema if isinstance(err.schema, dict) and "description" in err.schema else top
    hint = f" ({described['description']})" if "description" in described else ""
    raise ConfigError(f"{what}: {where}: {err.message}{hint}")


def available_papers(config_dir: Path) -> list[str]:
    """Slugs with a config file, in catalog order."""
    present = {p.stem for p in (config_dir / "papers").glob("*.yaml")}
    return [s for s in CATALOG_SLUGS if s in present]


_INT_RE = re.compile(r"^[+-]?\d+$")
_NULLS = ("null", "Null", "NULL", "~", "none", "None", "")


def _coerce(value: Any, schema: dict) -> Any:
    """A command-line string turned into the type the schema asks for, where it is one.

    Snakemake parses ``--config seeds=[7,8]`` with YAML's BaseLoader, so list items (and
    ``null``) arrive as strings; scalars arrive as int/float/bool already.
    """
    types = schema.get("type", [])
    types = [types] if isinstance(types, str) else list(types)
    if isinstance(value, str):
        if "null" in types and value in _NULLS:
            return None
        if "integer" in types and _INT_RE.match(value):
            return int(value)
        if "number" in types:
            try:
                return float(value)
            except ValueError:
                return value
        return value
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_coerce(v, schema["items"]) for v in value]
    return value


def coerce_command_line(config: dict, schema: dict) -> dict:
    """Each top-level value coerced to its schema type (see ``_coerce``); others untouched."""
    props = schema.get("properties", {})
    return {k: _coerce(v, props[k]) if k in props else v for k, v in config.items()}


def validate_workflow_config(config: dict, config_dir: Path) -> dict:
    """Validate the workflow config and return it with ``papers`` expanded to a list.

    Values from the command line are coerced first (``seeds=[7,8]`` arrives as strings).
    """
    schema_path = config_dir / "schemas" / "config.schema.yaml"
    config = coerce_command_line(dict(config), load_yaml(schema_path))
    _schema_errors(config, schema_path, "config")
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
    raw = load_yaml(path, f"config/papers/{slug}.yaml") or {}
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
    check_params(resolved, config_dir)
    return resolved


def params_schema_path(slug: str, config_dir: Path) -> Path:
    return config_dir / "schemas" / "params" / f"{slug}.schema.yaml"


def check_params(cfg: dict, config_dir: Path) -> None:
    """The paper's resolved ``params`` and each setting's parameters against its own schema
    (config/schemas/params/<slug>.schema.yaml: types, ranges, required keys, no unknown keys).

    Checked at workflow start, so a negative step count or a misspelled key is one line before
    any job runs, not a crash in train after prepare has written data.
    """
    slug = cfg["paper"]
    path = params_schema_path(slug, config_dir)
    if not path.exists():
        raise ConfigError(f"paper {slug!r} has no params schema {path}; every paper needs one")
    instance = {"params": cfg["params"], "settings": cfg["settings"]}
    _schema_errors(instance, path, f"config/papers/{slug}.yaml (scale {cfg['scale']})")


def config_hash(cfg: dict) -> str:
    """Short hash of a resolved paper config (its canonical JSON): the rules' params."""
    import hashlib
    import json

    text = json.dumps(cfg, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def resolve_for_job(raw_workflow_config: dict, slug: str, config_dir: Path,
                    expected_hash: str | None = None) -> dict:
    """A job's paper config, resolved from the workflow config as the DAG did; with
    ``expected_hash``, a config edited after the workflow started is one clear line."""
    wf = validate_workflow_config(raw_workflow_config, config_dir)
    cfg = resolve_paper(slug, wf, config_dir)
    if expected_hash is not None and config_hash(cfg) != expected_hash:
        raise ConfigError(
            f"config/papers/{slug}.yaml or the workflow config changed after this workflow "
            "started; run snakemake again")
    return cfg


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
