"""The scoring core: packs, label tables, predictions, answer extraction, metrics, benchmarks and
scoring. It imports no Flask, no database and no Redis (a layer test enforces it), so teams score
their dev split locally with the same code the server runs (``pip install leaderboard``).
"""
