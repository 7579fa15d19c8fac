"""What every workflow script does around its stage: pin threads, log, account, fail in one line.

Import this before numpy or torch: it pins BLAS/OpenMP threads to the job's ``threads``
(deterministic sums, no oversubscription when Snakemake runs jobs side by side).

Each job also writes its own CPU account (``params.usage``, beside Snakemake's benchmark file):
the process's CPU seconds from the kernel (``getrusage``, exact also for short jobs and under
load, unlike the benchmark's once-a-second sampling) and how much of it was start-up: the
interpreter and Snakemake's script preamble before this module loads, plus every import the
job makes, also the ones a paper defers into a function. ``icml26.budget`` reads it.
"""

from __future__ import annotations

import builtins
import json
import os
import resource
import sys
import traceback


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished children so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


# Everything up to here (interpreter, Snakemake's preamble, this module) is start-up.
_PREAMBLE_CPU = cpu_seconds()


class ImportClock:
    """CPU seconds spent in imports while active: the outermost ``import`` statement of each
    chain is timed (the imports it triggers are inside it). Wraps ``builtins.__import__``,
    which every ``import`` statement goes through; restored on exit."""

    def __init__(self):
        self.seconds = 0.0
        self._depth = 0
        self._original = None

    def __enter__(self):
        self._original = original = builtins.__import__

        def timed_import(*args, **kwargs):
            if self._depth:
                return original(*args, **kwargs)
            self._depth = 1
            start = cpu_seconds()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds += cpu_seconds() - start
                self._depth = 0

        builtins.__import__ = timed_import
        return self

    def __exit__(self, *exc):
        builtins.__import__ = self._original
        return False


def write_usage(path, startup_cpu: float) -> None:
    """The job's CPU account as JSON: total and start-up CPU seconds, peak RSS."""
    from pathlib import Path

    record = {
        "cpu_s": round(cpu_seconds(), 3),
        "startup_cpu_s": round(startup_cpu, 3),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(f"{path}.tmp")
    tmp.write_text(json.dumps(record) + "\n")
    tmp.replace(path)


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
    """Run ``stage(smk)`` with stdout/stderr in the rule's log; errors of ours as one line.
    On success, write the job's CPU account to ``smk.params.usage`` where the rule names one."""
    usage_path = getattr(smk.params, "usage", None)
    if usage_path and os.path.exists(usage_path):
        os.remove(usage_path)  # a failed rerun leaves no account of an earlier run
    threads = str(getattr(smk, "threads", 1) or 1)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = threads
    terminal = sys.stderr
    log_path = smk.log[0] if len(smk.log) else None
    log = open(log_path, "w") if log_path else None  # noqa: SIM115 (closed below)
    if log:
        sys.stdout = sys.stderr = log
    try:
        with ImportClock() as imports:
            stage(smk)
        if usage_path:
            write_usage(usage_path, _PREAMBLE_CPU + imports.seconds)
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
