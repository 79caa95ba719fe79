"""Chain checking: is every step of a completion a verified, honest inference, and does the chain
establish the claimed answer? Sits between the completion format (`prosfi.trace`) and the rewards;
the verifier (`prosfi.verify`) only answers entailment questions.

    from prosfi.chain import ChainBatch, ChainCheck, ChainConfig
"""

from prosfi.chain.batch import ChainBatch
from prosfi.chain.check import ChainCheck, Formulas, Parsed, negation
from prosfi.chain.config import UNCERTAIN_MODES, ChainConfig
from prosfi.chain.result import REJECTED, ChainResult, StepResult

__all__ = [
    "REJECTED",
    "UNCERTAIN_MODES",
    "ChainBatch",
    "ChainCheck",
    "ChainConfig",
    "ChainResult",
    "Formulas",
    "Parsed",
    "StepResult",
    "negation",
]
