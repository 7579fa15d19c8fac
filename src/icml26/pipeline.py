"""The four stages of a paper, as plain functions of paths and the resolved config.

The workflow scripts call these (one stage per job); tests call them in-process
(``run_inprocess``). They know nothing about any particular paper: each delegates to the
paper's stage modules through the registry and checks what comes back.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import grid, io, registry, seeding
from .errors import ArtifactError

CURVE_COLUMNS = ["method", "setting", "seed", "step", "metric", "value"]
RUN_COLUMNS = ["method", "setting", "seed"]


def prepare(cfg: dict, data_path) -> None:
    registry.check_config_against_module(cfg)
    exp = registry.stage(cfg["paper"], "experiment")
    data = exp.prepare(cfg, seeding.rng(cfg["paper"], "prepare"))
    if not isinstance(data, dict) or not data:
        raise TypeError(f"{cfg['paper']}.prepare must return a non-empty dict of arrays")
    io.save_npz(data_path, data)


def train(cfg: dict, shard: str, data_path, state_path, curves_path) -> None:
    import pandas as pd

    runs = grid.runs_in_shard(cfg, shard)
    data = io.load_npz(data_path)
    exp = registry.stage(cfg["paper"], "experiment")
    state, curves = exp.train(cfg, data, runs)
    frame = pd.DataFrame(list(curves), columns=CURVE_COLUMNS)
    if frame[["method", "setting", "seed", "metric"]].isna().any().any():
        raise ValueError(f"{cfg['paper']}.train returned curve rows with missing run fields")
    state = dict(state) or {"_empty": np.zeros(0)}
    io.save_npz(state_path, state)
    io.write_csv(curves_path, frame)


def evaluate(cfg: dict, shard: str, data_path, state_path, curves_path, eval_path) -> None:
    import pandas as pd

    runs = grid.runs_in_shard(cfg, shard)
    data = io.load_npz(data_path)
    state = io.load_npz(state_path)
    curves = io.read_csv(curves_path, required=CURVE_COLUMNS)
    exp = registry.stage(cfg["paper"], "experiment")
    rows = list(exp.evaluate(cfg, data, runs, state, curves))
    if len(rows) != len(runs):
        raise ValueError(
            f"{cfg['paper']}.evaluate returned {len(rows)} rows for {len(runs)} runs"
        )
    frame = pd.DataFrame([{**run.as_dict(), **row} for run, row in zip(runs, rows, strict=True)])
    io.write_csv(eval_path, frame)


def collect(paths, required) -> "pd.DataFrame":  # noqa: F821
    import pandas as pd

    frames = [io.read_csv(p, required=required) for p in paths]
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=list(required))
    return pd.concat(frames, ignore_index=True)


def report(cfg: dict, eval_paths, curves_paths, out: dict) -> None:
    """Claims, figures, metrics tables and report pages of one paper.

    ``out`` maps metrics, summary, claims, report_md, report_html, figures (a folder).
    """
    from . import report as rep
    from .plotting import pyplot, save

    meta = registry.metadata(cfg["paper"])
    metrics = collect(eval_paths, RUN_COLUMNS)
    curves = collect(curves_paths, CURVE_COLUMNS)
    expected = len(grid.runs(cfg))
    if len(metrics) != expected:
        raise ArtifactError(
            f"{cfg['paper']}: the evaluated shards hold {len(metrics)} runs, "
            f"the grid has {expected}"
        )
    claims = registry.stage(cfg["paper"], "claims").check(cfg, metrics, curves)
    claims_doc = {
        "paper": cfg["paper"],
        "scale": cfg["scale"],
        "seeds": list(cfg["seeds"]),
        "claims": [c.to_dict() for c in claims],
    }
    figmod = registry.stage(cfg["paper"], "figures")
    plt = pyplot()
    figures = figmod.make(cfg, metrics, curves)
    if set(figures) != set(cfg["figures"]):
        raise ValueError(
            f"{cfg['paper']}.figures.make returned {sorted(figures)}, "
            f"config lists {sorted(cfg['figures'])}"
        )
    figdir = Path(out["figures"])
    figdir.mkdir(parents=True, exist_ok=True)
    for name in cfg["figures"]:
        save(figures[name], figdir / f"{name}.png", figdir / f"{name}.pdf")
        plt.close(figures[name])
    tables = figmod.tables(cfg, metrics, curves) if hasattr(figmod, "tables") else {}
    summary = rep.summarise(metrics)
    io.write_csv(out["metrics"], metrics)
    io.write_csv(out["summary"], summary)
    io.write_json(out["claims"], claims_doc)
    page = rep.paper_page(meta, cfg, claims_doc, summary, tables, figdir)
    io.write_text(out["report_md"], page.markdown())
    io.write_text(out["report_html"], page.html())


def run_inprocess(cfg: dict, workdir) -> dict:
    """All stages of one paper in this process (for tests and debugging); returns paths."""
    workdir = Path(workdir)
    base = workdir / cfg["paper"]
    data = base / "data.npz"
    prepare(cfg, data)
    evals, curves = [], []
    for shard in grid.shards(cfg):
        state, curve, ev = (base / "train" / f"{shard}.npz", base / "train" / f"{shard}.csv",
                            base / "eval" / f"{shard}.csv")
        train(cfg, shard, data, state, curve)
        evaluate(cfg, shard, data, state, curve, ev)
        evals.append(ev)
        curves.append(curve)
    out = {
        "metrics": base / "metrics.csv",
        "summary": base / "metrics_summary.csv",
        "claims": base / "claims.json",
        "report_md": base / "report.md",
        "report_html": base / "report.html",
        "figures": base / "figures",
    }
    report(cfg, evals, curves, out)
    return out


def resolve(slug: str, scale: str = "smoke", repo=None, **overrides) -> dict:
    """Resolved config of one paper from the repository's config folder (for tests)."""
    from .config import resolve_paper, validate_workflow_config

    repo = Path(repo) if repo else Path(__file__).resolve().parents[2]
    wf = validate_workflow_config({"scale": scale, "papers": [slug], **overrides}, repo / "config")
    return resolve_paper(slug, wf, repo / "config")


def summary(headlines: dict, results_dir, out: dict) -> None:
    """results/index.html (one row per catalog paper), claims.csv and runs.csv over papers.

    ``headlines`` maps each built paper to the name of its headline figure.

    ``out`` maps index, claims_csv, runs_csv. Reads results/<paper>/{claims.json,metrics.csv}.
    """
    import pandas as pd

    from . import report as rep
    from .catalog import CATALOG

    results_dir = Path(results_dir)
    index_rows, claim_rows, run_frames = [], [], []
    built = set(headlines)
    for number, slug, tier, title in CATALOG:
        row = {"number": number, "slug": slug, "tier": tier, "title": title, "built": False}
        if slug in built:
            doc = io.read_json(results_dir / slug / "claims.json")
            runs = io.read_csv(results_dir / slug / "metrics.csv", required=RUN_COLUMNS)
            k, n = rep.verdict_counts(doc["claims"])
            headline = headlines[slug]
            row.update(built=True, k=k, n=n, scale=doc["scale"],
                       verdicts=[(c["id"], c["verdict"]) for c in doc["claims"]],
                       thumb=f"{slug}/figures/{headline}.png" if headline else None)
            for c in doc["claims"]:
                claim_rows.append({
                    "paper": slug, "id": c["id"], "category": c["category"],
                    "verdict": c["verdict"], "measured": _flat(c["measured"]),
                    "threshold": _flat(c["threshold"]), "n_seeds": c["n_seeds"],
                    "scale": doc["scale"], "timing": bool(c.get("timing", False)),
                })
            run_frames.append(runs.assign(paper=slug))
        index_rows.append(row)
    claims = pd.DataFrame(claim_rows, columns=["paper", "id", "category", "verdict", "measured",
                                               "threshold", "n_seeds", "scale", "timing"])
    runs = pd.concat(run_frames, ignore_index=True) if run_frames else pd.DataFrame()
    if len(runs):
        runs = runs[["paper"] + [c for c in runs.columns if c != "paper"]]
    io.write_csv(out["claims_csv"], claims)
    io.write_csv(out["runs_csv"], runs)
    io.write_text(out["index"], rep.index_page(index_rows))


def _flat(value) -> str:
    import json

    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return "" if value is None else str(value)
