"""What is computed from a model or a run: the analytic fast path, critical path, performance properties,
replications, pattern composition and the exact sums behind the statistics."""
