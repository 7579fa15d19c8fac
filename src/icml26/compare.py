"""Compare the claims of two result folders: which verdicts or measured values differ.

    python -m icml26 compare results-a results-b [--html compare.html]

Typical uses: the papers' seeds against ``seed_offset=1000`` (does a verdict hold on fresh
seeds?), CPU against GPU, or a code change before and after. Each folder is a workflow's
``results/`` (one ``<paper>/claims.json`` per paper). Claims marked ``timing`` measure CPU
time and are expected to move; they are listed but flagged.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

from . import io
from .errors import ArtifactError

COLUMNS = ["paper", "id", "category", "verdict_a", "verdict_b", "measured_a", "measured_b",
           "max_rel_change", "timing", "what"]


def load_claims(results_dir) -> dict[tuple[str, str], dict]:
    """(paper, claim id) -> claim, with the scale and seeds of its paper, from a results folder."""
    root = Path(results_dir)
    if not root.is_dir():
        raise ArtifactError(f"{root}: not a folder; give two results/ folders of the workflow")
    files = sorted(root.glob("*/claims.json"))
    if not files:
        raise ArtifactError(f"{root}: no <paper>/claims.json inside; is it a results/ folder?")
    out = {}
    for path in files:
        doc = io.read_json(path)
        for claim in doc["claims"]:
            out[(doc["paper"], claim["id"])] = {**claim, "scale": doc["scale"],
                                                "seeds": doc["seeds"]}
    return out


def _numbers(value) -> dict[str, float]:
    if isinstance(value, dict):
        return {k: float(v) for k, v in value.items() if isinstance(v, (int, float))}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"": float(value)}
    return {}


def _rel_change(a, b) -> float:
    """Largest relative change over the numbers both measured values hold (nan if none)."""
    na, nb = _numbers(a), _numbers(b)
    common = [k for k in na if k in nb]
    changes = []
    for k in common:
        x, y = na[k], nb[k]
        if math.isfinite(x) and math.isfinite(y):
            changes.append(abs(y - x) / max(abs(x), abs(y), 1e-300) if x != y else 0.0)
        elif not (math.isnan(x) and math.isnan(y)) and x != y:
            changes.append(math.inf)
    return max(changes) if changes else math.nan


def _flat(value) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return "" if value is None else str(value)


def compare(dir_a, dir_b):
    """A DataFrame with one row per claim whose verdict or measured value differs, or that
    only one folder has; sorted by paper and claim id."""
    import pandas as pd

    a, b = load_claims(dir_a), load_claims(dir_b)
    rows = []
    for key in sorted(set(a) | set(b)):
        ca, cb = a.get(key), b.get(key)
        if ca is None or cb is None:
            only = "only in A" if cb is None else "only in B"
            c = ca or cb
            rows.append({"paper": key[0], "id": key[1], "category": c["category"],
                         "verdict_a": ca["verdict"] if ca else "",
                         "verdict_b": cb["verdict"] if cb else "",
                         "measured_a": _flat(ca["measured"]) if ca else "",
                         "measured_b": _flat(cb["measured"]) if cb else "",
                         "max_rel_change": math.nan, "timing": bool(c.get("timing")),
                         "what": only})
            continue
        verdict_moved = ca["verdict"] != cb["verdict"]
        measured_moved = _flat(ca["measured"]) != _flat(cb["measured"])
        if not (verdict_moved or measured_moved):
            continue
        rows.append({"paper": key[0], "id": key[1], "category": ca["category"],
                     "verdict_a": ca["verdict"], "verdict_b": cb["verdict"],
                     "measured_a": _flat(ca["measured"]), "measured_b": _flat(cb["measured"]),
                     "max_rel_change": _rel_change(ca["measured"], cb["measured"]),
                     "timing": bool(ca.get("timing") or cb.get("timing")),
                     "what": "verdict" if verdict_moved else "measured"})
    return pd.DataFrame(rows, columns=COLUMNS), len(set(a) | set(b))


def text_table(frame, n_claims: int, dir_a, dir_b) -> str:
    flips = int((frame["what"] == "verdict").sum())
    lines = [f"A = {dir_a}", f"B = {dir_b}",
             f"{n_claims} claims; {flips} verdicts differ; "
             f"{int((frame['what'] == 'measured').sum())} measured values differ with the same "
             f"verdict; {int(frame['what'].str.startswith('only').sum())} in one folder only."]
    if len(frame):
        shown = frame[["paper", "id", "what", "verdict_a", "verdict_b", "max_rel_change",
                       "timing"]]
        lines.append(shown.to_string(index=False, float_format=lambda x: f"{x:.3g}"))
    return "\n".join(lines) + "\n"


def html_page(frame, n_claims: int, dir_a, dir_b) -> str:
    from .report import VERDICT_CLASS, _html_doc

    def verdict(v):
        return f'<span class="{VERDICT_CLASS.get(v, "")}">{html.escape(v)}</span>' if v else ""

    head = "".join(f"<th>{c}</th>" for c in COLUMNS)
    body = []
    for r in frame.itertuples(index=False):
        cells = [html.escape(r.paper), html.escape(r.id), r.category, verdict(r.verdict_a),
                 verdict(r.verdict_b), html.escape(r.measured_a), html.escape(r.measured_b),
                 "" if math.isnan(r.max_rel_change) else f"{r.max_rel_change:.3g}",
                 "timing" if r.timing else "", html.escape(r.what)]
        style = ' style="background:#fff4e5"' if r.what == "verdict" else ""
        body.append(f"<tr{style}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    flips = int((frame["what"] == "verdict").sum())
    intro = (f"<h1>Claims compared</h1><p>A: <code>{html.escape(str(dir_a))}</code><br>"
             f"B: <code>{html.escape(str(dir_b))}</code></p><p>{n_claims} claims; "
             f"<b>{flips}</b> verdicts differ (highlighted); the other rows differ in the "
             "measured value only, or exist in one folder. Claims marked timing measure CPU "
             "time and are expected to move.</p>")
    table = (f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
             if body else "<p>No claim differs.</p>")
    return _html_doc("Claims compared", intro + table)


def main(dir_a, dir_b, html_path=None) -> str:
    frame, n = compare(dir_a, dir_b)
    if html_path:
        io.write_text(html_path, html_page(frame, n, dir_a, dir_b))
    return text_table(frame, n, dir_a, dir_b)
