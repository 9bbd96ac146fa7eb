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
    # retry for up to LB_DB_WAIT_S seconds before giving up. The migrations run as the tables'
    # owner (DATABASE_OWNER_URL) when the app connects as a least-privilege role (deploy.md).
    waited=0
    until DATABASE_URL="${DATABASE_OWNER_URL:-$DATABASE_URL}" python -m leaderboard db-upgrade; do
        waited=$((waited + 5))
        if [ "$waited" -ge "${LB_DB_WAIT_S:-120}" ]; then
            echo "boot: db-upgrade failed for ${waited}s; giving up" >&2
            exit 1
        fi
        echo "boot: db-upgrade failed; retrying in 5 s" >&2
        sleep 5
    done
    if [ -n "${LB_DB_APP_ROLE:-}" ]; then
        # new tables of this release: the app role gets read/write, the audit log append-only
        DATABASE_URL="${DATABASE_OWNER_URL:-$DATABASE_URL}" \
            python -m leaderboard db-grant-app --role "$LB_DB_APP_ROLE"
    fi
fi

# Settings (gevent workers: slow clients cannot hold the workers) in one file, overridable by
# WEB_* variables: leaderboard/server/gunicorn_conf.py.
exec gunicorn -c python:leaderboard.server.gunicorn_conf app:app
