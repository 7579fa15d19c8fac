"""Side experiment (outside the pipeline): the validation-IoU curve of one detector at chosen
data size, batch, steps and lr, on the default config's data rules; it measures what the
default's budget cut (16 x 16 frames, batch 16, 200 steps, lr by the pilot rule) changes.

    python -m icml26.papers.codemamba.side --method mf-cnn --frame-size 32 --batch 32 \\
        --steps 400 --lr 0.002 [--blobs 2 4 --spots 2 4] [--n-train 600 --n-val 250]
"""

from __future__ import annotations

import argparse


def main(argv=None) -> None:
    from icml26 import pipeline
    from icml26.grid import Run
    from icml26.seeding import torch_device

    from . import experiment

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", default="mf-cnn")
    ap.add_argument("--frame-size", type=int, default=32)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--lr", type=float, default=0.002)
    ap.add_argument("--blobs", type=int, nargs=2, default=[2, 4])
    ap.add_argument("--spots", type=int, nargs=2, default=[2, 4])
    ap.add_argument("--n-train", type=int, default=600)
    ap.add_argument("--n-val", type=int, default=250)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    cfg = pipeline.resolve("codemamba", "default")
    cfg["params"].update(frame_size=a.frame_size, batch_size=a.batch, steps=a.steps,
                         n_blobs=a.blobs, n_spots=a.spots, n_train=a.n_train, n_val=a.n_val,
                         n_test=1, eval_every=max(1, a.steps // 8))
    data = experiment.prepare(cfg, None)
    sets = {s: experiment.split(data, s) for s in experiment.SPLITS}
    run = Run(a.method, "synthetic-ir", a.seed)
    _, rows, failed = experiment.train_one(cfg, run, sets, torch_device("cpu"), a.lr)
    for r in rows:
        if r["metric"] == "val_iou":
            print(f"step {r['step']:5d}  validation IoU {r['value']:.4f}")
    if failed:
        print("diverged (non-finite loss)")


if __name__ == "__main__":
    main()
