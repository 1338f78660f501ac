# Two commands on a fresh machine (see README):
#   make lab    set up and start JupyterLab with the extension, local backend, examples
#   make test   set up from nothing and run every test (Python, jest, browser)
# Everything lives in .venv and node_modules inside this checkout.

SHELL := /bin/bash
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
export PATH := $(BIN):$(PATH)
# Debian's Chromium for browser tests; never `playwright install`.
CHROMIUM ?= /usr/bin/chromium
LAB_PORT ?= 8888
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: help fields env dev lab cluster gettext test-cluster test test-python test-mutation test-js test-ui lint format chromium wheel check-wheel clean bench-smoke

help:
	@echo "make lab | make test | make lint | make wheel | make clean"

$(VENV)/.deps: requirements-dev.txt
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/pip install -q -U pip
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $@

env: $(VENV)/.deps

# The editable install runs `jlpm install` + `jlpm build` through the hatch hook.
$(VENV)/.dev: $(VENV)/.deps pyproject.toml package.json $(shell find src style schema -type f 2>/dev/null)
	$(BIN)/pip install -q --no-build-isolation -e .
	$(BIN)/jupyter-builder develop . --overwrite
	$(BIN)/jupyter server extension enable jupyter_pytorchjob --sys-prefix
	touch $@

dev: $(VENV)/.dev

lab: dev
	cd examples && $(BIN)/jupyter lab --no-browser $(ROOT_FLAG) --port $(LAB_PORT) \
	    --PyTorchJobApp.backend=local

chromium:
	@test -x $(CHROMIUM) || { $(SUDO) apt-get update -q && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q chromium; }

# gettext's msgfmt checks the zh_CN catalogue (tests/test_messages.py).
gettext:
	@command -v msgfmt >/dev/null || { $(SUDO) apt-get update -q && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q gettext; }

ui-tests/node_modules/.installed: ui-tests/package.json ui-tests/yarn.lock
	cd ui-tests && $(BIN)/jlpm install
	touch $@

test-python: dev gettext
	$(BIN)/python -m pytest

# Each authorization check removed in turn: the authorization tests must fail (~3 min).
test-mutation: dev
	$(BIN)/python tests/mutation_auth.py

test-js: dev
	$(BIN)/jlpm test

test-ui: dev chromium ui-tests/node_modules/.installed
	cd ui-tests && CI=1 CHROMIUM_PATH=$(CHROMIUM) $(BIN)/jlpm playwright test

test: test-python test-js test-ui

# The real-cluster tier (README, "A real cluster in the tests"): Kubernetes 1.20.2 built
# from Debian's source package, its images from Debian's and PyPI's packages, all cached
# in CLUSTER_CACHE (about 15 minutes the first time on 2 cores, seconds after).
CLUSTER_CACHE ?= $(HOME)/.cache/jupyter-pytorchjob/cluster
# The images (mostly downloads and unpacking) build beside Kubernetes (mostly CPU).
cluster:
	bash cluster/install-packages.sh
	mkdir -p $(CLUSTER_CACHE)
	export PTJOB_CLUSTER_CACHE=$(CLUSTER_CACHE); \
	  bash cluster/build-images.sh >$(CLUSTER_CACHE)/build-images.log 2>&1 & images=$$!; \
	  bash cluster/build-kubernetes.sh || exit 1; \
	  wait $$images || { tail -30 $(CLUSTER_CACHE)/build-images.log; exit 1; }; \
	  tail -1 $(CLUSTER_CACHE)/build-images.log

test-cluster: dev cluster
	PTJOB_CLUSTER_CACHE=$(CLUSTER_CACHE) PTJOB_CLUSTER_TIER=1 $(BIN)/python -m pytest tests/cluster -v

# Each benchmark once, in a small configuration, so that none rots: they must run to the
# end, not meet their goals (no timing is judged here), and stop what they start and
# remove their temporary files (benchmarks/smoke.py checks both, and times each line).
# About 3 minutes.
BENCH := $(BIN)/python benchmarks/smoke.py --timeout 300 -- $(BIN)/python benchmarks
bench-smoke: dev chromium ui-tests/node_modules/.installed
	$(BENCH)/local_overhead.py --runs 1 --steps 2 --timeout 120
	$(BENCH)/local_jobs_list.py --jobs 20 --running 2 --requests 3 --cold
	$(BENCH)/cli_startup.py --runs 1 --jobs 2
	$(BENCH)/function_overhead.py --runs 1
	$(BENCH)/log_archive.py --mb 4 --runs 1 --starts 2
	$(BENCH)/log_pump.py --count 2000 --runs 1
	$(BENCH)/log_streams.py --streams 2 --lines 500 --runs 1
	$(BENCH)/progress_list.py --jobs 3 --log-mb 3 --events-mb 1 --requests 3
	$(BENCH)/progress_list_kubernetes.py --jobs 3 --log-mb 3 --events-mb 1 --interval 0.5 \
	    --requests 3 --tries 2 --cpu-window 2
	$(BENCH)/tensorboard_first_scalar.py --runs 1 --points 200 --tags 1
	CHROMIUM_PATH=$(CHROMIUM) $(BENCH)/panel_first_render.py --jobs 20 --running 1 --runs 1
	CHROMIUM_PATH=$(CHROMIUM) $(BENCH)/panel_progress_render.py --jobs 20 --running 1 --runs 1
	$(BENCH)/log_merge.py --replicas 3 --lines 2000 --runs 1
	$(BENCH)/log_redraws.py --updates 2000 --mb 1 --runs 1
	$(BENCH)/failure_list_kubernetes.py --jobs 3 --requests 2
	$(BENCH)/hostile_files.py --timeout 3 --cap-mib 1024
	$(BENCH)/list_unstarted_jobs.py --jobs 5 --runs 1
	$(BENCH)/metric_names.py --lines 2000
	$(BENCH)/result_channel.py --runs 1 --mib 0.1
	CHROMIUM_PATH=$(CHROMIUM) $(BENCH)/with_lab.py node benchmarks/log_viewer/run.js \
	    --lines 2000 --redraws 0.1

# The job body's declarations the field table generates (openapi.yaml, src/tokens.ts).
fields:
	python3 tools/generate_fields.py

lint: dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/jlpm lint:check

format: dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
	$(BIN)/jlpm lint

# A release wheel; `clean:all` first, or a stale dev bundle gets packaged.
wheel: dev
	$(BIN)/jlpm clean:all
	$(BIN)/python -m build --no-isolation

clean:
	rm -rf $(VENV) node_modules ui-tests/node_modules lib jupyter_pytorchjob/labextension dist \
	    coverage junit.xml tsconfig.tsbuildinfo .eslintcache ui-tests/test-results

# The wheel must install into a fresh venv with no node on PATH and show up enabled.
check-wheel: wheel
	rm -rf .wheel-venv && python3 -m venv .wheel-venv
	.wheel-venv/bin/pip install -q dist/jupyter_pytorchjob-*.whl 'jupyterlab>=4.6,<5'
	env -i HOME=$(HOME) PATH=$(abspath .wheel-venv)/bin jupyter labextension list > .wheel-venv/lab.txt 2>&1
	env -i HOME=$(HOME) PATH=$(abspath .wheel-venv)/bin jupyter server extension list > .wheel-venv/server.txt 2>&1
	cat .wheel-venv/lab.txt .wheel-venv/server.txt
	grep -qE "jupyter-pytorchjob .*enabled.*OK" .wheel-venv/lab.txt
	grep -qE "jupyter_pytorchjob .*enabled" .wheel-venv/server.txt
	grep -qE "jupyter_pytorchjob .*OK" .wheel-venv/server.txt
	env -i HOME=$(HOME) PATH=$(abspath .wheel-venv)/bin ptjob render --name w -- python t.py > /dev/null
	rm -rf .wheel-venv
