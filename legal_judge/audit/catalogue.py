"""What an audit measures, as rows: the listing behind ``legal-judge audit dimensions``.

One row per bias dimension (built-in, or from a user's dimensions file) and, once the audit has them,
per discrimination probe; every row has ``kind`` (``dimension`` / ``probe``), ``name``, ``type``,
``perturbation``, ``source`` and ``description``. The command renders whatever rows this returns, so
new kinds of check appear by adding rows here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["catalogue_rows"]


def catalogue_rows(dimensions_file: Path | None = None) -> list[dict[str, Any]]:
    """What an audit can measure, one row per dimension (and per discrimination probe).

    Raises:
        InputError: a defective dimensions file.
    """
    from legal_judge.audit.dimensions import builtin_dimensions, load_dimension_file

    dims = dict(builtin_dimensions())
    source = dict.fromkeys(dims, "built-in")
    if dimensions_file is not None:
        extra = load_dimension_file(dimensions_file)
        dims.update(extra)
        source.update(dict.fromkeys(extra, str(dimensions_file)))
    return [{"kind": "dimension", "name": d.name, "type": d.effective_kind,
             "perturbation": d.perturbation, "source": source[d.name],
             "description": d.description} for d in dims.values()]
