"""Style stays checked: ruff on the code, snakemake --lint on the workflow."""
import subprocess
import sys
from pathlib import Path

from conftest import REPO, SNAKEMAKE


def test_ruff_clean():
    ruff = Path(sys.executable).with_name("ruff")
    proc = subprocess.run([str(ruff), "check", "--output-format", "concise", "src", "tests",
                           "workflow"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_snakemake_lint_clean(tmp_path):
    proc = subprocess.run([SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(tmp_path),
                           "--lint"], capture_output=True, text=True)
    assert proc.returncode == 0 and "Lints for" not in proc.stdout + proc.stderr, proc.stdout
