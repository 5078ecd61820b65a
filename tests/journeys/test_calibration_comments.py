"""Journey: the lawyers' comments reach the people reviewing the calibration.

demo -> calibrate sample -> the lawyer fills the sheet with a comment on every answer she fails
(one multi-line), but one comment holds a control character and one item id was mangled ->
calibrate import refuses both rows by spreadsheet row, stores nothing (exit 2) -> fixed, import
stores the comments -> calibrate compare lists the answers the judges passed and the lawyers failed,
each with the lawyer's words -> --json and the HTML report carry them.

Defects: the sheet's comment column was read and thrown away (issue 21 item 7); an item id with a
control character was accepted by ``calibrate import`` (issue 20 item 16).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from legal_judge.dataset import sample_dataset_path

from .conftest import Journey

RUBRICS = ("legal_soundness", "citation_quality", "jurisdiction_awareness", "completeness",
           "hallucination")


def _fill(sheet: Path, out: Path, *, bell_row: int | None = None,
          bad_id_row: int | None = None) -> dict[str, str]:
    """The lawyer scores every answer as the dataset's careful lawyer did and writes her
    conclusion as the comment on every answer she fails. Returns item id -> comment."""
    meta = {r["id"]: r["metadata"] for r in map(json.loads, sample_dataset_path().read_text(
        "utf-8").splitlines()) if r}
    with sheet.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        rows, columns = list(reader), list(reader.fieldnames or [])
    comments = {}
    for k, row in enumerate(rows):
        m = meta[row["item_id"]]
        row.update({r: str(m["expected_scores"][r]) for r in RUBRICS}, annotator="lawyer_a",
                   labeled_at="2026-11-20", pass_fail="pass" if m["expected_pass"] else "fail")
        if not m["expected_pass"]:
            row["comment"] = m["lawyer_conclusion"] + "\nChecked against the official text."
            comments[row["item_id"]] = row["comment"]
        if k == bell_row:
            row["comment"] = "see\x07attached"
        if k == bad_id_row:
            row["item_id"] = row["item_id"][:3] + "\x1b" + row["item_id"][3:]
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return comments


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_lawyer_comments_are_stored_and_shown(journey: Journey) -> None:
    journey("demo", "--quiet")
    run_id = journey.query("SELECT id FROM runs WHERE kind = 'run'")[0][0]
    sheet = journey.cwd / "sheet.csv"
    journey("calibrate", "sample", run_id, "--n", "50", "--seed", "7", "--out", str(sheet))
    guide = (journey.cwd / "sheet.guide.csv").read_text("utf-8-sig")
    assert "kept in your sheet" not in guide and "shown beside the answers" in guide

    # Rows 5 and 8 of the spreadsheet (header is row 1): a bell in a comment, an ESC in an id.
    _fill(sheet, journey.cwd / "filled.csv", bell_row=3, bad_id_row=6)
    refused = journey("calibrate", "import", "filled.csv", "--run", run_id, expect=2)
    said = _flat(refused.text)
    assert "filled.csv:5: field 'comment': contains U+0007" in said, refused.describe()
    assert "filled.csv:8: field 'item_id': contains U+001B" in said, refused.describe()
    assert "unknown item" not in said and "nothing was stored" in said
    assert journey.query("SELECT COUNT(*) FROM label_comments")[0][0] == 0
    assert journey.query("SELECT COUNT(*) FROM human_labels")[0][0] == 0

    comments = _fill(sheet, journey.cwd / "filled.csv")
    imported = journey("calibrate", "import", "filled.csv", "--run", run_id)
    assert f"and {len(comments)} comment(s)" in imported.out, imported.describe()
    stored = dict(journey.query("SELECT item_id, comment FROM label_comments WHERE run_id = ?",
                                run_id))
    assert stored == comments  # multi-line text kept as written

    cmp = journey("calibrate", "compare", run_id, "--quarter", "2026-Q4")
    said = _flat(cmp.out)
    m = re.search(r"answers the judges got wrong: (\d+) passed that the lawyers failed", said)
    assert m and int(m[1]) > 0, cmp.describe()
    first = re.search(r"got wrong:.*?\n +(\S+): passed, the lawyers failed it", cmp.out, re.S)
    assert first, cmp.describe()
    # The lawyer's first words on that answer are printed under it.
    assert _flat(comments[first[1]])[:60] in said, cmp.describe()
    assert "Checked against the official text." in cmp.out
    cal_id = re.search(r"calibration id: (\S+)", cmp.out)[1]  # type: ignore[index]

    as_json = json.loads(journey("calibrate", "compare", run_id, "--quarter", "2026-Q4",
                                 "--json").out)
    assert {c["item_id"]: c["comment"] for c in as_json["lawyer_comments"]} == comments
    misses = [x for x in as_json["pass_fail_misses"] if x["judge_pass"]]
    assert misses and all(x["comments"][0]["comment"] == comments[x["item_id"]] for x in misses)

    journey("report", cal_id, "--html", "cal.html")
    html = (journey.cwd / "cal.html").read_text("utf-8")
    assert "lawyers&#39; comments" in html or "lawyers' comments" in html
    assert "Checked against the official text." in html
