"""The audit's two catalogues (bias dimensions, discrimination probes) follow one set of rules:
a user's file is read, checked and merged the same way, and an unknown name is refused alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from legal_judge.audit.dimensions import DIMENSIONS, resolve_dimensions
from legal_judge.audit.entries import Catalogue
from legal_judge.audit.probes import PROBES, resolve_probes
from legal_judge.errors import ConfigError, InputError

USER_DIMENSION = """dimensions:
  - name: verbosity
    description: my own verbosity
    perturbation: find_replace
    params: {rules: [{find: "a", replace: "b"}]}
  - name: firm_name
    description: a firm's name
    perturbation: find_replace
    params: {rules: [{find: "x", replace: "y"}]}
"""

USER_PROBE = """probes:
  - name: hedge_only
    description: my own hedge probe
    perturbation: hedge_only
    rubrics: [legal_soundness]
  - name: wrong_deadline
    description: a wrong deadline
    perturbation: find_replace
    rubrics: [legal_soundness]
    params: {rules: [{find: '21 days', replace: '90 days'}]}
"""


@pytest.mark.parametrize(("catalogue", "text", "replaced", "added"), [
    (DIMENSIONS, USER_DIMENSION, "verbosity", "firm_name"),
    (PROBES, USER_PROBE, "hedge_only", "wrong_deadline"),
])
def test_a_users_file_replaces_a_same_named_entry_and_adds_the_rest(
        tmp_path: Path, catalogue: Catalogue, text: str, replaced: str, added: str) -> None:
    f = tmp_path / "user.yaml"
    f.write_text(text, encoding="utf-8")
    entries, source = catalogue.with_file(f)
    builtin = catalogue.builtin()
    assert list(entries)[:len(builtin)] == list(builtin)  # built-in order kept, additions last
    assert list(entries)[-1] == added
    assert entries[replaced].description.startswith("my own")
    assert builtin[replaced].description != entries[replaced].description  # built-in untouched
    assert source[replaced] == source[added] == str(f)
    assert {source[n] for n in builtin if n != replaced} == {"built-in"}
    chosen = catalogue.select([added, replaced, added], extra_file=f)
    assert [e.name for e in chosen] == [added, replaced]  # the order given, each once


@pytest.mark.parametrize(("resolve", "kind", "option"), [
    (resolve_dimensions, "dimension", "--dimensions-file"),
    (resolve_probes, "probe", "--probes-file"),
])
def test_an_unknown_name_is_refused_naming_the_known_ones_and_the_option(
        resolve: object, kind: str, option: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve(["nope", "nada"])  # type: ignore[operator]
    assert str(info.value).startswith(f"unknown {kind}(s): nope, nada")
    assert info.value.code == f"audit-{kind}-unknown"
    assert info.value.fix is not None and info.value.fix.endswith(f"or add them with {option}")


def test_only_probes_may_be_none_and_a_bad_file_is_refused_even_then(tmp_path: Path) -> None:
    assert resolve_probes(["none"]) == [] and resolve_probes([]) == []
    assert resolve_dimensions([]) == list(DIMENSIONS.builtin().values())  # empty means all
    with pytest.raises(ConfigError, match=r"\(or none\)"):
        resolve_probes(["nope"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("probes:\n  - {name: x, description: d, perturbation: magic, rubrics: [a]}\n",
                   encoding="utf-8")
    with pytest.raises(InputError, match="unknown perturbation 'magic'"):
        resolve_probes(["none"], extra_file=bad)


def test_the_builtin_file_is_read_once_per_catalogue() -> None:
    assert DIMENSIONS.builtin() is DIMENSIONS.builtin()
    assert PROBES.builtin() is PROBES.builtin()
    assert set(DIMENSIONS.builtin()).isdisjoint(PROBES.builtin())
