"""One verified round as the ordered decisions a student clicks through.

Pure Python (no streamlit): :func:`play_round` runs a :class:`RoundSpec`
through ``specdec_core.verify_round``; :func:`build_story` turns the
``RoundResult`` into :class:`Step` objects, one decision each, in the order
of the seeds' worked examples (seed 000 Steps 1-6, seed 003 Ex 2 and Ex 6):

1. ``draft``: the draft samples x_1..x_K from q;
2. per checked position: ``ratio`` (p/q and a = min(1, p/q)), then ``coin``
   (u against a: keep or reject);
3. after the first rejection: ``discard`` (later drafts, with the reason),
   ``residual`` (max(0, p - q)), ``normalise`` (divide by Z) and
   ``resample`` (the replacement token); or, when all K were kept, ``bonus``
   (a free token from p at position K + 1);
4. ``result``: what the round emitted.

Every step carries a "why this step" sentence with the actual numbers, a
LaTeX line that holds numbers only (labels are user text and never reach
LaTeX), and the status of every draft position and emitted token so far.
Labels inside ``title`` and ``why`` are raw user text: escape them on display.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

import specdec_core as sc
from specdec_core.sampling import RESIDUAL_TOLERANCE
from specdec_ui.kit.theme import STATUS_SYMBOL, STATUS_WORD

# The kinds of step, in story order, with the words the page's step heading uses. "resample"
# and "bonus" are the core's FinalKind (how the last token is drawn); the token that step
# emits gets the core's TokenStatus ("resampled" or "bonus", sc.FINAL_STATUS).
StepKind = Literal[
    "draft", "ratio", "coin", "discard", "residual", "normalise", "resample", "bonus", "result"
]
STEP_KINDS: dict[StepKind, str] = {
    "draft": "drafting",  # the step's title says "The draft proposes K = ..."
    "ratio": "acceptance probability",
    "coin": "the coin decides",
    "discard": "discard the rest",
    "residual": "the leftover max(0, p − q)",
    "normalise": "normalise the leftover",
    "resample": "resample the token",
    "bonus": "the free bonus token",
    "result": "the round's output",
}
# A draft position on screen: the core's DraftStatus once checked, "pending" before.
DraftView = Literal["pending", "accepted", "rejected", "discarded"]
MAX_LISTED = 10  # vectors longer than this are written as their nonzero entries only
CSV_RISKY = ("=", "+", "-", "@", "\t", "\r")  # cells a spreadsheet would run as a formula


# ----------------------------------------------------------------------------- numbers as text
def _fmt_decimal(x: float, decimals: int, tiny: float, *, trim: bool = False) -> str:
    """0 as '0'; |x| < tiny with 2 significant digits; else ``decimals`` decimals.

    ``trim`` drops one trailing 0 of the fixed form (0.300 -> 0.30, as the seeds write).
    """
    x = float(x)
    if x == 0:
        return "0"
    if abs(x) < tiny:
        return f"{x:.2g}"
    text = f"{x:.{decimals}f}"
    return text[:-1] if trim and text.endswith("0") else text


def fmt_prob(x: float) -> str:
    """A probability as the seeds write it: 0.30, 0.833, 1.00, 0 (tiny values: 2 digits)."""
    return _fmt_decimal(x, 3, 0.001, trim=True)


def fmt_ratio(x: float) -> str:
    """A ratio p/q with 3 significant digits (0.833, 1.33, 80); infinity as 'infinite'."""
    x = float(x)
    if not np.isfinite(x):
        return "infinite"
    return f"{x:.3g}"


def fmt_entry(x: float) -> str:
    """A vector entry as in seed 000: 0.10, 0.67, 0 (2 decimals; tiny nonzero: 2 digits)."""
    return _fmt_decimal(x, 2, 0.005)


def show(label: str) -> str:
    """A label inside a sentence: words as they are, punctuation quoted (“,” not ,)."""
    return label if label.replace("_", "").isalnum() else f"“{label}”"


def fmt_vector(v: np.ndarray, labels: tuple[str, ...]) -> str:
    """[0.10, 0, 0.05, 0, 0]; long vectors as their nonzero entries 'A: 0.10, C: 0.05'."""
    if len(v) <= MAX_LISTED:
        return "[" + ", ".join(fmt_entry(x) for x in v) + "]"
    nonzero = [f"{show(labels[i])}: {fmt_entry(v[i])}" for i in np.flatnonzero(v)]
    return "{" + ", ".join(nonzero) + "} (all other entries 0)"


def latex_vector(v: np.ndarray) -> str:
    """A LaTeX vector of numbers only (labels never enter LaTeX)."""
    if len(v) > MAX_LISTED:
        return r"\text{(" + str(len(v)) + r" entries, see the chart)}"
    return r"\left[" + r",\ ".join(fmt_entry(x) for x in v) + r"\right]"


def csv_safe(text: str) -> str:
    """A label as a CSV cell that a spreadsheet shows as text, never runs as a formula."""
    return "'" + text if text.startswith(CSV_RISKY) else text


# ----------------------------------------------------------------------------- inputs -> round
@dataclass(frozen=True)
class RoundSpec:
    """Everything needed to replay one round.

    ``draft_tokens``/``final_token`` None mean "draw them with the seed";
    ``coins`` may hold fewer than K coins (the rest are drawn). ``origin`` is
    ``"preset"`` or ``"custom"`` (it only changes how the story names coins).
    """

    labels: tuple[str, ...]
    p_rows: np.ndarray  # (K+1, V) target
    q_rows: np.ndarray  # (K, V) draft
    draft_tokens: tuple[int, ...] | None = None
    coins: tuple[float, ...] = ()
    final_token: int | None = None
    seed: int = 0
    origin: str = "custom"

    @property
    def k_drafts(self) -> int:
        return int(self.q_rows.shape[0])

    def signature(self) -> str:
        """A short text that changes whenever the round would change (to reset the step)."""
        return repr(
            (
                self.labels,
                self.p_rows.round(12).tolist(),
                self.q_rows.round(12).tolist(),
                self.draft_tokens,
                self.coins,
                self.final_token,
                self.seed,
                self.origin,
            )
        )


def spec_from_scenario(scenario: sc.RoundScenario) -> RoundSpec:
    """A preset from ``specdec_core.SCENARIOS``: drafts, coins and final token fixed."""
    p_rows, q_rows = scenario.arrays()
    return RoundSpec(
        labels=tuple(scenario.labels),
        p_rows=p_rows,
        q_rows=q_rows,
        draft_tokens=tuple(scenario.draft_tokens),
        coins=tuple(scenario.coins),
        final_token=int(scenario.final_token),
        seed=0,
        origin="preset",
    )


def play_round(spec: RoundSpec) -> sc.RoundResult:
    """Run the round: drafts from q (seeded) unless given, then ``verify_round``.

    Drafts and coins use two generators derived from the seed, so typing the
    drafts by hand does not change the coins that are drawn. Raises
    ``SpecDecError`` (via the core) for any invalid entry.
    """
    if len(spec.labels) != spec.q_rows.shape[-1]:
        raise sc.InvalidParameterError(
            f"labels: got {len(spec.labels)} labels for {spec.q_rows.shape[-1]} tokens."
        )
    drafts = spec.draft_tokens
    if drafts is None:
        drafts = sc.draft_from(spec.q_rows, np.random.default_rng([spec.seed, 0]))
    return sc.verify_round(
        spec.p_rows,
        spec.q_rows,
        drafts,
        uniforms=spec.coins,
        final_token=spec.final_token,
        rng=np.random.default_rng([spec.seed, 1]),
    )


# ----------------------------------------------------------------------------- the story
@dataclass(frozen=True)
class Step:
    """One decision of the round, as shown on screen."""

    index: int
    kind: StepKind
    position: int | None  # 0-based position the step is about (K = the bonus position)
    title: str  # what happens (raw labels inside: escape on display)
    why: str  # "why this step", with the actual numbers (raw labels inside)
    latex: str  # the formula with the numbers filled in; numbers only
    draft_status: tuple[DraftView, ...]  # per draft position
    emitted: tuple[tuple[int, int, sc.TokenStatus], ...]  # (position, token id, status) so far


@dataclass(frozen=True)
class RoundStory:
    """A round and its steps."""

    labels: tuple[str, ...]
    p_rows: np.ndarray  # (K+1, V)
    q_rows: np.ndarray  # (K, V)
    result: sc.RoundResult
    steps: tuple[Step, ...]
    coin_origin: tuple[str, ...]  # per draft position: how its coin was obtained

    @property
    def k_drafts(self) -> int:
        return self.result.k_drafts

    def step(self, index: int) -> Step:
        """Step ``index`` (0-based), kept inside the story's range."""
        return self.steps[max(0, min(index, len(self.steps) - 1))]

    def output_text(self, index: int) -> str:
        """Plain text of the tokens emitted up to step ``index``: 'A ✓ kept · D ★ bonus'."""
        emitted = self.step(index).emitted
        if not emitted:
            return "(no token emitted yet)"
        return " · ".join(
            f"{show(self.labels[tok])} {STATUS_SYMBOL[status]} {STATUS_WORD[status]}"
            for _, tok, status in emitted
        )

    def draft_text(self, index: int) -> str:
        """Plain text of the drafts' status at step ``index``: 'A ✓ kept · B ✗ rejected'."""
        st = self.step(index)
        return " · ".join(
            f"{show(self.labels[tok])} {STATUS_SYMBOL[status]} {STATUS_WORD[status]}"
            for tok, status in zip(self.result.draft_tokens, st.draft_status, strict=True)
        )

    def trace_frame(self) -> pd.DataFrame:
        """The round trace, one row per draft position plus the final token (for CSV).

        Labels are made spreadsheet-safe (a leading = + - @ gets a quote).
        """
        res, labels = self.result, self.labels
        checked = {s.position: s for s in res.steps}
        rows = []
        for i, (tok, verdict) in enumerate(zip(res.draft_tokens, res.draft_statuses, strict=True)):
            s = checked.get(i)
            rows.append(
                {
                    "position": i + 1,
                    "role": "draft",
                    "token": csv_safe(labels[tok]),
                    "p(x)": float(self.p_rows[i, tok]),
                    "q(x)": float(self.q_rows[i, tok]),
                    "ratio p/q": s.ratio if s else None,
                    "a = min(1, p/q)": s.acceptance_probability if s else None,
                    "coin u": s.coin if s else None,
                    "decision": STATUS_WORD[verdict],
                    "emitted": bool(s and s.accepted),
                    "final distribution(x)": None,
                }
            )
        tok = res.final_token
        rows.append(
            {
                "position": res.final_position + 1,
                "role": res.final_kind,  # "resample" or "bonus"
                "token": csv_safe(labels[tok]),
                "p(x)": float(self.p_rows[res.final_position, tok]),
                "q(x)": (
                    float(self.q_rows[res.final_position, tok])
                    if res.final_position < res.k_drafts
                    else None
                ),
                "ratio p/q": None,
                "a = min(1, p/q)": None,
                "coin u": res.final_coin,
                "decision": STATUS_WORD[res.final_status],
                "emitted": True,
                "final distribution(x)": float(res.final_distribution[tok]),
            }
        )
        return pd.DataFrame(rows)


def _ratio_why(label: str, p_x: float, q_x: float, a: float) -> str:
    if p_x == 0:
        return (
            f"The target forbids {label} (p = 0), so a = 0: it is always rejected. "
            "Keeping it would break losslessness."
        )
    if p_x == q_x:
        return (
            f"p = q = {fmt_prob(p_x)}: equal confidence still gives a = 1 (the boundary "
            f"case), so {label} is kept whatever the coin."
        )
    if p_x > q_x:
        ratio = p_x / q_x
        cap = (
            f" The ratio is {fmt_ratio(ratio)}, but min(1, ·) caps it: a probability "
            "cannot exceed 1, so a tiny q is harmless."
            if ratio >= 10
            else ""
        )
        return (
            f"p > q: the target (the editor) likes {label} at least as much as the draft "
            f"(the intern) did, so there is no reason to doubt it: kept for sure.{cap}"
        )
    return (
        f"The target likes {label} only {fmt_ratio(p_x / q_x)} times as much as the draft "
        f"claimed, so we keep it only {100 * a:.1f}% of the time. Acceptance depends on "
        "the ratio p/q, never on rank."
    )


def _coin_text(label: str, u: float, a: float, accepted: bool, origin: str) -> tuple[str, str]:
    u_s, a_s = fmt_prob(u), fmt_prob(a)
    if accepted:
        title = f"Coin u = {u_s} < a = {a_s}: keep {label}"
        if a >= 1:
            why = (
                f"Every coin in [0, 1) is below a = 1, so {label} is kept whatever the coin "
                f"(here u = {u_s}, {origin})."
            )
        else:
            why = (
                f"A uniform coin lands below a with probability exactly a, so {label} survives "
                f"{100 * a:.1f}% of the time. This coin ({origin}) came up {u_s}, below "
                f"{a_s}: keep it."
            )
    else:
        title = f"Coin u = {u_s} ≥ a = {a_s}: reject {label}"
        if a <= 0:
            why = f"No coin is below a = 0, so {label} is rejected whatever the coin."
        else:
            why = (
                f"{label} is kept only {100 * a:.1f}% of the time; this coin ({origin}) "
                f"came up {u_s}, not below {a_s}, so it fails: reject {label}. The round "
                "stops at this position."
            )
    return title, why


@dataclass
class _Story:
    """The story being written: the round, and the draft and output status so far."""

    spec: RoundSpec
    res: sc.RoundResult
    p_rows: np.ndarray  # (K+1, V)
    q_rows: np.ndarray  # (K, V)
    coin_origin: tuple[str, ...]
    steps: list[Step] = field(default_factory=list)
    status: list[DraftView] = field(default_factory=list)
    emitted: list[tuple[int, int, sc.TokenStatus]] = field(default_factory=list)

    @property
    def labels(self) -> tuple[str, ...]:
        return self.spec.labels

    def label(self, token: int) -> str:
        return show(self.spec.labels[token])

    def add(self, kind: StepKind, position: int | None, title: str, why: str, latex: str) -> None:
        """Append one step with the draft and output status as they are now."""
        self.steps.append(
            Step(
                len(self.steps),
                kind,
                position,
                title,
                why,
                latex,
                tuple(self.status),
                tuple(self.emitted),
            )
        )

    def drawn(self) -> str:
        """How the final token was drawn, in words."""
        if self.spec.origin == "preset":
            return "set by the preset"
        if self.res.final_coin is None:
            return "chosen by hand"
        return f"inverse-CDF draw with u = {fmt_prob(self.res.final_coin)}, seed {self.spec.seed}"


def _coin_origins(spec: RoundSpec, k: int) -> tuple[str, ...]:
    """Per draft position: how its coin was obtained (preset, typed, or drawn with the seed)."""
    if spec.origin == "preset":
        return tuple("set by the preset" for _ in range(k))
    n_typed = len(spec.coins)
    return tuple("typed" if i < n_typed else f"drawn with seed {spec.seed}" for i in range(k))


def _add_draft(story: _Story) -> None:
    """Step 1 (seed 000 Step 1): the draft writes x_1..x_K, x_i ~ q_i."""
    spec, res, k = story.spec, story.res, story.res.k_drafts
    drafted = ", ".join(
        f"{story.label(t)} (q = {fmt_prob(story.q_rows[i, t])})"
        for i, t in enumerate(res.draft_tokens)
    )
    if spec.draft_tokens is not None and spec.origin == "custom":
        how = "chosen by hand"
    elif spec.origin == "preset":
        how = "set by the preset"
    else:
        how = f"sampled from q with seed {spec.seed}"
    story.add(
        "draft",
        0,
        f"The draft proposes K = {k} token{'s' if k > 1 else ''}: {drafted}",
        f"Drafting is cheap, so the draft model writes K = {k} tokens ahead ({how}). The target "
        f"then scores all {k} positions, plus one more, in a single forward pass: "
        f"p at positions 1 to {k + 1}.",
        r"x_i \sim q_i,\quad i = 1, \dots, K = " + str(k),
    )


def _add_ratio(story: _Story, s: sc.RoundStep) -> None:
    """a = min(1, p(x)/q(x)) at one checked position (Leviathan et al. 2023, Algorithm 1)."""
    p_s, q_s, a_s = fmt_prob(s.p_x), fmt_prob(s.q_x), fmt_prob(s.acceptance_probability)
    ratio = fmt_ratio(s.ratio)
    label = story.label(s.token)
    story.add(
        "ratio",
        s.position,
        f"Position {s.position + 1}: {label} has p = {p_s}, q = {q_s}, ratio {ratio}, a = {a_s}",
        _ratio_why(label, s.p_x, s.q_x, s.acceptance_probability),
        r"a = \min\left(1, \frac{p(x)}{q(x)}\right) = \min\left(1, \frac{"
        + p_s
        + "}{"
        + q_s
        + r"}\right) = \min(1,\ "
        + ratio.replace("infinite", r"\infty")
        + r") = "
        + a_s,
    )


def _add_coin(story: _Story, s: sc.RoundStep) -> None:
    """The coin u ~ U[0, 1) against a: keep iff u < a (the coin rule in docs/CHOICES.md)."""
    i = s.position
    story.status[i] = "accepted" if s.accepted else "rejected"
    if s.accepted:
        story.emitted.append((i, s.token, "accepted"))
    a = s.acceptance_probability
    title, why = _coin_text(story.label(s.token), s.coin, a, s.accepted, story.coin_origin[i])
    relation = "<" if s.accepted else r"\geq"
    verdict = r"\text{keep}" if s.accepted else r"\text{reject}"
    story.add(
        "coin",
        i,
        title,
        why,
        f"u = {fmt_prob(s.coin)} {relation} a = {fmt_prob(a)}" r"\;\Rightarrow\;" + verdict,
    )


def _add_discard(story: _Story) -> None:
    """After the first rejection the later drafts are dropped unchecked (seed 003 Ex 2)."""
    res, later = story.res, story.res.discarded_positions
    if not later:
        return
    for i in later:
        story.status[i] = "discarded"
    rejected = story.label(res.draft_tokens[res.final_position])
    listed = ", ".join(
        f"{story.label(res.draft_tokens[i])} at position {i + 1} (its p = "
        f"{fmt_prob(story.p_rows[i, res.draft_tokens[i]])})"
        for i in later
    )
    first = r"x_{" + str(later[0] + 1) + "}"
    span = first if len(later) == 1 else first + r", \dots, x_{" + str(res.k_drafts) + "}"
    story.add(
        "discard",
        later[0],
        f"Stop: discard the later draft{'s' if len(later) > 1 else ''}: {listed}",
        f"Tokens are a sequence: these drafts were written assuming {rejected} came "
        f"before them. Once {rejected} is gone the context is different, so their "
        "probabilities are meaningless, however good they looked. They are never checked.",
        span + r"\ \text{discarded unchecked}",
    )


def _add_residual(story: _Story) -> None:
    """The leftover max(0, p - q) at the rejected position (seed 000 Step 5), from the core."""
    res, j = story.res, story.res.final_position
    leftover = res.residual_unnormalised  # (V,)
    token = res.draft_tokens[j]
    p_x, q_x = story.p_rows[j, token], story.q_rows[j, token]
    story.add(
        "residual",
        j,
        f"Residual at position {j + 1}: max(0, p − q) = {fmt_vector(leftover, story.labels)}",
        f"Only tokens the target wants more than the draft offered deserve the replacement's "
        f"mass. {story.label(token)} was over-supplied by the draft (p − q = {fmt_prob(p_x)} − "
        f"{fmt_prob(q_x)} < 0), so it gets 0.",
        r"\max(0,\ p(x) - q(x)) = " + latex_vector(leftover),
    )


def _add_normalise(story: _Story) -> None:
    """p_adj = max(0, p - q) / Z with Z = 1 - alpha (seed 003 Ex 6); p itself when Z = 0."""
    res, j = story.res, story.res.final_position
    z = float(res.residual_unnormalised.sum())
    if z <= RESIDUAL_TOLERANCE:
        story.add(
            "normalise",
            j,
            "The residual has no mass: fall back to p",
            "p = q here, so a rejection cannot really happen; the core's documented "
            "fallback draws from p itself, the distribution the output must follow.",
            r"Z = \sum_x \max(0,\ p(x) - q(x)) = 0 \;\Rightarrow\; p_{\text{adj}} = p",
        )
        return
    dist = res.final_distribution
    story.add(
        "normalise",
        j,
        f"Normalise: Z = {fmt_prob(z)}, p_adj = {fmt_vector(dist, story.labels)}",
        f"Dividing by Z = {fmt_prob(z)} makes the leftover a distribution that sums to "
        f"1. Z is also 1 − α = 1 − {fmt_prob(1.0 - z)}, the chance that a draft at this "
        "position is rejected.",
        r"Z = \sum_x \max(0,\ p(x) - q(x)) = " + fmt_prob(z) + r" = 1 - \alpha,\quad "
        r"p_{\text{adj}} = \frac{\max(0,\ p - q)}{Z} = " + latex_vector(dist),
    )


def _add_resample(story: _Story) -> None:
    """The replacement token, x ~ p_adj: what makes the round lossless."""
    res, j, tok = story.res, story.res.final_position, story.res.final_token
    dist = res.final_distribution
    rejected = story.label(res.draft_tokens[j])
    story.emitted.append((j, tok, res.final_status))
    story.add(
        "resample",
        j,
        f"Resample position {j + 1} from p_adj: {story.label(tok)} (p_adj = {fmt_prob(dist[tok])})",
        f"{story.label(tok)} replaces {rejected} ({story.drawn()}). The replacement follows "
        "exactly the mass the draft under-supplied, so every emitted token is distributed as p: "
        "the round is lossless.",
        r"x \sim p_{\text{adj}},\quad p_{\text{adj}}(x) = " + fmt_prob(dist[tok]),
    )


def _add_bonus(story: _Story) -> None:
    """All K kept: a free token from p_{K+1}, scored by the same target pass."""
    res, k, tok = story.res, story.res.k_drafts, story.res.final_token
    story.emitted.append((k, tok, res.final_status))
    p_x = fmt_prob(story.p_rows[k, tok])
    kept = f"All {k} drafts" if k > 1 else "The one draft"  # never "All 1 drafts"
    story.add(
        "bonus",
        k,
        f"{kept} kept: bonus token {story.label(tok)} from p at position {k + 1} (p = {p_x})",
        f"The target's single pass already produced a distribution one step past the last "
        f"draft, so this token is free ({story.drawn()}).",
        r"x \sim p_{K+1} = p_{" + str(k + 1) + r"},\quad p_{" + str(k + 1) + r"}(x) = " + p_x,
    )


def _add_result(story: _Story) -> None:
    """What the round emitted: n_kept + 1 tokens for one target pass."""
    res, k = story.res, story.res.k_drafts
    n_out, n_kept = len(story.emitted), res.n_accepted
    out = " ".join(story.label(t) for _, t, _ in story.emitted)
    if res.final_kind == "bonus":
        why = (
            f"All drafts survived, the maximum K + 1 = {k + 1}. Plain decoding would need "
            f"{n_out} target passes for these {n_out} tokens."
        )
    else:
        why = (
            f"Output count on a rejection at position {res.final_position + 1} is "
            f"{res.final_position} + 1 = {n_out}. Even with a rejection the round yields one "
            "correct token from the target distribution, just as plain decoding would."
        )
    story.add(
        "result",
        None,
        f"Round result: {n_out} token{'s' if n_out > 1 else ''} ({out}) from one target pass: "
        f"{n_kept} kept + 1 {res.final_status}",
        why,
        r"\text{tokens} = n_{\text{kept}} + 1 = " + f"{n_kept} + 1 = {n_out}",
    )


def build_story(spec: RoundSpec, result: sc.RoundResult | None = None) -> RoundStory:
    """The ordered decisions of the round ``spec`` (plays it unless ``result`` is given).

    One builder per step kind, in the order of seed 000 Steps 1-6: draft, then
    ratio and coin per checked position, then discard/residual/normalise/
    resample after a rejection or bonus when all K were kept, then the result.
    """
    res = result if result is not None else play_round(spec)
    story = _Story(
        spec,
        res,
        np.asarray(spec.p_rows, dtype=np.float64),
        np.asarray(spec.q_rows, dtype=np.float64),
        _coin_origins(spec, res.k_drafts),
        status=["pending"] * res.k_drafts,
    )
    _add_draft(story)
    for s in res.steps:
        _add_ratio(story, s)
        _add_coin(story, s)
    if res.final_kind == "resample":
        _add_discard(story)
        _add_residual(story)
        _add_normalise(story)
        _add_resample(story)
    else:
        _add_bonus(story)
    _add_result(story)
    return RoundStory(
        spec.labels, story.p_rows, story.q_rows, res, tuple(story.steps), story.coin_origin
    )
