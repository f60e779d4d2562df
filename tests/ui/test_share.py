"""The kit's link readers: a probability and a whole number, shared by every page's link."""

import pytest

from specdec_ui.kit.share import LinkReader, probability


@pytest.mark.parametrize(("raw", "value"), [("0.7", 0.7), ("70%", 0.7), ("7/10", 0.7), ("0", 0.0)])
def test_a_probability_is_a_decimal_a_fraction_or_a_percentage(raw, value):
    assert probability(raw, name="alpha") == pytest.approx(value)
    assert LinkReader({"alpha": raw}).probability("alpha", 0.5) == pytest.approx(value)


@pytest.mark.parametrize(
    ("raw", "zero", "said"),
    [
        ("1.5", True, "1.5 is out of range; alpha is a probability in [0, 1]"),
        ("-0.1", True, "-0.1 is out of range; alpha is a probability in [0, 1]"),
        ("0", False, "0 is out of range; alpha is a probability in (0, 1]"),
        ("abc", True, "alpha"),
        ("nan", True, "alpha"),
    ],
)
def test_a_bad_probability_keeps_the_default_and_says_which_entry_and_what_is_allowed(
    raw, zero, said
):
    link = LinkReader({"alpha": raw})
    assert link.probability("alpha", 0.25, zero=zero) == 0.25
    assert len(link.problems) == 1 and link.problems[0].startswith("link parameter 'alpha'")
    assert said in link.problems[0]


def test_the_pages_read_their_probabilities_with_the_kits_reader():
    """The Speedup explorer's alpha, the Variants lab's epsilon and delta and the Serving
    lab's alpha and share: one reader, one message."""
    from specdec_ui.serving import settings
    from specdec_ui.speedup import view as speedup
    from specdec_ui.variants import view as variants

    bad = {"alpha": "2", "epsilon": "0", "delta": "1.2", "share": "-1"}
    for read, names in (
        (speedup.values_from_link, ("alpha",)),
        (variants._values_from_link, ("epsilon", "delta")),
        (settings._typed_from_link, ("alpha", "share")),
    ):
        link = LinkReader(bad)
        values = read(link)
        for name in names:
            assert values[name] != float(bad[name])
            said = [m for m in link.problems if m.startswith(f"link parameter '{name}'")]
            assert len(said) == 1 and f"{name} is a probability in" in said[0], link.problems
