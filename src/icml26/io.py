"""Artifact IO: npz for arrays, CSV for tables, JSON for claims. Writes are atomic.

Every writer writes to a temporary file beside the target and renames it, so a failed job
leaves no partial file. Every reader turns a missing, truncated or malformed file into an
ArtifactError naming the file.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .errors import ArtifactError

CSV_FLOAT_FORMAT = "%.10g"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path):
    """Yield a temporary path in the target's folder; rename it onto ``path`` on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        # mkstemp makes the file 0600; a result is readable as the umask allows (shared clusters)
        os.chmod(tmp, 0o666 & ~_umask())
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


def _check_csv_complete(path: Path) -> None:
    """A CSV we wrote ends with a newline and has as many fields in every row as its header.

    pandas fills a row cut short with NaN and reads a file cut at a row boundary as shorter:
    both would change results silently. The first is caught here; the second by the row
    counts each stage checks (``expected_rows`` and pipeline's per-run checks).
    """
    raw = path.read_bytes()
    if not raw:
        raise ArtifactError(f"{path}: truncated or corrupt CSV artifact (empty file); "
                            "delete it and rerun the rule that makes it")
    if not raw.endswith(b"\n"):
        raise ArtifactError(f"{path}: truncated or corrupt CSV artifact (last row has no line "
                            "end); delete it and rerun the rule that makes it")
    try:
        rows = csv.reader(io.StringIO(raw.decode()))
        width = len(next(rows))
        for lineno, row in enumerate(rows, start=2):
            if len(row) != width:
                raise ArtifactError(
                    f"{path}: truncated or corrupt CSV artifact (row {lineno} has {len(row)} "
                    f"fields, the header {width}); delete it and rerun the rule that makes it")
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ArtifactError(f"{path}: truncated or corrupt CSV artifact ({exc})") from None


def read_csv(path, required=(), expected_rows=None, **kwargs):
    """A CSV artifact, checked whole: final line end, every row complete, the named columns,
    and (when given) exactly ``expected_rows`` data rows. Anything else: ArtifactError."""
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise ArtifactError(f"{path}: artifact not found")
    _check_csv_complete(path)
    try:
        frame = pd.read_csv(path, **kwargs)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ArtifactError(f"{path}: truncated or corrupt CSV artifact ({exc})") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ArtifactError(f"{path}: CSV artifact lacks columns {missing}; is it truncated?")
    if expected_rows is not None and len(frame) != expected_rows:
        raise ArtifactError(
            f"{path}: CSV artifact has {len(frame)} rows, expected {expected_rows}; "
            "truncated? delete it and rerun the rule that makes it")
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
