"""What an audit measures, as rows: the listing behind ``legal-judge audit dimensions``.

One row per bias dimension (built-in, or from a user's dimensions file) and, once the audit has them,
per discrimination probe; every row has ``kind`` (``dimension`` / ``probe``), ``name``, ``type``,
``perturbation``, ``source`` and ``description``. The command renders whatever rows this returns, so
new kinds of check appear by adding rows here.
"""

from __future__ import annotations

from collections.abc import Callable
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

    dims, source = _with_file(builtin_dimensions(), dimensions_file, load_dimension_file)
    rows = [{"kind": "dimension", "name": d.name, "type": d.effective_kind,
             "perturbation": d.perturbation, "source": source[d.name],
             "description": d.description} for d in dims.values()]
    probes, probe_source = _with_file(builtin_probes(), probes_file, load_probe_file)
    rows += [{"kind": "probe", "name": p.name,
              "type": f"{', '.join(p.rubrics)} must {p.direction}",
              "perturbation": p.perturbation, "source": probe_source[p.name],
              "description": p.description} for p in probes.values()]
    return rows


def _with_file(builtin: dict[str, Any], path: str | Path | None,
               load: Callable[[str | Path], dict[str, Any]]
               ) -> tuple[dict[str, Any], dict[str, str]]:
    """The built-in entries, then a user file's (a same-named one replaces the built-in), and
    where each comes from."""
    entries = dict(builtin)
    source = dict.fromkeys(entries, "built-in")
    if path is not None:
        extra = load(path)
        entries.update(extra)
        source.update(dict.fromkeys(extra, str(path)))
    return entries, source
