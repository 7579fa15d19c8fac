"""Text corpora that ship with Python, tokenizers and splits (numpy only, no network).

The text of ``pydoc_data.topics`` and of stdlib docstrings changes with the Python version, so
every run records ``provenance(text)`` (Python version and SHA-256 of the exact text used).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import platform
import re
import string
import warnings
from collections import Counter

import numpy as np

from ..errors import ConfigError

PRINTABLE = set(string.printable) - set("\t\r\x0b\x0c")  # printable ASCII + space + newline

# The sorted module list the specs name for docstring corpora (papers 49 castle, 55 muloco).
STDLIB_DOC_MODULES = (
    "builtins", "collections", "itertools", "functools", "os", "os.path", "re", "json",
    "argparse", "typing", "string", "datetime", "statistics", "heapq", "bisect", "textwrap",
    "difflib", "pathlib", "logging", "unittest", "email.message", "http.client", "csv",
    "random", "decimal", "fractions", "shutil", "subprocess", "threading", "asyncio",
)
# Further modules appended, in this order, when a docstring corpus must reach a minimum size.
EXTRA_DOC_MODULES = (
    "abc", "array", "ast", "base64", "calendar", "cmath", "codecs", "configparser",
    "contextlib", "copy", "dataclasses", "enum", "fnmatch", "glob", "gzip", "hashlib",
    "inspect", "io", "ipaddress", "locale", "math", "operator", "pickle", "pprint", "queue",
    "sched", "secrets", "selectors", "shlex", "socket", "sqlite3", "struct", "tarfile",
    "tempfile", "time", "timeit", "tokenize", "traceback", "types", "uuid", "warnings",
    "weakref", "zipfile",
)


def to_ascii(text: str, replacement: str = "?") -> str:
    """Map every character outside printable ASCII + newline to ``replacement``."""
    return "".join(c if c in PRINTABLE else replacement for c in text)


def pydoc_topics() -> str:
    """The reference-manual text of ``pydoc_data.topics``: values concatenated in key order."""
    from pydoc_data.topics import topics

    return "".join(topics[k] for k in sorted(topics))


def pydoc_topic_dict() -> dict[str, str]:
    """The topics as a dict (name -> text), for papers that split by topic."""
    from pydoc_data.topics import topics

    return {k: topics[k] for k in sorted(topics)}


def _public_docs(module_name: str) -> list[str]:
    with warnings.catch_warnings():  # deprecated aliases (typing.io, ...) warn on access
        warnings.simplefilter("ignore")
        module = importlib.import_module(module_name)
        docs = [inspect.getdoc(module) or ""]
        for name in sorted(dir(module)):
            if name.startswith("_"):
                continue
            try:
                member = getattr(module, name)
                doc = inspect.getdoc(member)
            except Exception:  # noqa: BLE001 - some attributes raise on access; skip them
                continue
            # Submodules appear in dir() only once something has imported them (e.g.
            # logging.handlers): skip them so the text does not depend on the process.
            if doc and not inspect.ismodule(member):
                docs.append(doc)
    return docs


def stdlib_docstrings(modules=STDLIB_DOC_MODULES, min_chars: int = 0) -> str:
    """``inspect.getdoc`` of each module and of its public members (sorted by name).

    Duplicates (e.g. re-exported functions) are kept once, first occurrence wins. If the text
    is shorter than ``min_chars``, modules from EXTRA_DOC_MODULES are appended in order.
    """
    seen: set[str] = set()
    parts: list[str] = []

    def add(mod: str) -> None:
        for doc in _public_docs(mod):
            if doc and doc not in seen:
                seen.add(doc)
                parts.append(doc)

    for mod in modules:
        add(mod)
    extra = iter(EXTRA_DOC_MODULES)
    while sum(len(p) + 2 for p in parts) < min_chars:
        mod = next(extra, None)
        if mod is None:
            break
        add(mod)
    return "\n\n".join(parts)


def load_text(source: str, *, ascii_only: bool = True, max_chars: int | None = None) -> str:
    """``source``: ``pydoc_topics`` or ``stdlib_docstrings``; optional ASCII map and cap."""
    if source == "pydoc_topics":
        text = pydoc_topics()
    elif source == "stdlib_docstrings":
        text = stdlib_docstrings(min_chars=max_chars or 0)
    else:
        raise ConfigError(
            f"corpus source {source!r} is unknown; allowed: pydoc_topics, stdlib_docstrings"
        )
    if ascii_only:
        text = to_ascii(text)
    return text[:max_chars] if max_chars else text


def provenance(text: str) -> dict[str, str]:
    """What the run's text depends on: Python version and SHA-256 of the text."""
    return {
        "python": platform.python_version(),
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "chars": str(len(text)),
    }


class CharTokenizer:
    """One id per character, ids in sorted character order (deterministic for a given text)."""

    def __init__(self, text: str):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        try:
            return np.fromiter((self.index[c] for c in text), dtype=np.int64, count=len(text))
        except KeyError as err:
            raise ValueError(f"character {err.args[0]!r} is not in the vocabulary") from None

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)


WORD_PATTERN = re.compile(r"[a-z_]+|\d+|([^\sa-z_\d])\1*")


class WordTokenizer:
    """Lower-cased words, digit runs and runs of one repeated punctuation character.

    The vocabulary is the ``size`` most frequent tokens of the fitting text (ties broken
    alphabetically) plus ``<unk>`` (id ``size``).
    """

    UNK = "<unk>"

    def __init__(self, text: str, size: int):
        counts = Counter(self.split(text))
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:size]
        self.words = [w for w, _ in ranked] + [self.UNK]
        self.index = {w: i for i, w in enumerate(self.words)}
        self.unk = len(self.words) - 1
        self.counts = np.array([c for _, c in ranked] + [0], dtype=np.int64)

    @staticmethod
    def split(text: str) -> list[str]:
        return [m.group(0) for m in WORD_PATTERN.finditer(text.lower())]

    @property
    def vocab_size(self) -> int:
        return len(self.words)

    def encode(self, text: str) -> np.ndarray:
        return np.array([self.index.get(w, self.unk) for w in self.split(text)], dtype=np.int64)

    def decode(self, ids) -> str:
        return " ".join(self.words[int(i)] for i in ids)


def split_contiguous(ids: np.ndarray, train_frac: float) -> tuple[np.ndarray, np.ndarray]:
    """First ``train_frac`` of the sequence for training, the rest for validation."""
    if not 0.0 < train_frac < 1.0:
        raise ConfigError(f"train_frac must be in (0, 1), got {train_frac}")
    cut = int(round(len(ids) * train_frac))
    return ids[:cut], ids[cut:]


def windows(ids: np.ndarray, length: int) -> np.ndarray:
    """Non-overlapping windows of ``length`` tokens, shape (n, length); the rest is dropped."""
    n = len(ids) // length
    return ids[: n * length].reshape(n, length)
