"""``legal-judge run``: inputs, the ensemble and its configuration, the runner, summary, compare, export."""
