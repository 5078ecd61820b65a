"""Benchmark datasets: reading and checking them whole (:mod:`~legal_judge.dataset.items`), one
JSON Lines line at a time for a run (:mod:`~legal_judge.dataset.stream`), and the line decoding both
share (:mod:`~legal_judge.dataset.lines`)."""

from legal_judge.dataset.items import (
    ID_FIELDS,
    DatasetSummary,
    expected_pass_of,
    id_problem,
    load_dataset,
    normalise_expected_pass,
    read_jsonl_models,
    sample_dataset_path,
    summarize,
    validate_row,
)

__all__ = ["ID_FIELDS", "DatasetSummary", "expected_pass_of", "id_problem", "load_dataset",
           "normalise_expected_pass", "read_jsonl_models", "sample_dataset_path", "summarize",
           "validate_row"]
