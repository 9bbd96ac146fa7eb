"""Checking a server's results from outside (issue 27), on the base install.

`receipt` verifies one receipt (signature, key window, inclusion in the log, consistency with a
saved tree head, and, given the pack and the predictions, the scores themselves); `audit` walks
the whole log and rebuilds every board. `remote` is the little HTTP client both use. The
documents and proofs are `leaderboard.core.transparency`'s; docs/verify.md is the guide.
"""
