"""A run's figures corrected for judge error, pinned: computed once with a named calibration, stored
with that calibration's id and date, and shown as stored.

A later calibration never rewrites them (a summary that switched from 53.4% to 43.7% "transported
from" whichever calibration was newest made a finished run's figure move). The calibration is the
one the run was scored with (``run --calibration``), the run's own lawyer labels, or the one chosen
with ``calibrate estimate RUN --calibration CAL``; choosing again stores a new, named estimate and
the run shows the latest. A newer calibration of the same ensemble is only mentioned, with the
command that would use it; the policy's ``[calibration]`` age and label floor are warnings here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from legal_judge.calibration.correction import run_correction
from legal_judge.calibration.data import ensemble_judge_id
from legal_judge.calibration.estimates import estimate_run
from legal_judge.calibration.schema import RunEstimate
from legal_judge.errors import LegalJudgeError
from legal_judge.store import Store, utcnow

if TYPE_CHECKING:
    from legal_judge.policy import PolicyInForce

__all__ = [
    "CHOSEN_BY",
    "choose_estimate",
    "corrected_means",
    "described",
    "means_note",
    "pin_estimate",
    "policy_warnings",
    "shown_estimate",
]

#: How the calibration of a pinned estimate was chosen, as a sentence ({run}, {cal}, {ref}).
CHOSEN_BY = {
    "scored": "the calibration the run was scored with (--calibration {ref})",
    "labels": "this run's own lawyer labels",
    "explicit": "chosen with `legal-judge calibrate estimate {run} --calibration {cal}`",
    "latest": "the latest calibration of this ensemble when `legal-judge calibrate estimate "
              "{run}` first ran",
}


def _estimate_command(run_id: str, calibration_id: str) -> str:
    return f"legal-judge calibrate estimate {run_id} --calibration {calibration_id}"


def _row(run_id: str, est: RunEstimate, chosen_by: str) -> dict[str, Any]:
    """An estimate as a row that is not stored (a run that is not completed)."""
    return {"id": None, "run_id": run_id, "calibration_id": est.calibration_id,
            "calibration_date": est.calibration_date, "chosen_by": chosen_by, "created_at": None,
            "estimate": est.model_dump(mode="json")}


def _kept(store: Store, run_id: str, est: RunEstimate, chosen_by: str, *,
          pin: bool) -> dict[str, Any]:
    """Store an estimate as the run's latest (the same figures are not stored twice)."""
    if not pin:
        return _row(run_id, est, chosen_by)
    figures = est.model_dump(mode="json")
    latest = store.run_estimates.latest(run_id)
    if latest is not None and latest["estimate"] == figures:
        return latest
    return store.run_estimates.add(run_id, calibration_id=est.calibration_id,
                                   calibration_date=est.calibration_date, chosen_by=chosen_by,
                                   created_at=utcnow(), estimate=figures)


def pin_estimate(store: Store, run_id: str, *, calibration_id: str | None, chosen_by: str,
                 min_labels: int = 20) -> dict[str, Any] | None:
    """Compute the run's estimate with a calibration and store it as the run's latest.

    The same figures from the same calibration are not stored twice: the stored row is returned.

    Returns:
        The stored row (``estimate`` decoded), or None when nothing corrects the run.

    Raises:
        NotFoundError: no such run or calibration.
        ConfigError: the calibration measured another ensemble judge_id.
    """
    est = estimate_run(store, run_id, calibration_id=calibration_id, min_labels=min_labels)
    return None if est is None else _kept(store, run_id, est, chosen_by, pin=True)


def _automatic(store: Store, run: dict[str, Any], *, pin: bool) -> dict[str, Any] | None:
    """The estimate a run gets without a choice: with the calibration it was scored with, else
    from its own lawyer labels (with the newest calibration made on them). Stored when ``pin``."""
    run_id = run["id"]
    correction = run_correction(store, run)
    if correction is not None:
        cal_id: str | None = correction.calibration_id
        chosen = "scored"
    elif store.labels.of_run(run_id):
        own = store.calibrations.latest_of_run(run_id)
        cal_id, chosen = (str(own["id"]) if own else None), "labels"
    else:
        return None
    est = estimate_run(store, run_id, calibration_id=cal_id)
    if est is None or (chosen == "labels" and est.source != "labels"):
        return None  # labels matching none of the results: never another run's error rates
    return _kept(store, run_id, est, chosen, pin=pin)


def choose_estimate(store: Store, run_id: str, *, calibration_id: str | None = None,
                    min_labels: int = 20) -> dict[str, Any] | None:
    """``calibrate estimate RUN [--calibration CAL]``: the estimate a user chose, pinned.

    With ``calibration_id``: a new estimate with it (stored when its figures differ from the
    run's latest). Without: the run's pinned estimate, else the automatic one, else one with the
    latest calibration of the run's ensemble judge_id (pinned, named as such). A run that is not
    completed is estimated but not pinned (its results may still change).

    Raises:
        NotFoundError: no such run or calibration.
        ConfigError: the calibration measured another ensemble judge_id.
    """
    run = store.get_run(run_id)
    pin = run["status"] == "completed"
    chosen = "explicit"
    if calibration_id is None:
        found = store.run_estimates.latest(run_id) or _automatic(store, run, pin=pin)
        if found is not None:
            return found
        latest = store.calibrations.latest_report_of_judge(ensemble_judge_id(run["config"]),
                                                           not_of_run=run_id)
        if latest is None:
            return None
        calibration_id, chosen = str(latest["calibration_id"]), "latest"
    est = estimate_run(store, run_id, calibration_id=calibration_id, min_labels=min_labels)
    return None if est is None else _kept(store, run_id, est, chosen, pin=pin)


def _newer_calibration(store: Store, run: dict[str, Any],
                       row: dict[str, Any]) -> dict[str, Any] | None:
    """A calibration of the run's ensemble made after the one the pinned estimate rests on."""
    if row["chosen_by"] == "labels":
        # The run's own labels beat another run's error rates: only a newer calibration of
        # these labels is news.
        newest = store.calibrations.latest_of_run(run["id"])
    else:
        newest = store.calibrations.latest_of_judge(ensemble_judge_id(run["config"]))
    if newest is None or newest["id"] == row["calibration_id"]:
        return None
    if row["calibration_date"] is not None and newest["created_at"] <= row["calibration_date"]:
        return None
    command = _estimate_command(run["id"], newest["id"])
    return {"calibration_id": newest["id"], "created_at": newest["created_at"],
            "command": command,
            "text": f"a newer calibration exists: {newest['id']} (estimate again with "
                    f"`{command}`)"}


def _labels_of(store: Store, row: dict[str, Any]) -> int:
    """The lawyer-labelled items the pinned estimate rests on."""
    est = row["estimate"]
    if est["source"] == "labels" or row["calibration_id"] is None:
        return int(est["n_labelled_items"])
    report = store.calibrations.report(str(row["calibration_id"])) or {}
    return int(report.get("n_labelled_items") or est["pass_rate"]["n_labelled"])


def _age_days(date: str, now: datetime) -> int:
    when = datetime.fromisoformat(date)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (now - when).days


def policy_warnings(calibration_id: str | None, calibration_date: str | None, n_labels: int,
                    policy: PolicyInForce, *, now: datetime | None = None) -> list[str]:
    """Warnings when an estimate rests on a calibration older than the policy's
    ``calibration.max_age_days`` or on fewer labels than ``calibration.min_labels`` (no gate)."""
    cal = policy.calibration
    where = policy.line("calibration")
    named = calibration_id or "this run's own labels"
    out = []
    if calibration_date is not None:
        age = _age_days(calibration_date, now or datetime.now(UTC))
        if age > cal.max_age_days:
            out.append(f"the corrected figures rest on calibration {named}, {age} days old "
                       f"(made {calibration_date[:10]}): older than calibration.max_age_days = "
                       f"{cal.max_age_days} ({where})")
    if n_labels < cal.min_labels:
        out.append(f"the corrected figures rest on {n_labels} lawyer-labelled items ({named}): "
                   f"fewer than calibration.min_labels = {cal.min_labels} ({where})")
    return out


def _pin_note(run: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    run_id, status = run["id"], run["status"]
    ref = (run.get("config") or {}).get("calibration") or row["calibration_id"]
    chosen = CHOSEN_BY.get(row["chosen_by"], row["chosen_by"])
    text = chosen.format(run=run_id, cal=row["calibration_id"], ref=ref)
    pinned = row["id"] is not None
    return {"id": row["id"], "pinned": pinned, "created_at": row["created_at"],
            "calibration_id": row["calibration_id"],
            "calibration_date": row["calibration_date"], "chosen_by": row["chosen_by"],
            "chosen": text,
            "text": (f"pinned as {row['id']} on {str(row['created_at'])[:10]}" if pinned
                     else _unpinned(run_id, status))}


def _unpinned(run_id: str, status: str) -> str:
    if status == "running":
        # The summary a finishing run prints is computed just before it is marked completed.
        return "stored (pinned) when the finished run is first shown"
    return f"not pinned: run {run_id} is {status}, its results may change"


def shown_estimate(store: Store, run_id: str, *,
                   policy: PolicyInForce | None = None) -> dict[str, Any] | None:
    """The corrected figures a run shows (``runs show``, ``--json``, the report, the sync).

    The run's latest pinned estimate; for a completed run with none yet, the automatic one is
    pinned now (its calibration is fixed by the run, so when it is computed does not matter).
    The estimate's fields plus ``pin`` (its id, calibration, date and how it was chosen),
    ``newer_calibration`` (or None) and ``policy_warnings``. None when nothing corrects the run.

    Raises:
        NotFoundError: no such run.
    """
    run = store.get_run(run_id)
    completed = run["status"] == "completed"
    try:
        row = store.run_estimates.latest(run_id) or _automatic(store, run, pin=completed)
    except LegalJudgeError:
        return None  # e.g. the correction the run named is gone: nothing to show, never a crash
    return None if row is None else described(store, run, row, policy=policy)


def described(store: Store, run: dict[str, Any], row: dict[str, Any], *,
              policy: PolicyInForce | None = None) -> dict[str, Any]:
    """An estimate row as shown: its figures plus ``pin``, ``newer_calibration`` and
    ``policy_warnings`` (none without a policy)."""
    out = dict(row["estimate"])
    out["pin"] = _pin_note(run, row)
    out["newer_calibration"] = _newer_calibration(store, run, row)
    out["policy_warnings"] = ([] if policy is None else policy_warnings(
        row["calibration_id"], row["calibration_date"], _labels_of(store, row), policy))
    return out


def _method(row: dict[str, Any], est: dict[str, Any]) -> str:
    method = str(row.get("method") or "PPI")
    if est["source"] == "transported":
        return f"{method} (the judges' mean error on {est['calibration_id']})"
    return f"{method} ({row['n_labelled']} lawyer labels of this run)"


def corrected_means(corrected: dict[str, Any] | None, rubrics: dict[str, Any],
                    calibrated: dict[str, Any] | None) -> dict[str, Any]:
    """One corrected mean per rubric, named by its method, and what it answers.

    The PPI estimate (from the pinned figures) answers "what is this run's mean as the lawyers
    would score it?", with a valid 95% CI: it is the run's corrected mean wherever it exists.
    The isotonic ``--calibration`` correction answers "what would a lawyer score this answer?"
    item by item; the mean of those item scores is shown only for a rubric PPI did not correct.

    Args:
        corrected: :func:`shown_estimate` (or None).
        rubrics: The summary's rubric means (calibrated ones for a ``--calibration`` run).
        calibrated: The summary's ``calibrated`` block (None: the run applied no correction).
    """
    out: dict[str, Any] = {}
    est_rows = (corrected or {}).get("rubrics") or {}
    for rubric, m in rubrics.items():
        row = est_rows.get(rubric)
        if corrected and row and row["status"] == "corrected":
            out[rubric] = {"mean": row["corrected"], "ci95": row["corrected_ci95"],
                           "method": _method(row, corrected),
                           "answers": "the run's mean as the lawyers would score it"}
        elif calibrated and rubric in calibrated.get("raw_rubrics", {}) and \
                calibrated["raw_rubrics"][rubric]["mean"] != m["mean"]:
            out[rubric] = {"mean": m["mean"], "ci95": m["ci95"],
                           "method": f"isotonic ({calibrated['correction_id']}), mean of the "
                                     "calibrated item scores",
                           "answers": "the average of each answer's score as a lawyer would "
                                      "likely give it"}
    return out


def means_note(corrected: dict[str, Any] | None, calibrated: dict[str, Any] | None) -> str | None:
    """Which corrected figure answers which question, when a run has both kinds (else None)."""
    if not corrected or not calibrated:
        return None
    source = corrected.get("calibration_id") or "this run's lawyer labels"
    return (f"corrected mean = the run's mean as the lawyers would score it (PPI from {source}, "
            "with its 95% CI): "
            "the figure to quote for the run. The item scores were also calibrated with "
            f"{calibrated['correction_id']} (isotonic): that answers what a lawyer would likely "
            "give each answer (`legal-judge runs export`, columns ensemble.<rubric>.calibrated); "
            "their average is not a second estimate of the run's mean.")
