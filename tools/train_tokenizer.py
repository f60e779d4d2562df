"""Train the shared BPE tokenizer (512 tokens) on the training split of the corpus.

Run: ``python tools/train_tokenizer.py`` -> specdec_core/lm/assets/tokenizer.json
Deterministic (no randomness: ties are broken by the pair's text).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specdec_core.lm.corpus import ASSETS, load_corpus  # noqa: E402
from specdec_core.lm.tokenizer import train_bpe  # noqa: E402


def main() -> None:
    corpus = load_corpus()
    start = time.perf_counter()
    tok = train_bpe(corpus.train_text, 512)
    took = time.perf_counter() - start
    (ASSETS / "tokenizer.json").write_text(tok.to_json() + "\n", encoding="utf-8")
    n_train = len(tok.encode(corpus.train_text))
    n_val = len(tok.encode(corpus.validation_text))
    print(
        f"vocab {tok.vocab_size} (alphabet {len(tok.alphabet)}), trained in {took:.1f} s; "
        f"train {n_train:,} tokens ({len(corpus.train_text) / n_train:.2f} chars/token), "
        f"validation {n_val:,} tokens"
    )
    assert tok.decode(tok.encode(corpus.train_text)) == corpus.train_text


if __name__ == "__main__":
    main()
