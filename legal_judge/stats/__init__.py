"""The one statistics package of legal-judge: pure functions over numpy arrays and sequences.

Everything here returns frozen dataclasses (``dataclasses.asdict`` gives pandas-ready rows) or
plain floats; scipy does the statistics wherever scipy provides them. Conventions are fixed in
DESIGN.md, "Statistics conventions". Undefined figures are ``None``; degenerate inputs are
documented per function, never silently zero.
"""

from legal_judge.stats._common import StatisticsError, interpret_effect
from legal_judge.stats.agreement import (
    KappaCI,
    SpearmanResult,
    cohen_kappa,
    is_missing,
    kappa_ci,
    krippendorff_alpha,
    spearman,
)
from legal_judge.stats.allocation import proportional_allocation
from legal_judge.stats.divergence import (
    AgreementSummary,
    Divergence,
    LimitsOfAgreement,
    PassFailConfusion,
    agreement_summary,
    confusion_matrix_pf,
    limits_of_agreement,
    mean_divergence,
)
from legal_judge.stats.equivalence import EquivalenceResult, pairs_for_equivalence, tost_paired
from legal_judge.stats.estimates import (
    CorrectedMean,
    RoganGladen,
    StratifiedEstimate,
    ppi_mean,
    ppi_mean_stratified,
    rogan_gladen,
    rogan_gladen_stratified,
)
from legal_judge.stats.groups import Dispersion, GroupResult, score_dispersion, two_group_test
from legal_judge.stats.isotonic import IsotonicModel, apply_isotonic, fit_isotonic
from legal_judge.stats.means import MIN_N_FOR_INTERVAL, MeanCI, mean_ci
from legal_judge.stats.multiple import adjust_pvalues, flag
from legal_judge.stats.noninferiority import (
    Bounds,
    PairedProportionsBounds,
    hodges_lehmann_bounds,
    items_needed,
    mean_bounds,
    paired_proportions_bounds,
    tango_interval,
    tango_items_needed,
)
from legal_judge.stats.onesided import (
    MovedShare,
    OneSidedResult,
    moved_share,
    one_sided_paired_test,
)
from legal_judge.stats.paired import (
    NoiseFloor,
    PairedResult,
    minimum_detectable_effect,
    noise_floor,
    paired_test,
    rank_biserial_paired,
)
from legal_judge.stats.pairwise import (
    PositionResult,
    position_consistency,
    preference_fairness,
    repetition_stability,
)
from legal_judge.stats.panel import PanelSize, effective_judges
from legal_judge.stats.planning import break_even_correlation, labels_for_margin
from legal_judge.stats.proportions import (
    BinomialResult,
    McNemarResult,
    binomial_first_position,
    mcnemar_exact,
    mcnemar_from_outcomes,
    proportion_ci,
)
from legal_judge.stats.robust_agreement import RobustAgreement, gwet_ac, pabak
from legal_judge.stats.selective import (
    SequenceStep,
    ThresholdResult,
    fixed_sequence_threshold,
    labels_needed,
    min_items_zero_failures,
)

__all__ = [
    "AgreementSummary",
    "BinomialResult",
    "Bounds",
    "CorrectedMean",
    "Dispersion",
    "Divergence",
    "EquivalenceResult",
    "GroupResult",
    "IsotonicModel",
    "KappaCI",
    "LimitsOfAgreement",
    "MIN_N_FOR_INTERVAL",
    "McNemarResult",
    "MeanCI",
    "MovedShare",
    "NoiseFloor",
    "OneSidedResult",
    "PairedProportionsBounds",
    "PairedResult",
    "PanelSize",
    "PassFailConfusion",
    "PositionResult",
    "RobustAgreement",
    "RoganGladen",
    "SequenceStep",
    "SpearmanResult",
    "StatisticsError",
    "StratifiedEstimate",
    "ThresholdResult",
    "adjust_pvalues",
    "agreement_summary",
    "apply_isotonic",
    "binomial_first_position",
    "break_even_correlation",
    "cohen_kappa",
    "confusion_matrix_pf",
    "effective_judges",
    "fit_isotonic",
    "fixed_sequence_threshold",
    "flag",
    "gwet_ac",
    "hodges_lehmann_bounds",
    "interpret_effect",
    "is_missing",
    "items_needed",
    "kappa_ci",
    "krippendorff_alpha",
    "labels_for_margin",
    "labels_needed",
    "limits_of_agreement",
    "mcnemar_exact",
    "mcnemar_from_outcomes",
    "mean_bounds",
    "mean_ci",
    "mean_divergence",
    "min_items_zero_failures",
    "minimum_detectable_effect",
    "moved_share",
    "noise_floor",
    "one_sided_paired_test",
    "pabak",
    "paired_proportions_bounds",
    "paired_test",
    "pairs_for_equivalence",
    "position_consistency",
    "ppi_mean",
    "ppi_mean_stratified",
    "preference_fairness",
    "proportion_ci",
    "proportional_allocation",
    "rank_biserial_paired",
    "repetition_stability",
    "rogan_gladen",
    "rogan_gladen_stratified",
    "score_dispersion",
    "spearman",
    "tango_interval",
    "tango_items_needed",
    "tost_paired",
    "two_group_test",
]
