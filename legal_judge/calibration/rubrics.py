"""The rubric scales calibration validates and encodes scores against."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from legal_judge.assets.catalogue import load_assets
from legal_judge.assets.rubrics import DEFAULT_RUBRIC_SET, RubricSet

__all__ = ["PASS_FAIL", "PASS_FAIL_ALIASES", "RubricSpec", "rubric_specs", "stored_rubric_set",
           "with_pass_fail"]


@dataclass(frozen=True)
class RubricSpec:
    """One rubric's scale: numeric bounds or the categorical values in severity order."""

    name: str
    kind: str
    low: float = 0.0
    high: float = 0.0
    values: tuple[str, ...] = ()

    @property
    def scale(self) -> list[float | str]:
        """Every level of the scale (numeric) or every value (categorical)."""
        if self.kind == "numeric":
            return [float(v) for v in range(int(self.low), int(self.high) + 1)]
        return list(self.values)

    def parse(self, raw: object, *, whole: bool = True) -> tuple[float | str | None, str | None]:
        """A score as stored (float or category) or the reason it is not valid.

        A lawyer's numeric score must be a whole level of the scale (``whole=True``): the rubric
        guide defines levels, and a fractional entry is more often a typo than a judgement. Judge
        scores (``whole=False``) may be fractional, as an ensemble's weighted mean is.
        """
        text = str(raw).strip() if raw is not None else ""
        if not text:
            return None, "score is empty"
        if self.kind == "categorical":
            value = text.lower()
            if value not in self.values:
                return None, f"'{text}' is not a category of {self.name} ({', '.join(self.values)})"
            return value, None
        try:
            number = float(text)
        except ValueError:
            return None, f"'{text}' is not a number"
        if not math.isfinite(number) or not self.low <= number <= self.high:
            return None, f"{text} is out of scale: {self.name} takes {int(self.low)}-{int(self.high)}"
        if whole and not number.is_integer():
            levels = f"{int(self.low)}-{int(self.high)}"
            return None, f"{text} is not a whole score: {self.name} takes levels {levels}"
        return number, None

    def code(self, value: float | str) -> float:
        """The number used in statistics: the score itself, or the severity index of a category."""
        if self.kind == "categorical":
            return float(self.values.index(str(value)))
        return float(value)


def stored_rubric_set(record: Mapping[str, Any]) -> str:
    """The rubric set a stored run's config (or a stored calibration) names.

    Args:
        record: the stored mapping with a ``rubric_set`` key (``name@version``, or ``name``).

    Returns:
        Its ``rubric_set``, or :data:`~legal_judge.assets.rubrics.DEFAULT_RUBRIC_SET` when the
        key is missing or empty.
    """
    return str(record.get("rubric_set") or DEFAULT_RUBRIC_SET)


def rubric_specs(ref: str = DEFAULT_RUBRIC_SET) -> tuple[RubricSet, dict[str, RubricSpec]]:
    """The rubric set and a spec for each of its rubrics (optional ones included).

    Args:
        ref: Rubric set ``name`` or ``name@version``.

    Returns:
        The rubric set and the specs keyed by rubric name, in the set's order.
    """
    assets = load_assets()
    rset = assets.rubric_set(ref)
    names = list(rset.rubrics) + [o.rubric for o in rset.optional_rubrics]
    specs: dict[str, RubricSpec] = {}
    for name in names:
        rubric = assets.rubric(name)
        if rubric.kind == "numeric" and rubric.scale is not None:
            specs[rubric.name] = RubricSpec(rubric.name, "numeric", rubric.scale.min, rubric.scale.max)
        else:
            order = rubric.severity or rubric.values or []
            specs[rubric.name] = RubricSpec(rubric.name, "categorical", values=tuple(order))
    return rset, specs


#: The lawyers' own overall verdict: the sheet's ``pass_fail`` column, stored as rubric ``overall``
#: (the name of the judges' overall score in Langfuse). It wins over the rule applied to their
#: rubric scores wherever a lawyer gave it.
PASS_FAIL = RubricSpec("overall", "categorical", values=("pass", "fail"))
PASS_FAIL_ALIASES = ("pass_fail", "overall")


def with_pass_fail(specs: dict[str, RubricSpec]) -> dict[str, RubricSpec]:
    """The specs a label may use: the rubrics and the lawyers' own pass/fail."""
    return {**specs, PASS_FAIL.name: PASS_FAIL}
