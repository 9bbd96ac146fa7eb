"""The server: configuration, database and models, service functions, the data-use gate, boards,
jobs and queues, and the Flask web layer (``pip install 'leaderboard[server]'``).

Layers, lowest first: config/db/models -> services and access -> boards -> jobs -> web and cli.
Imports point down only; ``tests/test_layers.py`` enforces it and that no import cycle exists.
"""
