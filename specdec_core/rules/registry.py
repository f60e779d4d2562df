"""The one registry of verification rules: ``RULES``, name -> :class:`Rule`.

A verification rule decides which drafted tokens a round keeps and what it emits
instead. Each rule has one entry, with everything the labs, the Self-test and the
CSVs need: its :class:`RuleKind` (exact; lossy by design; a bug of another rule,
named), its one-position step, its exact emitted law at one position, its round
tables and vectorised chunk for :func:`specdec_core.simulate_rounds`, its expected
tokens per round and the function whose source a page shows. Adding a rule is its
module (one :func:`register_rule` call) and its test; its words for students live in
``specdec_ui/words.py``, keyed by the rule's name.

``RULES`` is read-only (a :class:`types.MappingProxyType`); :func:`register_rule` and
:func:`unregister_rule` are the only ways to change it.
"""

from __future__ import annotations

import enum
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..distributions import validate_pair
from ..errors import InvalidParameterError

KeepRule = Literal["probabilistic", "strict"]  # which keep chance the pages quote: alpha or beta
LABS = ("losslessness", "variants")  # the pages whose menus can offer a rule
BASIC_RULE = "correct"  # the token-by-token rule (Leviathan et al. 2023) others are compared with


class RuleKind(enum.Enum):
    """What a rule promises about its output.

    EXACT: its tokens follow the target p (the chi-square test must pass).
    LOSSY_BY_DESIGN: it trades exactness for speed on purpose (Medusa's typical
    acceptance, greedy matching): the test may fail, and that is no bug.
    BUG_OF: a deliberately broken version of another rule (``Rule.breaks``), for the
    labs to catch: it is tested against the law of the rule it breaks.
    """

    EXACT = "exact"
    LOSSY_BY_DESIGN = "lossy by design"
    BUG_OF = "bug of"


@dataclass(frozen=True)
class PositionStep:
    """One drafted position decided by a rule: what was drafted, kept, emitted.

    ``detail`` is the rule's own record of the decision (a RoundResult, a MatchStep,
    a MultiDraftResult, ...), for a page that shows more than these three facts.
    """

    drafted: tuple[int, ...]  # the candidate token ids, in the order they were tried
    kept: bool  # a drafted token was kept
    emitted_token: int  # the token the position emits (the kept draft or its replacement)
    detail: object = None


@dataclass(frozen=True)
class RoundRecord:
    """One whole round decided by a rule that decides its drafts jointly (``round_step``).

    ``numbers`` holds the rule's own per-position numbers by their symbol (each (K,), e.g.
    block verification's weights "w", stop chances "h" and coins "u"); a page writes them
    out beside the drafts.
    """

    drafted: tuple[int, ...]  # x_1..x_K
    numbers: dict[str, tuple[float, ...]]  # symbol -> one number per drafted position
    n_kept: int  # drafts kept, 0..K
    emitted: tuple[int, ...]  # the kept drafts, then the last token
    bonus: bool  # the last token is the bonus from p_{K+1}


@dataclass(frozen=True)
class Rule:
    """One verification rule (see the module docstring).

    step(p_target, q_draft, rng, **law_options) -> :class:`PositionStep`: one position,
    drafted and decided with ``rng``. emitted(p_target, q_draft, **law_options) -> (V,):
    the exact law of the token emitted at one drafted position, on checked p, q (V,).
    tables(p_rows (K+1, V), q_rows (K, V), **options): once per Monte Carlo run, with a
    ``keep_probabilities`` (K,) field: P(position j keeps a draft | reached).
    chunk(tables, n, rng) -> ChunkOutcome: n rounds, vectorised. expected(p_target,
    q_draft, k, **law_options) -> float: E[tokens per round]. source: what a page shows.

    What the labs read instead of a rule's name: ``independent_keeps`` (True: every reached
    position keeps its draft with the same chance when p and q are the same at every
    position, so P(n + 1 tokens) = r^n (1 - r); False for a rule that decides the drafts
    jointly, e.g. block verification), ``bonus`` (a round that keeps all K drafts adds a
    token from p_{K+1}), ``position_law_broken`` (a bug: its one-position law ``emitted``
    differs from p for some p, q; False for a bug that only shows over a whole round),
    ``round_step`` (rng-driven whole round -> :class:`RoundRecord`, for a rule whose
    positions are not decided one by one), and the methods :meth:`keep_chances` and
    :meth:`round_law` (the round-length law, from ``tables``).
    """

    name: str
    kind: RuleKind
    step: Callable[..., PositionStep]
    emitted: Callable[..., np.ndarray]
    tables: Callable[..., Any]
    chunk: Callable[..., Any]
    expected: Callable[..., float]
    source: Callable[..., Any]
    breaks: str | None = None  # BUG_OF: the name of the rule this one breaks
    options: tuple[str, ...] = ()  # keyword options simulate_rounds passes to ``tables``
    law_options: tuple[str, ...] = ()  # keyword options of ``emitted``, ``step``, ``expected``
    keep_rule: KeepRule = "probabilistic"  # "strict": a draft is kept with beta = sum p q
    labs: tuple[str, ...] = LABS  # the labs whose menus offer the rule
    independent_keeps: bool = True  # i.i.d. keeps: P(n + 1 tokens) = r^n (1 - r)
    bonus: bool = True  # all K kept: one more token from p_{K+1}
    position_law_broken: bool = True  # a bug that shows in the one-position law
    round_step: Callable[..., RoundRecord] | None = None  # (p_rows, q_rows, rng) -> a round

    def keep_chances(self, p_target, q_draft, k: int, **options) -> np.ndarray:
        """(K,) P(position i keeps its draft | reached), with the same p (V,) and q (V,) at
        every position (``tables``' keep probabilities: for a bug, its own)."""
        p_rows, q_rows = np.tile(p_target, (k + 1, 1)), np.tile(q_draft, (k, 1))
        tables = self.tables(p_rows, q_rows, **options)
        return np.asarray(tables.keep_probabilities, dtype=np.float64)

    def round_law(self, p_target, q_draft, k: int, **options) -> np.ndarray:
        """(K+1,) P(n drafts kept), n = 0..K: kappa_1..kappa_n (1 - kappa_{n+1}) with
        kappa = :meth:`keep_chances` (kappa_{K+1} = 0), exact for every rule."""
        keep = self.keep_chances(p_target, q_draft, k, **options)
        reach = np.concatenate([[1.0], np.cumprod(keep)])  # (K+1,)
        return reach * np.concatenate([1.0 - keep, [1.0]])

    @property
    def lossless(self) -> bool:
        """True for an EXACT rule: its emitted tokens must follow p."""
        return self.kind is RuleKind.EXACT

    @property
    def is_bug(self) -> bool:
        """True for a deliberately broken rule (kind BUG_OF)."""
        return self.kind is RuleKind.BUG_OF


_RULES: dict[str, Rule] = {}
RULES: types.MappingProxyType[str, Rule] = types.MappingProxyType(_RULES)


def _check_new_rule(rule: Rule) -> None:
    """A new rule: a fresh name, a kind, a rule it breaks exactly when it is a bug."""
    if not isinstance(rule, Rule):
        raise InvalidParameterError(f"register_rule takes a Rule, got {type(rule).__name__}.")
    if not rule.name or not rule.name.isidentifier():
        raise InvalidParameterError(
            f"rule name {rule.name!r} must be a plain identifier (letters, digits, _)."
        )
    if rule.name in _RULES:
        raise InvalidParameterError(f"a rule named {rule.name!r} is already registered.")
    if not isinstance(rule.kind, RuleKind):
        raise InvalidParameterError(f"rule {rule.name!r}: kind must be a RuleKind.")
    if (rule.kind is RuleKind.BUG_OF) != (rule.breaks is not None):
        raise InvalidParameterError(
            f"rule {rule.name!r}: a BUG_OF rule names the rule it breaks, and only it does."
        )
    if rule.breaks is not None and rule.breaks not in _RULES:
        raise InvalidParameterError(
            f"rule {rule.name!r} breaks {rule.breaks!r}, which is not registered."
        )
    if unknown := sorted(set(rule.labs) - set(LABS)):
        raise InvalidParameterError(
            f"rule {rule.name!r}: unknown lab(s) {', '.join(unknown)}; choose from "
            f"{', '.join(LABS)}."
        )


def register_rule(rule: Rule) -> Rule:
    """Add ``rule`` to :data:`RULES` (after the rules already there) and return it.

    Raises InvalidParameterError for a name already taken, a BUG_OF rule that does
    not name a registered rule, or a rule that names one without being a bug.
    """
    _check_new_rule(rule)
    _RULES[rule.name] = rule
    return rule


def unregister_rule(name: str) -> Rule:
    """Remove the rule ``name`` from :data:`RULES` (for tests) and return it.

    Refuses while a registered bug still names it (unregister the bug first).
    """
    if name not in _RULES:
        raise InvalidParameterError(f"no rule named {name!r} is registered.")
    if bugs := [r.name for r in _RULES.values() if r.breaks == name]:
        raise InvalidParameterError(
            f"rule {name!r} is broken by {', '.join(bugs)}; unregister those first."
        )
    return _RULES.pop(name)


def get_rule(name: str) -> Rule:
    """The registered rule ``name``, or an error listing the names there are."""
    if not isinstance(name, str) or name not in _RULES:
        raise InvalidParameterError(
            f"variant {name!r} is unknown; choose one of {', '.join(_RULES)}."
        )
    return _RULES[name]


def rules_of_kind(*kinds: RuleKind, lab: str | None = None) -> Iterator[Rule]:
    """The registered rules of the given kinds (all kinds if none), in registration order;
    with ``lab``, only the rules that lab's menu offers."""
    for rule in _RULES.values():
        if (not kinds or rule.kind in kinds) and (lab is None or lab in rule.labs):
            yield rule


def reference_rule(name: str) -> Rule:
    """The rule whose law a run of ``name`` is held to: the rule itself, or for a bug the
    rule it breaks (followed down to a rule that is not a bug)."""
    rule = get_rule(name)
    while rule.breaks is not None:
        rule = get_rule(rule.breaks)
    return rule


def bug_of(name: str, lab: str | None = None) -> Rule | None:
    """The first registered bug of the rule ``name`` (offered in ``lab``), or None."""
    for rule in rules_of_kind(RuleKind.BUG_OF, lab=lab):
        if rule.breaks == name:
            return rule
    return None


def emitted_distribution(variant: str, p, q, **options) -> np.ndarray:
    """The exact law (V,) of the token the rule ``variant`` emits at one drafted position.

    Options: the rule's ``law_options`` (``n_candidates`` for multi-draft, ``branching``
    for a tree: the first level's width is what matters at one position; ``epsilon``,
    ``delta``, ``after_rejection`` for typical acceptance). Each law is built from the
    rule's own pieces (keep probabilities, residuals), so equality with p is a check of
    losslessness, not an assumption.
    """
    rule = get_rule(variant)
    p_target, q_draft = validate_pair(p, q)
    if unknown := set(options) - set(rule.law_options):
        raise InvalidParameterError(
            f"option(s) {', '.join(sorted(unknown))} do not apply to {variant!r}; "
            f"allowed: {', '.join(sorted(rule.law_options)) or 'none'}."
        )
    return rule.emitted(p_target, q_draft, **options)
