"""Hostile input: every parser of the core, and the link reader, against anything.

A student can type anything in a field and a crafted link can carry anything in
a query parameter. Whatever arrives, each parser either returns a value that
meets its contract or raises the project's own error (``SpecDecError``, a
``ValueError``) with a message; never another exception, never a hang (the caps
on sizes live in the core, see ``specdec_core/errors.py``).

Hypothesis runs derandomised (fixed examples, no example database), so every run
tests the same inputs; ``pytest-timeout`` turns a hang into a failure.
"""

from __future__ import annotations

import math
import string

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import specdec_core as sc
from specdec_core.errors import MAX_LABEL_LENGTH, MAX_VOCAB, SUM_TOLERANCE
from specdec_ui.kit.share import MAX_PARAM_LENGTH, LinkReader

pytestmark = pytest.mark.timeout(120)  # a hang fails the test instead of blocking the suite

HOSTILE = settings(
    max_examples=200,
    derandomize=True,
    database=None,
    deadline=None,  # no timing assertions: the timeout above guards against hangs
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --- strategies -------------------------------------------------------------------------

SPECIAL_TOKENS = [
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "+inf",
    "Infinity",
    "infinity%",
    "1e309",
    "-1e309",
    "1e-400",
    "1e308",
    "1.7976931348623157e308",
    "5e-324",
    "-0",
    "-0.0",
    "+0",
    "0",
    "0.0",
    "1/0",
    "0/0",
    "1e-400/1e-400",
    "1e300/1e-300",
    "1_000",
    "1,000",
    "0x10",
    "1e",
    ".",
    "-",
    "%",
    "/",
    "1//2",
    "1/2/3",
    "50%%",
    "--1",
    "+-1",
    "1e99999",
    "9" * 400,
    "0." + "0" * 400 + "1",
    "１",
    "٣",
    "۰.۵",
    "½",
    "⅓",
    "²",
    "١/٢",
    "𝟏",
    "0.5\u200b",
    "\u00a00.5",
    "0,5",
    "1e+4",
    "1E-2",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "$\\frac{1}{0}$",
    "**1**",
]
SEPARATORS = [",", ";", " ", "\t", "\n", ", ", " ;", ",,", "\u3000", "\u00a0", "|", ""]

number_like = st.one_of(
    st.sampled_from(SPECIAL_TOKENS),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**400), max_value=10**400).map(str),
    st.from_regex(r"\A[+-]?\d{0,6}(\.\d{0,6})?([eE][+-]?\d{1,5})?%?\Z"),
    st.from_regex(r"\A\d{1,4}/\d{1,4}\Z"),
    st.text(alphabet="0123456789.+-eE/%", max_size=12),
)


@st.composite
def typed_vectors(draw) -> str:
    """Text as a person (or a crafted link) might type into a vector field."""
    tokens = draw(st.lists(number_like, max_size=80))
    seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(tokens), max_size=len(tokens)))
    return "".join(t + s for t, s in zip(tokens, seps, strict=True))


hostile_text = st.one_of(
    typed_vectors(),
    st.text(max_size=300),  # arbitrary unicode, control characters included
    st.text(alphabet=string.printable, max_size=300),
    st.sampled_from(["", " ", "\n\t", ",", ";;;", "\x00", "\ufeff", "\u202e0.5, 0.5"]),
    # thousands of entries and very long text (the core caps both)
    st.integers(min_value=60, max_value=5_000).map(lambda n: ", ".join(["0.01"] * n)),
    st.integers(min_value=1_990, max_value=100_000).map(lambda n: "1" * n),
)


def assert_clear_error(err: BaseException) -> None:
    """The project's own error, with a message a student can read."""
    assert isinstance(err, sc.SpecDecError), f"{type(err).__name__}: {err}"
    assert isinstance(err, ValueError)
    message = str(err)
    assert message.strip(), "an error without a message"
    assert len(message) < 1_000, "an error message that echoes a huge input"


def assert_distribution(x: np.ndarray, max_size: int) -> None:
    assert isinstance(x, np.ndarray)
    assert x.dtype == np.float64 and x.ndim == 1
    assert 1 <= x.size <= max_size
    assert np.all(np.isfinite(x)) and np.all(x >= 0)
    assert math.isclose(float(x.sum()), 1.0, abs_tol=1e-9)
    assert not np.any(np.signbit(x)), "a negative zero leaked out"


# --- parse_number -----------------------------------------------------------------------


@HOSTILE
@given(token=st.one_of(number_like, st.text(max_size=60)))
def test_parse_number_returns_a_finite_float_or_a_clear_error(token):
    try:
        value = sc.parse_number(token, entry=3, name="q")
    except Exception as err:  # noqa: BLE001 - the property is about which exceptions
        assert_clear_error(err)
        assert "q: entry 3" in str(err), "the message must name the field and the entry"
        return
    assert isinstance(value, float) and math.isfinite(value)
    assert not (value == 0 and math.copysign(1.0, value) < 0), "negative zero"
    assert token.isascii(), f"accepted non-ASCII digits in {token!r}"


@pytest.mark.parametrize("token", ["１", "٣", "۰.۵", "½", "²", "𝟏", "1_000", "infinity", "0x10"])
def test_parse_number_refuses_what_float_would_take(token):
    with pytest.raises(sc.InvalidDistributionError, match="entry 1"):
        sc.parse_number(token)


# --- parse_distribution ----------------------------------------------------------------


@HOSTILE
@given(text=hostile_text, normalize=st.booleans())
@example(text="1" * 400 + ",1000000000000000000000;", normalize=False)  # a huge decimal comma
def test_parse_distribution_returns_a_distribution_or_a_clear_error(text, normalize):
    try:
        x = sc.parse_distribution(text, name="p", normalize=normalize)
    except Exception as err:  # noqa: BLE001
        assert_clear_error(err)
        assert str(err).startswith("p"), "the message must name the field"
        return
    assert_distribution(x, sc.MAX_TYPED_ENTRIES)
    assert all(ch.isascii() for ch in text if not ch.isspace()), "accepted non-ASCII digits"


@HOSTILE
@given(values=st.lists(st.integers(min_value=0, max_value=1_000), min_size=1, max_size=64))
def test_parse_distribution_never_fixes_a_wrong_sum_silently(values):
    text = ", ".join(f"{v}/1000" for v in values)
    total = sum(values) / 1000
    if total > 0 and abs(total - 1.0) <= SUM_TOLERANCE / 2:
        assert sc.parse_distribution(text) == pytest.approx([v / 1000 for v in values])
    elif abs(total - 1.0) > 2 * SUM_TOLERANCE or total == 0:
        with pytest.raises(sc.InvalidDistributionError):
            sc.parse_distribution(text)


@pytest.mark.parametrize("text", ["1e308 1e308", "1e308, 1e308, 1e308", "1.5e308; 1.5e308"])
def test_normalising_numbers_whose_sum_overflows_is_an_error_not_zeros(text):
    # Each entry is finite but the sum is inf: x / inf would be a vector of zeros.
    with pytest.raises(sc.InvalidDistributionError):
        sc.parse_distribution(text, normalize=True)


# --- validate_distribution (arrays from code, links or caches) --------------------------

array_entries = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=0, max_value=1),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.sampled_from([-0.0, 0.0, 5e-324, 1e308, float("nan"), float("inf"), True, False]),
)
array_like = st.one_of(
    st.lists(array_entries, max_size=80),
    st.lists(st.lists(st.floats(0, 1), max_size=3), max_size=4),  # ragged or 2-D
    st.lists(st.one_of(st.text(max_size=5), st.none(), st.complex_numbers()), max_size=4),
    st.none(),
    st.text(max_size=20),
    st.floats(allow_nan=True),
    st.dictionaries(st.text(max_size=3), st.floats(), max_size=3),
    st.integers(min_value=MAX_VOCAB - 1, max_value=MAX_VOCAB + 2).map(
        lambda n: np.full(n, 1.0 / n)
    ),
)


@HOSTILE
@given(x=array_like, normalize=st.booleans())
def test_validate_distribution_returns_a_distribution_or_a_clear_error(x, normalize):
    try:
        out = sc.validate_distribution(x, "q", normalize=normalize)
    except Exception as err:  # noqa: BLE001
        assert_clear_error(err)
        return
    assert_distribution(out, MAX_VOCAB)


@pytest.mark.parametrize("x", [[10**400], [1, 10**400], [-(10**400), 1]])
def test_validate_distribution_huge_integers_are_a_clear_error(x):
    with pytest.raises(sc.InvalidDistributionError):
        sc.validate_distribution(x)


# --- theory, verify_round and simulate_rounds: every numeric argument ---------------------

HOSTILE_VALUES = ["abc", [[0.5], [0.5, 0.2]], 10**400, None, {"a": 1.0}, [0.5, "x"], 1 + 2j]
THEORY_CALLS = {
    "expected_tokens": (sc.expected_tokens, (0.5, 3)),
    "speedup": (sc.speedup, (0.5, 3, 0.1, 1.0)),
    "time_per_token": (sc.time_per_token, (0.5, 3, 0.1, 1.0)),
    "optimal_k": (sc.optimal_k, (0.5, 0.1, 1.0)),
    "tokens_per_round_distribution": (sc.tokens_per_round_distribution, ([0.5, 0.6],)),
}


@pytest.mark.parametrize("value", HOSTILE_VALUES, ids=repr)
@pytest.mark.parametrize("name", THEORY_CALLS)
def test_theory_functions_refuse_non_numbers_with_a_clear_error(name, value):
    fn, args = THEORY_CALLS[name]
    for slot in range(len(args)):
        bad = (*args[:slot], value, *args[slot + 1 :])
        with pytest.raises(Exception) as err:  # noqa: B017 (the type is checked below)
            fn(*bad)
        assert_clear_error(err.value)


@HOSTILE
@given(p=array_like, q=array_like)
def test_simulate_rounds_returns_counts_or_a_clear_error(p, q):
    try:
        result = sc.simulate_rounds(p, q, 2, 50, rng=np.random.default_rng(0))
    except Exception as err:  # noqa: BLE001
        assert_clear_error(err)
        return
    assert result.tokens_per_round_counts.sum() == 50


@HOSTILE
@given(p_rows=array_like, q_rows=array_like, drafts=array_like, uniforms=array_like)
def test_verify_round_returns_a_round_or_a_clear_error(p_rows, q_rows, drafts, uniforms):
    try:
        result = sc.verify_round(p_rows, q_rows, drafts, uniforms=uniforms, final_token=0)
    except Exception as err:  # noqa: BLE001
        assert_clear_error(err)
        return
    assert 1 <= result.n_emitted <= result.k_drafts + 1


@HOSTILE
@given(
    drafts=st.one_of(array_like, st.lists(st.one_of(st.integers(-3, 6), st.booleans()))),
    uniforms=array_like,
    final_token=st.one_of(st.none(), st.integers(-(10**30), 10**30), st.floats(), st.text()),
)
def test_verify_round_with_valid_rows_checks_drafts_coins_and_final(drafts, uniforms, final_token):
    p_rows, q_rows = sc.broadcast_rows([0.5, 0.25, 0.25, 0.0], [0.25, 0.25, 0.25, 0.25], 2)
    try:
        result = sc.verify_round(
            p_rows,
            q_rows,
            drafts,
            uniforms=uniforms,
            final_token=final_token,
            rng=np.random.default_rng(0),
        )
    except Exception as err:  # noqa: BLE001
        assert_clear_error(err)
        return
    assert result.draft_tokens == tuple(drafts) and all(type(x) is int for x in result.draft_tokens)
    assert result.final_distribution[result.final_token] > 0


@pytest.mark.parametrize("normalize", [False, True])
def test_validate_distribution_negative_zero_is_zero(normalize):
    out = sc.validate_distribution([-0.0, 1.0], normalize=normalize)
    assert not np.any(np.signbit(out))


# --- parse_labels -----------------------------------------------------------------------

label_text = st.one_of(
    hostile_text,
    st.lists(st.text(max_size=30), min_size=1, max_size=70).map(",".join),
    st.lists(
        st.sampled_from(
            [
                "A",
                "B",
                "<b>x</b>",
                "<script>alert(1)</script>",
                "é",
                "🙂",
                "\u200b",
                "a\nb",
                " ",
                "$x$",
                "**B**",
            ]
        ),
        max_size=8,
    ).map(",".join),
)


@HOSTILE
@given(text=label_text, v=st.integers(min_value=1, max_value=64))
def test_parse_labels_returns_distinct_printable_labels_or_a_clear_error(text, v):
    try:
        labels = sc.parse_labels(text, v)
    except Exception as err:  # noqa: BLE001
        assert_clear_error(err)
        assert str(err).startswith("labels")
        return
    assert isinstance(labels, tuple) and len(labels) == v
    assert len(set(labels)) == v
    for label in labels:
        assert isinstance(label, str) and label == label.strip() and label
        assert len(label) <= MAX_LABEL_LENGTH and label.isprintable()


@pytest.mark.parametrize("v", [0, -1, MAX_VOCAB + 1, 10**6])
def test_parse_labels_refuses_an_impossible_vocabulary_size(v):
    # v comes from code today, but the parser must not build 10**9 default labels
    # (measured: parse_labels("", 10**9) runs out of memory instead of refusing).
    with pytest.raises(sc.SpecDecError):
        sc.parse_labels("", v)


# --- parse_coins ------------------------------------------------------------------------


@HOSTILE
@given(
    text=hostile_text,
    k=st.one_of(
        st.integers(min_value=-3, max_value=20),
        st.integers(min_value=-(10**30), max_value=10**30),
        st.sampled_from([True, False]),
    ),
)
def test_parse_coins_returns_coins_in_unit_interval_or_a_clear_error(text, k):
    try:
        coins = sc.parse_coins(text, k)
    except Exception as err:  # noqa: BLE001
        assert_clear_error(err)
        return
    assert 1 <= k <= sc.MAX_K and not isinstance(k, bool)
    assert isinstance(coins, tuple) and len(coins) <= k
    assert all(isinstance(u, float) and 0.0 <= u < 1.0 for u in coins)


# --- check_k ----------------------------------------------------------------------------

k_like = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40),
    st.integers(min_value=-2, max_value=20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=5),
    st.integers(min_value=0, max_value=20).map(np.int64),
    st.integers(min_value=0, max_value=2**64 - 1).map(np.uint64),
    st.sampled_from([3.0, -0.0, "3", b"3", [3], (3,), 3 + 0j, np.float64(3.0)]),
)


@HOSTILE
@given(k=k_like, k_max=st.sampled_from([8, sc.MAX_K, sc.MAX_K_THEORY]))
def test_check_k_returns_an_int_in_range_or_a_clear_error(k, k_max):
    try:
        out = sc.check_k(k, k_max=k_max)
    except Exception as err:  # noqa: BLE001
        assert_clear_error(err)
        return
    assert type(out) is int and 1 <= out <= k_max and out == k
    assert not isinstance(k, (bool, float, str))


# --- LinkReader (every query parameter of every page goes through it) ------------------

param_values = st.one_of(
    hostile_text,
    st.sampled_from(
        [
            "3",
            "-0",
            "0",
            "99999999999999999999",
            "１",
            "٣",
            "3 ",
            " 3",
            "--3",
            "-",
            "1e3",
            "3.0",
            "nan",
            "inf",
            "",
            "000-round",
            "003-A",
        ]
    ),
    st.just("x" * (MAX_PARAM_LENGTH + 1)),
)
query_params = st.dictionaries(
    st.one_of(
        st.sampled_from(["k", "p", "q", "labels", "coins", "seed", "preset", "alpha"]),
        st.text(max_size=10),
    ),
    param_values,
    max_size=10,
)


@HOSTILE
@given(params=query_params)
def test_link_reader_never_raises_and_falls_back_to_defaults(params):
    link = LinkReader(params)
    k = link.int_in("k", 1, 8, 3)
    seed = link.int_in("seed", 0, 2**32 - 1, 0)
    preset = link.choice("preset", sorted(sc.SCENARIOS), "000-round")
    p = link.get("p", sc.parse_distribution, None)
    q = link.get("q", lambda raw: sc.parse_distribution(raw, name="q", normalize=True), None)
    labels = link.get("labels", lambda raw: sc.parse_labels(raw, 5), sc.default_labels(5))
    coins = link.get("coins", lambda raw: sc.parse_coins(raw, k), ())
    alpha = link.get("alpha", lambda raw: sc.parse_number(raw, name="alpha"), 0.8)

    assert type(k) is int and 1 <= k <= 8
    assert type(seed) is int and 0 <= seed < 2**32
    assert preset in sc.SCENARIOS
    for dist in (p, q):
        assert dist is None or (assert_distribution(dist, sc.MAX_TYPED_ENTRIES) is None)
    assert len(labels) == 5
    assert all(0.0 <= u < 1.0 for u in coins) and len(coins) <= k
    assert isinstance(alpha, float) and math.isfinite(alpha)

    # Every problem names its parameter; the summary is escaped and bounded.
    message = link.message()
    assert (message == "") == (not link.problems)
    for problem in link.problems:
        assert problem.startswith("link parameter '")
        assert len(problem) < 1_000
    for i, ch in enumerate(message):
        if ch in "<>[]`*_":
            assert message[i - 1] == "\\", f"unescaped {ch!r} in the link message"


@pytest.mark.parametrize("raw", ["１２", "٣", "²", "3.0", "1e3", "--3", "-", " ", "99999999999999"])
def test_link_reader_int_refuses_non_ascii_and_non_integers(raw):
    link = LinkReader({"k": raw})
    assert link.int_in("k", 1, 8, 3) == 3
    assert len(link.problems) == 1 and "'k'" in link.problems[0]


def test_link_reader_caps_the_length_of_a_parameter():
    link = LinkReader({"p": "0.5, " * 10_000})
    assert link.get("p", sc.parse_distribution, None) is None
    assert "longer than" in link.problems[0]


# --- the round page's link and typed round (specdec_ui.round.codec) ---------------------

round_link_params = st.fixed_dictionaries(
    {"mode": st.sampled_from(["custom", "preset", "Custom", "", "x"])},
    optional={
        name: param_values
        for name in (
            "preset",
            "step",
            "labels",
            "p",
            "q",
            "k",
            "seed",
            "coins",
            "drafts",
            "final",
            "norm",
        )
    },
)


@HOSTILE
@given(params=round_link_params)
def test_round_link_gives_a_valid_page_state_whatever_the_link(params):
    from specdec_ui.round import codec as round_codec

    state = round_codec.read_link(params)
    choice = state.choice
    assert choice.preset in round_codec.ROUND_KEYS
    assert state.step is None or 0 <= state.step <= round_codec.MAX_STEP_LINK
    assert all(isinstance(p, str) and p for p in state.problems)
    if choice.custom is not None:
        # Whatever the link said, the state it leads to is a round that plays.
        spec = round_codec.custom_spec(choice.custom, choice.tables)
        assert len(spec.labels) == spec.p_rows.shape[1]


@HOSTILE
@given(
    labels=label_text,
    p=hostile_text,
    q=hostile_text,
    k=st.one_of(st.integers(-2, 20), st.sampled_from([True, 3.0, "3"])),
    drafts=label_text,
    coins=hostile_text,
    final=label_text,
    normalize=st.booleans(),
)
def test_typed_custom_round_is_a_round_or_a_clear_error(
    labels, p, q, k, drafts, coins, final, normalize
):
    from specdec_ui.presets import ROUND_K_MAX
    from specdec_ui.round import codec as round_codec

    inputs = round_codec.CustomInputs(labels, p, q, k, drafts, coins, final, 0, normalize)
    try:
        spec = round_codec.custom_spec(inputs)
    except Exception as err:  # noqa: BLE001
        assert_clear_error(err)
        return
    assert 1 <= spec.q_rows.shape[0] <= ROUND_K_MAX
    assert spec.p_rows.shape[0] == spec.q_rows.shape[0] + 1


@pytest.mark.parametrize(
    "p, q, drafts",
    [
        ("0.40, 0.25, 0.20, 0.10, 0.05", "0.30, 0.30, 0.15, 0.15, 0.10", "A, B, C"),
        ("0.5, 0.5 | 0.2, 0.8 | 0.6, 0.4 | 0.1, 0.9", "1, 0 | 0.5, 0.5 | 0.3, 0.7", ""),
    ],
)
def test_typed_custom_round_accepts_the_seed_syntax(p, q, drafts):
    from specdec_ui.round import codec as round_codec

    spec = round_codec.custom_spec(
        round_codec.CustomInputs(labels="", p_text=p, q_text=q, k=3, drafts_text=drafts)
    )
    assert spec.q_rows.shape[0] == 3
