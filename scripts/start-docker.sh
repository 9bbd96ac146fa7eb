#!/usr/bin/env bash
# Start a local Docker engine for the harness tests; safe to run any number of times.
#
# - installs docker.io (and busybox-static, which the test images are built from) when missing;
# - starts dockerd in the background with no bridge and no iptables rules: the sandbox runs every
#   container with networking off, and CI machines often cannot program iptables;
# - waits until `docker info` answers (or fails after DOCKER_WAIT_S seconds).
set -euo pipefail

LOG="${DOCKERD_LOG:-/tmp/dockerd.log}"
WAIT_S="${DOCKER_WAIT_S:-60}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

need_pkgs=()
command -v dockerd >/dev/null 2>&1 || need_pkgs+=(docker.io)
[ -x /bin/busybox ] || need_pkgs+=(busybox-static)
if [ "${#need_pkgs[@]}" -gt 0 ]; then
    echo "start-docker: installing ${need_pkgs[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

if docker info >/dev/null 2>&1; then
    echo "start-docker: engine already running"
    exit 0
fi

if ! pgrep -x dockerd >/dev/null 2>&1; then
    echo "start-docker: starting dockerd (log: $LOG)"
    # setsid + nohup: the engine outlives this script and the shell that ran it.
    $SUDO setsid nohup dockerd --bridge=none --iptables=false --ip6tables=false \
        >>"$LOG" 2>&1 </dev/null &
fi

for _ in $(seq 1 "$WAIT_S"); do
    if docker info >/dev/null 2>&1; then
        echo "start-docker: engine ready"
        exit 0
    fi
    sleep 1
done
echo "start-docker: dockerd did not answer within ${WAIT_S}s; last log lines:" >&2
tail -n 30 "$LOG" >&2 || true
exit 1
