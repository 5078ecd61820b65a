"""Validate and store lawyers' labels (files are read by :mod:`legal_judge.calibration.label_sheet`).

Every defect is collected with its line and field and raised as one :class:`InputError`; nothing is
stored then. The lawyer's ``comment`` cell (free text, may span lines) is stored with the labels,
once per item, run and annotator, and shown beside the answers the judges got wrong.

A label judges one run's answer, not the question: the same benchmark is re-run every quarter with
a new model, so labels are keyed by item, run, rubric and annotator and each quarter keeps its own.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from legal_judge.calibration.label_sheet import RawComment, RawLabel, cell_text, read_label_sheet
from legal_judge.calibration.rubrics import RubricSpec, with_pass_fail
from legal_judge.calibration.schema import ImportSummary, LawyerComment
from legal_judge.dataset import id_problem
from legal_judge.errors import InputError, Problem
from legal_judge.store import Store
from legal_judge.sync.outbox import EntityKind, enqueue

__all__ = ["Label", "import_labels", "load_comments", "load_labels", "store_raw_labels",
           "validate_comments", "validate_labels"]


@dataclass(frozen=True)
class Label:
    """One validated lawyer's score."""

    item_id: str
    run_id: str | None
    rubric: str
    score: float | str
    annotator: str
    labeled_at: str
    line: int = 0


def _parse_date(text: str) -> str | None:
    # A date without a zone is the lawyer's day or time; it is recorded as UTC.
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).isoformat()


def _item_problems(raw: RawLabel | RawComment, file: str,
                   known: dict[str, set[str]]) -> list[Problem]:
    """The row's item and run: present, printable (the dataset's id rule), known."""
    if not raw.item_id:
        return [Problem(file, raw.line, "item_id", "item_id is empty")]
    if (why := id_problem(raw.item_id)) is not None:
        return [Problem(file, raw.line, "item_id", why)]
    if raw.run_id and (why := id_problem(raw.run_id)) is not None:
        return [Problem(file, raw.line, "run_id", why)]
    if raw.item_id not in known:
        return [Problem(file, raw.line, "item_id", f"unknown item '{raw.item_id}'")]
    if raw.run_id and raw.run_id not in known[raw.item_id]:
        return [Problem(file, raw.line, "run_id",
                        f"item '{raw.item_id}' is not in run '{raw.run_id}'")]
    return []


def _who_problems(raw: RawLabel | RawComment, file: str) -> tuple[str | None, list[Problem]]:
    """The row's annotator and date: the parsed date, or the problems."""
    problems = []
    if not raw.annotator:
        problems.append(Problem(file, raw.line, "annotator", "annotator is missing"))
    labeled_at = _parse_date(raw.labeled_at) if raw.labeled_at else None
    if labeled_at is None:
        problems.append(Problem(file, raw.line, "labeled_at",
                                f"bad date '{raw.labeled_at}': use ISO 8601, e.g. 2026-11-03"))
    return labeled_at, problems


def _check_one(raw: RawLabel, file: str, specs: dict[str, RubricSpec],
               known: dict[str, set[str]]) -> tuple[Label | None, list[Problem]]:
    problems = _item_problems(raw, file, known)
    spec = specs.get(raw.rubric)
    score: float | str | None = None
    if spec is None:
        problems.append(Problem(file, raw.line, "rubric", f"unknown rubric '{raw.rubric}' "
                                f"(known: {', '.join(specs)})"))
    else:
        score, why = spec.parse(raw.score)
        if why:
            problems.append(Problem(file, raw.line, raw.rubric if raw.rubric else "score", why))
    labeled_at, who = _who_problems(raw, file)
    problems += who
    if problems or score is None or labeled_at is None:
        return None, problems
    run_id = _run_of(raw, known)
    return Label(raw.item_id, run_id, raw.rubric, score, raw.annotator, labeled_at, raw.line), []


def _run_of(raw: RawLabel | RawComment, known: dict[str, set[str]]) -> str | None:
    """The run a label judges: its own run_id, else the one run holding the item, else None."""
    runs = known.get(raw.item_id, set())
    return raw.run_id or (next(iter(runs)) if len(runs) == 1 else None)


def _ambiguous_run(raw: RawLabel | RawComment, file: str, known: dict[str, set[str]]) -> Problem | None:
    """A run-less label for an item id that several runs hold: which answer it judges is unknown.

    The same benchmark is re-run every quarter with another model, so an item id names a question
    whose answer differs from run to run; guessing would score one run's answer against another's.
    """
    runs = known.get(raw.item_id, set())
    if raw.run_id or len(runs) < 2:
        return None
    return Problem(file, raw.line, "run_id",
                   f"item '{raw.item_id}' is in {len(runs)} runs ({', '.join(sorted(runs))}) and "
                   "the label names none: add a run_id column or pass --run RUN_ID")


def validate_labels(
    raws: list[RawLabel], *, file: str, specs: dict[str, RubricSpec], known: dict[str, set[str]]
) -> tuple[list[Label], list[Problem]]:
    """Check every raw label: known item and rubric, score on the scale, annotator, date, duplicates.

    A label judges one run's answer. Without a ``run_id`` it takes the run of its item when exactly
    one run holds that item id; an item id held by several runs is a problem (which answer?).

    Args:
        raws: Labels as read.
        file: File name for the problems.
        specs: Rubric scales.
        known: Item id -> the runs that hold it (empty sets when runs are unknown: files mode).

    Returns:
        The valid labels and every problem found.
    """
    labels, problems = [], []
    specs = with_pass_fail(specs)
    seen: dict[tuple[str, str, str, str], int] = {}
    ambiguous: set[int] = set()
    for raw in raws:
        label, found = _check_one(raw, file, specs, known)
        problems += found
        unsure = _ambiguous_run(raw, file, known)
        if unsure is not None:
            # One problem per line: a template row holds one cell per rubric.
            if raw.line not in ambiguous:
                problems.append(unsure)
            ambiguous.add(raw.line)
            continue
        key = (raw.item_id, _run_of(raw, known) or "", raw.rubric, raw.annotator)
        if raw.item_id and raw.annotator and key in seen:
            problems.append(Problem(file, raw.line, raw.rubric or "rubric",
                                    f"duplicate label for item '{raw.item_id}', rubric "
                                    f"'{raw.rubric}', annotator '{raw.annotator}' (first on line "
                                    f"{seen[key]})"))
            continue
        seen.setdefault(key, raw.line)
        if label is not None:
            labels.append(label)
    return labels, _one_message(problems, ambiguous, file, known)


def _one_message(problems: list[Problem], lines: set[int], file: str,
                 known: dict[str, set[str]]) -> list[Problem]:
    """Many run-less rows say one thing (grouped with their rows by InputError), not one each."""
    if len(lines) < 2:
        return problems
    runs = sorted({r for rs in known.values() if len(rs) > 1 for r in rs})
    said = (f"run_id missing, and their items are in several runs ({', '.join(runs)}): add a "
            "run_id column or pass --run RUN_ID")
    return [Problem(file, p.line, "run_id", said)
            if p.field == "run_id" and p.line in lines and "the label names none" in p.message
            else p for p in problems]


@dataclass(frozen=True)
class Comment:
    """One lawyer's validated comment on one run's answer (several cells of one item, run and
    annotator are joined, each once, in row order)."""

    item_id: str
    run_id: str | None
    annotator: str
    text: str
    labeled_at: str
    line: int = 0


def _comment_text(raw: RawComment, file: str) -> tuple[str | None, Problem | None]:
    """The comment as stored: line breaks (any convention) kept as ``\n``, tabs kept, other
    control characters refused (they corrupt the tables, exports and Langfuse views showing it)."""
    value = raw.text
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None, Problem(file, raw.line, "comment",
                             f"expected text, got {type(value).__name__}: write the comment as text")
    text = cell_text(value.replace("\r\n", "\n").replace("\r", "\n"))
    for pos, ch in enumerate(text, start=1):
        if ch not in "\n\t" and unicodedata.category(ch) == "Cc":
            return None, Problem(file, raw.line, "comment",
                                 f"contains U+{ord(ch):04X} (a control character) at character "
                                 f"{pos}: remove it (line breaks and tabs are kept)")
    return text, None


def validate_comments(
    raws: list[RawComment], *, file: str, known: dict[str, set[str]]
) -> tuple[list[Comment], list[Problem]]:
    """Check every comment cell: known item and run (as for its row's labels), annotator, date,
    printable text. Problems of the row that its labels also have are the same problems (the
    import reports each once).

    Returns:
        One :class:`Comment` per item, run and annotator, and every problem found.
    """
    grouped: dict[tuple[str, str, str], Comment] = {}
    problems: list[Problem] = []
    for raw in raws:
        found = _item_problems(raw, file, known)
        labeled_at, who = _who_problems(raw, file)
        text, bad = _comment_text(raw, file)
        found += who + ([bad] if bad else [])
        unsure = _ambiguous_run(raw, file, known)
        if unsure is not None:
            found.append(unsure)
        if found or text is None or labeled_at is None:
            problems += found
            continue
        if not text:
            continue
        run_id = _run_of(raw, known)
        key = (raw.item_id, run_id or "", raw.annotator)
        prior = grouped.get(key)
        if prior is None:
            grouped[key] = Comment(raw.item_id, run_id, raw.annotator, text, labeled_at, raw.line)
        elif f"\n{text}\n" not in f"\n{prior.text}\n":
            grouped[key] = Comment(prior.item_id, run_id, raw.annotator,
                                   f"{prior.text}\n{text}", prior.labeled_at, prior.line)
    return list(grouped.values()), problems


def _known_items(store: Store, run_id: str | None) -> dict[str, set[str]]:
    if run_id is not None:
        store.get_run(run_id)
    known: dict[str, set[str]] = defaultdict(set)
    for rid, item_id in store.item_keys(run_id):
        known[item_id].add(rid)
    return known


def import_labels(
    store: Store, path: Path, specs: dict[str, RubricSpec], *, run_id: str | None = None,
    replace: bool = False,
) -> ImportSummary:
    """Validate a label file and store all of it in one transaction, or nothing.

    Args:
        store: Destination store.
        path: CSV or JSONL labels (long or wide layout).
        specs: Rubric scales to validate against.
        run_id: Restrict items to this run (otherwise any item of the store).
        replace: Overwrite labels already stored for the same item, run, rubric and annotator
            with a different score (without it, such a conflict is a problem). A label of
            another run of the same item id never conflicts: each run's answer has its own.

    Returns:
        An :class:`ImportSummary`.

    Raises:
        InputError: every problem, with its spreadsheet row and field, each once; nothing is
            stored.
    """
    sheet = read_label_sheet(path, specs)
    return store_raw_labels(store, sheet.labels, sheet.problems, specs, origin=str(path),
                            source=f"file:{path.name}", run_id=run_id, replace=replace,
                            comments=sheet.comments)


def store_raw_labels(
    store: Store, raws: list[RawLabel], problems: list[Problem], specs: dict[str, RubricSpec], *,
    origin: str, source: str, run_id: str | None = None, replace: bool = False,
    send: bool = True, comments: list[RawComment] | None = None,
) -> ImportSummary:
    """Validate raw labels (from a file or from Langfuse) and store all of them, or nothing.

    Args:
        origin: Where the labels came from, for the problems (a file name, a queue).
        source: Stored with each label (``file:NAME``, ``langfuse:queue/ID``).
        send: Queue the labels for Langfuse as ANNOTATION scores (False for labels read from
            Langfuse: they are there already). The runs are queued either way (their corrected
            figures change); the sync never sends back a label whose source is ``langfuse:``.
        comments: The lawyers' comment cells, validated and stored with the labels (a stored
            comment that differs is a conflict, as a score is, unless ``replace``).

    Raises:
        InputError: every problem, each once; nothing is stored.
    """
    known_run = _known_items(store, run_id)
    labels, found = validate_labels(raws, file=origin, specs=specs, known=known_run)
    notes, bad_notes = validate_comments(comments or [], file=origin, known=known_run)
    problems = [*problems, *found, *bad_notes]
    if not raws and not problems:
        problems.append(Problem(origin, None, None, "no scores found"))
    stored = store.labels.scores()
    fresh, changed = [], []
    for label in labels:
        old = stored.get(_key(label))
        if old is None:
            fresh.append(label)
        elif old != _as_text(label.score):
            if not replace:
                problems.append(Problem(origin, label.line, label.rubric,
                                        f"already stored with score {old} for annotator "
                                        f"'{label.annotator}'{_in_run(label)}; rerun with "
                                        "--replace to overwrite"))
            changed.append(label)
    stored_notes = store.labels.comments()
    new_notes = []
    for note in notes:
        old_note = stored_notes.get((note.item_id, note.run_id or "", note.annotator))
        if old_note == note.text:
            continue
        if old_note is not None and not replace:
            problems.append(Problem(origin, note.line, "comment",
                                    f"a different comment of annotator '{note.annotator}' is "
                                    f"already stored for item '{note.item_id}'; rerun with "
                                    "--replace to overwrite it"))
        new_notes.append(note)
    if problems:
        # A template row holds one cell per rubric: its missing annotator is one problem.
        raise InputError(list(dict.fromkeys(problems)),
                         fix="correct the rows listed above; nothing was stored")
    known = _known_items(store, None)
    runs = {r for x in fresh + changed for r in ([x.run_id] if x.run_id else known.get(x.item_id, set()))}
    with store.transaction():
        for label in fresh + changed:
            store.labels.upsert(item_id=label.item_id, run_id=label.run_id, rubric=label.rubric,
                                score=_as_text(label.score), annotator=label.annotator,
                                labeled_at=label.labeled_at, source=source)
        for note in new_notes:
            store.labels.upsert_comment(item_id=note.item_id, run_id=note.run_id,
                                        annotator=note.annotator, comment=note.text,
                                        labeled_at=note.labeled_at, source=source)
        # The runs' labels as ANNOTATION scores and their corrected figures. Labels read from
        # Langfuse (``send`` off) are queued alike: the sync skips labels whose source is
        # ``langfuse:``, so only the corrected figures are resent and nothing is duplicated.
        for run_id in sorted(runs):
            enqueue(store, EntityKind.HUMAN_LABELS, run_id)
    return ImportSummary(
        file=origin, labels=len(fresh) + len(changed), items=len({x.item_id for x in labels}),
        annotators=sorted({x.annotator for x in labels}), rubrics=sorted({x.rubric for x in labels}),
        replaced=len(changed), unchanged=len(labels) - len(fresh) - len(changed),
        comments=len(new_notes),
    )


def _as_text(score: float | str) -> str:
    return score if isinstance(score, str) else repr(float(score))


def _key(label: Label) -> tuple[str, str, str, str]:
    """The stored identity of a label, as the store's unique index ``human_labels_key`` has it."""
    return (label.item_id, label.run_id or "", label.rubric, label.annotator)


def _in_run(label: Label) -> str:
    return f" in run '{label.run_id}'" if label.run_id else ""


def load_labels(store: Store, run_id: str, specs: dict[str, RubricSpec]) -> list[Label]:
    """The labels of a run's answers: one per item, rubric and annotator.

    A label tied to the run wins; a run-less one (stores from before labels carried their run)
    counts only where the run has none. Labels tied to another run are left out.

    Args:
        store: The store.
        run_id: The run whose items count.
        specs: Rubric scales, to decode stored scores.

    Returns:
        Labels of known rubrics, in import order.
    """
    out = []
    specs = with_pass_fail(specs)
    for item_id, rid, rubric, score, annotator, labeled_at in store.labels.of_run(run_id):
        spec = specs.get(rubric)
        if spec is not None:
            value: float | str = score if spec.kind == "categorical" else float(score)
            out.append(Label(item_id, rid, rubric, value, annotator, labeled_at))
    return out


def load_comments(store: Store, run_id: str) -> list[LawyerComment]:
    """The lawyers' comments on a run's answers (the same run rule as :func:`load_labels`)."""
    return [LawyerComment(**row) for row in store.labels.comments_of_run(run_id)]
