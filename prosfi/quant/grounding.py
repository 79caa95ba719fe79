"""Old import path of `prosfi.quant.licensed` (the numbers a quantity chain may use that no given states),
kept because docs/quantity.md pointed readers at `prosfi.quant.grounding.constants_table()`: a thin alias,
nothing more. New code imports `prosfi.quant.licensed`."""

from prosfi.quant.licensed import *
from prosfi.quant.licensed import __all__  # noqa: F401
