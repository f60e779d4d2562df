"""The Model pair lab's words: every shipped pair is described, the pairs that gain by
their draft say why, and a local Hugging Face pair gets the cache's words."""

from specdec_core import lm
from specdec_core.lm import PairInfo
from specdec_ui.model_pairs import words

GAIN_BY_THEIR_DRAFT = [  # the issue-12 pairs: prompt lookup and distilled drafts
    "lookup-to-gpt-4L",
    "gpt-1L-aligned-to-gpt-4L",
    "trigram-aligned-to-gpt-4L",
    "lookup-table-to-gpt-4L",
]


def test_every_shipped_pair_has_its_description_and_nothing_else_does():
    assert set(words.PAIR_WORDS) == set(lm.PAIRS)
    for name, info in lm.PAIRS.items():
        said = words.pair_words(info)
        assert said.description.endswith(".") and len(said.description) > 40, name
        assert said.description in words.pair_caption(info)


def test_the_pairs_that_gain_by_their_draft_say_why():
    for name in GAIN_BY_THEIR_DRAFT:
        why = words.pair_words(lm.PAIRS[name]).why
        assert why.endswith(".") and len(why) > 40, name


def test_the_caption_names_both_models_then_what_the_pair_is_and_why():
    info = lm.PAIRS["lookup-to-gpt-4L"]
    said = words.PAIR_WORDS["lookup-to-gpt-4L"]
    assert words.pair_caption(info) == (
        f"Draft: {info.draft}. Target: {info.target}. {said.description} {said.why}"
    )


def test_a_local_hugging_face_pair_gets_the_caches_words():
    info = PairInfo("a-to-b", "a -> b (Hugging Face, local)", "a", "b", hugging_face=True)
    assert words.pair_words(info) is words.HUGGING_FACE_WORDS
    assert "Hugging Face cache" in words.pair_caption(info)
    assert words.pair_words(PairInfo("other", "other", "a", "b")).description == ""
