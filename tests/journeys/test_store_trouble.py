"""Journey: the disk fills up mid-run, and a store file gets damaged (issue 20, item 11).

Before the fix both ended in ``internal error`` (exit 70, "report it") without naming the file;
``doctor`` crashed on a damaged store and ``runs list`` printed a damaged store's table as if
nothing were wrong. Now the store says which file and what to do (exit 2), and after freeing
space ``run --resume`` completes without losing a committed result.

The full disk is real: a small tmpfs mounted for the journey (CI runs as root). Where mounting is
not allowed the full-disk journey is skipped with the reason; the damaged store needs no mount.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from legal_judge.dataset import sample_dataset_path

from .conftest import Journey

TMPFS_BYTES = 16 * 2**20  # the demo store is ~1.5 MB, its WAL grows to ~4 MB before a checkpoint
LEFT_FREE = 600 * 1024  # enough for the run and a few results, not for the whole run
SAMPLE_ITEMS = 57


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs of its own, unmounted afterwards; skips when mounting is not allowed."""
    where = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    where.mkdir()
    mount = shutil.which("mount")
    if mount is None:
        pytest.skip("no `mount` command: cannot make a really full filesystem here")
    proc = subprocess.run([mount, "-t", "tmpfs", "-o", f"size={TMPFS_BYTES}", "tmpfs", str(where)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root with CAP_SYS_ADMIN): {proc.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def _fill(disk: Path, *, leave: int) -> Path:
    """Fill the filesystem until ``leave`` bytes are free; returns the filler to delete."""
    filler = disk / "filler.bin"
    free = shutil.disk_usage(disk).free
    with filler.open("wb") as f:
        f.truncate(0)
        chunk = b"\0" * 2**20
        todo = free - leave
        while todo > 0:
            todo -= f.write(chunk[: min(len(chunk), todo)])
    assert shutil.disk_usage(disk).free <= leave + 64 * 1024
    return filler


def test_full_disk_mid_run_then_free_space_and_resume(small_disk: Path, tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    journey = Journey(home=small_disk / "home", cwd=cwd)
    bench = str(sample_dataset_path())
    journey("runs", "list")  # a team's store, created on the small disk
    filler = _fill(small_disk, leave=LEFT_FREE)

    # Defect 11: "internal error: OperationalError: database or disk is full", exit 70.
    full = journey("run", bench, "--ensemble", "demo", "--quiet", expect=2)
    assert "is full" in full.err and str(journey.store_file) in full.err, full.describe()
    assert "free space" in full.err
    found = re.search(r"legal-judge run --resume (run-[\w-]+)", full.err)
    assert found, full.describe()
    run_id = found.group(1)
    ((items,),) = journey.query("SELECT COUNT(*) FROM items WHERE run_id = ?", run_id)
    before = _decisions(journey, run_id)
    verdicts = dict(_verdicts(journey, run_id))
    assert items == SAMPLE_ITEMS and len(before) < SAMPLE_ITEMS, "the disk filled too late"

    filler.unlink()  # the user frees space, then runs the command the error printed
    resumed = journey("run", "--resume", run_id, "--quiet")
    assert "completed" in resumed.out
    after = _decisions(journey, run_id)
    assert len(after) == SAMPLE_ITEMS
    assert {i: after[i] for i in before} == before  # no committed result lost or changed
    verdicts_after = dict(_verdicts(journey, run_id))
    assert {k: verdicts_after[k] for k in verdicts} == verdicts  # committed verdicts reused
    ((calls, distinct),) = journey.query(
        "SELECT COUNT(*), COUNT(DISTINCT item_id || '/' || judge) FROM judge_calls "
        "WHERE run_id = ? AND error IS NULL", run_id)
    assert distinct == SAMPLE_ITEMS * 3
    # Only judgments whose verdict was not committed before the disk filled are asked again.
    assert calls - distinct <= SAMPLE_ITEMS * 3 - len(verdicts)
    assert journey.query("SELECT status FROM runs WHERE id = ?", run_id) == [("completed",)]


def _decisions(journey: Journey, run_id: str) -> dict[str, tuple[str, str, str]]:
    rows = journey.query("SELECT item_id, status, overall, json_extract(result_json, '$.scores') "
                         "FROM ensemble_results WHERE run_id = ?", run_id)
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def _verdicts(journey: Journey, run_id: str) -> list[tuple[str, str]]:
    return journey.query("SELECT item_id || '/' || judge, verdict_json FROM verdicts "
                         "WHERE run_id = ?", run_id)


def _damage(store: Path) -> None:
    """Overwrite one page in the middle of a real store (judge calls, the bulk of the file)."""
    pages = store.stat().st_size // 4096
    with store.open("r+b") as f:
        f.seek((pages // 3) * 4096)
        f.write(b"\xde\xad\xbe\xef" * 1024)


def test_damaged_copy_of_a_real_store(journey: Journey, tmp_path: Path) -> None:
    journey("demo", "--quiet")  # a real store, made by a real run
    damaged_home = tmp_path / "damaged-home"
    shutil.copytree(journey.home, damaged_home)
    copy = Journey(home=damaged_home, cwd=journey.cwd)
    _damage(copy.store_file)
    before = copy.store_file.read_bytes()

    # Defect 11: printed the runs table as if nothing were wrong (exit 0).
    listed = copy("runs", "list", expect=2)
    assert "damaged" in listed.err and str(copy.store_file) in listed.err, listed.describe()
    assert "backup" in listed.err and "mv " in listed.err
    assert "Runs" not in listed.out

    # Defect 11: "internal error: DatabaseError: database disk image is malformed" (exit 70).
    doctor = copy("doctor", "--ensemble", "demo", expect=2)
    assert re.search(r"problem\s+store: the store .* is damaged", doctor.out), doctor.describe()

    # A run on a damaged store is refused before anything is written (old: exit 70).
    copy("run", str(sample_dataset_path()), "--ensemble", "demo", "--quiet", expect=2)
    assert copy.store_file.read_bytes() == before

    # The fix as printed: move the files aside; the next command starts an empty store.
    aside = damaged_home / "damaged"
    aside.mkdir()
    for f in damaged_home.glob("store.sqlite3*"):
        shutil.move(f, aside / f.name)
    assert "no runs yet" in copy("runs", "list").out
    assert copy.query("SELECT COUNT(*) FROM runs") == [(0,)]
    journey("runs", "list")  # the original store is untouched
