#!/usr/bin/env bash
# The first ten minutes (issue 33): `make run` from a fresh `git clone`, timed to the first HTTP
# 200 of the home page, for the first start (venv, install, demo data generated, imported and
# scored) and the second (everything cached), while a `yes > /dev/null` keeps one core busy.
#
#   bash perf/bench_first_run.sh [REPO]      # REPO: what to clone (default: this checkout's HEAD)
#
# Targets: first start <= 180 s with pip's cache warm, second start <= 10 s. Prints the load
# average before and after (other work on the machine counts too). Environment: PORT (default
# 5077), LIMIT (seconds one start may take before it counts as failed, default 900), KEEP=1 keeps
# the clone and its logs. Everything it starts is stopped on exit, and the busy loop is bounded.
set -euo pipefail

SRC=${1:-$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)}
PORT=${PORT:-5077}
LIMIT=${LIMIT:-900}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lb-first-run.XXXXXX")
CLONE=$WORK/leaderboard
PIDS=()

cleanup() {
    for pid in "${PIDS[@]}"; do
        kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    if [ "${KEEP:-0}" = 1 ]; then echo "kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT INT TERM

if curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then
    echo "port $PORT is in use; set PORT=" >&2
    exit 2
fi

secs() {  # seconds since $1 (date +%s%N), one decimal
    local ms=$(( ($(date +%s%N) - $1) / 1000000 ))
    printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100))
}

# One start of `make run` in its own process group: sets ELAPSED to the seconds to the first 200,
# then stops it (and waits until the port is free again).
time_start() {
    local log=$1 started code pid
    started=$(date +%s%N)
    setsid make -C "$CLONE" run PORT="$PORT" >"$log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    SETUP=""
    while :; do
        if [ -z "$SETUP" ] && [ -f "$CLONE/.venv/.installed" ]; then SETUP=$(secs "$started"); fi
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/" \
               || true)
        if [ "$code" = 200 ]; then break; fi
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "make run exited before serving; the end of its log ($log):" >&2
            tail -30 "$log" >&2
            exit 1
        fi
        if [ $(( ($(date +%s%N) - started) / 1000000000 )) -ge "$LIMIT" ]; then
            echo "no 200 within $LIMIT s; the end of the log:" >&2
            tail -30 "$log" >&2
            exit 1
        fi
        sleep 0.2
    done
    ELAPSED=$(secs "$started")
    kill -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    while curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$PORT/"; do sleep 0.2; done
}

cache=$(du -sh "${PIP_CACHE_DIR:-$HOME/.cache/pip}" 2>/dev/null | cut -f1 || true)
echo "machine: $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg);" \
     "pip cache: ${cache:-none}"

timeout $((3 * LIMIT)) yes >/dev/null &   # the busy core, bounded even if this script is killed
PIDS+=("$!")

started=$(date +%s%N)
git clone -q "$SRC" "$CLONE"
echo "cloned $(git -C "$CLONE" rev-parse --short HEAD) in $(secs "$started") s"

time_start "$WORK/first.log"
first=$ELAPSED
echo "first start (make run in the fresh clone -> first 200): $first s, of which setup" \
     "(venv + pip) ${SETUP:-?} s [load average $(cut -d' ' -f1-3 /proc/loadavg)]"
echo "--- what the first start printed (pip's lines left out):"
grep -v '^   \|^WARNING\|^ \*' "$WORK/first.log" | sed 's/^/    /'
first_setup=$SETUP
time_start "$WORK/second.log"
second=$ELAPSED
echo "second start (make run again -> first 200): $second s" \
     "[load average $(cut -d' ' -f1-3 /proc/loadavg)]"
echo "--- what the second start printed:"
grep -v '^ *\*\|WARNING: This is a development server' "$WORK/second.log" | sed 's/^/    /'
echo "RESULT first_s=$first first_setup_s=$first_setup second_s=$second cores=$(nproc) busy_cores=1" \
     "load_after=$(cut -d' ' -f1 /proc/loadavg)"
