"""Side experiment (outside the pipeline): the default grid at the spec's training budget.

The default scale trains G, S and P on far fewer tokens than the spec (see FIDELITY). This runs
the whole default pipeline in this process with the spec's steps and batch (the ``common``
params: 1000 / 800 / 800 steps at batch 32 x 64) for the given seeds, and prints every claim's
verdict and note. About 300 CPU-s per seed.

    python -m icml26.papers.telescope_perplexity.side_budget --seeds 0 --out /tmp/tp-budget
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

from icml26 import pipeline
from icml26.config import load_paper_file

ROLES = ("generator", "scorer", "performer")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--out", default="/tmp/telescope-perplexity-budget")
    args = ap.parse_args(argv)
    cfg = copy.deepcopy(pipeline.resolve("telescope-perplexity", "default"))
    config_dir = Path(pipeline.__file__).resolve().parents[2] / "config"
    spec = load_paper_file("telescope-perplexity", config_dir)["common"]["params"]
    for role in ROLES:
        cfg["params"][role].update(steps=spec[role]["steps"], batch=spec[role]["batch"])
    cfg["seeds"] = list(args.seeds)
    out = pipeline.run_inprocess(cfg, args.out)
    for c in json.loads(out["claims"].read_text())["claims"]:
        print(f"{c['id']}: {c['verdict']} {c['measured']}\n  {c.get('note', '')}")


if __name__ == "__main__":
    main()
