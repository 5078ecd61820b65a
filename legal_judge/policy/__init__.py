"""The gate policy: every threshold a gate uses, in one reviewed file, printed by every gate.

:mod:`legal_judge.policy.sections` holds its sections (each setting, its default and range, which way
is stricter); :mod:`legal_judge.policy.core` reads and applies it (:func:`load_policy`,
:class:`PolicyInForce`).
"""

from legal_judge.policy.core import (
    BUNDLED_POLICY,
    POLICY_FILENAME,
    Override,
    PolicyInForce,
    load_policy,
)
from legal_judge.policy.sections import (
    CORRECTIONS,
    CalibrationPolicy,
    CertificationPolicy,
    Policy,
    ReleasePolicy,
    RunPolicy,
    ValidationPolicy,
)

__all__ = ["BUNDLED_POLICY", "CORRECTIONS", "POLICY_FILENAME", "CalibrationPolicy", "CertificationPolicy",
           "Override", "Policy", "PolicyInForce", "ReleasePolicy", "RunPolicy",
           "ValidationPolicy", "load_policy"]
