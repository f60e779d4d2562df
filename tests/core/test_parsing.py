"""Typed input -> vectors, and the exact message each bad input gets."""

import numpy as np
import pytest

import specdec_core as sc
from specdec_core import InvalidDistributionError, InvalidParameterError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.4, 0.25, 0.2, 0.1, 0.05", [0.4, 0.25, 0.2, 0.1, 0.05]),
        ("0.4 0.25 0.2 0.1 0.05", [0.4, 0.25, 0.2, 0.1, 0.05]),
        ("0.4; 0.25;0.2 ;0.1,0.05", [0.4, 0.25, 0.2, 0.1, 0.05]),
        ("1/3, 1/3, 1/3", [1 / 3, 1 / 3, 1 / 3]),
        ("40%, 60%", [0.4, 0.6]),
        ("  .5 , .5  ", [0.5, 0.5]),
        ("1", [1.0]),
        ("-0, 1", [0.0, 1.0]),
        ("1e-1, 9e-1", [0.1, 0.9]),
        ("0.1, 0.2, 0.7", [0.1, 0.2, 0.7]),  # rounding within tolerance is fine
    ],
)
def test_parse_distribution_accepts_what_people_type(text, expected):
    got = sc.parse_distribution(text)
    assert got == pytest.approx(expected)
    assert got.dtype == np.float64 and got.sum() == pytest.approx(1.0, abs=1e-15)
    assert not np.signbit(got).any()  # "-0" becomes 0


BAD_TEXT = [
    ("", "p: is empty"),
    ("   ", "p: is empty"),
    ("0.5, abc", "p: entry 2 ('abc') is not a number"),
    ("0.5; 0.5x", "p: entry 2 ('0.5x') is not a number"),
    ("nan, 1", "p: entry 1 ('nan') is not a finite number"),
    ("0.5, inf", "p: entry 2 ('inf') is not a finite number"),
    ("1e400, 0", "p: entry 1 ('1e400') is too large to be a probability"),
    ("0.6, -0.1, 0.5", "p: entry 2 ('-0.1') is negative; probabilities must be >= 0"),
    ("1/0, 1", "p: entry 1 ('1/0') divides by zero"),
    ("0.5, 0.4", "p: entries sum to 0.9, not 1"),
    ("0, 0", "p: all entries are zero"),
    ("٣, 1", "p: entry 1 ('٣') is not a number"),  # Arabic-Indic digit three
    ("1_000, 1", "p: entry 1 ('1_000') is not a number"),
    (", ".join(["0.01"] * 65), "p: has 65 entries; at most 64 are allowed"),
    ("0.1" * 1000, "is 3,000 characters long; at most 2,000"),
]


@pytest.mark.parametrize(("text", "message"), BAD_TEXT)
def test_parse_distribution_names_the_problem(text, message):
    with pytest.raises(
        InvalidDistributionError if "characters" not in message else InvalidParameterError
    ) as err:
        sc.parse_distribution(text)
    assert message in str(err.value)


def test_sum_is_never_fixed_silently_but_normalisation_is_offered():
    with pytest.raises(InvalidDistributionError, match="turn on normalisation"):
        sc.parse_distribution("2, 2, 4")
    assert sc.parse_distribution("2, 2, 4", normalize=True) == pytest.approx([0.25, 0.25, 0.5])


def test_error_names_the_vector():
    with pytest.raises(InvalidDistributionError, match=r"^q: entry 3"):
        sc.parse_distribution("0.5, 0.5, x", name="q")


def test_parse_distribution_rejects_non_text():
    with pytest.raises(InvalidParameterError, match="must be text"):
        sc.parse_distribution(0.5)


BAD_ARRAYS = [
    ([[0.5, 0.5]], "must be a 1-D vector"),
    ([], "has 0 entries"),
    ([0.5, float("nan")], "entry 2 is nan"),
    ([0.5, float("inf")], "entry 2 is inf"),
    ([1.5, -0.5], "entry 2 is -0.5; probabilities must be >= 0"),
    ([0.3, 0.3], "entries sum to 0.6, not 1"),
    (["a", "b"], "not an array of numbers"),
    ([[0.5], [0.5, 0.5]], "not an array of numbers"),
]


@pytest.mark.parametrize(("array", "message"), BAD_ARRAYS)
def test_validate_distribution_names_the_problem(array, message):
    with pytest.raises(InvalidDistributionError) as err:
        sc.validate_distribution(array, name="p")
    assert message in str(err.value)


def test_validate_distribution_caps_the_vocabulary():
    with pytest.raises(InvalidDistributionError, match="between 1 and 10"):
        sc.validate_distribution(np.full(11, 1 / 11), max_size=10)


def test_validate_distribution_returns_a_new_float64_vector():
    x = np.array([1, 1], dtype=np.int64)
    out = sc.validate_distribution(x, normalize=True)
    assert out.dtype == np.float64 and out.tolist() == [0.5, 0.5]
    assert x.tolist() == [1, 1]


@pytest.mark.parametrize(
    ("text", "v", "message"),
    [
        ("A, B", 3, "got 2 labels for 3 tokens"),
        ("A, , C", 3, "label 2 is empty"),
        ("A, B, A", 3, "'A' appears twice"),
        ("A, " + "x" * 30, 2, "label 2 is 30 characters; at most 24"),
        ("A, B\x00", 2, "label 2 contains a control character"),
    ],
)
def test_parse_labels_errors(text, v, message):
    with pytest.raises(InvalidParameterError) as err:
        sc.parse_labels(text, v)
    assert message in str(err.value)


def test_parse_labels_defaults_and_keeps_text_as_is():
    assert sc.parse_labels("", 3) == ("A", "B", "C")
    assert sc.parse_labels(" <b>x</b> , y ", 2) == ("<b>x</b>", "y")
    assert sc.default_labels(28)[-2:] == ("T26", "T27")


def test_parse_coins():
    assert sc.parse_coins("0.5, 0.72", 3) == (0.5, 0.72)
    assert sc.parse_coins("", 3) == ()
    with pytest.raises(
        InvalidParameterError, match=r"coin 2 is 1; a coin is a uniform number in \[0, 1\)"
    ):
        sc.parse_coins("0.5, 1", 3)
    with pytest.raises(InvalidParameterError, match="got 4 coins for K = 3"):
        sc.parse_coins("0.1 0.2 0.3 0.4", 3)


@pytest.mark.parametrize(
    ("k", "message"),
    [
        (0, "K = 0 is out of range; allowed: 1 to 16"),
        (17, "K = 17 is out of range"),
        (2.0, "K must be a whole number"),
        (True, "K must be a whole number"),
        ("3", "K must be a whole number"),
    ],
)
def test_check_k(k, message):
    with pytest.raises(InvalidParameterError) as err:
        sc.check_k(k)
    assert message in str(err.value)


def test_errors_are_value_errors():
    assert issubclass(InvalidDistributionError, ValueError)
    assert issubclass(InvalidParameterError, sc.SpecDecError)
