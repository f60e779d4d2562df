"""Model pairs: the registry and loading (the model protocol is in :mod:`.protocol`).

Each pair is loaded once per process (``lru_cache``); callers take ``fresh()`` runners,
so the cached models are never mutated.
"""

from __future__ import annotations

import functools
import importlib.util

import numpy as np

from .blas import limit_blas_threads
from .corpus import ASSETS, load_corpus
from .errors import PairUnavailableError
from .gpt import GPTModel
from .ngram import NGramModel
from .protocol import LanguageModel, PairInfo
from .tokenizer import Tokenizer

PAIRS: dict[str, PairInfo] = {
    "gpt-1L-to-gpt-4L": PairInfo(
        "gpt-1L-to-gpt-4L",
        "tiny GPT (1 layer) -> small GPT (4 layers)",
        "GPT, 1 layer, d = 64 (0.1 M parameters)",
        "GPT, 4 layers, d = 192 (1.9 M parameters)",
        "Two decoder-only transformers trained on the same text. The target verifies K+1 "
        "drafted tokens in one forward pass (a KV cache keeps what it has read).",
    ),
    "trigram-to-gpt-4L": PairInfo(
        "trigram-to-gpt-4L",
        "trigram -> small GPT (4 layers)",
        "trigram counts (Witten-Bell smoothing)",
        "GPT, 4 layers, d = 192 (1.9 M parameters)",
        "A trigram draft costs almost nothing (c near 0) but agrees with the target less often.",
    ),
    "bigram-to-5gram": PairInfo(
        "bigram-to-5gram",
        "bigram -> 5-gram (counts)",
        "bigram counts",
        "5-gram counts (Witten-Bell smoothing)",
        "Both models are word counts built at start-up. Shows the mechanics; the 5-gram has no "
        "parallel verify (K+1 positions cost K+1 lookups), so it cannot gain wall-clock time.",
    ),
}


@functools.lru_cache(maxsize=1)
def load_tokenizer() -> Tokenizer:
    """The BPE tokenizer every pair shares (assets/tokenizer.json)."""
    return Tokenizer.load(ASSETS / "tokenizer.json")


@functools.lru_cache(maxsize=1)
def corpus_token_ids() -> np.ndarray:
    """The training split as token ids (int32), for the n-gram models."""
    return np.asarray(load_tokenizer().encode(load_corpus().train_text), dtype=np.int32)


@functools.lru_cache(maxsize=4)
def _gpt(which: str) -> GPTModel:
    path = ASSETS / f"gpt_{which}.npz"
    if not path.exists():
        raise PairUnavailableError(f"the weights {path.name} are missing; run tools/train_gpt.py.")
    return GPTModel.load(path, tokenizer=load_tokenizer(), name=f"GPT {which}")


@functools.lru_cache(maxsize=4)
def _ngram(order: int) -> NGramModel:
    tok = load_tokenizer()
    return NGramModel(
        corpus_token_ids(),
        order,
        tok.vocab_size,
        name={2: "bigram", 3: "trigram"}.get(order, f"{order}-gram"),
        tokenizer=tok,
    )


_LOADERS = {
    "gpt-1L-to-gpt-4L": lambda: (_gpt("draft"), _gpt("target")),
    "trigram-to-gpt-4L": lambda: (_ngram(3), _gpt("target")),
    "bigram-to-5gram": lambda: (_ngram(2), _ngram(5)),
}


@functools.lru_cache(maxsize=1)
def _hf_pairs() -> dict[str, PairInfo]:
    """Locally cached Hugging Face pairs (looked up once per process; see :mod:`.hf`)."""
    if importlib.util.find_spec("transformers") is None:
        return {}
    from . import hf

    return hf.cached_pairs()


_NEEDS = {  # asset files each shipped pair loads
    "gpt-1L-to-gpt-4L": ("tokenizer.json", "gpt_draft.npz", "gpt_target.npz"),
    "trigram-to-gpt-4L": ("tokenizer.json", "corpus.json.gz", "gpt_target.npz"),
    "bigram-to-5gram": ("tokenizer.json", "corpus.json.gz"),
}


def available_pairs() -> list[str]:
    """Names of the pairs that can load here (shipped ones, plus locally cached HF ones)."""
    names = [n for n in PAIRS if all((ASSETS / f).exists() for f in _NEEDS[n])]
    return names + list(_hf_pairs())


def pair_info(name: str) -> PairInfo:
    info = PAIRS.get(name) or _hf_pairs().get(name)
    if info is None:
        raise PairUnavailableError(
            f"unknown model pair {name!r}; available: {', '.join(available_pairs())}."
        )
    return info


def load_pair(name: str) -> tuple[LanguageModel, LanguageModel]:
    """(draft, target) for a pair name of :func:`available_pairs` (loaded once per process).

    Side effect: numpy's OpenBLAS is set to one thread (:func:`blas.limit_blas_threads`),
    which is faster for matrices this small and steadier on a shared machine.
    """
    limit_blas_threads(1)
    if name in _LOADERS:
        return _LOADERS[name]()
    hf_pairs = _hf_pairs()
    if name in hf_pairs:
        from . import hf

        return hf.load_hf_pair(name)
    raise PairUnavailableError(
        f"unknown model pair {name!r}; available: {', '.join(available_pairs())}."
    )
