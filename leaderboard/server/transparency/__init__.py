"""The server's side of verifiable results (issue 27).

`keys` (the signing key and the published key set, from the environment or a key folder, never
the database), `log` (the append-only Merkle-tree log: append, tree heads, proofs, entries),
`issue` (a submission's receipt, built from its rows) and `hook` (the session events that issue
receipts in the transaction that changes a submission, as the standings do). The documents and
the proof algorithms are the core's (`leaderboard.core.transparency`); the API routes are in
`leaderboard.server.web.api.transparency`.
"""
