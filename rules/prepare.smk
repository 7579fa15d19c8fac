rule prepare:
    """Generate (or load from a pip package) the data of every setting of one paper."""
    output:
        data="results/{paper}/data.npz",
    params:
        cfg_hash=paper_config_hash,
        usage=usage_file("prepare"),
    log:
        "logs/{paper}/prepare.log",
    benchmark:
        benchmark_file("prepare")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        ENV
    script:
        "../workflow/scripts/prepare.py"
