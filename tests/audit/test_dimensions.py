"""Perturbations add exactly the signal of their dimension and keep the legal content."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from legal_judge.audit.design import build_design, degrade, subgroup_counts
from legal_judge.audit.dimensions import (
    builtin_dimensions,
    load_dimension_file,
    perturb,
    plain_prose,
    resolve_dimensions,
)
from legal_judge.errors import ConfigError, InputError
from legal_judge.models import BenchmarkItem
from legal_judge.providers.sim_features import bias_signals

BASE = BenchmarkItem(
    id="x1", prompt="Can my employer fire me for being pregnant?",
    response=("No. Title VII, as amended by the Pregnancy Discrimination Act, prohibits it. "
              "File an EEOC charge within 180 days, or 300 days where a state agency exists. "
              "Keep written records of what was said. A 40-person employer is covered."),
    expected_signals=["Title VII", "EEOC charge"])
TEXT_DIMS = ["verbosity", "authority", "confidence", "formatting", "bandwagon", "sentiment",
             "injection", "demographic"]


@pytest.mark.parametrize("name", TEXT_DIMS)
def test_variant_a_carries_only_its_signal_and_b_none(name: str) -> None:
    dim = builtin_dimensions()[name]
    for seed in range(20):
        pair = perturb(dim, BASE, np.random.default_rng(seed))
        sa, sb = bias_signals(pair.a.response), bias_signals(pair.b.response)
        assert sa[dim.bias], (name, pair.a.response)
        assert not any(sb.values()), (name, pair.b.response)
        assert {k for k, v in sa.items() if v} == {dim.bias}, (name, pair.a.response)
        # legal content kept: every sentence of the (plain) base answer is still there
        for sentence in ("Title VII", "EEOC charge", "180 days"):
            assert sentence in pair.a.response and sentence in pair.b.response


def test_demographic_pairs_swap_gender_matched_names_in_prompt_and_answer() -> None:
    dim = builtin_dimensions()["demographic"]
    pair = perturb(dim, BASE, np.random.default_rng(3), subgroup="group_b")
    names = pair.meta["names"]
    assert pair.subgroup == "group_b"
    assert names["a"] in pair.a.prompt and names["a"] in pair.a.response
    assert names["b"] in pair.b.prompt and names["b"] not in pair.a.prompt
    assert pair.a.response.replace(names["a"], "N") == pair.b.response.replace(names["b"], "N")


def test_design_is_reproducible_counterbalanced_and_keeps_exact_inputs() -> None:
    items = [BASE.model_copy(update={"id": f"i{k}"}) for k in range(7)]
    dims = resolve_dimensions(["verbosity", "demographic"])
    d1 = build_design(items, dims, pairs=60, seed=5)
    d2 = build_design(items, dims, pairs=60, seed=5)
    assert [p.describe() for p in d1.pairs] == [p.describe() for p in d2.pairs]
    assert [p.describe() for p in build_design(items, dims, pairs=60, seed=6).pairs] != \
        [p.describe() for p in d1.pairs]
    verb = d1.by_dimension()["verbosity"]
    assert {p.quality for p in verb} == {"original", "degraded"}
    orders = [p.order for p in verb]
    assert 15 < orders.count("ab") < 45
    assert verb[1].b.response == degrade(items[0].model_copy(update={"response": BASE.response})
                                         ).response or len(verb[1].b.response) < len(BASE.response)
    assert subgroup_counts(d1) == {"demographic": {"group_a": 60, "group_b": 60}}


def test_user_dimensions_from_yaml_find_replace_and_template(tmp_path: Path) -> None:
    f = tmp_path / "dims.yaml"
    f.write_text("""
dimensions:
  - name: firm_prestige
    description: Big-law letterhead vs none
    perturbation: template
    remediation: Redact firm names before judging.
    params:
      choices: [{firm: "Cravath, Swaine & Moore"}, {firm: "Slaughter and May"}]
      a: {response: "{{ response }}\\n\\nPrepared by {{ choice.firm }}."}
      b: {response: "{{ response }}\\n\\nPrepared by a sole practitioner."}
  - name: us_spelling
    description: British vs American spelling
    perturbation: find_replace
    params:
      rules: [{find: "authorise", replace: "authorize"}, {find: "(?i)colour", replace: "color", regex: true}]
""")
    dims = load_dimension_file(f)
    item = BASE.model_copy(update={"response": "The colour rules authorise it."})
    pair = perturb(dims["firm_prestige"], item, np.random.default_rng(0))
    assert "Prepared by" in pair.a.response and pair.meta["choice"]["firm"] in pair.a.response
    assert pair.b.response.endswith("sole practitioner.")
    sp = perturb(dims["us_spelling"], item, np.random.default_rng(0))
    assert sp.a.response == "The color rules authorize it." and sp.b.response == item.response
    chosen = resolve_dimensions(["verbosity", "firm_prestige"], extra_file=f)
    assert [d.name for d in chosen] == ["verbosity", "firm_prestige"]


def test_bad_dimension_files_and_names_are_reported(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("dimensions:\n  - name: x\n    description: d\n    perturbation: magic\n")
    with pytest.raises(InputError, match="unknown perturbation 'magic'"):
        load_dimension_file(f)
    with pytest.raises(ConfigError, match="unknown dimension"):
        resolve_dimensions(["verbosity", "nope"])


def test_plain_prose_strips_markdown() -> None:
    assert plain_prose("## Head\n- one\n1. two\n**bold** text") == "Head\none\ntwo\nbold text"
