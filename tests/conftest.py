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
