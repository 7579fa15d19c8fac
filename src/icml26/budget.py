"""CPU seconds per paper and scale against the budgets, and how much of it is job start-up.

    python -m icml26.budget [benchmarks]      (or: make budget)

Per job it reads the job's own account (``<job>.usage.json``, written by ``icml26.jobs``): CPU
seconds from the kernel (``getrusage``) and the start-up share of them (interpreter,
Snakemake's script preamble, and every import the job makes). These are exact also for short
jobs and on a loaded machine. A job without an account (an older run) falls back to its
Snakemake benchmark file: the larger of the sampled ``cpu_time`` (psutil samples once a second,
so short jobs report 0) and the wall time ``s`` (the honest bound for a single-threaded job on
an idle machine); its start-up is then unknown and the paper's start-up share is not given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

BUDGETS = {"smoke": 15.0, "default": 180.0}
STARTUP_GOAL = 0.10   # start-up at most this share of the default scale's CPU (docs/performance.md)


def job_times(tsv: Path) -> tuple[float, float]:
    """(sampled cpu_time, wall seconds) of one benchmark file."""
    lines = tsv.read_text().strip().splitlines()
    header = lines[0].split("\t")
    values = lines[-1].split("\t")
    row = dict(zip(header, values, strict=False))
    return float(row.get("cpu_time", 0) or 0), float(row.get("s", 0) or 0)


def job_account(tsv: Path) -> dict:
    """CPU, start-up CPU (None if unknown) and wall seconds of one job."""
    sampled, wall = job_times(tsv)
    usage = tsv.with_suffix(".usage.json")
    if usage.is_file():
        record = json.loads(usage.read_text())
        return {"cpu_s": record["cpu_s"], "startup_s": record["startup_cpu_s"], "wall_s": wall}
    return {"cpu_s": max(sampled, wall), "startup_s": None, "wall_s": wall}


def _row(paper: str, scale: str, accounts: list[dict]) -> dict:
    cpu = sum(a["cpu_s"] for a in accounts)
    known = all(a["startup_s"] is not None for a in accounts)
    startup = sum(a["startup_s"] for a in accounts) if known else None
    budget = BUDGETS.get(scale)
    return {
        "paper": paper, "scale": scale, "jobs": len(accounts), "cpu_s": round(cpu, 1),
        "wall_s": round(sum(a["wall_s"] for a in accounts), 1),
        "startup_s": None if startup is None else round(startup, 1),
        "startup_share": None if startup is None or cpu <= 0 else round(startup / cpu, 3),
        "budget_s": budget, "ok": None if budget is None else cpu <= budget,
    }


def table(bench_dir: Path) -> list[dict]:
    """One row per paper and scale, then one 'all papers' row per scale."""
    rows = []
    for scale_dir in sorted(p for p in bench_dir.iterdir() if p.is_dir()):
        everything = []
        for paper_dir in sorted(p for p in scale_dir.iterdir() if p.is_dir()):
            accounts = [job_account(f) for f in sorted(paper_dir.glob("*.tsv"))]
            if accounts:
                rows.append(_row(paper_dir.name, scale_dir.name, accounts))
                everything += accounts
        if everything:
            total = _row("all papers", scale_dir.name, everything)
            total.update(budget_s=None, ok=None)
            rows.append(total)
    return rows


def _fmt(value, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    bench_dir = Path(argv[0] if argv else "benchmarks")
    if not bench_dir.is_dir():
        print(f"no benchmarks at {bench_dir}: run the workflow first (make smoke / make reproduce)")
        return 1
    rows = table(bench_dir)
    print("| paper | scale | jobs | CPU s | job wall s | start-up CPU s | start-up share "
          "| budget s | within |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        within = "–" if r["ok"] is None else ("yes" if r["ok"] else "**NO**")
        share = "–" if r["startup_share"] is None else f"{100 * r['startup_share']:.0f}%"
        name = f"**{r['paper']}**" if r["paper"] == "all papers" else r["paper"]
        print(f"| {name} | {r['scale']} | {r['jobs']} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | "
              f"{_fmt(r['startup_s'], '.1f')} | {share} | {_fmt(r['budget_s'], '.0f')} "
              f"| {within} |")
    for r in rows:
        if r["paper"] == "all papers" and r["startup_share"] is not None:
            line = (f"start-up at {r['scale']}: {100 * r['startup_share']:.1f}% of "
                    f"{r['cpu_s']:.0f} CPU-s")
            if r["scale"] == "default":   # the goal is set for the default scale
                goal = "within" if r["startup_share"] <= STARTUP_GOAL else "OVER"
                line += f" ({goal} the {100 * STARTUP_GOAL:.0f}% goal)"
            print(line)
    return 0 if all(r["ok"] is not False for r in rows) else 2


if __name__ == "__main__":
    raise SystemExit(main())
