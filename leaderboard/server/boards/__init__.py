"""Boards: standings (ranking rules), the board service (build, cache, invalidate), the board cache,
submission reports, plots and cross-submission analyses."""
