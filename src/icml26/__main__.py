"""Debugging entry point: run one paper's stages in this process, without Snakemake.

    python -m icml26 run cdot --scale smoke --out /tmp/cdot [--seeds 0 1] [--device cuda]

Compare the claims of two result folders (e.g. the papers' seeds vs seed_offset=1000):

    python -m icml26 compare results results-fresh [--html compare.html]
"""

from __future__ import annotations

import argparse
import os
import sys

from .errors import Icml26Error


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m icml26")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="all stages of one paper in-process")
    run.add_argument("paper")
    run.add_argument("--scale", default="smoke", choices=["smoke", "default", "full"])
    run.add_argument("--seeds", type=int, nargs="*")
    run.add_argument("--out", default="results-debug")
    run.add_argument("--device", choices=["auto", "cpu", "cuda"],
                     help="torch device of the torch papers (default: config/config.yaml's)")
    cmp = sub.add_parser("compare", help="claims whose verdict or measured value differs "
                         "between two results/ folders")
    cmp.add_argument("results_a")
    cmp.add_argument("results_b")
    cmp.add_argument("--html", help="also write the table as an HTML page here")
    args = parser.parse_args(argv)
    if args.command == "compare":
        from .compare import main as compare_main

        try:
            print(compare_main(args.results_a, args.results_b, args.html), end="")
        except Icml26Error as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        return 0
    # one BLAS/OpenMP thread, as in every workflow job, so the numbers match a Snakemake run
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    from . import pipeline

    try:
        overrides = {"seeds": args.seeds} if args.seeds else {}
        if args.device:
            overrides["device"] = args.device
        if args.device == "cuda":  # one line here rather than a traceback from train
            from .seeding import torch_device

            try:
                torch_device("cuda")
            except RuntimeError as err:
                print(f"error: {err}", file=sys.stderr)
                return 1
        cfg = pipeline.resolve(args.paper, args.scale, **overrides)
        out = pipeline.run_inprocess(cfg, args.out)
    except Icml26Error as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {out['report_md']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
