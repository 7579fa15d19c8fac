"""The budget table from Snakemake benchmark files."""

from icml26 import budget

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(path, wall, cpu):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{wall}\t0:00:01\t1\t1\t1\t1\t0\t0\t0\t{cpu}\n")


def test_budget_takes_the_larger_of_cpu_and_wall(tmp_path, capsys):
    _bench(tmp_path / "smoke" / "p" / "train_all.tsv", 6.0, 2.0)     # loaded: wall > cpu
    _bench(tmp_path / "smoke" / "p" / "report.tsv", 1.0, 3.0)        # threads: cpu > wall
    _bench(tmp_path / "default" / "p" / "train_all.tsv", 190.0, 185.0)  # over 180
    rows = {r["scale"]: r for r in budget.table(tmp_path)}
    assert rows["smoke"]["cpu_s"] == 9.0 and rows["smoke"]["sampled_cpu_s"] == 5.0
    assert rows["smoke"]["ok"] is True and rows["default"]["ok"] is False
    assert budget.main([str(tmp_path)]) == 2
    assert "**NO**" in capsys.readouterr().out
