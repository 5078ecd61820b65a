"""How pytest-xdist shares the tests out (a pytest plugin; the README runs ``-n 2 --dist loadgroup``).

Every test is its own unit of work, as with ``--dist load``, except the tests that share an
expensive session fixture: those go to one worker together, which builds the fixture once. Each
worker has its own session fixtures otherwise (its own PostgreSQL cluster, Langfuse stand-in and
stub servers, each on a free port in a folder of its own), so no test depends on which worker
runs it or on what ran before it.

The groups are folders, not ``xdist_group`` marks: xdist 3.8 marks a grouped test by rewriting
``item._nodeid``, which pytest 9 no longer reads, so marks are silently ignored there. The
controller only sees node ids, so the grouping is by path; :func:`pytest_collection_modifyitems`
warns when a test using a grouped fixture lies outside its folder (it would build the fixture
again on the other worker: slower, still correct).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

#: Terminal variables a worker starts with that the controller's shell did not set (xdist
#: workers see COLUMNS=80 and LINES=24): a module-level rich Console built under COLUMNS keeps
#: that width for the whole process, so a command invoked with another COLUMNS printed at 80.
TERMINAL_VARS = ("COLUMNS", "LINES")

#: Folder (node id prefix) -> the expensive session fixture its tests share.
GROUPS = {
    # llama-cpp-python's server with SmolLM2: a model load and ~1.5 GB per start.
    "tests/integration/": "llama_server",
    # The demo store with audits, calibrations and a debias study: ~15 s of CLI per build.
    "tests/reports/": "demo_store",
}


def group_of(nodeid: str) -> str | None:
    """The group (folder) whose tests run on one worker, or None for a test of its own."""
    return next((folder for folder in GROUPS if nodeid.startswith(folder)), None)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``: the xdist groups, plus one group per folder of :data:`GROUPS`."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class FolderGroupScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid) or super()._split_scope(nodeid)

    return FolderGroupScheduling(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Controller: tell each worker the terminal variables of the shell that ran pytest."""
    node.workerinput["legal_judge_terminal_env"] = {k: os.environ.get(k) for k in TERMINAL_VARS}


def pytest_configure(config: pytest.Config) -> None:
    """Worker: the controller's terminal variables, before any test module is imported."""
    wanted = getattr(config, "workerinput", {}).get("legal_judge_terminal_env")
    for key, value in (wanted or {}).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Warn about a test that uses a grouped fixture outside its group's folder."""
    folder_of = {fixture: folder for folder, fixture in GROUPS.items()}
    for item in items:
        for fixture in set(getattr(item, "fixturenames", ())) & set(folder_of):
            if not item.nodeid.startswith(folder_of[fixture]):
                item.warn(pytest.PytestWarning(
                    f"{fixture} is shared by the tests of {folder_of[fixture]} on one xdist "
                    f"worker; add this test's folder to tests/xdist_groups.py GROUPS"))
