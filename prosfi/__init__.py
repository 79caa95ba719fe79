"""prosfi: RL for LLM reasoners on formally verified process rewards."""

__version__ = "0.1.0"
