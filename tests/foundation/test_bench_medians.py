"""``scripts/bench.py --repeats N`` judges each target on the median of the cell's runs, not on
whichever run came last (this machine's speed changes by up to 2x within minutes)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).parents[2] / "scripts" / "bench.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_script", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_script"] = module
    spec.loader.exec_module(module)
    return module


def _row(mode: str, items: int, ratio: float, cpu: float, speedup: float,
         calls: int = 0) -> dict[str, object]:
    return {"mode": mode, "items": items, "ratio": ratio, "ours_cpu": 2.0 + cpu, "bare_cpu": 2.0,
            "speedup": speedup, "cached_calls": calls}


def test_each_cell_is_judged_on_its_median(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench()
    rows = [_row("keep-alive", 1000, 1.00, 0.1, 71.0), _row("keep-alive", 1000, 1.10, 0.9, 48.0),
            _row("keep-alive", 1000, 1.02, 0.2, 55.0),
            _row("HTTP/1.0 close", 300, 1.01, 0.6, 40.0),
            _row("HTTP/1.0 close", 300, 1.08, 0.7, 60.0, calls=3),
            _row("HTTP/1.0 close", 1000, 1.0, 0.0, 90.0)]  # run once: no median line
    medians = bench.median_rows(rows)
    assert [(m["mode"], m["items"], m["n"]) for m in medians] == [
        ("keep-alive", 1000, 3), ("HTTP/1.0 close", 300, 2)]
    keep = medians[0]
    assert keep["ratio"] == (1.02, 1.00, 1.10) and keep["speedup"] == (55.0, 48.0, 71.0)
    assert keep["cpu"][0] == pytest.approx(0.2)
    bench.print_medians(rows)
    out = capsys.readouterr().out.splitlines()
    assert out[-2].endswith("ratio met, CPU met, cached met")
    # A cell whose median misses (or whose rerun made a call) says so.
    assert out[-1].endswith("ratio met, CPU NOT met, cached NOT met")
