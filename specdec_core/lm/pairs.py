"""Model pairs: the registry and loading (the model protocol is in :mod:`.protocol`).

Each pair is loaded once per process (``lru_cache``); callers take ``fresh()`` runners,
so the cached models are never mutated.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import threading
from pathlib import Path

import numpy as np

from .blas import limit_blas_threads
from .choice_table import ChoiceTable, LookupTableDraft
from .corpus import ASSETS, load_corpus
from .errors import PairUnavailableError
from .gpt import GPTModel
from .ngram import NGramModel
from .prompt_lookup import PromptLookupDraft
from .protocol import LanguageModel, PairInfo, Proposer
from .tokenizer import Tokenizer

PAIRS: dict[str, PairInfo] = {  # their descriptions: specdec_ui/model_pairs/words.py
    "gpt-1L-to-gpt-4L": PairInfo(
        "gpt-1L-to-gpt-4L",
        "tiny GPT (1 layer) -> small GPT (4 layers)",
        "GPT, 1 layer, d = 64 (0.1 M parameters)",
        "GPT, 4 layers, d = 192 (1.9 M parameters)",
    ),
    "trigram-to-gpt-4L": PairInfo(
        "trigram-to-gpt-4L",
        "trigram -> small GPT (4 layers)",
        "trigram counts (Witten-Bell smoothing)",
        "GPT, 4 layers, d = 192 (1.9 M parameters)",
    ),
    "bigram-to-5gram": PairInfo(
        "bigram-to-5gram",
        "bigram -> 5-gram (counts)",
        "bigram counts",
        "5-gram counts (Witten-Bell smoothing)",
    ),
    "lookup-to-gpt-4L": PairInfo(
        "lookup-to-gpt-4L",
        "prompt lookup (no draft model) -> small GPT (4 layers)",
        "prompt lookup: the tokens that followed the last 3, 2 or 1 tokens earlier in the text",
        "GPT, 4 layers, d = 192 (1.9 M parameters)",
    ),
    "gpt-1L-aligned-to-gpt-4L": PairInfo(
        "gpt-1L-aligned-to-gpt-4L",
        "tiny GPT trained on the target's text -> small GPT (4 layers)",
        "GPT, 1 layer, d = 64, distilled from the target (0.1 M parameters)",
        "GPT, 4 layers, d = 192 (1.9 M parameters)",
    ),
    "trigram-aligned-to-gpt-4L": PairInfo(
        "trigram-aligned-to-gpt-4L",
        "trigram fitted to the target's text -> small GPT (4 layers)",
        "trigram counts of the corpus plus text the target wrote (Witten-Bell smoothing)",
        "GPT, 4 layers, d = 192 (1.9 M parameters)",
    ),
    "lookup-table-to-gpt-4L": PairInfo(
        "lookup-table-to-gpt-4L",
        "prompt lookup + the target's choice table (no draft model) -> small GPT (4 layers)",
        "prompt lookup (last 4, 3 or 2 tokens), else a table of the target's own most "
        "frequent next token after the last 4..1 tokens",
        "GPT, 4 layers, d = 192 (1.9 M parameters)",
    ),
}

# SHA-256 of the distilled assets (printed by tools/train_aligned_draft.py); a file that
# does not match is refused (PairUnavailableError), never loaded.
SHA256 = {
    "gpt_draft_aligned.npz": "2a2091eb4bb717730261ed5224a81ad0efe30cce845c79afe7b13626642487e8",
    "target_samples.npz": "1230b06c71b6efb6bb918831b2dd812a540984ab087753472e8c4a90b9c5acba",
    "choice_table.npz": "826b0adc038b7ea67e1e9b713469fd0464d24044b8253706c12e891a3ac435d3",
}
SAMPLE_WEIGHT = 2  # the target's samples count this many times beside the corpus (best
# held-out alpha of 1, 2, 4, 8 in tools/train_aligned_draft.py; see tools/README.md)


@functools.lru_cache(maxsize=1)
def load_tokenizer() -> Tokenizer:
    """The BPE tokenizer every pair shares (assets/tokenizer.json)."""
    return Tokenizer.load(ASSETS / "tokenizer.json")


@functools.lru_cache(maxsize=1)
def corpus_token_ids() -> np.ndarray:
    """The training split as token ids (int32), for the n-gram models."""
    return np.asarray(load_tokenizer().encode(load_corpus().train_text), dtype=np.int32)


def checked_asset(name: str) -> Path:
    """The path of an asset, after its SHA-256 is compared with :data:`SHA256` (if listed)."""
    path = ASSETS / name
    if not path.exists():
        raise PairUnavailableError(f"the file {name} is missing; see tools/README.md.")
    want = SHA256.get(name)
    if want is not None and hashlib.sha256(path.read_bytes()).hexdigest() != want:
        raise PairUnavailableError(
            f"the file {name} does not match its SHA-256 checksum (damaged or replaced); "
            "restore it from the repository."
        )
    return path


@functools.lru_cache(maxsize=4)
def _gpt(which: str) -> GPTModel:
    path = checked_asset(f"gpt_{which}.npz")
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


@functools.lru_cache(maxsize=1)
def _aligned_trigram() -> NGramModel:
    """A trigram over the corpus plus SAMPLE_WEIGHT copies of the target's samples."""
    with np.load(checked_asset("target_samples.npz")) as data:
        samples = data["ids"].astype(np.int32)
    tok = load_tokenizer()
    ids = np.concatenate([*[samples] * SAMPLE_WEIGHT, corpus_token_ids()])
    return NGramModel(ids, 3, tok.vocab_size, name="trigram (aligned)", tokenizer=tok)


@functools.lru_cache(maxsize=1)
def _choice_table() -> ChoiceTable:
    """The target's choices counted into a table (tools/label_target_choices.py)."""
    with np.load(checked_asset("choice_table.npz")) as data:
        return ChoiceTable.from_arrays({name: data[name] for name in data.files})


_LOADERS = {
    "gpt-1L-to-gpt-4L": lambda: (_gpt("draft"), _gpt("target")),
    "trigram-to-gpt-4L": lambda: (_ngram(3), _gpt("target")),
    "bigram-to-5gram": lambda: (_ngram(2), _ngram(5)),
    "lookup-to-gpt-4L": lambda: (PromptLookupDraft(load_tokenizer()), _gpt("target")),
    "gpt-1L-aligned-to-gpt-4L": lambda: (_gpt("draft_aligned"), _gpt("target")),
    "trigram-aligned-to-gpt-4L": lambda: (_aligned_trigram(), _gpt("target")),
    "lookup-table-to-gpt-4L": lambda: (
        LookupTableDraft(_choice_table(), load_tokenizer()),
        _gpt("target"),
    ),
}


_HF_LOCK = threading.Lock()


def _hf_pairs() -> dict[str, PairInfo]:
    """Locally cached Hugging Face pairs (looked up once per process; see :mod:`.hf`).

    Under a lock: the first look imports huggingface_hub, and 30 sessions asking at once
    would otherwise all import and search at the same time (an ``lru_cache`` alone lets
    every first caller compute). The one cache is :func:`_look_up_hf_pairs`'s.
    """
    with _HF_LOCK:
        return _look_up_hf_pairs()


@functools.lru_cache(maxsize=1)
def _look_up_hf_pairs() -> dict[str, PairInfo]:
    if importlib.util.find_spec("transformers") is None:
        return {}
    from . import hf

    return hf.cached_pairs()


_NEEDS = {  # asset files each shipped pair loads
    "gpt-1L-to-gpt-4L": ("tokenizer.json", "gpt_draft.npz", "gpt_target.npz"),
    "trigram-to-gpt-4L": ("tokenizer.json", "corpus.json.gz", "gpt_target.npz"),
    "bigram-to-5gram": ("tokenizer.json", "corpus.json.gz"),
    "lookup-to-gpt-4L": ("tokenizer.json", "gpt_target.npz"),
    "gpt-1L-aligned-to-gpt-4L": ("tokenizer.json", "gpt_draft_aligned.npz", "gpt_target.npz"),
    "trigram-aligned-to-gpt-4L": (
        "tokenizer.json",
        "corpus.json.gz",
        "target_samples.npz",
        "gpt_target.npz",
    ),
    "lookup-table-to-gpt-4L": ("tokenizer.json", "choice_table.npz", "gpt_target.npz"),
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


def load_pair(name: str) -> tuple[LanguageModel | Proposer, LanguageModel]:
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
