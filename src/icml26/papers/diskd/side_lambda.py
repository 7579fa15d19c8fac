"""Side experiment (outside the pipeline; no claim reads it): claim 5 with a larger KD weight.

Claim 5 (sanity) asks DiSKD in S1 to come within 0.01 of the teacher's C-index. At the spec's
lambda = 1 the student stays below the teacher; this reruns S1 (local-only, teacher-only,
DiSKD) at the default scale with another lambda and prints the seed-mean cause-1 C-index:

    .venv/bin/python -m icml26.papers.diskd.side_lambda --lam 10 --seeds 0 1 2 3 4
"""

from __future__ import annotations

import argparse

import pandas as pd

from icml26 import grid, pipeline, seeding

from . import experiment


def run(lam: float, seeds: list[int], scale: str = "default") -> pd.DataFrame:
    """Per (method, seed) cause-1 C-index in S1 with KD weight ``lam``."""
    cfg = pipeline.resolve("diskd", scale, seeds=list(seeds))
    cfg["settings"] = {"S1": cfg["settings"]["S1"]}
    cfg["methods"] = ["local-only", "teacher-only", "diskd"]
    cfg["exclude"] = []
    cfg["params"]["lam"] = float(lam)
    data = experiment.prepare(cfg, seeding.rng(cfg["paper"], "prepare"))
    runs = grid.runs(cfg)
    state, curves = experiment.train(cfg, data, runs)
    rows = experiment.evaluate(cfg, data, runs, state, curves)
    return pd.DataFrame([{**r.as_dict(), **row} for r, row in zip(runs, rows, strict=True)])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lam", type=float, default=10.0)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--scale", default="default")
    a = ap.parse_args(argv)
    m = run(a.lam, a.seeds, a.scale)
    print(f"lambda = {a.lam:g}, seeds {a.seeds}: mean cause-1 C-index in S1")
    print(m.groupby("method")["cindex_1"].agg(["mean", "std", "count"]).to_string())


if __name__ == "__main__":
    main()
