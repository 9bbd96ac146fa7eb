# The two commands a newcomer needs:  make run   and   make test   (see README.md).
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 5000
export PYTHONPATH := $(CURDIR)
# pip's output goes through sed (one line per package): a failed install must fail the recipe
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

.PHONY: setup setup-dev run serve test services demo bench clean screenshots

# Two stamps: `setup` installs what the server and the demo need (requirements.txt's pins for the
# [server] and [demo] extras: no torch, pyarrow or test tools, so a first `make run` installs in
# about a minute); `setup-dev` adds the rest of requirements-dev.txt for `make test`.
# --no-compile: Python compiles what it imports on first use; pip compiling every installed module
# up front took half of the install's time.
setup: $(VENV)/.installed
setup-dev: $(VENV)/.installed-dev

$(VENV)/.installed: requirements.txt pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) (Python 3.11)"; exit 1; }
	@test -x $(PY) || { echo "==> setup: creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "==> setup: installing the server's and the demo's dependencies into $(VENV) (pinned by requirements.txt; a minute or two)"
	@sed -e 's/\[[^]]*\]//' -e '/^ *#/d' requirements.txt > $(VENV)/constraints.txt
	$(PY) -m pip install --no-compile --progress-bar off -c $(VENV)/constraints.txt -e '.[server,demo]' \
		| sed -un '/^\(Collecting\|Installing\|Successfully\)/{s/^\(.\{96\}\)..*/\1 .../;s/^/   /;p}'
	@touch $@
	@echo "==> setup: done; the toolkit's command is $(VENV)/bin/leaderboard (or: . $(VENV)/bin/activate)"

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	@echo "==> setup-dev: installing the rest of requirements-dev.txt (torch, judges, test tools)"
	$(PY) -m pip install --no-compile --progress-bar off -r requirements-dev.txt \
		| sed -un '/^\(Collecting\|Installing\|Successfully\)/{s/^\(.\{96\}\)..*/\1 .../;s/^/   /;p}'
	@touch $@

# Embedded default: SQLite under instance/, jobs inline, demo packs imported, baselines scored.
# run-demo does it in one process (signing key, schema, demo data cached by digest, then the
# development server), so a second start serves in seconds. PORT=8000 make run serves elsewhere.
# COOKIE_SECURE=0 because this serves plain http on loopback; production keeps the default (on).
run: setup
	COOKIE_SECURE=0 $(PY) -m leaderboard run-demo --host 127.0.0.1 --port $(PORT)

# Same, under gunicorn (what production runs).
serve: setup
	$(PY) -m leaderboard db-upgrade
	COOKIE_SECURE=0 $(VENV)/bin/gunicorn -w 2 -b 127.0.0.1:$(PORT) app:app

services:
	bash scripts/start-services.sh

# The suite runs on TEST_WORKERS pytest-xdist workers (most tests wait on services, so three
# workers pay on two cores); each worker gets its own Redis (tests/conftest.py).
TEST_WORKERS ?= 3
test: setup-dev services
	LB_REQUIRE_SERVICES=1 HARNESS_REQUIRE_DOCKER=1 $(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) $(PYTEST_ARGS)

# Screenshots of every page at 1280 and 390 px into tests/browser/screenshots/ (git-ignored): the
# whole journey (journey/), the participant's loop (participant/) and the organiser's (organiser/);
# a method page, its edit form and the team page that lists methods (method-*, team-methods-*).
screenshots: setup-dev
	$(PY) -m pytest -q -p no:cacheprovider tests/browser/test_whole_journey.py \
		tests/browser/test_participant_loop.py tests/browser/test_organiser_journey.py \
		tests/browser/test_method_page.py

# Packs with the test labels too (a host imports them: `leaderboard import-pack packs/<key>`).
demo: setup
	$(PY) -m leaderboard demo-packs --out packs --with-test-labels

bench: setup-dev
	$(PY) perf/bench_metrics.py
	$(PY) perf/bench_validation.py

clean:
	rm -rf instance packs .pytest_cache
