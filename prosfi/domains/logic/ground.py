"""Old import path of `prosfi.domains.logic.gold_path` (which valid steps are on the gold derivation), kept
because docs/prm.md showed `from prosfi.domains.logic.ground import Groundedness`: a thin alias, nothing
more. New code imports `prosfi.domains.logic.gold_path`."""

from prosfi.domains.logic.gold_path import Groundedness, canonical_text

__all__ = ["Groundedness", "canonical_text"]
