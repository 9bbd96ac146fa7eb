"""Data-use agreements and the gate in front of every dataset download (design: "Data-use
agreements").

- `gate.can_access` is the one decision point for gated actions; every request asks it afresh.
- `agreements` (sign), `decisions` (approve / deny / revoke) change access requests.
- `downloads` issues and serves signed, expiring links.
- `audit.record` appends to the append-only audit log.
"""
