"""The one place that reads the environment.

Every setting has a working default so that ``flask --app app run`` works on a fresh checkout:
SQLite under ``instance/``, jobs inline (no Redis), a secret key and a label key generated once and
kept under ``instance/`` (0600). Production sets them explicitly. Tests pass a mapping of
overrides to `load_config`; nothing here runs at import time.

=====================  =====================================================================
``DATABASE_URL``       SQLAlchemy URL (default ``sqlite:///<repo>/instance/leaderboard.server.db``)
``REDIS_URL``          unset: jobs run inline in the web process (the embedded default)
``SECRET_KEY``         session signing key
``DATA_DIR``           packs and uploads (default ``<repo>/instance/data``)
``LABEL_KEYS``         comma-separated Fernet keys, newest first (the newest encrypts)
``DAILY_QUOTA``        submissions per team, benchmark and UTC day on a held-out (test) split
                       (default 5; a benchmark's own quota, set by an admin, replaces it)
``DEV_DAILY_QUOTA``    the same on other (dev) splits: generous, for checking files (default
                       50; ``unlimited`` for no limit). A challenge phase's quota replaces
                       either on the phase's split
``MAX_UPLOAD_MB``      largest accepted predictions file (default 200)
``SCORING_TIMEOUT_S``  RQ job timeout of one scoring run (default 600)
``QUEUE_DEADLINE_S``   how long a submission may wait in the queue before the reconciler acts
``RECOVERY_GRACE_S``   a row whose job Redis no longer holds (and no lease covers) this long is
                       re-queued at the reconciler's next pass, whatever its deadline (10)
``MAX_ATTEMPTS``       scoring attempts before a submission fails as a platform error (3)
``BOARD_CACHE_STALE_RECHECK_S``  while another process recomputes a board entry, a process
                       serves the previous version from its own memory and asks Redis again
                       after this long (default 0.05; 0: every request asks, the old way)
``BOARD_WARM``         "0" to stop a scoring worker from re-rendering the boards a scored
                       submission changed right after it clears them (default on; issue 39:
                       the readers then find fresh entries instead of recomputing them)
``WORKER_NICE``        niceness a ``worker`` process adds to itself at start (default 10; 0 =
                       none): where web and workers share a host's cores, board reads go first
                       and scoring takes what they leave (issue 39)
``COOKIE_SECURE``      "0" to allow session cookies over plain http (local development)
``MAX_IMAGE_MB``       largest accepted detector image tarball (default 20480)
``CONTAINER_MARGIN_S`` RQ timeout of a container job = HARNESS_WALL_S + this (default 600)
``CONTAINER_MAX_ATTEMPTS`` runs of a container submission before it fails (default 2)
``RERUN_WINDOW``       re-runs of a release's campaign waiting or running at once (default 4;
                       issue 37): the rest wait in the plan, so a pause or a budget takes
                       effect within this many runs
``GPU_DEVICE``         GPU index container runs use when the benchmark asks for one (unset: none)
``HARNESS_*``          container limits (`harness.Limits.from_mapping`, e.g. HARNESS_WALL_S)
``LOGIN_RATE_LIMIT``   Flask-Limiter rule for POST /login (default "10 per minute")
``REGISTER_RATE_LIMIT``, ``TOKEN_RATE_LIMIT``, ``SUBMIT_RATE_LIMIT``  rules for those endpoints
``COMPARE_RATE_LIMIT``, ``COMPARE_GLOBAL_RATE_LIMIT``  paired comparisons per caller / in all
``MAX_BODY_BYTES``     cap on non-upload request bodies (default 1 MiB)
``CLIENT_BODY_TIMEOUT_S``  an upload body idle this long is dropped with 408 (default 60)
``SESSION_LIFETIME_S``, ``REMEMBER_LIFETIME_S``  session and remember-me cookie lifetimes
``TRUSTED_PROXY_COUNT``  reverse proxies in front of the app (ProxyFix; default 0)
``DEFAULT_JUDGE``      judge of benchmarks whose admin chose none (default "rules")
``JUDGE_OPENAI_*``     BASE_URL, MODEL, API_KEY of the OpenAI-compatible judge
``GPU_DEVICE``, ``HARNESS_*``  GPU index and container limits for detector runs
``DEFAULT_JUDGE``      judge of benchmarks without an official one (default "rules")
``JUDGE_DEADLINE_S``   without Redis (inline jobs), judging queued/running this long is
                       re-enqueued by the reconciler (1800); with Redis, RECOVERY_GRACE_S after
                       its job went missing
``JUDGE_OPENAI_*``     ``BASE_URL``, ``MODEL``, ``API_KEY`` of the OpenAI-compatible judge
``DEPLOYMENT_ID``      label on every image and container this deployment loads or runs, so
                       deployments sharing a Docker engine never remove each other's (default:
                       derived from SECRET_KEY, which all hosts of a deployment share)
``RECEIPT_KEY_DIR``    folder of the receipt signing key (``signing.pem``, made on first use) and
                       the published key set (``published.json``; default ``DATA_DIR/keys``)
``RECEIPT_SIGNING_KEY`` the current signing key itself (PKCS#8 PEM or base64 of the Ed25519
                       seed) instead of ``signing.pem``; never stored in the database
``PACK_ROOTS``         folders the admin pages may import packs and build releases from
                       (``os.pathsep``-separated; default ``DATA_DIR/incoming``)
``ADMIN_REQUIRE_2FA``  "1": an administrator must enrol a second factor (TOTP) before any
                       admin page (default off here, for the embedded ``make run`` and tests;
                       on in the production configuration, docker/compose.yaml)
``TWO_FACTOR_RATE_LIMIT``  Flask-Limiter rule for second-factor codes, per account
                       (default "5 per minute;30 per hour")
``TOTP_ISSUER``        the name authenticator apps show for this site (default "Leaderboard")
``INVITE_TTL_DAYS``    how long a team invitation link works (default 7)
``SMTP_HOST``          the mail server (unset: no mail is sent; messages are kept in the outbox,
                       shown on the admin Outbox page and logged: the embedded default)
``SMTP_PORT``          default 587 (465 with ``SMTP_SECURITY=tls``)
``SMTP_SECURITY``      ``starttls`` (default), ``tls`` (implicit TLS) or ``none`` (loopback only)
``SMTP_USERNAME``, ``SMTP_PASSWORD``  credentials (unset: no AUTH)
``SMTP_TIMEOUT_S``     per SMTP operation (default 30)
``MAIL_SENDER``        the From address (default ``Leaderboard <noreply@localhost>``)
``PUBLIC_URL``         the site's address, for links in mail (default ``http://127.0.0.1:5000``)
``MAIL_DIGEST_WINDOW_S``  notices to one person within this window are one message (120)
``MAIL_MAX_ATTEMPTS``  SMTP attempts before a message fails (default 10, backoff to 1 h)
``MAIL_LEASE_S``       a message claimed this long ago by a job that went silent is recovered (300)
``REQUIRE_VERIFIED_EMAIL``  unverified accounts may not request an agreement or submit to a
                       held-out split (default on; off when ``TESTING`` unless set)
``VERIFY_LINK_TTL_S``, ``RESET_LINK_TTL_S``  link lifetimes (default 2 days, 1 hour)
``REVOKE_TOKENS_ON_RESET``  a reset or password change revokes the API tokens (default on)
``FORGOT_RATE_LIMIT``, ``FORGOT_ADDRESS_RATE_LIMIT``, ``RESEND_RATE_LIMIT``  reset requests
                       per caller and per address, verification mails per account
=====================  =====================================================================
"""
from __future__ import annotations

import hashlib
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTANCE_DIR = REPO_ROOT / "instance"
#: the harness's rule for deployment ids (harness.labels.DEPLOYMENT_RE; not imported: no Docker here)
_DEPLOYMENT_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

_INTS = {"DAILY_QUOTA": 5, "MAX_UPLOAD_MB": 200, "SCORING_TIMEOUT_S": 600,
         "QUEUE_DEADLINE_S": 3600, "MAX_ATTEMPTS": 3, "JOB_RESULT_TTL_S": 3600,
         "JOB_FAILURE_TTL_S": 7 * 86400, "LABEL_CACHE_SIZE": 8, "RECOVERY_GRACE_S": 10,
         "MAX_IMAGE_MB": 20480, "CONTAINER_MARGIN_S": 600, "CONTAINER_MAX_ATTEMPTS": 2,
         "WORKER_NICE": 10, "RERUN_WINDOW": 4}


def _persisted_secret(name: str, make) -> str:
    """A secret generated once and kept under ``instance/`` so restarts and workers share it."""
    path = INSTANCE_DIR / name
    if path.exists():
        return path.read_text().strip()
    INSTANCE_DIR.mkdir(parents=True, exist_ok=True)
    value = make()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value)
    return value


def _fernet_key() -> str:
    from cryptography.fernet import Fernet
    return Fernet.generate_key().decode()


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() not in ("0", "false", "no", "off", "")


_MAIL_INTS = {"SMTP_TIMEOUT_S": 30, "MAIL_DIGEST_WINDOW_S": 120, "MAIL_MAX_ATTEMPTS": 10,
              "MAIL_LEASE_S": 300, "VERIFY_LINK_TTL_S": 2 * 86400, "RESET_LINK_TTL_S": 3600}
_SMTP_SECURITY = ("starttls", "tls", "none")


def _mail(cfg: dict[str, Any], get) -> None:
    """Mail settings (issue 35); ValueError naming the variable for a bad value."""
    cfg["SMTP_HOST"] = get("SMTP_HOST") or None
    security = (get("SMTP_SECURITY") or "starttls").strip().lower()
    if security not in _SMTP_SECURITY:
        raise ValueError(f"SMTP_SECURITY must be one of {', '.join(_SMTP_SECURITY)}, "
                         f"got {security!r}")
    cfg["SMTP_SECURITY"] = security
    port = get("SMTP_PORT") or (465 if security == "tls" else 587)
    try:
        cfg["SMTP_PORT"] = int(port)
    except (TypeError, ValueError):
        raise ValueError(f"SMTP_PORT must be a port number, got {port!r}") from None
    if not 0 < cfg["SMTP_PORT"] < 65536:
        raise ValueError(f"SMTP_PORT must be a port number, got {port!r}")
    cfg["SMTP_USERNAME"] = get("SMTP_USERNAME") or None
    cfg["SMTP_PASSWORD"] = get("SMTP_PASSWORD") or None
    cfg["MAIL_SENDER"] = get("MAIL_SENDER") or "Leaderboard <noreply@localhost>"
    cfg["PUBLIC_URL"] = (get("PUBLIC_URL") or "http://127.0.0.1:5000").rstrip("/")
    if not re.match(r"^https?://[^\s/]+", cfg["PUBLIC_URL"]):
        raise ValueError(f"PUBLIC_URL must be an http(s) address, got {cfg['PUBLIC_URL']!r}")
    for name, default in _MAIL_INTS.items():
        raw = get(name, default)
        if not str(raw).strip().isdigit() or int(raw) < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {raw!r}")
        cfg[name] = int(raw)
    # tests register and submit without mail unless they ask; production and `make run` verify
    cfg["REQUIRE_VERIFIED_EMAIL"] = _flag(get("REQUIRE_VERIFIED_EMAIL",
                                              "0" if cfg["TESTING"] else "1"))
    cfg["REVOKE_TOKENS_ON_RESET"] = _flag(get("REVOKE_TOKENS_ON_RESET", "1"))
    cfg["FORGOT_RATE_LIMIT"] = get("FORGOT_RATE_LIMIT") or "5 per minute;30 per day"
    cfg["FORGOT_ADDRESS_RATE_LIMIT"] = get("FORGOT_ADDRESS_RATE_LIMIT") or "3 per hour"
    cfg["RESEND_RATE_LIMIT"] = get("RESEND_RATE_LIMIT") or "3 per hour"


def load_config(overrides: Mapping[str, Any] | None = None,
                environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Settings from ``overrides``, then the environment, then defaults.

    Raises ValueError naming the variable when a value cannot be parsed.
    """
    env = dict(os.environ if environ is None else environ)
    over = dict(overrides or {})

    def get(name: str, default=None):
        if name in over:
            return over[name]
        return env.get(name, default)

    cfg: dict[str, Any] = {}
    cfg["DATABASE_URL"] = get("DATABASE_URL") or f"sqlite:///{INSTANCE_DIR / 'leaderboard.server.db'}"
    cfg["REDIS_URL"] = get("REDIS_URL") or None
    cfg["DATA_DIR"] = str(Path(get("DATA_DIR") or INSTANCE_DIR / "data").resolve())
    cfg["SECRET_KEY"] = get("SECRET_KEY") or _persisted_secret(
        "secret_key", lambda: secrets.token_urlsafe(48))
    keys = get("LABEL_KEYS")
    if isinstance(keys, str):
        keys = [k.strip() for k in keys.split(",") if k.strip()]
    if not keys:
        keys = [_persisted_secret("label_key", _fernet_key)]
    cfg["LABEL_KEYS"] = list(keys)
    deployment = get("DEPLOYMENT_ID") or "d" + hashlib.sha256(
        b"lb-deployment:" + str(cfg["SECRET_KEY"]).encode()).hexdigest()[:15]
    if not _DEPLOYMENT_RE.match(deployment) or len(deployment) > 40:
        raise ValueError("DEPLOYMENT_ID must be lowercase letters and digits with inner dashes, "
                         f"at most 40 characters, got {deployment!r}")
    cfg["DEPLOYMENT_ID"] = deployment
    # receipts and the transparency log (issue 27): keys from the environment or a key folder
    cfg["RECEIPT_KEY_DIR"] = str(Path(get("RECEIPT_KEY_DIR") or Path(cfg["DATA_DIR"]) / "keys")
                                 .resolve())
    cfg["RECEIPT_SIGNING_KEY"] = get("RECEIPT_SIGNING_KEY") or None
    roots = get("PACK_ROOTS") or str(Path(cfg["DATA_DIR"]) / "incoming")
    if isinstance(roots, str):
        roots = [r for r in roots.split(os.pathsep) if r.strip()]
    if not all(os.path.isabs(r) for r in roots):
        raise ValueError(f"PACK_ROOTS must list absolute folders, got {roots!r}")
    cfg["PACK_ROOTS"] = [str(Path(r).resolve()) for r in roots]
    for name, default in _INTS.items():
        raw = get(name, default)
        try:
            value = int(raw)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be an integer, got {raw!r}") from None
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
        cfg[name] = value
    raw = get("DEV_DAILY_QUOTA", 50)
    if str(raw).strip().lower() == "unlimited":
        cfg["DEV_DAILY_QUOTA"] = None
    else:
        try:
            cfg["DEV_DAILY_QUOTA"] = int(raw)
        except (TypeError, ValueError):
            raise ValueError(f"DEV_DAILY_QUOTA must be a whole number or 'unlimited', "
                             f"got {raw!r}") from None
        if cfg["DEV_DAILY_QUOTA"] < 0:
            raise ValueError(f"DEV_DAILY_QUOTA must be >= 0, got {raw!r}")
    raw = get("BOARD_CACHE_STALE_RECHECK_S", 0.05)
    try:
        cfg["BOARD_CACHE_STALE_RECHECK_S"] = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"BOARD_CACHE_STALE_RECHECK_S must be a number of seconds, "
                         f"got {raw!r}") from None
    if not 0 <= cfg["BOARD_CACHE_STALE_RECHECK_S"] <= 5:
        raise ValueError(f"BOARD_CACHE_STALE_RECHECK_S must be within 0..5, got {raw!r}")
    gpu = get("GPU_DEVICE")
    if gpu in (None, ""):
        cfg["GPU_DEVICE"] = None
    else:
        try:
            cfg["GPU_DEVICE"] = int(gpu)
        except (TypeError, ValueError):
            raise ValueError(f"GPU_DEVICE must be a device index, got {gpu!r}") from None
    # container limits: handed to harness.Limits.from_mapping, which validates them
    for name in sorted({*env, *over}):
        if name.startswith("HARNESS_"):
            cfg[name] = get(name)
    secure = _flag(get("COOKIE_SECURE", "1"))
    cfg["SESSION_COOKIE_SECURE"] = secure
    cfg["REMEMBER_COOKIE_SECURE"] = secure
    cfg["SESSION_COOKIE_HTTPONLY"] = True
    cfg["REMEMBER_COOKIE_HTTPONLY"] = True
    cfg["SESSION_COOKIE_SAMESITE"] = "Lax"
    cfg["REMEMBER_COOKIE_SAMESITE"] = "Lax"
    cfg["LOGIN_RATE_LIMIT"] = get("LOGIN_RATE_LIMIT") or "10 per minute"
    # identity (issue 35): second factor for administrators, invitations
    cfg["ADMIN_REQUIRE_2FA"] = _flag(get("ADMIN_REQUIRE_2FA", "0"))
    cfg["TWO_FACTOR_RATE_LIMIT"] = get("TWO_FACTOR_RATE_LIMIT") or "5 per minute;30 per hour"
    cfg["TOTP_ISSUER"] = get("TOTP_ISSUER") or "Leaderboard"
    raw = get("INVITE_TTL_DAYS", 7)
    if not str(raw).strip().isdigit() or not 1 <= int(raw) <= 365:
        raise ValueError(f"INVITE_TTL_DAYS must be a whole number of days from 1 to 365, "
                         f"got {raw!r}")
    cfg["INVITE_TTL_DAYS"] = int(raw)
    # judges (issue 6): the judge of benchmarks whose admin chose none (a registry name or an
    # identity such as "rules@1"), and the OpenAI-compatible backend's endpoint
    cfg["DEFAULT_JUDGE"] = get("DEFAULT_JUDGE") or "rules"
    # seconds judging may stay queued/running before the reconciler re-enqueues it
    raw = get("JUDGE_DEADLINE_S", 1800)
    if not str(raw).strip().isdigit():
        raise ValueError(f"JUDGE_DEADLINE_S must be a whole number of seconds, got {raw!r}")
    cfg["JUDGE_DEADLINE_S"] = int(raw)
    for name in ("JUDGE_OPENAI_BASE_URL", "JUDGE_OPENAI_MODEL", "JUDGE_OPENAI_API_KEY"):
        cfg[name] = get(name) or None
    # hardening (issue 7): converted and validated by leaderboard.server.web.hardening.init_app
    for name in ("REGISTER_RATE_LIMIT", "TOKEN_RATE_LIMIT", "SUBMIT_RATE_LIMIT",
                 "COMPARE_RATE_LIMIT", "COMPARE_GLOBAL_RATE_LIMIT", "MAX_BODY_BYTES",
                 "SESSION_LIFETIME_S", "REMEMBER_LIFETIME_S", "TRUSTED_PROXY_COUNT",
                 "CLIENT_BODY_TIMEOUT_S"):
        if get(name) not in (None, ""):
            cfg[name] = get(name)
    cfg["RATELIMIT_ENABLED"] = _flag(get("RATELIMIT_ENABLED", "1"))
    cfg["BOARD_WARM"] = _flag(get("BOARD_WARM", "1"))
    cfg["WTF_CSRF_ENABLED"] = _flag(get("WTF_CSRF_ENABLED", "1"))
    # Flask rejects bodies above this before our code runs; the streaming cap is the real check.
    cfg["MAX_CONTENT_LENGTH"] = (max(cfg["MAX_UPLOAD_MB"], cfg["MAX_IMAGE_MB"]) + 1) * 1024 * 1024
    cfg["TESTING"] = _flag(get("TESTING", "0"))
    _mail(cfg, get)
    # anything else the caller passed (tests) is kept as given
    for k, v in over.items():
        cfg.setdefault(k, v)
    return cfg
