"""Every snakemake command that README.md and docs/ show, through the real command line.

Snakemake parses ``--config`` itself (``seeds=[7,8]`` arrives as strings), so a test that
passes Python values to the validator cannot see what a user types. Each command is dry-run
(``-n``) into a temporary folder; ``--report`` needs finished results, so it is dropped here
and tested on a real run in test_workflow.py.
"""
import re
import shlex
import subprocess

import pytest
from conftest import REPO, SNAKEMAKE

from icml26.config import available_papers

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "config" / "README.md"]
# Commands for tools this project does not install (Kubernetes) are not runnable here.
UNRUNNABLE = ("--executor kubernetes",)


def documented_commands():
    """(source, command) for each snakemake command in a fenced block or inline code."""
    found = []
    for doc in DOCS:
        if not doc.exists():
            continue
        text = doc.read_text()
        text = re.sub(r"\\\n\s*", " ", text)  # join continuation lines
        for line in text.splitlines():
            for cmd in re.findall(r"`([^`]*snakemake [^`]*)`", line) or [line]:
                cmd = cmd.split("#")[0].strip()
                if re.match(r"^(\.venv/bin/)?snakemake\s", cmd) and " -" in cmd:
                    found.append((f"{doc.relative_to(REPO)}", cmd))
    return found


COMMANDS = documented_commands()


def test_docs_show_the_commands_we_expect():
    shown = " ".join(c for _, c in COMMANDS)
    for needle in ("seeds=[7,8]", "seed_offset=1000", "shard_by=[method,setting]",
                   "--workflow-profile profiles/slurm", "papers=[cdot,qkmeans]"):
        assert needle in shown, needle


@pytest.mark.parametrize("source, command", COMMANDS, ids=[c for _, c in COMMANDS])
def test_documented_command_dry_runs(tmp_path, source, command):
    if any(u in command for u in UNRUNNABLE):
        pytest.skip(f"{source}: needs a plugin this project does not install")
    paper = available_papers(REPO / "config")[0]
    args = shlex.split(command.replace("<slug>", paper))[1:]
    if "--report" in args:  # needs finished results: tested in test_workflow.py
        i = args.index("--report")
        del args[i:i + 2]
    for flag in ("--directory", "-d"):  # the test's own temporary folder instead
        if flag in args:
            i = args.index(flag)
            del args[i:i + 2]
    args = [a for a in args if not a.startswith("slurm_account=")]
    cmd = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "-n", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, f"{source}: {command}\n{proc.stderr[-2000:]}"
    assert "invalid config" not in proc.stderr
    assert not (tmp_path / "results").exists()


def test_command_line_seeds_reach_the_grid(tmp_path):
    """``seeds=[7,8]`` and ``seed_offset`` from the command line: the jobs carry those seeds."""
    cmd = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "-n", "-p",
           "--config", "papers=[avg-reward-td]", "seeds=[7,8]", "seed_offset=1000",
           "shard_by=[seed]"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=True)
    for seed in ("1007", "1008"):
        assert f"results/avg-reward-td/train/{seed}.csv" in proc.stdout
    assert "train/0.csv" not in proc.stdout
