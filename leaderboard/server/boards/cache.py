"""The board cache: memoised standings, cleared by generation bumps (CTFd's named invalidation).

Entries live in a per-process dict (the fast path: no I/O beyond reading generations) and, when
Redis is configured, also in Redis so that gunicorn workers share a computed board. Each entry is
stamped with the *generations* of its scope (one benchmark, or ``CROSS`` for pages that read every
benchmark) and of the whole cache; `BoardCache.invalidate` bumps them, so every process sees the
change on its next read without being told (an entry asked for with ``shared=False`` stays
in the process's dict: a large intermediate cheaper to recompute than to move through Redis):

* with Redis: generations are random tokens (``SET``) read with one ``MGET`` per lookup;
* without Redis: generations are random tokens in small files under ``state_dir`` (one host, many
  processes: the embedded setup), replaced atomically;
* with neither: in-process counters (a single process, e.g. a test without a data directory).

Reading generations costs a file read or a Redis round trip, several per page; so a process reuses
what it read for ``gen_ttl_s`` (config ``BOARD_CACHE_GEN_TTL_S``, default 0.5 s): another
process's invalidation shows within that delay, the invalidating process's own at once.

With Redis, each entry has one key whatever its generation (the value is stored with the
generations it was computed under), so a new version replaces the superseded one instead of
leaving it to expire. A stale entry is rebuilt by one process at a time (issue 16): the one that
takes the entry's lock (``SET NX`` with a TTL of ``lock_s``, config ``BOARD_CACHE_LOCK_S``,
default 5 s) computes it; the others serve the previous version meanwhile, or, when there is none
(a cold cache), wait for the new one up to ``lock_s`` before computing it themselves. A process
serving the previous version keeps it in its own dict and looks at Redis again only after
``stale_recheck_s`` (config ``BOARD_CACHE_STALE_RECHECK_S``, default 0.05 s): issue 39 measured
that without this, every request while one process recomputed an entry paid two Redis round
trips and two JSON decodes per entry (a page reads three or four), which made each request
several times slower exactly when a worker was busy recomputing: after each invalidation the
web workers stalled for 100-150 ms and the p99 of board reads rose past 100 ms.

A Redis error never fails a page: the lookup computes afresh and logs; a failed invalidation is
logged as an error, since boards would then be stale until the entry's TTL.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from leaderboard.server.config import load_config

log = logging.getLogger(__name__)

#: the scope of pages that read every benchmark (home, modality boards)
CROSS = "*cross*"
_ALL = "*all*"
_PREFIX = "lb:boards:"
#: delete a lock only if it is still ours (it may have expired and been taken by another)
_UNLOCK = ("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
           "else return 0 end")


class BoardCache:
    """Memoise board computations per ``(scope, key)``; see the module docstring."""

    def __init__(self, *, redis_client=None, state_dir: str | os.PathLike | None = None,
                 ttl_s: int = 3600, max_entries: int = 4096, gen_ttl_s: float = 0.0,
                 lock_s: float = 5.0, stale_recheck_s: float = 0.05):
        if ttl_s <= 0:
            raise ValueError(f"ttl_s must be > 0, got {ttl_s!r}")
        if gen_ttl_s < 0:
            raise ValueError(f"gen_ttl_s must be >= 0, got {gen_ttl_s!r}")
        self.redis = redis_client
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._local: dict[Hashable, tuple[tuple, Any, float]] = {}
        self._counters: dict[str, int] = {}
        # generations read less than gen_ttl_s ago are reused: another process's invalidation
        # then shows within gen_ttl_s (this process's own invalidations show at once)
        self.gen_ttl_s = gen_ttl_s
        self._gen_memo: dict[str, tuple[float, tuple]] = {}
        self._lock = threading.Lock()
        self.hits = self.misses = self.stale_served = 0
        self.lock_s = lock_s
        # a stale entry served while another process recomputes it is kept in _local (with its
        # old generations, so never taken for current) and Redis is asked again after this
        self.stale_recheck_s = stale_recheck_s
        self._recheck: dict[Hashable, float] = {}

    # -- generations ---------------------------------------------------------------------------
    def _gen_path(self, scope: str) -> Path:
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in scope)
        return self.state_dir / f"{safe}.gen"

    def _generations(self, scope: str) -> tuple:
        if self.gen_ttl_s:
            now = time.monotonic()
            memo = self._gen_memo.get(scope)
            if memo is not None and now - memo[0] < self.gen_ttl_s:
                return memo[1]
            gens = self._read_generations(scope)
            self._gen_memo[scope] = (now, gens)
            return gens
        return self._read_generations(scope)

    def version(self, scope: str) -> str:
        """A short token that changes whenever ``scope``'s entries are invalidated (a page
        cursor carries it: a cursor made before a change is not trusted after it)."""
        import hashlib
        return hashlib.blake2s(repr(self._generations(scope)).encode(),
                               digest_size=4).hexdigest()

    def _read_generations(self, scope: str) -> tuple:
        # A missing generation gets a fresh random token, never a fixed "0": after Redis is
        # flushed (or the state directory wiped) every entry cached before must miss.
        if self.redis is not None:
            keys = [_PREFIX + "gen:" + _ALL, _PREFIX + "gen:" + scope]
            vals = self.redis.mget(keys)
            out = []
            for key, v in zip(keys, vals):
                if v is None:
                    self.redis.set(key, uuid.uuid4().hex, nx=True)
                    v = self.redis.get(key)
                out.append(v.decode() if isinstance(v, bytes) else str(v))
            return tuple(out)
        if self.state_dir is not None:
            out = []
            for s in (_ALL, scope):
                try:
                    out.append(self._gen_path(s).read_text())
                except FileNotFoundError:
                    self._bump(s)
                    out.append(self._gen_path(s).read_text())
            return tuple(out)
        return (self._counters.get(_ALL, 0), self._counters.get(scope, 0))

    def _bump(self, scope: str) -> None:
        if self.redis is not None:
            self.redis.set(_PREFIX + "gen:" + scope, uuid.uuid4().hex)
        elif self.state_dir is not None:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            path = self._gen_path(scope)
            tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
            tmp.write_text(uuid.uuid4().hex)
            os.replace(tmp, path)  # atomic: a reader sees the old token or the new one
        else:
            with self._lock:
                self._counters[scope] = self._counters.get(scope, 0) + 1

    # -- public API ----------------------------------------------------------------------------
    def get_or_compute(self, scope: str, key: Hashable, compute: Callable[[], Any], *,
                       shared: bool = True) -> Any:
        """The cached value of ``key`` in ``scope``, computing (and storing) it on a miss.

        Values must survive a JSON round trip when Redis is configured (boards are plain dicts).
        With Redis, one process at a time computes a given entry (a ``SET NX`` lock with a
        short TTL): while it runs, the others serve the previous version (stale while
        revalidate) or, when there is none, wait for the new one (at most ``lock_s``).
        ``shared=False`` keeps the entry in this process only (still cleared by `invalidate`):
        for a large intermediate that the pages made from it make cheap to lose, where
        encoding it into Redis costs more than computing it again.
        """
        try:
            gens = self._generations(scope)
        except Exception:  # noqa: BLE001 - a cache outage must not fail the page
            log.warning("board cache unavailable; computing scope=%s", scope, exc_info=True)
            self.misses += 1
            return compute()
        local_key = (scope, key)
        found = self._local.get(local_key)
        now = time.monotonic()
        if found is not None and found[0] == gens and found[2] > now:
            self.hits += 1
            return found[1]
        if found is not None and self._recheck.get(local_key, 0.0) > now:
            self.stale_served += 1  # another process is recomputing it: ask Redis later
            return found[1]
        if self.redis is None or not shared:
            self.misses += 1
            value = compute()
        else:
            envelope = self._redis_get(scope, key)
            if envelope is not None and envelope[0] == gens:
                self.hits += 1
                value = _value(envelope[1])
            else:
                # the previous version, still encoded: decoded only if it is served (a
                # rebuild that takes the lock never reads it; issue 37: a 1.4 MB matrix entry
                # was decoded twice per rebuild, 30-60 ms and a full GC pass in the request)
                stale = envelope if envelope is not None else (
                    None if found is None else (found[0], _Decoded(found[1])))
                value, fresh = self._revalidate(scope, key, gens, compute, stale)
                if not fresh:
                    # stale: served, kept under generations marked stale (never current)
                    # and not looked up in Redis again for stale_recheck_s
                    marked = stale[0]
                    if not marked or marked[0] != "stale":
                        marked = ("stale", *marked)
                    with self._lock:
                        self._local[local_key] = (marked, value, now + self.ttl_s)
                        self._recheck[local_key] = now + self.stale_recheck_s
                    return value
        with self._lock:
            self._recheck.pop(local_key, None)
            if len(self._local) >= self.max_entries:
                self._local.clear()  # crude but bounded; boards are recomputed on demand
                self._recheck.clear()
            self._local[local_key] = (gens, value, now + self.ttl_s)
        return value

    def _revalidate(self, scope: str, key: Hashable, gens: tuple, compute, stale):
        """(value, fresh): compute under the entry's lock, else the stale value, else wait."""
        lock = self._redis_key(scope, key) + ":lock"
        token = uuid.uuid4().hex
        deadline = time.monotonic() + self.lock_s
        while True:
            envelope = None
            try:
                # the lock and a fresh read in one round trip: another process may have
                # published the entry between our read and the lock (issue 25: a cold page
                # paid six round trips per entry, now three)
                pipe = self.redis.pipeline(transaction=False)
                pipe.set(lock, token, nx=True, px=int(self.lock_s * 1000))
                pipe.get(self._redis_key(scope, key))
                got_raw, raw = pipe.execute()
                got = bool(got_raw)
                envelope = _envelope(raw)
            except Exception:  # noqa: BLE001
                log.warning("board cache lock failed scope=%s", scope, exc_info=True)
                got = True  # Redis trouble: compute without the lock rather than wait
            if got:
                if envelope is not None and envelope[0] == gens:
                    self.hits += 1
                    self._unlock(lock, token)
                    return _value(envelope[1]), True
                self.misses += 1
                try:
                    value = compute()
                except BaseException:
                    self._unlock(lock, token)
                    raise
                self._publish(scope, key, gens, value, lock, token)
                return value, True
            if stale is not None:
                self.stale_served += 1
                return _value(stale[1]), False
            if time.monotonic() >= deadline:
                self.misses += 1
                return compute(), True  # the lock holder is slow or gone
            time.sleep(0.01)
            envelope = self._redis_get(scope, key)
            if envelope is not None and envelope[0] == gens:
                self.hits += 1
                return _value(envelope[1]), True

    def _unlock(self, lock: str, token: str) -> None:
        try:
            self.redis.eval(_UNLOCK, 1, lock, token)
        except Exception:  # noqa: BLE001 - the lock's TTL frees it anyway
            log.warning("board cache unlock failed", exc_info=True)

    def invalidate(self, benchmark_key: str | None = None) -> None:
        """Drop every board of ``benchmark_key`` and every cross-benchmark page; None = all."""
        scopes = [_ALL] if benchmark_key is None else [benchmark_key, CROSS]
        with self._lock:
            self._gen_memo.clear()
            if benchmark_key is None:
                self._local.clear()
                self._recheck.clear()
            else:
                for k in [k for k in self._local if k[0] in scopes]:
                    del self._local[k]
                    self._recheck.pop(k, None)
        try:
            for scope in scopes:
                self._bump(scope)
        except Exception:  # noqa: BLE001
            log.error("board cache invalidation failed benchmark=%s", benchmark_key,
                      exc_info=True)

    def __len__(self) -> int:
        return len(self._local)

    # -- Redis second level --------------------------------------------------------------------
    def _redis_key(self, scope: str, key: Hashable) -> str:
        # one key per entry, whatever the generation: a new version replaces the superseded
        # one instead of leaving it to expire (issue 16: Redis kept every old board for an hour)
        return f"{_PREFIX}v:{scope}:{json.dumps(key, default=str)}"

    def _redis_get(self, scope: str, key: Hashable):
        """(generations, the value still encoded) stored for the entry, or None."""
        try:
            raw = self.redis.get(self._redis_key(scope, key))
        except Exception:  # noqa: BLE001
            log.warning("board cache read failed scope=%s", scope, exc_info=True)
            return None
        return _envelope(raw)

    def _publish(self, scope: str, key: Hashable, gens: tuple, value: Any, lock: str,
                 token: str) -> None:
        """Store the entry and release its lock in one round trip."""
        try:
            pipe = self.redis.pipeline(transaction=False)
            pipe.set(self._redis_key(scope, key), _encode(gens, value), ex=self.ttl_s)
            pipe.eval(_UNLOCK, 1, lock, token)
            pipe.execute()
        except Exception:  # noqa: BLE001 - the lock's TTL frees it anyway
            log.warning("board cache write failed scope=%s", scope, exc_info=True)


class _Decoded:
    """A value already decoded (this process's own copy), where `_value` expects JSON text."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def _encode(gens: tuple, value: Any) -> str:
    """A Redis entry: its generations' JSON, a newline, the value's JSON (compact JSON has no
    raw newline), so that a reader compares generations without decoding the value."""
    return json.dumps(list(gens)) + "\n" + json.dumps(value)


def _envelope(raw):
    """(generations, the value's JSON text) of a stored entry, or None (none, or an entry of
    another format: a miss, recomputed). The value is decoded by `_value` when served."""
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = raw.encode()
    head, sep, body = raw.partition(b"\n")
    if not sep:
        return None
    try:
        gens = json.loads(head)
    except ValueError:
        return None
    return (tuple(gens), body) if isinstance(gens, list) else None


def _value(encoded) -> Any:
    return encoded.value if isinstance(encoded, _Decoded) else json.loads(encoded)


def cache_from_config(config) -> BoardCache:
    """A cache for an app's (or a worker's) configuration: Redis if ``REDIS_URL``, else files."""
    redis_client = None
    if config.get("REDIS_URL"):
        import redis
        redis_client = redis.Redis.from_url(config["REDIS_URL"], socket_timeout=2)
    state_dir = Path(config["DATA_DIR"]) / "board-cache" if config.get("DATA_DIR") else None
    return BoardCache(redis_client=redis_client, state_dir=state_dir,
                      ttl_s=int(config.get("BOARD_CACHE_TTL_S", 3600)),
                      gen_ttl_s=float(config.get("BOARD_CACHE_GEN_TTL_S", 0.5)),
                      lock_s=float(config.get("BOARD_CACHE_LOCK_S", 5.0)),
                      stale_recheck_s=float(config.get("BOARD_CACHE_STALE_RECHECK_S", 0.05)))


_fallback_cache: BoardCache | None = None


def get_cache() -> BoardCache:
    """The cache of the current app (built from its config), else one from the environment."""
    global _fallback_cache
    try:
        from flask import current_app, has_app_context
    except ImportError:  # pragma: no cover - Flask is a server dependency
        has_app_context = lambda: False  # noqa: E731
    if has_app_context():
        app = current_app._get_current_object()
        cache = app.extensions.get("lb_board_cache")
        if cache is None:
            cache = app.extensions["lb_board_cache"] = cache_from_config(app.config)
        return cache
    if _fallback_cache is None:
        _fallback_cache = cache_from_config(load_config())
    return _fallback_cache


def invalidate_boards(benchmark_key: str | None = None) -> None:
    """Clear cached boards of ``benchmark_key`` (and every cross-benchmark page); None = all.

    Call after the commit that changed scores or visibility, never before (a reader could
    otherwise cache the old rows again).
    """
    get_cache().invalidate(benchmark_key)
