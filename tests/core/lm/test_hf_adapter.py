"""The optional Hugging Face adapter, on tiny randomly initialised models (no download).

Needs ``transformers`` and ``torch`` (see requirements-train.txt); the app never does.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

if os.environ.get("SPECDEC_REQUIRE_OPTIONAL") == "1":  # CI installs requirements-train.txt
    import torch
    import transformers
else:  # a contributor without the optional packages: skip, saying why
    _why = "optional: pip install -r requirements-train.txt (torch, transformers)"
    transformers = pytest.importorskip("transformers", reason=_why)
    torch = pytest.importorskip("torch", reason=_why)

from specdec_core.lm import (  # noqa: E402
    PairUnavailableError,
    autoregressive_generate,
    available_pairs,
    encode_prompt,
    hf,
    load_pair,
    load_tokenizer,
    pairs,
    speculative_generate,
)

TOK = load_tokenizer()  # the project's BPE: the tiny models use its 512 ids


def tiny_gpt2(layers: int, seed: int) -> hf.HFCausalLM:
    torch.manual_seed(seed)
    cfg = transformers.GPT2Config(
        vocab_size=TOK.vocab_size, n_positions=128, n_embd=32, n_layer=layers, n_head=2
    )
    model = transformers.GPT2LMHeadModel(cfg)
    return hf.HFCausalLM(model, TOK, f"tiny-gpt2-{layers}")


@pytest.fixture(scope="module")
def pair():
    return tiny_gpt2(1, 0), tiny_gpt2(2, 1)


def test_block_call_rollback_and_fresh_prefill_agree(pair):
    _, target = pair
    ids = encode_prompt(TOK, "Return the number of items in the list")
    runner = target.fresh()
    runner.extend(ids[:5])
    runner.extend([7, 8, 9])  # rejected drafts
    runner.rollback(5)
    after = runner.extend(ids[5:])
    fresh = target.fresh().extend(ids)[5:]
    assert np.abs(after - fresh).max() < 1e-4
    steps = target.fresh()
    one_by_one = np.concatenate([steps.extend([t]) for t in ids])
    assert np.abs(one_by_one - target.fresh().extend(ids)).max() < 1e-4


def test_greedy_speculative_equals_greedy_decoding_with_hf_models(pair):
    draft, target = pair
    ids = encode_prompt(TOK, "The for statement")
    plain = autoregressive_generate(
        target, ids, max_new_tokens=20, temperature=0.0, rng=np.random.default_rng(0)
    )
    for k in (1, 4):
        spec = speculative_generate(
            draft,
            target,
            ids,
            k=k,
            max_new_tokens=20,
            temperature=0.0,
            rng=np.random.default_rng(0),
        )
        assert spec.tokens == plain.tokens


def test_context_limit_is_a_clear_error(pair):
    _, target = pair
    with pytest.raises(ValueError, match="context of 128"):
        target.fresh().extend(np.zeros(129, dtype=np.int64))


def test_nothing_is_listed_or_downloaded_when_the_cache_is_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    pairs._look_up_hf_pairs.cache_clear()
    try:
        assert hf.cached_pairs() == {}
        assert not any(name.startswith("hf-") for name in available_pairs())
        with pytest.raises(PairUnavailableError):
            load_pair("hf-distilgpt2-to-gpt2")
        assert not any(tmp_path.iterdir())  # nothing was fetched into the cache
    finally:
        pairs._look_up_hf_pairs.cache_clear()
