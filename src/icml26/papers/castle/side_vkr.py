"""Side experiment (outside the pipeline): VKR at the spec's own batch and steps.

The default scale trains VKR with a smaller batch than the spec (see FIDELITY). This runs the
claim-relevant VKR models (one-layer causal and CASTLE, two-layer causal) at the spec's batch 64
and the given step counts, with the pipeline's own training code, seeds and test sets, and
prints the test accuracy per seed and the mean. CPU cost: about 0.25 CPU-s per step at
5 seeds (all three models).

    python -m icml26.papers.castle.side_vkr --batch 64 --steps 1000 2000 --seeds 0 1 2 3 4
"""

from __future__ import annotations

import argparse
import copy

import numpy as np

from icml26 import pipeline
from icml26.grid import Run

from . import experiment

MODELS = (("vkr-1l", "causal"), ("vkr-1l", "castle"), ("vkr-2l", "causal"))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, nargs="+", default=[1000, 2000])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    cfg = copy.deepcopy(pipeline.resolve("castle", "default"))
    cfg["settings"] = {k: v for k, v in cfg["settings"].items() if v.get("task") == "vkr"}
    cfg["seeds"] = list(args.seeds)
    cfg["params"]["vkr"].update(batch=args.batch, curve_every=0)
    data = experiment.prepare(cfg, None)
    print(f"VKR side experiment: batch {args.batch}, seeds {args.seeds}")
    for steps in args.steps:
        cfg["params"]["vkr"]["steps"] = steps
        for setting, method in MODELS:
            runs = [Run(method, setting, s) for s in args.seeds]
            res = experiment._train_vkr(cfg, data, setting, method, runs)
            acc = np.array([final["test_acc"] for _, final, _ in res])
            print(f"steps {steps:5d} {setting} {method:7s} mean acc {acc.mean():.3f} "
                  f"per seed {' '.join(f'{a:.3f}' for a in acc)}", flush=True)


if __name__ == "__main__":
    main()
