"""Background work: enqueueing (`queue`), the scoring, container, judge and pack-build jobs, and the
reconciler that finds lost jobs. Jobs take ids, record state on their row and raise on failure."""
