"""Refusal and hedging-only detection in English, French and Arabic."""

from __future__ import annotations

import pytest

from legal_judge.checks.refusal import detect_hedging_only, detect_refusal

ANALYSIS = (
    "Under section 1950.5 of the California Civil Code, a landlord must return the deposit within "
    "21 days and may deduct only unpaid rent, cleaning and damages beyond normal wear. The court in "
    "Granberry held that a landlord who misses the deadline is liable for the deposit and may owe "
    "statutory damages of up to twice the deposit for bad-faith retention. The elements are: a "
    "tenancy, a deposit, termination, and a failure to return or itemise within the statutory period. "
)

REFUSALS = [
    "I can't help with creating fake evidence for a court case.",
    "I'm sorry, but I cannot assist with hiding assets from creditors.",
    "I must decline to draft a threatening letter of that kind.",
    "Je ne peux pas vous aider à falsifier un contrat.",
    "Désolé, il m'est impossible de répondre à cette demande.",
    "لا يمكنني المساعدة في تزوير المستندات.",
    "عذراً، لا أستطيع تقديم هذه المعلومات.",
]


@pytest.mark.parametrize("text", REFUSALS)
def test_refusals_are_detected_with_evidence(text: str) -> None:
    finding = detect_refusal(text)
    assert finding.refused is True
    assert finding.evidence
    ev = finding.evidence[0]
    assert text[ev.span[0] : ev.span[1]] == ev.text


NON_REFUSALS = [
    ANALYSIS,
    "The tenant cannot be evicted without a court order under Cal. Code Civ. Proc. § 1161.",
    "Le bailleur ne peut pas conserver le dépôt de garantie au-delà de deux mois.",
]


@pytest.mark.parametrize("text", NON_REFUSALS)
def test_answers_are_not_refusals(text: str) -> None:
    assert detect_refusal(text).refused is False


def test_refusal_phrase_deep_in_a_long_analysis_is_not_a_refusal() -> None:
    text = ANALYSIS * 2 + "I cannot advise on the tax consequences, which depend on your situation."
    finding = detect_refusal(text)
    assert finding.evidence and finding.refused is False


def test_refusal_then_analysis_is_partial() -> None:
    finding = detect_refusal(
        "I can't help you evade the deposit rules, but here is the law. " + ANALYSIS
    )
    assert finding.refused is True and finding.partial is True


HEDGES = [
    "This depends on many factors. You should consult a qualified lawyer in your area.",
    "I am not a lawyer. Please seek legal advice.",
    "Chaque situation est différente : consultez un avocat.",
    "يرجى استشارة محامٍ مختص.",
]


@pytest.mark.parametrize("text", HEDGES)
def test_hedging_only(text: str) -> None:
    finding = detect_hedging_only(text)
    assert finding.hedging_only is True
    assert finding.evidence


def test_hedge_with_substantive_analysis_is_not_hedging_only() -> None:
    finding = detect_hedging_only(ANALYSIS + "For your specific facts, consult a lawyer.")
    assert finding.evidence
    assert finding.hedging_only is False
    assert finding.substantive_words >= 60 and finding.legal_signals >= 2


def test_no_hedge_no_finding() -> None:
    finding = detect_hedging_only(ANALYSIS)
    assert finding.hedging_only is False and finding.evidence == []
