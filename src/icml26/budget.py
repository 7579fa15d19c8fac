"""CPU seconds per paper and scale, from Snakemake's benchmark files, against the budgets.

    python -m icml26.budget [benchmarks]      (or: make budget)

A job's CPU seconds are the larger of its sampled ``cpu_time`` and its wall time ``s``:
psutil samples CPU time once a second, so very short jobs report 0; for single-threaded
jobs wall time is the honest upper bound, and multi-threaded jobs report more CPU than wall.
Job start-up (interpreter, imports) is inside every benchmark. The sampled ``cpu_time`` sum
is printed beside it: on a loaded machine wall time overstates the cost, and the verdict
(which uses the larger) is only meaningful on an otherwise idle machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

BUDGETS = {"smoke": 15.0, "default": 180.0}


def job_times(tsv: Path) -> tuple[float, float]:
    """(sampled cpu_time, wall seconds) of one benchmark file."""
    lines = tsv.read_text().strip().splitlines()
    header = lines[0].split("\t")
    values = lines[-1].split("\t")
    row = dict(zip(header, values, strict=False))
    return float(row.get("cpu_time", 0) or 0), float(row.get("s", 0) or 0)


def job_seconds(tsv: Path) -> float:
    return max(job_times(tsv))


def table(bench_dir: Path) -> list[dict]:
    rows = []
    for scale_dir in sorted(p for p in bench_dir.iterdir() if p.is_dir()):
        for paper_dir in sorted(p for p in scale_dir.iterdir() if p.is_dir()):
            files = sorted(paper_dir.glob("*.tsv"))
            total = sum(job_seconds(f) for f in files)
            sampled = sum(job_times(f)[0] for f in files)
            budget = BUDGETS.get(scale_dir.name)
            rows.append({
                "paper": paper_dir.name, "scale": scale_dir.name, "jobs": len(files),
                "cpu_s": round(total, 1), "sampled_cpu_s": round(sampled, 1), "budget_s": budget,
                "ok": None if budget is None else total <= budget,
            })
    return rows


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    bench_dir = Path(argv[0] if argv else "benchmarks")
    if not bench_dir.is_dir():
        print(f"no benchmarks at {bench_dir}: run the workflow first (make smoke / make reproduce)")
        return 1
    rows = table(bench_dir)
    print("| paper | scale | jobs | CPU s | sampled cpu_time s | budget s | within |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        within = "–" if r["ok"] is None else ("yes" if r["ok"] else "**NO**")
        budget = "–" if r["budget_s"] is None else f"{r['budget_s']:.0f}"
        print(f"| {r['paper']} | {r['scale']} | {r['jobs']} | {r['cpu_s']:.1f} | "
              f"{r['sampled_cpu_s']:.1f} | {budget} | {within} |")
    return 0 if all(r["ok"] is not False for r in rows) else 2


if __name__ == "__main__":
    raise SystemExit(main())
