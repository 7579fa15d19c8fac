import os
import shutil
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
    (tests/test_workflow.py, tests/test_figures.py); they must not change its results/.

    `make test` runs on 2 workers (pytest-xdist, --dist loadfile: a file's tests stay on one
    worker). The run is built once for all workers: the first to need it builds it under a
    lock in the folder the workers share, the other waits and reuses it.
    """
    import fcntl
    import subprocess

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    work, done = root / "smoke-shared", root / "smoke-shared.done"
    with open(root / "smoke-shared.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            if work.exists():
                shutil.rmtree(work)
            work.mkdir()
            cmd = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(work), "-c2",
                   "--config", "scale=smoke"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise AssertionError(
                    f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
            done.touch()
    return work
