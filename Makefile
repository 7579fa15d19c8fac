# Two commands for a fresh machine with Python 3.11 and pip:
#   make reproduce   set up .venv, run every paper at the default scale, write the reports
#   make test        set up .venv, run the tests
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CORES  ?= all
SCALE  ?= default

.PHONY: reproduce test smoke budget lint venv clean gpu-check

# Reuses the venv; reinstalls only when the pins or the package metadata change.
$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps \
		--no-build-isolation -e .
	touch $(STAMP)

venv: $(STAMP)

reproduce: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --config scale=$(SCALE)
	$(BIN)/snakemake --config scale=$(SCALE) --report results/report.html
	@echo "open results/index.html (summary) or results/report.html (Snakemake report)"

smoke: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --config scale=smoke

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile

budget: $(STAMP)
	$(BIN)/python -m icml26.budget benchmarks

# Every torch paper at smoke on CUDA, then on the CPU: wall times and whether verdicts agree.
gpu-check: $(STAMP)
	scripts/gpu-check.sh

lint: $(STAMP)
	$(BIN)/ruff check src tests workflow
	$(BIN)/snakemake --lint

clean:
	rm -rf results logs benchmarks .snakemake
