# The two commands a newcomer needs:  make run   and   make test   (see README.md).
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 5000
export PYTHONPATH := $(CURDIR)

.PHONY: setup run serve test services demo bench clean screenshots

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements-dev.txt
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) (Python 3.11)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	# the toolkit's `leaderboard` console script (README), editable: it runs this checkout
	$(PY) -m pip install -q --no-deps -e .
	touch $@

# Embedded default: SQLite under instance/, jobs inline, demo packs imported, baselines scored.
# COOKIE_SECURE=0 because this serves plain http on loopback; production keeps the default (on).
run: setup
	$(PY) -m leaderboard db-upgrade
	$(PY) -m leaderboard receipt-key generate --if-missing \
		--dir "$${RECEIPT_KEY_DIR:-$${DATA_DIR:-instance/data}/keys}"
	$(PY) -m leaderboard seed-demo
	COOKIE_SECURE=0 $(PY) -m flask --app app run --host 127.0.0.1 --port $(PORT)

# Same, under gunicorn (what production runs).
serve: setup
	$(PY) -m leaderboard db-upgrade
	COOKIE_SECURE=0 $(VENV)/bin/gunicorn -w 2 -b 127.0.0.1:$(PORT) app:app

services:
	bash scripts/start-services.sh

# The suite runs on TEST_WORKERS pytest-xdist workers (most tests wait on services, so three
# workers pay on two cores); each worker gets its own Redis (tests/conftest.py).
TEST_WORKERS ?= 3
test: setup services
	LB_REQUIRE_SERVICES=1 HARNESS_REQUIRE_DOCKER=1 $(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) $(PYTEST_ARGS)

# Screenshots of every page at 1280 and 390 px into tests/browser/screenshots/ (git-ignored): the
# whole journey (journey/), the participant's loop (participant/) and the organiser's (organiser/).
screenshots: setup
	$(PY) -m pytest -q -p no:cacheprovider tests/browser/test_whole_journey.py \
		tests/browser/test_participant_loop.py tests/browser/test_organiser_journey.py

# Packs with the test labels too (a host imports them: `leaderboard import-pack packs/<key>`).
demo: setup
	$(PY) -m leaderboard demo-packs --out packs --with-test-labels

bench: setup
	$(PY) perf/bench_metrics.py
	$(PY) perf/bench_validation.py

clean:
	rm -rf instance packs .pytest_cache
