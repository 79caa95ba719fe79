"""The policy's output: extract the blocks of a completion, schema-check its step array."""

from prosfi.trace.extract import Blocks, Extraction, completion_text, extract_blocks, strip_fence
from prosfi.trace.schema import ParsedTrace, Step, Trace, parse_steps, parse_trace

__all__ = [
    "Blocks",
    "Extraction",
    "ParsedTrace",
    "Step",
    "Trace",
    "completion_text",
    "extract_blocks",
    "parse_steps",
    "parse_trace",
    "strip_fence",
]
