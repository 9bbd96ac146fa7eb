"""Verifiable results (issue 27): receipts, the transparency log's Merkle tree, signatures.

What the server signs and what anyone checks, with no server code: `canonical` (the one byte
encoding every signature and hash is over), `merkle` (RFC 6962 / RFC 9162 hashing, proofs and
their verification), `signing` (Ed25519 keys, key ids, published key sets with validity windows),
`receipts` (the receipt and tree-head documents, their checks) and `boards` (a board rebuilt from
the log's entries). The HTTP side of verification lives in `leaderboard.verify`; the server's
log and key handling in `leaderboard.server.transparency`. docs/verify.md is the user's guide.
"""
