"""Paper registry: from a slug to the paper's module, by convention.

``icml26.papers.<module>`` (light: metadata only) provides TITLE, TIER, ABSTRACT, SUMMARY,
FIDELITY, METHODS, PROPOSED and BACKEND. Its submodules provide the stages:
``experiment`` (prepare, train, evaluate), ``claims`` (check), ``figures`` (make and,
optionally, tables). Stage submodules are imported only by the job that needs them, so a
numpy-only paper never imports torch and the DAG builds without heavy imports.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .catalog import module_name
from .errors import ConfigError

REQUIRED_META = ("TITLE", "TIER", "ABSTRACT", "SUMMARY", "FIDELITY", "METHODS", "PROPOSED")


def metadata(slug: str) -> ModuleType:
    try:
        mod = importlib.import_module(f"icml26.papers.{module_name(slug)}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("icml26.papers"):
            raise ConfigError(
                f"paper {slug!r} has no module icml26.papers.{module_name(slug)}"
            ) from None
        raise
    missing = [name for name in REQUIRED_META if not hasattr(mod, name)]
    if missing:
        raise ConfigError(f"paper module {mod.__name__} lacks {', '.join(missing)}")
    return mod


def stage(slug: str, submodule: str) -> ModuleType:
    return importlib.import_module(f"icml26.papers.{module_name(slug)}.{submodule}")


def check_config_against_module(cfg: dict) -> None:
    """Unknown methods or settings in a paper config: one line listing the valid ones."""
    from .grid import check_run_names

    meta = metadata(cfg["paper"])
    check_run_names(cfg, methods=meta.METHODS, settings=getattr(meta, "SETTINGS", None))
