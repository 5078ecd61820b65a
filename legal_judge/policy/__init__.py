"""The gate policy: every threshold a gate uses, in one reviewed file, printed by every gate.

:mod:`legal_judge.policy.core` reads and applies it (:func:`load_policy`, :class:`PolicyInForce`);
:mod:`legal_judge.policy.validation` holds its ``[validation]`` section.
"""

from legal_judge.policy.core import (
    BUNDLED_POLICY,
    CORRECTIONS,
    POLICY_FILENAME,
    CalibrationPolicy,
    CertificationPolicy,
    Override,
    Policy,
    PolicyInForce,
    ReleasePolicy,
    RunPolicy,
    load_policy,
)
from legal_judge.policy.validation import ValidationPolicy

__all__ = ["BUNDLED_POLICY", "CORRECTIONS", "POLICY_FILENAME", "CalibrationPolicy", "CertificationPolicy",
           "Override", "Policy", "PolicyInForce", "ReleasePolicy", "RunPolicy",
           "ValidationPolicy", "load_policy"]
