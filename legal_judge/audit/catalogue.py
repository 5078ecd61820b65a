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


def catalogue_rows(dimensions_file: Path | None = None,
                   probes_file: Path | None = None) -> list[dict[str, Any]]:
    """What an audit can measure: one row per bias dimension, then one per discrimination probe.

    Args:
        dimensions_file: A user's dimensions YAML, listed after the built-in dimensions.
        probes_file: A user's probes YAML, listed after the built-in probes.

    Raises:
        InputError: a defective dimensions or probes file.
    """
    from legal_judge.audit.dimensions import DIMENSIONS
    from legal_judge.audit.probes import PROBES

    dims, source = DIMENSIONS.with_file(dimensions_file)
    rows = [{"kind": "dimension", "name": d.name, "type": d.effective_kind,
             "perturbation": d.perturbation, "source": source[d.name],
             "description": d.description} for d in dims.values()]
    probes, probe_source = PROBES.with_file(probes_file)
    rows += [{"kind": "probe", "name": p.name,
              "type": f"{', '.join(p.rubrics)} must {p.direction}",
              "perturbation": p.perturbation, "source": probe_source[p.name],
              "description": p.description} for p in probes.values()]
    return rows
