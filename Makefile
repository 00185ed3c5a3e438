# dpkernels workbook: two commands do all the set-up on a fresh machine (Python 3.11, 3.12 or 3.13).
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
# The site's browser test needs Debian's chromium and its driver; `make test` installs them when they are missing (as
# root, or through a password-less sudo) and otherwise stops, naming the command.  BROWSER_DRY_RUN=1 prints the
# install instead of running it; CHROMIUM / CHROMEDRIVER name the commands looked for.
CHROMIUM       ?= chromium
CHROMEDRIVER   ?= chromedriver
BROWSER_DRY_RUN ?=
BROWSER_INSTALL := apt-get install -y -qq --no-install-recommends chromium chromium-driver
# The paper `make test` runs through `dpkernels reproduce --profile quick` (its prose leaves a value blank at the
# quick profile: the run must still render and exit 0).
CI_PAPER ?= park2022

.PHONY: reproduce update-reference site test browser unit nbval report datasets bench sync clean help

help:
	@echo "make reproduce [PROFILE=full|quick] [JOBS=N]  run the notebooks into build/<profile>/ and compare with the reference (default: full, JOBS=2)"
	@echo "make update-reference [PROFILE=full]          copy the last run into the tracked reference (paper_figures/, notebooks/*.ipynb, README.md, ERRATA.md)"
	@echo "make reproduce PROFILE=scale                  the frontier from 1,000 rows to the full data, on a Dask LocalCluster"
	@echo "make update-reference PROFILE=scale           copy the last scale run into paper_figures/frontier and notebooks/frontier.ipynb"
	@echo "make site                                     build the documentation site into build/site/html/"
	@echo "make test                                     unit tests (and the wheel under every other Python found), the site's browser test,"
	@echo "                                              nbval over notebooks/, a quick run of $(CI_PAPER), the prose against a quick build"
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

browser:
	@if command -v $(CHROMIUM) >/dev/null 2>&1 && command -v $(CHROMEDRIVER) >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then as_root=""; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root="sudo -n "; \
	else echo "make test: the site's browser test needs $(CHROMIUM) and $(CHROMEDRIVER), and installing them needs root." >&2; \
	     echo "  Run: sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive $(BROWSER_INSTALL)" >&2; \
	     echo "  (Debian's packages; elsewhere install Chromium and its chromedriver), then make test again." >&2; exit 1; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	     echo "make test: the site's browser test needs $(CHROMIUM) and $(CHROMEDRIVER); this is not a Debian system:" >&2; \
	     echo "  install Chromium and its chromedriver with the system's package manager, then make test again." >&2; exit 1; fi; \
	echo "installing Chromium for the site's browser test: $${as_root}apt-get update && $${as_root}$(BROWSER_INSTALL)"; \
	if [ -n "$(BROWSER_DRY_RUN)" ]; then echo "(BROWSER_DRY_RUN: not run)"; exit 0; fi; \
	$${as_root}apt-get update -qq && DEBIAN_FRONTEND=noninteractive $${as_root}$(BROWSER_INSTALL) >/dev/null

# 1. the unit tests, including the wheel under every other supported Python found (tests/test_install.py) and the
#    site in headless Chromium; 2. nbval: each notebook at the quick profile, its outputs into build/nbval-figures;
# 3. `dpkernels reproduce --profile quick` on one paper, as a user runs it; 4. every reference of the prose templates
#    against the quick build of step 2.
test: $(STAMP) browser
	DPKERNELS_NO_CACHE=1 $(PY) -m pytest tests
	rm -rf build/nbval-figures
	DPKERNELS_NO_CACHE=1 DPKERNELS_PROFILE_OVERRIDE=quick DPKERNELS_OUTPUT=$(CURDIR)/build/nbval-figures PYDEVD_DISABLE_FILE_VALIDATION=1 \
		$(PY) -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider notebooks/
	DPKERNELS_NO_CACHE=1 $(VENV)/bin/dpkernels reproduce --profile quick --paper $(CI_PAPER) --jobs 1 --no-progress \
		--build-dir build/ci
	DPKERNELS_QUICK_BUILD=$(CURDIR)/build/nbval-figures $(PY) -m pytest -p no:cacheprovider -q tests/test_prose.py

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
