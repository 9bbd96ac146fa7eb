"""Synthetic-media detection leaderboard.

The scoring core (packs, predictions, metrics, scoring) imports no Flask, no database and no Redis,
so teams can score their dev-split predictions locally with the same code the server runs.
"""
