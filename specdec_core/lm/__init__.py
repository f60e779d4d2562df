"""Real model pairs for speculative decoding: tokenizer, n-grams, a numpy GPT, the engine.

Everything here runs on numpy at run time (torch is only used by ``tools/`` to train).
Public entry points:

- :func:`available_pairs`, :func:`load_pair` -> ``(draft, target)``, :func:`pair_info`;
- :func:`speculative_generate` and :func:`autoregressive_generate`, returning a
  :class:`GenerationResult` (tokens, how each was produced, per-round trace, counts,
  acceptance rate, time split into draft / verify / overhead);
- :func:`encode_prompt` (checked text -> ids; :func:`ascii_prompt` maps curly quotes and
  accents to ASCII and says what it mapped) and :func:`cost_model` (c, v(K) and the
  predicted speedups from a speculative and a plain run);
- :func:`measure_costs` -> :class:`CostProfile` (c and v(0..K) on this machine), which
  ``speculative_generate(..., adaptive=profile)`` guards its rounds with (draft K, or
  plain steps while drafting does not pay: :mod:`.adaptive`).
"""

from .adaptive import CostProfile
from .corpus import Corpus, load_corpus
from .costs import measure_costs, measure_pair_costs
from .errors import (
    MAX_NEW_TOKENS,
    MAX_PROMPT_CHARS,
    ContextLengthError,
    PairUnavailableError,
    PromptError,
)
from .generate import (
    DraftLength,
    GenerationResult,
    PositionTrace,
    RoundKind,
    RoundTrace,
    TokenKind,
    autoregressive_generate,
    probabilities,
    speculative_generate,
)
from .gpt import GPTModel
from .ngram import NGramModel
from .pairs import (
    PAIRS,
    available_pairs,
    load_pair,
    load_tokenizer,
    pair_info,
)
from .prompt_text import PromptText, ascii_prompt
from .protocol import LanguageModel, PairInfo
from .report import (
    CostModel,
    PairRun,
    compare_pair,
    cost_model,
    encode_prompt,
    gpu_like_prediction,
)
from .tokenizer import Tokenizer, train_bpe

__all__ = [
    "ContextLengthError",
    "Corpus",
    "CostModel",
    "CostProfile",
    "DraftLength",
    "GPTModel",
    "GenerationResult",
    "LanguageModel",
    "MAX_NEW_TOKENS",
    "MAX_PROMPT_CHARS",
    "NGramModel",
    "PAIRS",
    "PairInfo",
    "PairRun",
    "PairUnavailableError",
    "PositionTrace",
    "PromptError",
    "RoundKind",
    "RoundTrace",
    "TokenKind",
    "Tokenizer",
    "autoregressive_generate",
    "available_pairs",
    "compare_pair",
    "cost_model",
    "encode_prompt",
    "ascii_prompt",
    "PromptText",
    "gpu_like_prediction",
    "load_corpus",
    "load_pair",
    "load_tokenizer",
    "measure_costs",
    "measure_pair_costs",
    "pair_info",
    "probabilities",
    "speculative_generate",
    "train_bpe",
]
