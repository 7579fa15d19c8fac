import os
import sys
from pathlib import Path

# Same single-threaded BLAS/OpenMP as the workflow's jobs (icml26.jobs): tests compare numbers
# with snakemake runs, and tiny torch fits run far slower with 2 threads on 2 cores.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture(scope="session")
def smoke(tmp_path_factory):
    """One smoke-scale snakemake run of every paper, shared by the tests that read it
    (tests/test_workflow.py, tests/test_figures.py); they must not change its results/."""
    import subprocess

    work = tmp_path_factory.mktemp("smoke")
    cmd = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(work), "-c2", "--config",
           "scale=smoke"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return work


# `make test` runs the suite on 2 workers (pytest-xdist, --dist loadgroup). Each test module
# stays on one worker, so module-scoped fixtures are built once; the modules that read the
# shared smoke run (the session fixture above) share one worker, so it is built once too.
SMOKE_MODULES = {"test_workflow", "test_figures"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        name = item.module.__name__.rsplit(".", 1)[-1]
        group = "smoke" if name in SMOKE_MODULES else item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(group))
