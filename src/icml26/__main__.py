"""Debugging entry point: run one paper's stages in this process, without Snakemake.

    python -m icml26 run cdot --scale smoke --out /tmp/cdot [--seeds 0 1]
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
    args = parser.parse_args(argv)
    # one BLAS/OpenMP thread, as in every workflow job, so the numbers match a Snakemake run
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    from . import pipeline

    try:
        overrides = {"seeds": args.seeds} if args.seeds else {}
        cfg = pipeline.resolve(args.paper, args.scale, **overrides)
        out = pipeline.run_inprocess(cfg, args.out)
    except Icml26Error as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {out['report_md']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
