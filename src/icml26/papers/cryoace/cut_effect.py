"""Side experiment (outside the pipeline): the effect of the default scale's budget cut.

Runs the default config in-process twice on the same seeds: as configured (5 epochs, Voxel-CNN
loss on one random 24 x 24 window per map and step) and with the spec's schedule (15 epochs,
whole maps), and prints the static and dynamics metrics side by side (mean over the seeds).

    python -m icml26.papers.cryoace.cut_effect --seeds 0 1 --out /tmp/cryoace-cut
"""

from __future__ import annotations

import argparse
from pathlib import Path

COLS = ("rmsd", "recall_1A", "bond_validity", "coverage_rmsd", "both_resolved", "rigid_rmsd",
        "spearman_res")


def main(argv=None) -> None:
    import pandas as pd

    from icml26 import pipeline

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--out", type=Path, default=Path("/tmp/cryoace-cut"))
    args = ap.parse_args(argv)
    frames = []
    for name, over in (("default cut", {}), ("spec schedule", {"epochs": 15, "voxel_crop": 0})):
        cfg = pipeline.resolve("cryoace", "default", seeds=args.seeds)
        cfg["params"] = {**cfg["params"], **over}
        out = pipeline.run_inprocess(cfg, args.out / name.replace(" ", "_"))
        m = pd.read_csv(out["metrics"])
        cols = [c for c in COLS if c in m]
        frames.append(m.groupby("method", sort=False)[cols].mean().assign(schedule=name))
    table = pd.concat(frames).reset_index().set_index(["method", "schedule"]).sort_index()
    print(table.to_string(float_format=lambda x: f"{x:.3f}"))


if __name__ == "__main__":
    main()
