rule prepare:
    """Generate (or load from a pip package) the data of every setting of one paper."""
    output:
        data="results/{paper}/data.npz",
    params:
        cfg_hash=paper_config_hash,
    log:
        "logs/{paper}/prepare.log",
    benchmark:
        f"benchmarks/{SCALE}/{{paper}}/prepare.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        ENV
    script:
        "../workflow/scripts/prepare.py"
