"""Artifact IO: npz for arrays, CSV for tables, JSON for claims. Writes are atomic.

Every writer writes to a temporary file beside the target and renames it, so a failed job
leaves no partial file. Every reader turns a missing, truncated or malformed file into an
ArtifactError naming the file.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .errors import ArtifactError

CSV_FLOAT_FORMAT = "%.10g"


@contextmanager
def atomic_path(path):
    """Yield a temporary path in the target's folder; rename it onto ``path`` on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_npz(path, arrays: dict) -> None:
    for key, value in arrays.items():
        arr = np.asarray(value)
        if arr.dtype == object:
            raise ArtifactError(f"{path}: array {key!r} has dtype object; only numeric/str arrays")
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, **{k: np.asarray(v) for k, v in arrays.items()})


def load_npz(path) -> dict[str, np.ndarray]:
    path = Path(path)
    if not path.exists():
        raise ArtifactError(f"{path}: artifact not found")
    try:
        with np.load(path, allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    except (zipfile.BadZipFile, EOFError, ValueError, OSError, KeyError) as exc:
        raise ArtifactError(
            f"{path}: truncated or corrupt npz artifact ({type(exc).__name__}); "
            "delete it and rerun the rule that makes it"
        ) from None


def write_csv(path, frame) -> None:
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False, float_format=CSV_FLOAT_FORMAT, lineterminator="\n")


def read_csv(path, required=()):
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise ArtifactError(f"{path}: artifact not found")
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ArtifactError(f"{path}: truncated or corrupt CSV artifact ({exc})") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ArtifactError(f"{path}: CSV artifact lacks columns {missing}; is it truncated?")
    return frame


def write_json(path, obj) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=False) + "\n")


def read_json(path):
    path = Path(path)
    if not path.exists():
        raise ArtifactError(f"{path}: artifact not found")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ArtifactError(f"{path}: truncated or corrupt JSON artifact ({exc})") from None


def write_text(path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)
