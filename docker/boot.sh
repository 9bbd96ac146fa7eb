#!/bin/sh
# Container entry point. With no argument (or `web`): bring the schema to head, then replace this
# shell with gunicorn (exec: gunicorn becomes PID 1 and receives SIGTERM from `docker stop`).
# With other arguments (`worker --queues scoring`, `reconcile --every 10`): check the environment,
# then exec `python -m leaderboard <arguments>` (the worker image).
#
# LB_DB_UPGRADE=0 skips the upgrade: set it on every web replica but one (or run
# `python -m leaderboard db-upgrade` once before a rolling deploy), so that two replicas never
# migrate at the same time.
set -eu

# Every process of a deployment must share these; without them leaderboard/server/config.py would
# generate a private secret and label key per container, and workers could not decrypt labels.
for name in DATABASE_URL SECRET_KEY LABEL_KEYS; do
    eval "value=\${$name:-}"
    if [ -z "$value" ]; then
        echo "boot: $name is not set (see docker/env.example)" >&2
        exit 2
    fi
done

# Any other role (worker, reconcile, ...): run that leaderboard command instead of the web server.
if [ "$#" -gt 0 ] && [ "$1" != "web" ]; then
    exec python -m leaderboard "$@"
fi

if [ "${LB_DB_UPGRADE:-1}" != "0" ]; then
    # PostgreSQL may still be starting (compose waits for its health check, other hosts may not):
    # retry for up to LB_DB_WAIT_S seconds before giving up.
    waited=0
    until python -m leaderboard db-upgrade; do
        waited=$((waited + 5))
        if [ "$waited" -ge "${LB_DB_WAIT_S:-120}" ]; then
            echo "boot: db-upgrade failed for ${waited}s; giving up" >&2
            exit 1
        fi
        echo "boot: db-upgrade failed; retrying in 5 s" >&2
        sleep 5
    done
fi

exec gunicorn \
    --bind "0.0.0.0:${PORT:-8000}" \
    --worker-class gthread \
    --workers "${WEB_WORKERS:-4}" \
    --threads "${WEB_THREADS:-8}" \
    --timeout "${WEB_TIMEOUT_S:-300}" \
    --graceful-timeout 30 \
    --keep-alive 5 \
    --max-requests "${WEB_MAX_REQUESTS:-5000}" \
    --max-requests-jitter 500 \
    --forwarded-allow-ips "${FORWARDED_ALLOW_IPS:-127.0.0.1}" \
    --access-logfile - \
    --error-logfile - \
    app:app
