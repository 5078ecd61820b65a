"""The public surface cannot change by accident (httpx's test_exported_members idea)."""

from __future__ import annotations

import legal_judge


def test_all_sorted_and_resolvable() -> None:
    assert legal_judge.__all__ == sorted(legal_judge.__all__)
    for name in legal_judge.__all__:
        assert getattr(legal_judge, name) is not None, name


def test_unknown_name_is_attribute_error() -> None:
    try:
        legal_judge.nope  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "nope" in str(exc)
    else:
        raise AssertionError("expected AttributeError")
