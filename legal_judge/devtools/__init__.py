"""Developer tools: measuring stubs for benchmarks and tests (not for production)."""
