"""Prompt checking and the cost model that turns two measured runs into predictions.

Seeds' formula (Leviathan et al. 2023, Thm 3.8; seed 003 Ex 7), with alpha the measured
acceptance rate and c = (time of one draft step) / (time of one target step):

    S_seed = E(alpha, K) / (K c + 1),   E(alpha, K) = (1 - alpha^(K+1)) / (1 - alpha).

It assumes that verifying K+1 tokens costs one target step, true on a GPU (memory-bound)
but not for a tiny model on a CPU. With the measured verify cost v(K) = (time of one
verify: the K+1-token target call and the accept / reject decisions) / (time of one
plain target step, its sampling included), the corrected prediction is

    S_corrected = E(alpha, K) / (K c + v(K)).

A draft that proposes a varying number k_r <= K of tokens per round (prompt lookup: 0
without a match) and is called once per round gets the same formula averaged over its
rounds: E = mean_r E(alpha, k_r) (E(alpha, 0) = 1, a plain step), K c -> (draft calls
per round) c, v = the mean verify time per round / step. For a model draft (k_r = K,
K calls a round) this is the formula above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..errors import InvalidParameterError
from ..theory import expected_tokens, speedup
from .errors import MAX_PROMPT_CHARS, PromptError
from .generate import GenerationResult
from .prompt_text import ascii_prompt


def encode_prompt(tokenizer, text: str, *, max_chars: int = MAX_PROMPT_CHARS) -> list[int]:
    """Checked prompt text -> token ids. Empty, too long or unencodable text -> PromptError.

    Curly quotes, dashes and accented Latin letters are read as plain ASCII first
    (:func:`.prompt_text.ascii_prompt`, which also says what it mapped, for the page)."""
    if not isinstance(text, str):
        raise PromptError(f"the prompt must be text, got {type(text).__name__}.")
    if not text.strip():
        raise PromptError("the prompt is empty; type a few words to continue.")
    if len(text) > max_chars:
        raise PromptError(
            f"the prompt is {len(text):,} characters long; at most {max_chars:,} are allowed."
        )
    return tokenizer.encode(ascii_prompt(text).text)


@dataclass(frozen=True)
class CostModel:
    k: int
    alpha: float  # measured acceptance rate (kept / checked)
    expected_tokens: float  # E(alpha, K) = (1 - alpha^(K+1)) / (1 - alpha)
    tokens_per_round: float  # measured
    target_step: float  # seconds per plain decoding step
    c: float  # draft step / target step
    v: float  # K+1-token verify call / target step
    measured_speedup: float  # plain decode time / speculative decode time
    seed_prediction: float  # E(alpha) / (K c + 1)
    corrected_prediction: float  # E(alpha) / (K c + v)
    corrected_measured_e: float  # measured tokens per round / (K c + v)

    @property
    def error(self) -> float:
        """Relative error of the corrected prediction: predicted / measured - 1."""
        return self.corrected_prediction / self.measured_speedup - 1.0


def gpu_like_prediction(alpha: float, k: int, c: float) -> float:
    """The seeds' formula with v = 1: E(alpha, K) / (K c + 1) (core ``speedup``, c_p = 1)."""
    return float(speedup(alpha, k, c, 1.0))


def cost_model(spec: GenerationResult, plain: GenerationResult) -> CostModel:
    """c, v(K) and the three speedups from a speculative run and a plain run of the target.

    Per-call times are means over the run: target step = plain decode time / tokens,
    draft step = draft time / draft calls, verify = verify time / rounds. The plain
    run must use the same target and prompt. Both runs exclude the prompt's prefill.
    """
    step = plain.time_total / len(plain.tokens)
    k = spec.k
    c = (spec.time_draft / spec.draft_calls) / step if spec.draft_calls else 0.0
    v = (spec.time_verify / spec.n_rounds) / step
    alpha = spec.acceptance_rate
    alpha = 0.0 if math.isnan(alpha) else alpha
    sizes = spec.draft_sizes or [k] * spec.n_rounds
    e = sum(float(expected_tokens(alpha, s)) if s else 1.0 for s in sizes) / len(sizes)
    calls = spec.draft_calls / spec.n_rounds  # K for a model draft
    seed = e / (calls * c + 1.0)  # E / (K c + 1)
    corrected = e / (calls * c + v)  # E / (K c + v)
    return CostModel(
        k,
        alpha,
        e,
        spec.tokens_per_round,
        step,
        c,
        v,
        plain.time_total / spec.time_total * len(spec.tokens) / len(plain.tokens),
        seed,
        corrected,
        spec.tokens_per_round / (calls * c + v),
    )


@dataclass(frozen=True)
class PairRun:
    """A speculative run and a plain run of the same target on the same prompt."""

    spec: GenerationResult  # the first repeat (with its trace); times are medians
    plain: GenerationResult
    cost: CostModel
    identical: bool  # same tokens (guaranteed at temperature 0; luck otherwise)
    repeats: int

    @property
    def target_calls_saved(self) -> int:
        """Plain decoding's target calls minus speculative decoding's."""
        return self.plain.target_calls - self.spec.target_calls

    @property
    def target_calls_saved_fraction(self) -> float:
        return self.target_calls_saved / self.plain.target_calls


def _median(values) -> float:
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def _timed_runs(draft, target, prompt_ids, settings: dict, repeats: int, tick):
    """``repeats`` (speculative, plain) pairs, interleaved, each with rng(seed), untraced."""
    from .generate import autoregressive_generate, speculative_generate

    seed, common = settings["seed"], {k: v for k, v in settings.items() if k != "seed"}
    specs, plains = [], []
    for r in range(repeats):
        specs.append(
            speculative_generate(
                draft, target, prompt_ids, rng=np.random.default_rng(seed), trace=False, **common
            )
        )
        common_plain = {k: v for k, v in common.items() if k != "k"}
        plains.append(
            autoregressive_generate(
                target, prompt_ids, rng=np.random.default_rng(seed), **common_plain
            )
        )
        tick(r + 2)
    return specs, plains


def compare_pair(
    draft,
    target,
    prompt_ids,
    *,
    k: int,
    max_new_tokens: int,
    temperature: float,
    seed: int,
    repeats: int = 3,
    trace: bool = True,
    progress=None,
) -> PairRun:
    """Run speculative and plain decoding ``repeats`` times, interleaved; median times.

    Each run uses ``np.random.default_rng(seed)``, so every repeat produces the same
    tokens and only the clocks differ. One extra untimed run records the round-by-round
    trace (``trace=True``); the timed runs skip it. ``progress(fraction)`` is called as
    the work advances (a progress bar).
    """
    from .generate import speculative_generate

    if not 1 <= repeats <= 15:
        raise InvalidParameterError(f"repeats is {repeats!r}; allowed: 1 to 15.")
    steps = repeats + 1

    def tick(done: float) -> None:
        if progress is not None:
            progress(min(1.0, done / steps))

    settings = {"k": k, "max_new_tokens": max_new_tokens, "temperature": temperature}
    # The traced run (for display) is not timed: building the trace costs time.
    shown = speculative_generate(
        draft,
        target,
        prompt_ids,
        rng=np.random.default_rng(seed),
        trace=trace,
        on_round=lambda n_done: tick(n_done / max_new_tokens),
        **settings,
    )
    specs, plains = _timed_runs(draft, target, prompt_ids, settings | {"seed": seed}, repeats, tick)
    times = ("time_draft", "time_verify", "time_total", "time_prefill", "cpu_total")
    shown = replace(shown, **{a: _median([getattr(s, a) for s in specs]) for a in times})
    plain = replace(plains[0], **{a: _median([getattr(p, a) for p in plains]) for a in times})
    return PairRun(shown, plain, cost_model(shown, plain), shown.tokens == plain.tokens, repeats)
