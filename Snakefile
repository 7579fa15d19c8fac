# ICML 2026 papers, reproduced as one Snakemake workflow. See README.md and docs/architecture.md.
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")


configfile: Path(workflow.basedir) / "config" / "config.yaml"


include: "rules/common.smk"
include: "rules/prepare.smk"
include: "rules/train.smk"
include: "rules/evaluate.smk"
include: "rules/report.smk"


rule all:
    input:
        all_outputs(),
    default_target: True
