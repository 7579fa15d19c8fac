"""The four stages of a paper, as plain functions of paths and the resolved config.

The workflow scripts call these (one stage per job); tests call them in-process
(``run_inprocess``). They know nothing about any particular paper: each delegates to the
paper's stage modules through the registry and checks what comes back.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import grid, io, registry, seeding
from .claims import VERDICTS
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


# Number of curve rows of each run of a shard, kept in the shard's state npz so that the
# stages after train can tell a complete curves CSV from one cut at a row boundary.
CURVE_ROWS_KEY = "__icml26_curve_rows__"


def _run_keys(frame) -> list[tuple]:
    return list(zip(frame["method"].astype(str), frame["setting"].astype(str),
                    frame["seed"].astype(int), strict=True))


def _curve_counts(runs, frame) -> np.ndarray:
    counts = dict.fromkeys([(r.method, r.setting, r.seed) for r in runs], 0)
    for key in _run_keys(frame):
        if key not in counts:
            raise ArtifactError(f"curve rows of run {key} that is not in this shard")
        counts[key] += 1
    return np.array(list(counts.values()), dtype=np.int64)


def _check_curves(path, runs, frame, expected: np.ndarray) -> None:
    got = _curve_counts(runs, frame)
    if got.shape != expected.shape or not np.array_equal(got, expected):
        raise ArtifactError(
            f"{path}: curves CSV has {int(got.sum())} rows, train wrote {int(expected.sum())} "
            "(per run differs); truncated? delete it and rerun train")


def _load_state(state_path, runs) -> tuple[dict, np.ndarray]:
    state = io.load_npz(state_path)
    counts = state.pop(CURVE_ROWS_KEY, None)
    if counts is None or counts.shape != (len(runs),):
        raise ArtifactError(f"{state_path}: state has no curve row counts for its "
                            f"{len(runs)} runs; delete it and rerun train")
    return state, counts


def _log(msg: str) -> None:
    print(msg, flush=True)


def train(cfg: dict, shard: str, data_path, state_path, curves_path) -> None:
    import time

    import pandas as pd

    runs = grid.runs_in_shard(cfg, shard)
    data = io.load_npz(data_path)
    exp = registry.stage(cfg["paper"], "experiment")
    settings = sorted({r.setting for r in runs})
    _log(f"{cfg['paper']} train shard {shard}: {len(runs)} runs "
         f"({len({r.method for r in runs})} methods x {len(settings)} settings x seeds "
         f"{sorted({r.seed for r in runs})}) at scale {cfg['scale']}")
    start = time.process_time()
    state, curves = exp.train(cfg, data, runs)
    frame = pd.DataFrame(list(curves), columns=CURVE_COLUMNS)
    if frame[["method", "setting", "seed", "metric"]].isna().any().any():
        raise ValueError(f"{cfg['paper']}.train returned curve rows with missing run fields")
    state = dict(state)
    if CURVE_ROWS_KEY in state:
        raise ValueError(f"{cfg['paper']}.train: state key {CURVE_ROWS_KEY} is reserved")
    state[CURVE_ROWS_KEY] = _curve_counts(runs, frame)
    io.save_npz(state_path, state)
    io.write_csv(curves_path, frame)
    _log(f"{cfg['paper']} train shard {shard}: done, {len(frame)} curve rows, "
         f"{time.process_time() - start:.1f} CPU-s")


def evaluate(cfg: dict, shard: str, data_path, state_path, curves_path, eval_path) -> None:
    import pandas as pd

    runs = grid.runs_in_shard(cfg, shard)
    data = io.load_npz(data_path)
    state, counts = _load_state(state_path, runs)
    curves = io.read_csv(curves_path, required=CURVE_COLUMNS, expected_rows=int(counts.sum()))
    _check_curves(curves_path, runs, curves, counts)
    exp = registry.stage(cfg["paper"], "experiment")
    rows = list(exp.evaluate(cfg, data, runs, state, curves))
    if len(rows) != len(runs):
        raise ValueError(
            f"{cfg['paper']}.evaluate returned {len(rows)} rows for {len(runs)} runs"
        )
    frame = pd.DataFrame([{**run.as_dict(), **row} for run, row in zip(runs, rows, strict=True)])
    io.write_csv(eval_path, frame)


def _grid_order(frame, runs):
    """Rows sorted by the grid order of their run (stable within a run), so that tables,
    claims and figures do not depend on how the grid was sharded."""
    rank = {(r.method, r.setting, r.seed): i for i, r in enumerate(runs)}
    order = np.array([rank[k] for k in _run_keys(frame)], dtype=np.int64)
    return frame.iloc[np.argsort(order, kind="stable")].reset_index(drop=True)


def collect_shards(cfg: dict, eval_paths, curves_paths, state_paths=None):
    """Metrics (one row per run) and curves of every shard, each checked against the grid:
    every run of a shard has its row, every curves file the rows train wrote."""
    import pandas as pd

    shards = grid.shards(cfg)
    if len(eval_paths) != len(shards) or len(curves_paths) != len(shards):
        raise ArtifactError(f"{cfg['paper']}: expected {len(shards)} shards' files, got "
                            f"{len(eval_paths)} eval and {len(curves_paths)} curves files")
    metrics, curves = [], []
    for i, shard in enumerate(shards):
        runs = grid.runs_in_shard(cfg, shard)
        ev = io.read_csv(eval_paths[i], required=RUN_COLUMNS, expected_rows=len(runs))
        if sorted(_run_keys(ev)) != sorted((r.method, r.setting, r.seed) for r in runs):
            raise ArtifactError(f"{eval_paths[i]}: its runs are not those of shard {shard}; "
                                "delete it and rerun evaluate")
        cv = io.read_csv(curves_paths[i], required=CURVE_COLUMNS)
        if state_paths is not None:
            _, counts = _load_state(state_paths[i], runs)
            _check_curves(curves_paths[i], runs, cv, counts)
        metrics.append(ev)
        curves.append(cv)
    all_runs = grid.runs(cfg)
    metrics = _grid_order(pd.concat(metrics, ignore_index=True), all_runs)
    curves = [c for c in curves if len(c)]
    curves = (_grid_order(pd.concat(curves, ignore_index=True), all_runs) if curves
              else pd.DataFrame(columns=CURVE_COLUMNS))
    return metrics, curves


def report(cfg: dict, eval_paths, curves_paths, out: dict, state_paths=None) -> None:
    """Claims, figures, metrics tables and report pages of one paper.

    ``out`` maps metrics, summary, claims, report_md, report_html, figures (a folder).
    """
    from . import report as rep
    from .plotting import pyplot, save

    meta = registry.metadata(cfg["paper"])
    metrics, curves = collect_shards(cfg, eval_paths, curves_paths, state_paths)
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
    evals, curves, states = [], [], []
    for shard in grid.shards(cfg):
        state, curve, ev = (base / "train" / f"{shard}.npz", base / "train" / f"{shard}.csv",
                            base / "eval" / f"{shard}.csv")
        train(cfg, shard, data, state, curve)
        evaluate(cfg, shard, data, state, curve, ev)
        evals.append(ev)
        curves.append(curve)
        states.append(state)
    out = {
        "metrics": base / "metrics.csv",
        "summary": base / "metrics_summary.csv",
        "claims": base / "claims.json",
        "report_md": base / "report.md",
        "report_html": base / "report.html",
        "figures": base / "figures",
    }
    report(cfg, evals, curves, out, states)
    return out


def resolve(slug: str, scale: str = "smoke", repo=None, **overrides) -> dict:
    """Resolved config of one paper from the repository's config folder (for tests)."""
    from .config import resolve_paper, validate_workflow_config

    repo = Path(repo) if repo else Path(__file__).resolve().parents[2]
    wf = validate_workflow_config({"scale": scale, "papers": [slug], **overrides}, repo / "config")
    return resolve_paper(slug, wf, repo / "config")


def summary(headlines: dict, results_dir, out: dict, run_counts: dict | None = None) -> None:
    """results/index.html (one row per catalog paper), claims.csv and runs.csv over papers.

    ``headlines`` maps each built paper to the name of its headline figure; ``run_counts``
    (when given) each paper's number of runs, which its metrics.csv must hold.

    ``out`` maps index, claims_csv, runs_csv. Reads results/<paper>/{claims.json,metrics.csv}.
    """
    import pandas as pd

    from . import report as rep
    from .catalog import CATALOG

    results_dir = Path(results_dir)
    index_rows, claim_rows, run_frames, missing = [], [], [], []
    built = set(headlines)
    for number, slug, tier, title in CATALOG:
        row = {"number": number, "slug": slug, "tier": tier, "title": title, "built": False}
        if slug in built:
            doc = io.read_json(results_dir / slug / "claims.json")
            gaps = _missing_verdicts(slug, doc)
            if gaps:
                missing.extend(gaps)
                continue
            runs = io.read_csv(results_dir / slug / "metrics.csv", required=RUN_COLUMNS,
                               expected_rows=(run_counts or {}).get(slug))
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
    if missing:  # make reproduce fails here, naming the papers, before any summary is written
        raise ArtifactError("claims without a verdict: " + "; ".join(missing) +
                            f" (allowed verdicts: {', '.join(VERDICTS)})")
    claims = pd.DataFrame(claim_rows, columns=["paper", "id", "category", "verdict", "measured",
                                               "threshold", "n_seeds", "scale", "timing"])
    runs = pd.concat(run_frames, ignore_index=True) if run_frames else pd.DataFrame()
    if len(runs):
        runs = runs[["paper"] + [c for c in runs.columns if c != "paper"]]
    io.write_csv(out["claims_csv"], claims)
    io.write_csv(out["runs_csv"], runs)
    io.write_text(out["index"], rep.index_page(index_rows))


def _missing_verdicts(slug: str, doc: dict) -> list[str]:
    """Where a paper's claims.json lacks a verdict: no claims at all, or a claim whose verdict
    is not one of VERDICTS."""
    claims = doc.get("claims") or []
    if not claims:
        return [f"{slug}: no claims"]
    return [f"{slug}: claim {c.get('id')!r} has verdict {c.get('verdict')!r}" for c in claims
            if c.get("verdict") not in VERDICTS]


def _flat(value) -> str:
    import json

    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return "" if value is None else str(value)
