#!/usr/bin/env bash
# Starts what the test suite needs and is not running yet: PostgreSQL, Redis, the Docker engine,
# and Chromium for the browser tests. Idempotent; run as root (as CI does).
set -euo pipefail
cd "$(dirname "$0")/.."

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# PostgreSQL (trust auth on 127.0.0.1:5432)
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  command -v pg_ctlcluster >/dev/null || apt_install postgresql
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  for _ in $(seq 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi

# Redis (127.0.0.1:6379, nothing kept on disk)
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  command -v redis-server >/dev/null || apt_install redis-server
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 30); do redis-cli ping >/dev/null 2>&1 && break; sleep 0.5; done
fi

# Chromium for Playwright (the Python package drives /usr/bin/chromium; no browser download)
[ -x /usr/bin/chromium ] || apt_install chromium

# axe-core for the browser tests' accessibility checks (tests/browser/conftest.py), from npm into
# the git-ignored .cache/npm, pinned; node and npm from Debian when missing
AXE_VERSION=4.10.3
if ! grep -qs "\"version\": \"$AXE_VERSION\"" .cache/npm/node_modules/axe-core/package.json; then
  command -v npm >/dev/null || apt_install npm
  npm install --prefix .cache/npm --no-audit --no-fund --silent "axe-core@$AXE_VERSION" >/dev/null
fi

# ffmpeg (libx264, libmp3lame, libopus): the robustness track's video and audio degradations
command -v ffmpeg >/dev/null || apt_install ffmpeg

# nginx, to run the deploy guide's reverse-proxy configuration in front of gunicorn (not started
# as a service: the tests start their own instance)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || apt_install nginx-light

# docker compose (v2 plugin) or Debian's docker-compose, to validate docker/compose.yaml
docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null || apt_install docker-compose

# Docker engine without networking (containers always run with networking off)
if [ -f scripts/start-docker.sh ]; then bash scripts/start-docker.sh; fi
echo "services ready"
