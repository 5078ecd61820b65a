"""Item 6: the template sandbox refuses attribute escapes, unsafe calls, mutation and resource abuse,
including in a template pulled from Langfuse; a refused template raises TemplateError, never renders.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from langfuse.api import CreateTextPromptRequest
from standin import PUBLIC_KEY, SECRET_KEY, LangfuseStandin

import legal_judge
from legal_judge.assets.catalogue import load_assets
from legal_judge.assets.templates import render_string
from legal_judge.cli import cli
from legal_judge.errors import TemplateError

ESCAPES = [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ ().__class__.__bases__[0].__subclasses__() }}",
    "{% for c in [].__class__.__base__.__subclasses__() %}{{ c }}{% endfor %}",
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ joiner.__init__.__globals__ }}",
    "{{ lipsum.__globals__['os'].system('id') }}",
    "{{ namespace.__init__.__globals__ }}",
    "{{ self._TemplateReference__context }}",
    "{{ self.__dict__ }}",
    "{{ response.__class__ }}",
    "{{ response|attr('__class__') }}",
    "{{ '{0.__class__.__mro__}'.format(response) }}",
    "{% set f = rubrics.__init__ %}{{ f }}",
    "{{ rubrics.__getitem__(0) }}",
    "{{ gen.gi_frame.f_globals }}",
    "{{ config }}",
    "{{ request.application.__globals__ }}",
]
UNSAFE_CALLS = [
    "{{ rubrics.append('x') }}",
    "{{ rubrics.pop() }}",
    "{{ meta.clear() }}",
    "{{ meta.update({'admin': true}) }}",
    "{% include '/etc/passwd' %}",
    "{% import 'os' as os %}{{ os }}",
    "{% extends '/etc/passwd' %}",
    "{{ 2 ** (10 ** 9) }}",
    "{{ 'x' * 10**10 }}",
    "{{ range(10**9)|list }}",
    "{{ 1/0 }}",
]


def _variables() -> dict[str, object]:
    return {"response": "an answer", "rubrics": ["a", "b"], "meta": {"k": "v"},
            "gen": (i for i in range(3))}


@pytest.mark.parametrize("source", ESCAPES + UNSAFE_CALLS)
def test_sandbox_refuses(source: str) -> None:
    variables = _variables()
    with pytest.raises(TemplateError) as err:
        render_string(source, variables, name="attack")
    assert "attack" in err.value.message and err.value.fix
    assert variables["rubrics"] == ["a", "b"] and variables["meta"] == {"k": "v"}  # untouched


def test_bundled_templates_and_ordinary_arithmetic_still_render() -> None:
    assert render_string("{{ 2 ** 10 }} {{ 'ab' * 3 }} {{ x | join(', ') }}", {"x": [1, 2]}) == (
        "1024 ababab 1, 2")
    assets = load_assets()
    text = assets.template("json_retry").render(error="bad")
    assert "bad" in text


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[LangfuseStandin]:
    server = LangfuseStandin().start()
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
    monkeypatch.setenv("LANGFUSE_BASE_URL", server.base_url)
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "5")
    yield server
    server.stop()


@pytest.mark.parametrize("body", [ESCAPES[0], ESCAPES[3], UNSAFE_CALLS[7]])
def test_a_template_pulled_from_langfuse_is_refused(standin: LangfuseStandin, body: str) -> None:
    from legal_judge.sync.langfuse_client import client_for
    from legal_judge.sync.langfuse_prompts import pull_prompt
    from legal_judge.sync.settings import require_settings

    client = client_for(require_settings())
    client.lf.api.prompts.create(request=CreateTextPromptRequest(
        name="legal-judge/template/evil", prompt="Judge this.\n" + body, labels=["production"]))
    pulled = pull_prompt("legal-judge/template/evil")
    assert body in pulled["prompt"]
    with pytest.raises(TemplateError, match="refused|failed to render"):
        render_string(pulled["prompt"], _variables(), name="langfuse:legal-judge/template/evil")
    # `prompts pull` only prints the body: shown verbatim, never evaluated.
    result = CliRunner().invoke(cli, ["prompts", "pull", "legal-judge/template/evil"])
    assert result.exit_code == 0, result.output
    assert "{{" in result.output and "uid=" not in result.output


def test_render_string_is_the_only_way_templates_are_rendered() -> None:
    """No module builds its own Jinja environment or template except the two sandboxed ones."""
    root = Path(legal_judge.__file__).parent
    pattern = re.compile(r"\w*Environment\(|\bTemplate\(|from_string\(")
    offenders = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        hits = pattern.findall(path.read_text(encoding="utf-8"))
        if hits and rel not in ("assets/templates.py", "assets/catalogue.py"):
            offenders[rel] = hits
    # reports/html.py renders the package's own report template, in a SandboxedEnvironment.
    assert offenders == {"reports/html.py": ["SandboxedEnvironment("]}, offenders
    html = (root / "reports" / "html.py").read_text(encoding="utf-8")
    assert "SandboxedEnvironment(" in html and "FileSystemLoader(_TEMPLATES)" in html
