"""Words for generated ProverQA-style problems: entity names and predicates with English phrasings.

Every predicate is a snake_case Lean identifier; `pos`/`neg` are third-person phrases
("is kind" / "is not kind"); binary phrases carry `{o}` for the object.
"""

from __future__ import annotations

ENTITIES = (
    "brecken", "alice", "bruno", "clara", "dexter", "elena", "felix", "gemma", "hugo", "iris",
    "jasper", "kira", "lionel", "maya", "nolan", "opal", "piper", "quentin", "rosa", "silas",
    "talia", "ivan", "bianca", "cyrus", "daphne", "emmett", "fiona", "gideon", "helena", "milo",
)

_ADJECTIVES = (
    "kind", "brave", "curious", "patient", "honest", "creative", "loyal", "calm", "clever", "gentle",
    "ambitious", "humble", "generous", "cautious", "cheerful", "diligent", "modest", "polite",
    "reliable", "sincere", "thoughtful", "witty", "energetic", "friendly", "graceful", "hardworking",
    "imaginative", "mature", "organized", "punctual", "resourceful", "sociable", "talented",
    "adventurous", "observant", "optimistic", "disciplined", "artistic", "athletic", "musical",
)

_VERBS = (
    ("plays_chess", "plays chess", "does not play chess"),
    ("writes_poetry", "writes poetry", "does not write poetry"),
    ("owns_a_boat", "owns a boat", "does not own a boat"),
    ("speaks_french", "speaks French", "does not speak French"),
    ("grows_vegetables", "grows vegetables", "does not grow vegetables"),
    ("travels_often", "travels often", "does not travel often"),
    ("reads_novels", "reads novels", "does not read novels"),
    ("bakes_bread", "bakes bread", "does not bake bread"),
    ("paints_landscapes", "paints landscapes", "does not paint landscapes"),
    ("studies_astronomy", "studies astronomy", "does not study astronomy"),
    ("collects_stamps", "collects stamps", "does not collect stamps"),
    ("runs_marathons", "runs marathons", "does not run marathons"),
    ("plays_violin", "plays the violin", "does not play the violin"),
    ("keeps_bees", "keeps bees", "does not keep bees"),
    ("volunteers", "volunteers at the shelter", "does not volunteer at the shelter"),
    ("has_a_garden", "has a garden", "does not have a garden"),
    ("wins_awards", "wins awards", "does not win awards"),
    ("teaches_math", "teaches math", "does not teach math"),
    ("climbs_mountains", "climbs mountains", "does not climb mountains"),
    ("fixes_bikes", "fixes bikes", "does not fix bikes"),
)

BINARY = (
    ("admires", "admires {o}", "does not admire {o}"),
    ("trusts", "trusts {o}", "does not trust {o}"),
    ("knows", "knows {o}", "does not know {o}"),
    ("helps", "helps {o}", "does not help {o}"),
    ("mentors", "mentors {o}", "does not mentor {o}"),
    ("visits", "visits {o}", "does not visit {o}"),
)

UNARY = tuple((f"is_{a}", f"is {a}", f"is not {a}") for a in _ADJECTIVES) + _VERBS
