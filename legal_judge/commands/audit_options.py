"""The options ``audit run`` and ``audit stats`` share, and the settings they make (with
``--config FILE``: command-line values win)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import yaml
from pydantic import ValidationError

from legal_judge.errors import InputError, Problem

__all__ = ["audit_settings", "stat_options"]

_STAT_OPTIONS = [
    click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path),
                 help="YAML file with any of these options (command-line values win)."),
    click.option("--dimensions", help="Comma-separated dimensions (default: all built-in)."),
    click.option("--dimensions-file", help="YAML file with extra dimensions."),
    click.option("--pairs", type=int, help="Test pairs per dimension (default 60)."),
    click.option("--disparity-threshold", type=float, help="Flag pairs with |A-B| above (0.5)."),
    click.option("--significance", type=float, help="Significance threshold (0.05)."),
    click.option("--min-effect", type=float, help="Minimum |effect size| to flag (0.2)."),
    click.option("--min-complete-pairs", type=int, help="Fewer: 'insufficient data' (10)."),
    click.option("--min-sample", type=int, help="Per demographic subgroup, else stop (50)."),
    click.option("--method", type=click.Choice(["auto", "t-test", "wilcoxon"])),
    click.option("--correction", type=click.Choice(["holm", "bh", "none"])),
    click.option("--probes", help="Comma-separated discrimination probes (default: all built-in; "
                                  "'none' runs none, and nothing is then certified)."),
    click.option("--probes-file", help="YAML file with extra probes."),
    click.option("--probe-pairs", type=int, help="At most this many pairs per probe (60)."),
    click.option("--min-sensitivity", type=float,
                 help="Share of probe pairs that must move by a scale step (0.7)."),
    click.option("--equivalence-margin", type=float,
                 help="TOST margin in points (default: the disparity threshold)."),
]


def stat_options(fn: Any) -> Any:
    """Add the statistical options of an audit to a command."""
    for option in reversed(_STAT_OPTIONS):
        fn = option(fn)
    return fn


def audit_settings(config_file: Path | None, cli_values: dict[str, Any]) -> Any:
    """``(AuditSettings, extra)``: the options over ``--config``; extra holds judge/items/out.

    Raises:
        InputError: an unreadable config file, or a value the settings refuse.
    """
    from legal_judge.audit.design import AuditSettings, setting_errors

    base: dict[str, Any] = {}
    if config_file is not None:
        try:
            loaded = yaml.safe_load(config_file.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise InputError([Problem(str(config_file), None, None, f"cannot read: {exc}")]) from None
        if not isinstance(loaded, dict):
            raise InputError([Problem(str(config_file), 1, None, "expected a mapping of options")])
        base = {k.replace("-", "_"): v for k, v in loaded.items()}
    values = {**base, **{k: v for k, v in cli_values.items() if v is not None}}
    for key in ("dimensions", "probes"):
        if isinstance(values.get(key), str):
            values[key] = [d.strip() for d in values[key].split(",") if d.strip()]
    if values.get("probes") == ["none"]:
        values["probes"] = []
    extra = {k: values.pop(k) for k in ("judge", "items", "out") if k in values}
    try:
        return AuditSettings.model_validate(values), extra
    except ValidationError as exc:
        raise InputError([Problem(str(config_file or "command line"), None, field, why)
                          for field, why in setting_errors(exc)]) from None
