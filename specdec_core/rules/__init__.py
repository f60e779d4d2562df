"""Verification rules, one home each: the registry :data:`RULES` and the built-in rules.

``RULES`` maps a rule's name to its :class:`Rule` (kind, one-position step, emitted law,
round tables, vectorised chunk, expected tokens, source). The built-in rules register
themselves on import: :mod:`.published` (exact), :mod:`.bugs` (deliberate bugs of a
named rule), :mod:`.lossy` (lossy by design), :mod:`.block` (block verification and its bug). A new
rule is one module that calls :func:`register_rule` (imported on the line above
``from .registry``), its test and its words (``specdec_ui/words.py``).
"""

from __future__ import annotations

from . import block, bugs, lossy, published  # noqa: F401  (each registers its rules)
from .registry import (
    BASIC_RULE,
    LABS,
    RULES,
    PositionStep,
    RoundRecord,
    Rule,
    RuleKind,
    bug_of,
    emitted_distribution,
    get_rule,
    reference_rule,
    register_rule,
    rules_of_kind,
    unregister_rule,
)

# The rules every process knows once it imports specdec_core (a helper process too); a rule
# registered later, e.g. by a test, lives only in the process that registered it.
BUILT_IN: frozenset[str] = frozenset(RULES)

__all__ = [
    "BASIC_RULE",
    "BUILT_IN",
    "LABS",
    "RULES",
    "PositionStep",
    "RoundRecord",
    "Rule",
    "RuleKind",
    "bug_of",
    "emitted_distribution",
    "get_rule",
    "reference_rule",
    "register_rule",
    "rules_of_kind",
    "unregister_rule",
]
