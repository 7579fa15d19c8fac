rule evaluate:
    """Metrics of every run of one shard: one row per run."""
    input:
        data="results/{paper}/data.npz",
        state="results/{paper}/train/{shard}.npz",
        curves="results/{paper}/train/{shard}.csv",
    output:
        metrics="results/{paper}/eval/{shard}.csv",
    params:
        cfg_hash=paper_config_hash,
        usage=usage_file("evaluate_{shard}"),
    log:
        "logs/{paper}/evaluate_{shard}.log",
    benchmark:
        benchmark_file("evaluate_{shard}")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        ENV
    script:
        "../workflow/scripts/evaluate.py"
