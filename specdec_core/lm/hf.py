"""Optional: Hugging Face causal language models as draft and target (local cache only).

For people who run the app on their own machine with ``transformers`` and ``torch``
installed and the weights already in their Hugging Face cache. Nothing here downloads:
:func:`cached_pairs` lists a pair only when both models' files are found in the local
cache (``huggingface_hub.try_to_load_from_cache``), and loading uses
``local_files_only=True`` and ``trust_remote_code=False`` (no code from a model
repository ever runs). The app's own pairs never import this module's dependencies.

:class:`HFCausalLM` wraps any ``transformers`` causal LM in the pair protocol: ``extend``
feeds a block of tokens with the model's key/value cache (``past_key_values``) and
returns float32 logits; ``rollback`` crops the cache (``DynamicCache.crop(-n)``), or, for a
cache without ``crop``, re-reads the kept tokens.
"""

from __future__ import annotations

import copy
import importlib.util

import numpy as np

from ..errors import InvalidParameterError
from .errors import ContextLengthError, PairUnavailableError, PromptError
from .protocol import PairInfo

CANDIDATES = {
    "hf-distilgpt2-to-gpt2": ("distilgpt2", "gpt2"),
    "hf-smollm2-135m-to-360m": ("HuggingFaceTB/SmolLM2-135M", "HuggingFaceTB/SmolLM2-360M"),
}
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def available() -> bool:
    """True when transformers and torch are importable (nothing is imported here)."""
    return all(importlib.util.find_spec(m) is not None for m in ("transformers", "torch"))


def is_cached(repo: str) -> bool:
    """The model's config and weights are in the local Hugging Face cache (no network)."""
    from huggingface_hub import try_to_load_from_cache

    def found(filename: str) -> bool:
        return isinstance(try_to_load_from_cache(repo, filename), str)

    return found("config.json") and any(found(f) for f in WEIGHT_FILES)


def cached_pairs() -> dict[str, PairInfo]:
    """The candidate pairs whose two models are both in the local cache."""
    if not available():
        return {}
    pairs = {}
    for name, (draft, target) in CANDIDATES.items():
        if is_cached(draft) and is_cached(target):
            pairs[name] = PairInfo(
                name,
                f"{draft} -> {target} (Hugging Face, local)",
                draft,
                target,
                hugging_face=True,
            )
    return pairs


class HFTokenizer:
    """A ``transformers`` tokenizer in the shape the engine and the page use."""

    def __init__(self, tokenizer, vocab_size: int) -> None:
        self._tok = tokenizer
        self.vocab_size = vocab_size
        self.vocab = _LazyVocab(tokenizer, vocab_size)

    def encode(self, text: str) -> list[int]:
        ids = self._tok.encode(text, add_special_tokens=False)
        if not ids:
            raise PromptError("the prompt gives no tokens; type a few words.")
        return list(ids)

    def decode(self, ids) -> str:
        return self._tok.decode([int(i) for i in ids])


class _LazyVocab:
    """vocab[i] = the text of token i, decoded on demand (a vocabulary can be 50 k long)."""

    def __init__(self, tokenizer, size: int) -> None:
        self._tok, self._size, self._cache = tokenizer, size, {}

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, i: int) -> str:
        i = int(i)
        if i not in self._cache:
            self._cache[i] = self._tok.decode([i])
        return self._cache[i]


class HFCausalLM:
    """Pair protocol around a ``transformers`` causal LM (torch, CPU, no gradients)."""

    parallel_verify = True

    def __init__(self, model, tokenizer, name: str, context_length: int | None = None) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = name
        cfg = model.config
        self.context_length = int(
            context_length
            or getattr(cfg, "n_positions", None)
            or getattr(cfg, "max_position_embeddings", 1024)
        )
        self.past = None
        self.tokens: list[int] = []

    @property
    def length(self) -> int:
        return len(self.tokens)

    def fresh(self) -> HFCausalLM:
        other = copy.copy(self)
        other.past, other.tokens = None, []
        return other

    def extend(self, tokens, *, last_only: bool = False) -> np.ndarray:
        import torch

        new = [int(t) for t in np.asarray(tokens).reshape(-1)]
        if len(self.tokens) + len(new) > self.context_length:
            raise ContextLengthError(
                f"{self.name}: {len(self.tokens) + len(new)} tokens do not fit its context of "
                f"{self.context_length} tokens."
            )
        with torch.no_grad():
            out = self.model(
                input_ids=torch.tensor([new]), past_key_values=self.past, use_cache=True
            )
        self.past = out.past_key_values
        self.tokens.extend(new)
        logits = out.logits[0, -1:] if last_only else out.logits[0]
        return logits.float().numpy()

    def rollback(self, length: int) -> None:
        if not 0 <= length <= len(self.tokens):
            raise InvalidParameterError(
                f"{self.name}: cannot roll back to {length} tokens; allowed: 0 to "
                f"{len(self.tokens)} (the tokens it holds)."
            )
        if length == len(self.tokens):
            return
        kept = self.tokens[:length]
        if length > 0 and hasattr(self.past, "crop"):
            # a negative argument removes that many positions (transformers 4.x and 5.x)
            self.past.crop(length - len(self.tokens))
            self.tokens = kept
        else:  # no croppable cache: read the kept tokens again
            self.past, self.tokens = None, []
            if kept:
                self.extend(kept, last_only=True)


def load_hf_pair(name: str) -> tuple[HFCausalLM, HFCausalLM]:
    """(draft, target) from the local cache; never downloads, never runs remote code."""
    if name not in CANDIDATES or not available():
        raise PairUnavailableError(f"the Hugging Face pair {name!r} is not available here.")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    models = []
    try:
        tokenizer = AutoTokenizer.from_pretrained(
            CANDIDATES[name][1], local_files_only=True, trust_remote_code=False
        )
        for repo in CANDIDATES[name]:
            models.append(
                AutoModelForCausalLM.from_pretrained(
                    repo, local_files_only=True, trust_remote_code=False
                )
            )
    except OSError as err:  # not in the cache: from_pretrained would need the network
        raise PairUnavailableError(
            f"{name}: not in the local Hugging Face cache ({err})."
        ) from None
    sizes = {m.config.vocab_size for m in models}
    if len(sizes) != 1:
        raise PairUnavailableError(f"{name}: draft and target vocabularies differ ({sizes}).")
    tok = HFTokenizer(tokenizer, sizes.pop())
    return tuple(HFCausalLM(m, tok, repo) for m, repo in zip(models, CANDIDATES[name], strict=True))
