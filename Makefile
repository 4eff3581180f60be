# hpc.pbs task runner. `make demo` and `make test` do all their own set-up on a fresh
# Debian 12 machine as root: Debian packages, a venv with the pinned requirements, and the
# collection made importable as hpc.pbs.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEB_PACKAGES := openssh-server openssh-client python3-venv util-linux procps iproute2 \
	python3-requests python3-requests-unixsocket
# python3-requests*: what the cray_atom role installs for the hooks' Python; the test nodes
# share the host's /usr, so the host has them already and a node never installs into it.
COLLECTION_LINK := build/collections/ansible_collections/hpc/pbs
PYTEST_ARGS ?=
# Worker processes of `make test`, `make unit` and `make integration` (pytest-xdist): each
# worker runs whole test files (--dist loadfile, so a module's cluster stays on one worker)
# and starts its clusters on a loopback /24 of its own (tests/conftest.py: base
# $$HPC_PBS_CLUSTER_NET, default 127.0.1, then 127.0.11, 127.0.21). The integration tests
# mostly wait (SSH, PBS scheduling cycles), so 2 workers pay on 2 cores (3 made the tests'
# short job sleeps race on a loaded 2-core machine). TEST_JOBS=0: one process, as before.
TEST_JOBS ?= 2
# --no-loadscope-reorder: the files go out in the order tests/conftest.py sets (slow first).
XDIST_ARGS = $(if $(filter-out 0,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder)
# Backend of `make demo`: mock (the mock PBS), openpbs (a real OpenPBS 23.06.06 built from
# ../shared/openpbs by tests/openpbs/build) or openpbs-22.05.11 (the older release).
PBS ?= mock
# The OpenPBS releases `make openpbs` builds (each once per source tarball).
OPENPBS_RELEASES := 23.06.06 22.05.11

.PHONY: demo test unit integration sanity lint lint-docs bench mutation deps venv collection build-artifact clean cluster-down openpbs

demo: deps venv collection $(if $(filter openpbs%,$(PBS)),openpbs)
	$(PY) tests/integration/demo --pbs $(PBS) $(DEMO_ARGS)

test: deps venv collection openpbs
	$(PY) -m pytest tests/unit tests/integration -ra $(XDIST_ARGS) $(PYTEST_ARGS)

# The real OpenPBS of the `openpbs` test-cluster backend, built once per source tarball
# outside git (~/.cache/hpc-pbs/openpbs); without the tarball it says so and the real-PBS
# tests are skipped.
openpbs:
	@for release in $(OPENPBS_RELEASES); do \
	  tests/openpbs/build --version $$release >/dev/null || [ $$? -eq 3 ] || exit 1; done

unit: venv collection
	$(PY) -m pytest tests/unit -ra $(XDIST_ARGS) $(PYTEST_ARGS)

integration: deps venv collection
	$(PY) -m pytest tests/integration -ra $(XDIST_ARGS) $(PYTEST_ARGS)

# The ecosystem's gates as a contributor runs them (tests/sanity/gates.py; the sanity-marked
# unit tests run the same script): `make sanity` runs ansible-test sanity on a copy of the
# checkout placed as build/sanity/ansible_collections/hpc/pbs (ansible-test refuses the
# symlink of `collection`), `make lint` runs ansible-lint in the repository root.
# SANITY_ARGS / LINT_ARGS are passed to the tool, e.g. SANITY_ARGS="--test pep8".
SANITY_ARGS ?=
LINT_ARGS ?=
sanity: venv
	$(PY) tests/sanity/gates.py sanity $(SANITY_ARGS)

lint: venv collection
	$(PY) tests/sanity/gates.py lint $(LINT_ARGS)

# antsibull-docs lint-collection-docs --plugin-docs (the markup of every module, filter and
# role argument spec), from a venv of its own: its Sphinx/docutils pins do not resolve beside
# requirements.txt. The collection's own venv gives it ansible-doc.
DOCS_VENV := build/antsibull-venv
lint-docs: venv collection
	test -x $(DOCS_VENV)/bin/antsibull-docs || { $(PYTHON) -m venv $(DOCS_VENV) \
		&& $(DOCS_VENV)/bin/pip install -q -r tests/sanity/antsibull-docs-requirements.txt; }
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(DOCS_VENV)/bin/antsibull-docs lint-collection-docs --plugin-docs .

# Costs of site.yml, rollout.yml (nothing to do, and with work), audit.yml and report.yml vs
# `ansible -m ping` on 8, 32 and 64 moms, mock and real OpenPBS (skipped, and said so,
# without its build), and 128 and 256 moms on the mock: wall medians, qmgr calls, SSH round
# trips per host, controller CPU, per-mom growth, moms per minute and the projection to
# 2,500 and 10,000 moms, written into docs/performance.md (about 1.5 hours on 2 cores: one
# timed run of each kind at the mock-only sizes, where a run takes 0.5-1.5 min and 3 runs of
# a kind differed by 4-6 % at 128 moms). Method:
# docs/performance.md. BENCH_ARGS replaces the whole matrix, e.g.
# `make bench BENCH_ARGS="--moms 8 --backend mock --repeat 1"`.
BENCH_ARGS ?= --moms 8,32,64 --mock-moms 128,256 --backend mock,openpbs --repeat 3 --mock-repeat 1 --write-doc docs/performance.md
bench: deps venv collection openpbs
	$(PY) tests/benchmark/bench_rollout.py $(BENCH_ARGS)

# Mutation testing (mutmut 2.x) of plugins/module_utils, plugins/modules and files/hooks
# against their unit tests; not part of `make test` (too slow for CI). tests/mutation/run.py
# runs mutmut on MUTATION_JOBS worker copies of the working tree in $(MUTATION_DIR) (mutmut
# rewrites the file it mutates), one product file at a time, each with its own cache kept
# between runs (only changed code is tested again); each mutant's tests run in their own
# PID namespace. Settings: tests/mutation/. Last score: docs/testing.md. String literals
# are not mutated unless MUTATION_TYPES= is given empty (they double the run time);
# MUTATION_PATHS limits a run to some product files or directories.
MUTATION_DIR := build/mutation
MUTATION_JOBS ?= $(shell nproc)
MUTATION_TYPES ?= --disable-mutation-types=string
MUTATION_PATHS ?=
mutation: venv collection
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(PY) tests/mutation/run.py --dir $(MUTATION_DIR) \
	  --jobs $(MUTATION_JOBS) --mutmut-args="$(MUTATION_TYPES)" $(MUTATION_PATHS)

deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

venv: $(STAMP)

$(STAMP): requirements.txt tests/mockpbs/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements.txt
	$(VENV)/bin/pip install -q --disable-pip-version-check -e tests/mockpbs
	touch $(STAMP)

collection:
	@mkdir -p $(dir $(COLLECTION_LINK))
	@ln -sfn $(CURDIR) $(COLLECTION_LINK)

build-artifact: venv
	$(VENV)/bin/ansible-galaxy collection build --force --output-path build/

cluster-down: venv
	$(PY) tests/integration/cluster down

clean: cluster-down
	rm -rf build .pytest_cache
