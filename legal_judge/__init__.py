"""legal-judge: LLM-as-judge for legal AI answers, with judge bias audits and human calibration.

The public API; everything else is internal and may change.
"""

__version__ = "0.1.0"
