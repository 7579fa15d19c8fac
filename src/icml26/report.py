"""Report pages: one per paper (markdown and HTML from the same blocks) and the summary index.

Pages are pure functions of the results (no timestamps, no timings), so they are
byte-identical for the same config and seeds.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .plotting import proposed_set
from .stats import mean_ci

# Words, not emoji: a page must read the same without an emoji font. HTML adds colour.
VERDICT_MARK = {"reproduced": "reproduced", "not_reproduced": "NOT reproduced",
                "inconclusive": "inconclusive"}
SMOKE_WARNING = (
    "**Smoke scale: a plumbing check, not a reproduction.** The grid is cut to seconds and "
    "often to one or two seeds; the verdicts below only show that every stage ran. Run "
    "`scale=default` (or `full`) for verdicts to act on.")
VERDICT_CLASS = {"reproduced": "ok", "not_reproduced": "bad", "inconclusive": "meh"}


def summarise(metrics):
    """Mean and 95% interval over seeds of every numeric metric, per (method, setting)."""
    import pandas as pd

    numeric = [c for c in metrics.columns if c not in ("method", "setting", "seed")
               and pd.api.types.is_numeric_dtype(metrics[c])]
    rows = []
    order = list(dict.fromkeys(zip(metrics["method"], metrics["setting"], strict=True)))
    for method, setting in order:
        part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
        for col in numeric:
            values = part[col].to_numpy(dtype=float)
            if not np.isfinite(values).any():
                continue
            iv = mean_ci(values)
            rows.append({"method": method, "setting": setting, "metric": col, "mean": iv.mean,
                         "ci_lo": iv.lo, "ci_hi": iv.hi, "n_seeds": iv.n,
                         "n_failed": iv.n_failed})
    return pd.DataFrame(rows, columns=["method", "setting", "metric", "mean", "ci_lo", "ci_hi",
                                       "n_seeds", "n_failed"])


def _fmt(x) -> str:
    if x is None:
        return "–"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        if not np.isfinite(x):
            return "–"
        return f"{x:.4g}"
    if isinstance(x, dict):
        return "; ".join(f"{k}: {_fmt(v)}" for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(_fmt(v) for v in x) + "]"
    return str(x)


def _ci_cell(mean, lo, hi, n_failed=0) -> str:
    failed = f" ({int(n_failed)} failed)" if n_failed else ""
    if not np.isfinite(lo):
        return _fmt(mean) + failed
    return f"{mean:.4g} ± {(hi - lo) / 2:.2g}{failed}"


@dataclass
class Page:
    """A report page as blocks: ("h", level, text) | ("p", text) | ("table", header, rows)
    | ("img", path, caption) | ("pre", text)."""

    title: str
    blocks: list = field(default_factory=list)

    def h(self, level, text):
        self.blocks.append(("h", level, text))

    def p(self, text):
        self.blocks.append(("p", text))

    def table(self, header, rows):
        self.blocks.append(("table", list(header), [list(r) for r in rows]))

    def img(self, path, caption):
        self.blocks.append(("img", path, caption))

    def markdown(self) -> str:
        out = [f"# {self.title}", ""]
        for block in self.blocks:
            kind = block[0]
            if kind == "h":
                out += ["#" * block[1] + " " + block[2], ""]
            elif kind == "p":
                out += [block[1].strip(), ""]
            elif kind == "table":
                header, rows = block[1], block[2]
                out.append("| " + " | ".join(header) + " |")
                out.append("|" + "---|" * len(header))
                for r in rows:
                    out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
                out.append("")
            elif kind == "img":
                out += [f"![{block[2]}]({block[1]})", "", f"*{block[2]}*", ""]
        return "\n".join(out).rstrip() + "\n"

    def html(self) -> str:
        """The same page rendered from its markdown by markdown-it-py (CommonMark + tables);
        verdict cells get a colour class."""
        from markdown_it import MarkdownIt

        md = MarkdownIt("commonmark", {"html": False}).enable("table")
        body = md.render(self.markdown())
        for verdict, cls in VERDICT_CLASS.items():
            body = body.replace(f"<td>{VERDICT_MARK[verdict]}</td>",
                                f'<td><span class="{cls}">{VERDICT_MARK[verdict]}</span></td>')
        return _html_doc(self.title, body.rstrip("\n"))


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:72rem;
margin:2rem auto;padding:0 1rem;color:#222;line-height:1.45}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f4f4} code{background:#f4f4f4;padding:0 .2rem}
img{max-width:100%} figure{margin:1rem 0} figcaption{color:#555;font-size:.9rem}
.ok{color:#1e7e34;font-weight:600}.bad{color:#b02a37;font-weight:600}.meh{color:#8a6d00}
.thumb{max-width:180px;max-height:110px}.muted{color:#999}
"""


def _html_doc(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n<body>\n"
        f"{body}\n</body></html>\n"
    )


def _claims_rows(claims: list[dict]) -> list[list[str]]:
    rows = []
    for c in claims:
        measured = c["measured"]
        if "intervals" in c:
            iv = c["intervals"]
            if isinstance(measured, dict):
                measured = {
                    k: (f"{_fmt(v)} [{_fmt(iv[k][0])}, {_fmt(iv[k][1])}]" if k in iv else v)
                    for k, v in measured.items()
                }
            elif "value" in iv:
                measured = f"{_fmt(measured)} [{_fmt(iv['value'][0])}, {_fmt(iv['value'][1])}]"
        rows.append([
            c["id"], c["statement"], c["category"], _fmt(measured), c["comparison"],
            _fmt(c["threshold"]), VERDICT_MARK[c["verdict"]], str(c["n_seeds"]),
        ])
    return rows


def verdict_counts(claims: list[dict]) -> tuple[int, int]:
    results = [c for c in claims if c["category"] == "result"]
    return sum(c["verdict"] == "reproduced" for c in results), len(results)


def paper_page(meta, cfg: dict, claims_doc: dict, summary, tables: dict, figdir: Path) -> Page:
    from .catalog import entry

    number = entry(cfg["paper"])[0]
    page = Page(f"{number:02d} {cfg['paper']}: {meta.TITLE}")
    k, n = verdict_counts(claims_doc["claims"])
    page.p(
        f"**Tier {meta.TIER}** · scale **{cfg['scale']}** · seeds {cfg['seeds']} · "
        f"result claims reproduced **{k} of {n}** · spec abstract: {meta.ABSTRACT}"
    )
    if cfg["scale"] == "smoke":
        page.p(SMOKE_WARNING)
    page.h(2, "Claims")
    page.p("Each verdict is computed from all seeds; intervals are 95% intervals over seeds: "
           "Student-t for a mean, percentile bootstrap for a statistic pooled over seeds or "
           "instances (see docs/claims.md). Thresholds are the spec's.")
    page.table(["id", "claim", "kind", "measured [95% CI]", "comparison", "threshold", "verdict",
                "seeds"], _claims_rows(claims_doc["claims"]))
    notes = [f"- **{c['id']}**: {c['note']}" for c in claims_doc["claims"] if c.get("note")]
    if notes:
        page.p("\n".join(notes))
    page.h(2, "The paper in brief")
    page.p(meta.SUMMARY)
    page.h(2, "What was run")
    labels = cfg.get("labels", {})
    methods = ", ".join(
        f"`{m}`" + (f" ({labels[m]})" if m in labels else "") + (
            " **(proposed)**" if m in proposed_set(meta.PROPOSED) else "") for m in cfg["methods"])
    settings = ", ".join(f"`{s}`" for s in cfg["settings"])
    page.p(f"- methods: {methods}\n- settings: {settings}\n- seeds: {cfg['seeds']}\n"
           f"- parameters at this scale: `{_compact(cfg['params'])}`")
    page.h(3, "Fidelity: what is scaled down, substituted or inferred")
    page.p(meta.FIDELITY)
    page.h(2, "Figures")
    for name, caption in cfg["figures"].items():
        page.img(f"figures/{name}.png", caption)
    for title, frame in tables.items():
        page.h(2, title)
        page.table(list(frame.columns), [[_fmt(v) for v in row] for row in frame.itertuples(
            index=False)])
    page.h(2, "Metrics (mean ± 95% CI half-width over seeds; failed runs, NaN/inf, counted "
              "apart)")
    if len(summary):
        wide = {}
        for row in summary.itertuples(index=False):
            key = (row.method, row.setting)
            wide.setdefault(key, {})[row.metric] = _ci_cell(row.mean, row.ci_lo, row.ci_hi,
                                                        getattr(row, "n_failed", 0))
        metrics = list(dict.fromkeys(summary["metric"]))
        for chunk in range(0, len(metrics), 6):
            cols = metrics[chunk:chunk + 6]
            rows = [[m, s] + [vals.get(c, "–") for c in cols] for (m, s), vals in wide.items()
                    if any(c in vals for c in cols)]
            page.table(["method", "setting"] + cols, rows)
    page.p("Per-run values: `metrics.csv`; this table: `metrics_summary.csv`; "
           "claims: `claims.json`.")
    return page


def _compact(obj) -> str:
    import json

    text = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return text if len(text) < 400 else text[:397] + "..."


def index_page(rows: list[dict]) -> str:
    """The summary page: one row per catalog paper, built or not."""
    built = [r for r in rows if r.get("built")]
    k = sum(r["k"] for r in built)
    n = sum(r["n"] for r in built)
    smoke = any(r.get("scale") == "smoke" for r in built)
    banner = ("<p><b>Smoke scale: a plumbing check, not a reproduction.</b> Verdicts on "
              "smoke pages only show that every stage ran.</p>") if smoke else ""
    head = (
        "<h1>ICML 2026 papers, reproduced</h1>" + banner +
        f"<p>{len(built)} of {len(rows)} papers built · result claims reproduced: "
        f"<b>{k} of {n}</b>. Verdicts: <span class=ok>reproduced</span>, "
        "<span class=bad>not reproduced</span>, <span class=meh>inconclusive</span>. "
        "All claims: <a href=\"claims.csv\">claims.csv</a>; all runs: "
        "<a href=\"runs.csv\">runs.csv</a>.</p>"
    )
    trs = []
    for r in rows:
        if not r.get("built"):
            trs.append(
                f"<tr class=muted><td>{r['number']:02d}</td><td>{html.escape(r['slug'])}</td>"
                f"<td>{html.escape(r['title'])}</td><td>{r['tier']}</td>"
                "<td colspan=3>not built in this run</td></tr>"
            )
            continue
        badges = " ".join(
            f'<span class="{VERDICT_CLASS[v]}" title="{html.escape(cid)}">{cid}</span>'
            for cid, v in r["verdicts"]
        )
        link = f"{r['slug']}/report.html"
        thumb = (f'<a href="{link}"><img class=thumb src="{r["thumb"]}" alt="headline figure">'
                 "</a>") if r.get("thumb") else ""
        trs.append(
            f"<tr><td>{r['number']:02d}</td><td><a href=\"{link}\">{html.escape(r['slug'])}</a>"
            f"</td><td>{html.escape(r['title'])}</td><td>{r['tier']}</td>"
            f"<td><b>{r['k']} of {r['n']}</b> ({r['scale']})</td><td>{badges}</td>"
            f"<td>{thumb}</td></tr>"
        )
    table = (
        "<table><thead><tr><th>#</th><th>paper</th><th>title</th><th>tier</th>"
        "<th>result claims reproduced</th><th>per claim</th><th>headline figure</th></tr>"
        f"</thead><tbody>{''.join(trs)}</tbody></table>"
    )
    return _html_doc("ICML 2026 reproductions", head + table)
