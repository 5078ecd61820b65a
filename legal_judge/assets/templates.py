"""Versioned Jinja prompt templates, rendered in a sandbox.

Templates live in ``prompts/<name>.v<N>.j2`` (found and hashed by :mod:`legal_judge.assets.catalogue`)
and can also come from a user's config or Langfuse. They are rendered with Jinja2's
``ImmutableSandboxedEnvironment`` and ``StrictUndefined``: a missing variable or an attempt to reach
Python internals is a :class:`~legal_judge.errors.TemplateError`, never a silently empty string.
:func:`render_string` is the one way any template is rendered.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from legal_judge.errors import Problem, TemplateError

__all__ = ["Template", "render_string", "syntax_problem"]


@dataclass(frozen=True)
class Template:
    """A versioned Jinja template."""

    name: str
    version: int
    source: str
    sha256: str
    path: str

    @property
    def id(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    def render(self, **variables: Any) -> str:
        """Render with the sandbox and StrictUndefined; errors name the template and variable."""
        return render_string(self.source, variables, name=self.id)


_MAX_POWER = 1024
_MAX_REPEAT = 1_000_000


class _Sandbox(ImmutableSandboxedEnvironment):
    """No attribute escapes, no mutation of the variables, no arithmetic that exhausts the machine.

    Templates can come from Langfuse or a user's config, so ``9**9**9`` or ``'x' * 10**10`` must be
    refused like ``''.__class__``; there is no loader, so include/import/extends are refused too.
    """

    intercepted_binops = frozenset({"**", "*"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(right, int) and abs(right) > _MAX_POWER:
            raise jinja2.exceptions.SecurityError(f"exponent {right} is larger than {_MAX_POWER}")
        if operator == "*":
            seq, n = (left, right) if isinstance(right, int) else (right, left)
            if isinstance(seq, str | list | tuple) and isinstance(n, int) and len(seq) * n > _MAX_REPEAT:
                raise jinja2.exceptions.SecurityError("repetition longer than a million items")
        return super().call_binop(context, operator, left, right)


_ENV = _Sandbox(
    undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False,
    trim_blocks=False, lstrip_blocks=False,
)


@lru_cache(maxsize=256)
def _compile(source: str) -> jinja2.Template:
    # Compiling is ~100x the cost of rendering; templates are few and immutable.
    return _ENV.from_string(source)


def render_string(source: str, variables: dict[str, Any], *, name: str = "<template>") -> str:
    """Render Jinja ``source`` in the sandbox with StrictUndefined.

    Args:
        source: The template text (from the repository, a user config or Langfuse).
        variables: The variables the template may use.
        name: Shown in error messages.

    Raises:
        TemplateError: missing variable, syntax error, or an unsafe attribute/call refused by the sandbox.
    """
    try:
        return _compile(source).render(**variables)
    except jinja2.UndefinedError as exc:
        raise TemplateError(
            f"template {name}: {exc.message}",
            fix="pass the missing variable or remove it from the template",
        ) from None
    except jinja2.exceptions.SecurityError as exc:
        raise TemplateError(
            f"template {name} was refused by the sandbox: {exc}",
            fix="templates may only use the variables they are given; remove attribute escapes and calls",
        ) from None
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(
            f"template {name}: syntax error on line {exc.lineno}: {exc.message}",
            fix="fix the Jinja syntax on that line",
        ) from None
    except (jinja2.TemplateError, ArithmeticError, TypeError, ValueError) as exc:
        # 1/0, range(10**9), {% include %} without a loader: refused, never a traceback.
        raise TemplateError(
            f"template {name} failed to render: {type(exc).__name__}: {exc}",
            fix="templates may only format the variables they are given; no includes or big loops",
        ) from None


def syntax_problem(source: str, where: str) -> Problem | None:
    """The Jinja syntax error of a template file, as a problem naming its line (None: it parses).

    Args:
        source: The template text.
        where: The file it was read from, shown in the problem.
    """
    try:
        _ENV.parse(source)
    except jinja2.TemplateSyntaxError as exc:
        return Problem(where, exc.lineno, None, f"Jinja syntax: {exc.message}")
    return None
