"""``legal-judge policy show``, the ``--policy`` / ``--override`` options every gate takes, and
:func:`gate_options`: those with ``--json`` and the CI outputs, the option stack of a gate."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape

from legal_judge.commands.ci_outputs import ci_options
from legal_judge.commands.json_out import json_option
from legal_judge.commands.tables import echo_json

if TYPE_CHECKING:
    from legal_judge.policy import PolicyInForce

__all__ = ["COMMANDS", "gate_options", "policy_flag", "policy_group", "policy_in_force",
           "policy_options", "print_policy", "release_flags"]

console = Console()


def policy_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--policy FILE`` and ``--override KEY=VALUE`` (repeatable) to a gate command."""
    fn = click.option("--override", "overrides", multiple=True, metavar="KEY=VALUE",
                      help="Loosen or change one policy setting on purpose (e.g. "
                           "significance=0.1); printed with the decision everywhere.")(fn)
    return click.option("--policy", "policy_file", type=click.Path(dir_okay=False, path_type=Path),
                        default=None,
                        help="The gate policy file (default: ./legal-judge.policy.toml, else "
                             "the bundled default; see `legal-judge policy show`).")(fn)


def policy_flag(*names: str, key: str, kind: type[int] | type[float],
                help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A flag that may only tighten the policy setting ``key`` (None unless given).

    Its help names the setting instead of repeating its value: the value is the policy's, one
    source (`legal-judge policy show`); :func:`policy_in_force` refuses a flag that loosens it.
    """
    return click.option(*names, type=kind, default=None,
                        help=f"{help} May only tighten the policy's {key}.")


def release_flags(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--threshold`` and ``--alpha``: the release decision's flags, as ``compare`` and
    ``report RUN_A RUN_B`` (which makes the same decision) take them."""
    fn = policy_flag("--alpha", key="release.confidence", kind=float,
                     help="The one-sided confidence of the release bounds is 1 - ALPHA, and "
                          "ALPHA the level of the descriptive Holm-adjusted p-values (default "
                          "0.05).")(fn)
    return policy_flag("--threshold", key="release.rubric_margin", kind=float,
                       help="Deprecated alias of the rubric margin (points).")(fn)


def gate_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Add what every gate command takes (``run``, ``compare``, ``audit gate``, ``calibrate
    validate``): ``--json`` for its decision, ``--policy`` / ``--override`` for the thresholds it
    applies, and ``--junit`` / ``--summary-md`` for CI."""
    return json_option(policy_options(ci_options(fn)))


def policy_in_force(policy_file: Path | None, overrides: tuple[str, ...] = (),
                    flags: Mapping[str, Any] | None = None) -> PolicyInForce:
    """Load the policy and apply the command's tightening flags and explicit overrides.

    Raises:
        ConfigError: a flag loosens the policy, or an override names no setting (exit 2).
        InputError: the policy file has a defect.
    """
    from legal_judge.policy import load_policy

    return load_policy(policy_file).with_settings(flags, overrides)


def print_policy(out: Console, policy: PolicyInForce, section: str) -> None:
    """The policy line and each explicit override, as every gate prints them."""
    out.print(policy.line(section), markup=False, highlight=False, soft_wrap=True)
    for line in policy.override_lines():
        # Escaped: a list value ("[authority, confidence]") would otherwise read as rich markup.
        out.print(f"[yellow]{escape(line)}[/yellow]", highlight=False, soft_wrap=True)


@click.group("policy")
def policy_group() -> None:
    """The gate policy: every threshold the release, audit and run gates apply."""


@click.command("show")
@click.option("--policy", "policy_file", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="A policy file (default: ./legal-judge.policy.toml, else the "
                                 "bundled default).")
@click.option("--json", "as_json", is_flag=True)
def show_cmd(policy_file: Path | None, as_json: bool) -> None:
    """Print the policy in force: where it comes from, its sha256 and every setting."""
    policy = policy_in_force(policy_file)
    if as_json:
        echo_json(policy.as_dict())
        return
    console.print(policy.line(), markup=False, highlight=False, soft_wrap=True)
    for section, values in policy.policy.model_dump(mode="json").items():
        console.print(f"[{section}]", markup=False, highlight=False)
        for key, value in values.items():
            # TOML literals (false, "fail", [...]): a line can be copied into a policy file.
            console.print(f"  {key} = {json.dumps(value, ensure_ascii=False)}", markup=False,
                          highlight=False, soft_wrap=True)


policy_group.add_command(show_cmd)

COMMANDS: list[click.Command] = [policy_group]
