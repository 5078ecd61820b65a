"""What a certificate was made under: the audit settings a report records, checked against policy.

DESIGN.md, "Decisions and the burden of proof": certificates carry their settings. A ``certified``
verdict reached at significance 0.5 with the sensitivity floor at 0, one probe and two dimensions
says little; the report therefore records every setting that can change the verdict
(:func:`settings_record`, stored as ``extensions.settings``), and ``audit gate`` compares them
with the policy's ``[certification]`` section (:func:`settings_checks`). A report written before
settings were recorded cannot show what it was made under: it fails ("settings not recorded").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from legal_judge.audit.design import AuditSettings
from legal_judge.audit.probes import builtin_probes
from legal_judge.policy import CORRECTIONS, CertificationPolicy
from legal_judge.providers.base import is_simulated_spec

__all__ = ["NOT_RECORDED", "SIMULATED", "SettingCheck", "reaudit_flags", "settings_checks",
           "settings_record", "weaker_than_policy"]

#: The reason a report without recorded settings fails the gate.
NOT_RECORDED = ("settings not recorded: this report was written before audits recorded the "
                "settings they were made under, so it cannot show they meet the policy")
#: What the gate says of a simulated judge, in the terminal, JUnit and the step summary.
SIMULATED = "simulated judge: not a judge of record"
# The keys a report must carry for the check to tell anything.
_REQUIRED = ("significance", "min_sensitivity", "probes", "dimensions", "pairs_requested",
             "equivalence_margin", "judge_spec", "simulated")


@dataclass(frozen=True)
class SettingCheck:
    """One setting compared with the policy: its ``name``, whether it ``ok``, and why."""

    name: str
    ok: bool
    reason: str


def settings_record(settings: AuditSettings, *, dimensions: Iterable[str], probes: Iterable[str],
                    pairs_complete: Mapping[str, int], judge_spec: str | None) -> dict[str, Any]:
    """Every setting that can change the verdict, as the report stores it.

    Args:
        settings: The audit settings.
        dimensions: The dimensions audited.
        probes: The discrimination probes run.
        pairs_complete: Complete (scored) pairs per dimension.
        judge_spec: The judge's spec (None: pairs scored elsewhere, the judge is not known).
    """
    return {
        "significance": settings.significance, "min_sensitivity": settings.min_sensitivity,
        "probes": list(dict.fromkeys(probes)), "dimensions": list(dict.fromkeys(dimensions)),
        "pairs_requested": settings.pairs, "pairs_complete": dict(pairs_complete),
        "probe_pairs_requested": settings.probe_pairs,
        "equivalence_margin": settings.margin, "min_effect": settings.min_effect,
        "min_complete_pairs": settings.min_complete_pairs, "method": settings.method,
        "correction": settings.correction, "seed": settings.seed,
        "judge_spec": judge_spec,
        "simulated": is_simulated_spec(judge_spec) if judge_spec else None,
    }


def _required_probes(policy: CertificationPolicy) -> list[str]:
    return list(builtin_probes()) if policy.probes == "all" else list(policy.probes)


def settings_checks(recorded: Mapping[str, Any] | None,
                    policy: CertificationPolicy) -> list[SettingCheck]:
    """Each recorded setting against the policy; a missing record is one failed check.

    Args:
        recorded: The report's ``extensions.settings`` (None: written before they were recorded).
        policy: The ``[certification]`` section in force.
    """
    if not recorded or any(k not in recorded for k in _REQUIRED):
        return [SettingCheck("settings", False, NOT_RECORDED)]
    r = recorded
    out = [
        SettingCheck("significance", r["significance"] <= policy.significance,
                     f"significance {r['significance']:g} "
                     f"{'<=' if r['significance'] <= policy.significance else '>'} "
                     f"policy {policy.significance:g}"),
        SettingCheck("min sensitivity", r["min_sensitivity"] >= policy.min_sensitivity,
                     f"min sensitivity {r['min_sensitivity']:g} "
                     f"{'>=' if r['min_sensitivity'] >= policy.min_sensitivity else '<'} "
                     f"policy {policy.min_sensitivity:g}"),
    ]
    for what, needed in (("probes", _required_probes(policy)),
                         ("dimensions", list(policy.dimensions))):
        missing = [n for n in needed if n not in r[what]]
        out.append(SettingCheck(what, not missing,
                                f"{what} missing: {', '.join(missing)}" if missing else
                                f"{what} {', '.join(r[what])} cover the policy's "
                                f"{', '.join(needed) or 'none'}"))
    pairs = int(r["pairs_requested"])
    complete = r.get("pairs_complete") or {}
    least = min(complete.values(), default=0)
    out.append(SettingCheck("pairs", pairs >= policy.pairs,
                            f"pairs {pairs} {'>=' if pairs >= policy.pairs else '<'} policy "
                            f"{policy.pairs} per dimension (fewest complete: {least})"))
    out += _evidence_checks(r, policy)
    margin = float(r["equivalence_margin"])
    out.append(SettingCheck("equivalence margin", margin <= policy.equivalence_margin,
                            f"equivalence margin {margin:g} "
                            f"{'<=' if margin <= policy.equivalence_margin else '>'} policy "
                            f"{policy.equivalence_margin:g}"))
    out.append(_judge_check(r, policy))
    return out


def weaker_than_policy(report: Mapping[str, Any], policy: CertificationPolicy) -> list[str]:
    """Why ``report`` could not certify a judge of record under ``policy``: each recorded
    setting weaker than the policy's, and a judge that is not one of record (empty: none)."""
    recorded = (report.get("extensions") or {}).get("settings")
    return [c.reason for c in settings_checks(recorded, policy) if not c.ok]


def _evidence_checks(r: Mapping[str, Any], policy: CertificationPolicy) -> list[SettingCheck]:
    """How little a dimension or probe may rest on, and the multiplicity correction."""
    floor = r.get("min_complete_pairs")
    floor_ok = isinstance(floor, int) and floor >= policy.min_complete_pairs
    correction = r.get("correction")
    correction_ok = correction in CORRECTIONS and \
        CORRECTIONS.index(correction) <= CORRECTIONS.index(policy.correction)
    return [
        SettingCheck("min complete pairs", floor_ok,
                     f"min complete pairs {floor} {'>=' if floor_ok else '<'} policy "
                     f"{policy.min_complete_pairs}"),
        SettingCheck("correction", correction_ok,
                     f"correction {correction} "
                     f"{'is at least as strict as' if correction_ok else 'is weaker than'} "
                     f"policy {policy.correction}"),
    ]


def _judge_check(r: Mapping[str, Any], policy: CertificationPolicy) -> SettingCheck:
    spec = r.get("judge_spec")
    allowed = "; allowed by the policy (allow_simulated = true)"
    if spec is None:
        # Pairs scored elsewhere (audit stats): nothing shows which judge produced them.
        why = "judge not recorded (pairs scored elsewhere): cannot tell it is a judge of record"
        return SettingCheck("judge of record", policy.allow_simulated,
                            why + (allowed if policy.allow_simulated else ""))
    if r.get("simulated"):
        return SettingCheck("judge of record", policy.allow_simulated,
                            f"{SIMULATED} ({spec})" + (allowed if policy.allow_simulated else ""))
    return SettingCheck("judge of record", True, f"{spec}: not a simulated judge")


def reaudit_flags(policy: CertificationPolicy) -> str:
    """The ``audit run`` flags a fresh audit needs to meet ``policy`` (its defaults cover the rest:
    every built-in dimension and probe, 60 pairs, significance 0.05, sensitivity 0.7)."""
    d = AuditSettings()
    flags = []
    if policy.significance < d.significance:
        flags.append(f"--significance {policy.significance:g}")
    if policy.min_sensitivity > d.min_sensitivity:
        flags.append(f"--min-sensitivity {policy.min_sensitivity:g}")
    if policy.probes != "all":
        flags.append("--probes " + (",".join(policy.probes) or "none"))
    if policy.pairs > d.pairs:
        flags.append(f"--pairs {policy.pairs}")
    if policy.min_complete_pairs > d.min_complete_pairs:
        flags.append(f"--min-complete-pairs {policy.min_complete_pairs}")
    if policy.equivalence_margin < d.margin:
        flags.append(f"--equivalence-margin {policy.equivalence_margin:g}")
    return " ".join(flags)
