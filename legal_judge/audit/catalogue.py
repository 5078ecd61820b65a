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
    from legal_judge.audit.dimensions import builtin_dimensions, load_dimension_file
    from legal_judge.audit.probes import builtin_probes, load_probe_file

    dims = dict(builtin_dimensions())
    source = dict.fromkeys(dims, "built-in")
    if dimensions_file is not None:
        extra = load_dimension_file(dimensions_file)
        dims.update(extra)
        source.update(dict.fromkeys(extra, str(dimensions_file)))
    rows = [{"kind": "dimension", "name": d.name, "type": d.effective_kind,
             "perturbation": d.perturbation, "source": source[d.name],
             "description": d.description} for d in dims.values()]
    probes = dict(builtin_probes())
    probe_source = dict.fromkeys(probes, "built-in")
    if probes_file is not None:
        extra_probes = load_probe_file(probes_file)
        probes.update(extra_probes)
        probe_source.update(dict.fromkeys(extra_probes, str(probes_file)))
    rows += [{"kind": "probe", "name": p.name,
              "type": f"{', '.join(p.rubrics)} must {p.direction}",
              "perturbation": p.perturbation, "source": probe_source[p.name],
              "description": p.description} for p in probes.values()]
    return rows
