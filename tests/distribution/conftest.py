"""Server fixtures for the base-install test (a live server for `leaderboard submit`)."""
from tests.server.conftest import (  # noqa: F401
    app,
    app_config,
    auth,
    baseline_files,
    client,
    demo_packs,
    imported,
    live_server,
    make_config,
    session,
    sqlite_url,
)
