"""What every workflow script does around its stage: pin threads, log, fail in one line.

Import this before numpy or torch: it pins BLAS/OpenMP threads to the job's ``threads``
(deterministic sums, no oversubscription when Snakemake runs jobs side by side).
"""

from __future__ import annotations

import os
import sys
import traceback


def paper_config(smk) -> dict:
    """The job's resolved paper config, from the workflow config as the DAG resolved it.

    The rules pass only its hash as a param (a config change reruns the paper's jobs without
    printing the whole config as the reason); the job checks it resolves the same config.
    """
    from pathlib import Path

    from .config import resolve_for_job

    config_dir = Path(smk.scriptdir).parents[1] / "config"
    return resolve_for_job(dict(smk.config), smk.wildcards.paper, config_dir,
                           smk.params.cfg_hash)


def run(smk, stage) -> None:
    """Run ``stage(smk)`` with stdout/stderr in the rule's log; errors of ours as one line."""
    threads = str(getattr(smk, "threads", 1) or 1)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = threads
    terminal = sys.stderr
    log_path = smk.log[0] if len(smk.log) else None
    log = open(log_path, "w") if log_path else None  # noqa: SIM115 (closed below)
    if log:
        sys.stdout = sys.stderr = log
    try:
        stage(smk)
    except Exception as exc:
        from .errors import Icml26Error

        if isinstance(exc, Icml26Error):
            line = f"error: {exc}"
        else:
            traceback.print_exc()
            line = f"error in rule {smk.rule}: {type(exc).__name__}: {exc}"
        print(line, file=sys.stderr, flush=True)
        if log:
            print(line, file=terminal, flush=True)
        sys.exit(1)
    finally:
        if log:
            sys.stdout, sys.stderr = sys.__stdout__, terminal
            log.close()
