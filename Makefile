# dpkernels workbook: two commands do all the set-up on a fresh machine (Python >= 3.11).
#   make reproduce [PROFILE=full|quick|scale] [JOBS=N] [PAPERS="rubinstein2012 ..."]   (full: every paper's protocol; budget 15 min on 2 cores)
#   make test
# A run writes only under build/<profile>/ and ends by comparing its numbers with the committed reference;
# only `make update-reference` rewrites tracked files.
PYTHON  ?= python3
VENV    ?= .venv
PROFILE ?= full
JOBS    ?= 2
PAPERS  ?=
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.dpkernels-installed

.PHONY: reproduce update-reference site test unit nbval report datasets bench sync clean help

help:
	@echo "make reproduce [PROFILE=full|quick] [JOBS=N]  run the notebooks into build/<profile>/ and compare with the reference (default: full, JOBS=2)"
	@echo "make update-reference [PROFILE=full]          copy the last run into the tracked reference (paper_figures/, notebooks/*.ipynb, README.md, ERRATA.md)"
	@echo "make reproduce PROFILE=scale                  the frontier from 1,000 rows to the full data, on a Dask LocalCluster"
	@echo "make update-reference PROFILE=scale           copy the last scale run into paper_figures/frontier and notebooks/frontier.ipynb"
	@echo "make site                                     build the documentation site into build/site/html/"
	@echo "make test                                     unit tests, the site's browser test, nbval over notebooks/"
	@echo "make bench                                    speed benchmarks (benchmarks/)"
	@echo "make sync                                     update notebooks/*.ipynb inputs from their .py sources"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[notebooks,dask,compare,test,docs]"
	$(PY) -m ipykernel install --sys-prefix --name dpkernels --display-name "Python (dpkernels)"
	touch $(STAMP)

reproduce: $(STAMP)
	$(VENV)/bin/dpkernels reproduce --profile $(PROFILE) --jobs $(JOBS) $(if $(PAPERS),--paper $(PAPERS),)

update-reference: $(STAMP)
	$(VENV)/bin/dpkernels update-reference --profile $(PROFILE)

site: $(STAMP)
	$(VENV)/bin/dpkernels site

test: $(STAMP)
	DPKERNELS_NO_CACHE=1 $(PY) -m pytest tests
	DPKERNELS_NO_CACHE=1 DPKERNELS_PROFILE_OVERRIDE=quick DPKERNELS_OUTPUT=$(CURDIR)/build/nbval-figures PYDEVD_DISABLE_FILE_VALIDATION=1 \
		$(PY) -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider notebooks/

unit: $(STAMP)
	$(PY) -m pytest tests

report: $(STAMP)
	$(VENV)/bin/dpkernels report

datasets: $(STAMP)
	$(VENV)/bin/dpkernels datasets

bench: $(STAMP)
	$(PY) benchmarks/run.py

sync: $(STAMP)
	$(VENV)/bin/dpkernels sync

clean:
	rm -rf build .pytest_cache
