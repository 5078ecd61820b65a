"""What the checker's offline verdicts rest on, for ``legal-judge check --about``: the versions,
and the date and source of every table."""

from __future__ import annotations

from typing import Any

from legal_judge.checks.citations import checker_version
from legal_judge.checks.designators import range_tables
from legal_judge.checks.fabrications import FABRICATIONS_FILE, fabrications_about
from legal_judge.checks.rules_data import RULES_FILE, load_rules
from legal_judge.checks.volumes import load_volumes

__all__ = ["checker_about"]


def checker_about() -> dict[str, Any]:
    """The checker's version, its rules file, and each table's ``as_of`` and ``source``.

    Returns:
        A JSON-ready dict: ``checker_version``, ``rules_file``, ``rules_version`` and
        ``tables`` (a list of ``{table, as_of, source}``).
    """
    rules = load_rules()
    tables = [{"table": name, "as_of": as_of, "source": source}
              for name, as_of, source in range_tables(rules.data)]
    tables.append({
        "table": "reporter volumes (reporter_volumes.v1.yaml)",
        "as_of": load_volumes().as_of.isoformat(),
        "source": "anchor citations and West's series histories (see the file's header)",
    })
    as_of, source, count = fabrications_about()
    tables.append({"table": f"known fabrications ({FABRICATIONS_FILE.name}, {count} entries)",
                   "as_of": as_of, "source": source})
    return {
        "checker_version": checker_version(),
        "rules_file": RULES_FILE.name,
        "rules_version": rules.version,
        "tables": tables,
    }
