"""AppTest fuzz: every page, random links and random widget values, never an uncaught exception.

For each page a seeded generator builds links (query parameters the page reads,
plus unknown ones) from a pool of hostile values, opens the page with each, then
plays a bounded number of random interactions with whatever widgets are on the
screen: text fields get hostile text, number inputs and sliders random values in
their range, select boxes and radios random options, buttons get clicked unless
disabled. After every run the page must have no uncaught exception (a bad value
is the page's own ``st.error`` / ``st.warning``, not a traceback).

Counts are bounded so that each page takes well under a minute.
"""

from __future__ import annotations

import random

import pytest
from streamlit.testing.v1 import AppTest

from tests import pages as page_lists
from tests.app.conftest import ROOT, open_page

HOSTILE_VALUES = [
    "",
    " ",
    "0",
    "-0",
    "1",
    "3",
    "8",
    "9",
    "-1",
    "64",
    "65",
    "1e3",
    "1e309",
    "-1e309",
    "nan",
    "inf",
    "-inf",
    "0.5",
    "0.7",
    "1.5",
    "99999999999999999999999",
    "١٢",
    "１",
    "²",
    "0x10",
    "1_000",
    "3.0",
    "1/0",
    "0/0",
    "50%",
    "0.4, 0.6",
    "0.4,0.25,0.2,0.1,0.05",
    "0.3, 0.3, 0.15, 0.15, 0.1",
    "0.5, 0.5 | 0.2, 0.8",
    "|",
    "||",
    "a,b,c,d,e",
    "A, A, B, C, D",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "**bold** `code` $x$",
    "\\",
    "\x00",
    "\n",
    "é, ü, ß, 中, 🙂",
    "custom",
    "preset",
    "000-round",
    "000-rejection",
    "003-A",
    "003-I",
    "correct",
    "resample_from_p",
    "no_bonus",
    "x" * 2_001,
    "0.01, " * 70,
]
# The parameters each page reads (see the pages and specdec_ui/round/codec.py), plus junk:
# one row per registered page (a page without one fails, naming this table).
SWITCHES = ["present", "simple", "class"]  # every page reads the kit's link switches
PAGE_PARAMS = {
    "app.py": ["page", "x"],  # the router, on Home (whose links need the router)
    "pages/scripts/round.py": [
        "mode",
        "preset",
        "p",
        "q",
        "labels",
        "k",
        "seed",
        "step",
        "coins",
        "drafts",
        "final",
    ],
    "pages/scripts/speedup.py": ["preset", "alpha", "k", "c_q", "c_p"],
    "pages/scripts/losslessness.py": ["preset", "p", "q", "k", "rounds", "seed", "variant"],
    "pages/scripts/self_test.py": ["kind", "vocab", "seed", "q", "answer"],
    "pages/scripts/model_pairs.py": ["pair", "prompt", "k", "seed", "t", "tokens", "mode", "round"],
    "pages/scripts/variants.py": [
        "preset",
        "p",
        "q",
        "variant",
        "m",
        "widths",
        "token",
        "k",
        "rounds",
        "seed",
        "epsilon",
        "delta",
    ],
    "pages/scripts/serving.py": [
        "hw",
        "target",
        "draft",
        "batch",
        "context",
        "alpha",
        "share",
        "k",
        "acc",
        "bpp",
        "log_preset",
        "log_rates",
        "t_params",
    ],
    "pages/scripts/teach.py": SWITCHES,
    "pages/scripts/classroom.py": ["join", "me", "class", "teach"],
}
# A page without a row (a new page) gets links with every name any page reads.
ANY_PAGE_PARAMS = sorted({name for names in PAGE_PARAMS.values() for name in names})
PAGES = ["app.py", *(info.path for info in page_lists.pages() if not info.is_home)]
N_LINKS = 10  # random links per page
N_ACTIONS = 40  # random widget interactions per page (on one session)
MAX_NUMBER_SPAN = 2_000  # pick numbers near the bounds or small, never a huge simulation
LAB_MAX_ROUNDS = 20_000  # keep the losslessness lab fast under fuzz


def _seed(page: str) -> int:
    return sum(map(ord, page))  # stable across runs (hash() of str is salted)


def _random_link(rng: random.Random, page: str) -> dict[str, str]:
    names = page_lists.expected(PAGE_PARAMS, page, ANY_PAGE_PARAMS)
    names = [*names, "junk", "utm_source", "<b>"]
    chosen = rng.sample(names, k=rng.randint(1, min(6, len(names))))
    return {name: rng.choice(HOSTILE_VALUES) for name in chosen}


def _assert_clean(at: AppTest, what: str) -> None:
    assert not at.exception, f"{what}: {[e.value for e in at.exception]}"


@pytest.mark.parametrize("page_file", PAGES)
def test_random_links_never_raise(page_file):
    page = page_file  # (a parameter named "page" would pull in Playwright's fixture)
    if not (ROOT / page).exists():
        pytest.fail(f"{page} is missing")
    rng = random.Random(_seed(page))
    for i in range(N_LINKS):
        link = _random_link(rng, page)
        if page.startswith("pages/3_") and "rounds" in link:
            link["rounds"] = str(rng.choice([1, 999, 1_000, 5_000, 20_000]))
        at = open_page(page, link)
        _assert_clean(at, f"link {i} {link!r}")


def _number_value(rng: random.Random, lo, hi, is_int: bool):
    lo = -1e6 if lo is None else lo
    hi = 1e6 if hi is None else hi
    if is_int:
        lo, hi = int(lo), int(hi)
        span_hi = min(hi, lo + MAX_NUMBER_SPAN)
        return rng.choice([lo, hi, rng.randint(lo, span_hi)])
    return rng.choice([lo, hi, rng.uniform(lo, min(hi, lo + MAX_NUMBER_SPAN))])


WIDGET_KINDS = (
    "text_input",
    "number_input",
    "slider",
    "selectbox",
    "radio",
    "checkbox",
    "button",
    "text_area",
    "select_slider",
    "toggle",
)


def _on_screen(at: AppTest) -> list[tuple[str, object]]:
    """(kind, widget) for every enabled widget of the kinds the fuzz drives."""
    candidates = []
    for kind in WIDGET_KINDS:
        try:
            widgets = list(getattr(at, kind))
        except (AttributeError, KeyError):
            continue
        candidates += [(kind, w) for w in widgets if not getattr(w, "disabled", False)]
    return candidates


def _type_text(rng: random.Random, w) -> bool:
    value = rng.choice(HOSTILE_VALUES)
    max_chars = getattr(w.proto, "max_chars", 0)
    if max_chars and len(value) > max_chars:
        value = value[:max_chars]  # the browser refuses longer input
    w.input(value)
    return True


def _set_number(rng: random.Random, w) -> bool:
    is_int = w.proto.data_type == w.proto.INT
    lo = w.min if w.proto.has_min else None
    hi = w.max if w.proto.has_max else None
    if getattr(w, "key", None) == "lab_rounds":
        hi = min(hi, LAB_MAX_ROUNDS) if hi is not None else LAB_MAX_ROUNDS
    w.set_value(_number_value(rng, lo, hi, is_int))
    return True


def _slide(rng: random.Random, w) -> bool:
    lo, hi = w.min, w.max
    is_int = isinstance(lo, int) and isinstance(hi, int)
    v = rng.randint(lo, hi) if is_int else rng.uniform(lo, hi)
    w.set_value((lo, v) if isinstance(w.value, (tuple, list)) else v)
    return True


def _choose(rng: random.Random, w) -> bool:
    raw = _raw_option_values(w)
    if raw:
        w.set_value(rng.choice(raw))
    return bool(raw)


def _toggle(rng: random.Random, w) -> bool:
    w.set_value(not w.value)
    return True


def _click(rng: random.Random, w) -> bool:
    w.click()
    return True


def _skip(rng: random.Random, w) -> bool:
    return False  # a select_slider: no page uses one


ACTIONS = {
    "text_input": _type_text,
    "text_area": _type_text,
    "number_input": _set_number,
    "slider": _slide,
    "selectbox": _choose,
    "radio": _choose,
    "select_slider": _skip,
    "checkbox": _toggle,
    "toggle": _toggle,
    "button": _click,
}


def _act(rng: random.Random, at: AppTest, page: str) -> str | None:
    """One random interaction with a widget on screen; returns what was done."""
    candidates = _on_screen(at)
    if not candidates:
        return None
    typed = [c for c in candidates if c[0] in ("text_input", "text_area")]
    # Half of the actions type into a text field: that is where hostile input arrives.
    kind, w = rng.choice(typed if typed and rng.random() < 0.5 else candidates)
    if not ACTIONS[kind](rng, w):
        return None
    at.run()
    return f"{kind} {getattr(w, 'key', None)!r}"


def _candidate_options() -> list:
    """Raw option values the pages use (keys of the presets, variants, pairs, quiz kinds)."""
    import specdec_core as sc
    from specdec_ui import presets

    pool: list = [
        *sc.SCENARIOS,
        *sc.RULES,
        *presets.LAB_PRESETS,
        *presets.SPEED_PRESETS,
        presets.CUSTOM,
        "custom",
        "mixed",
    ]
    extra = (
        ("specdec_core.lm.pairs", "PAIRS"),
        ("specdec_core.quiz", "QUESTION_KINDS"),
        ("specdec_ui.presets", "VARIANT_PRESETS"),
        ("specdec_ui.variants.table", "VARIANTS"),
        ("specdec_ui.model_pairs.work", "DRAFT_LENGTHS"),
    )
    for module, name in extra:  # a name that moved fails here, loudly, not as a thinner fuzz
        pool += list(getattr(__import__(module, fromlist=[name]), name))
    return [*pool, *range(-1, 40), True, False]


def _raw_option_values(w) -> list:
    """Values whose formatted text is one of the widget's options.

    AppTest's ``set_value`` takes the raw value and formats it with the page's
    ``format_func`` (its ``select_index`` breaks with a ``format_func``), so the raw
    values are found by formatting candidates.
    """
    pool = [*w.options, *_candidate_options()]
    found = []
    for value in pool:
        try:
            shown = str(w.format_func(value))
        except Exception:  # noqa: BLE001 - a format function may not take every candidate
            continue
        if shown in w.options and value not in found:
            found.append(value)
    return found


@pytest.mark.parametrize("page_file", PAGES)
def test_random_widget_values_never_raise(page_file):
    page = page_file
    if not (ROOT / page).exists():
        pytest.fail(f"{page} is missing")
    rng = random.Random(_seed(page) + 1)
    at = open_page(page)
    _assert_clean(at, "first run")
    done = []
    for i in range(N_ACTIONS):
        action = _act(rng, at, page)
        if action is None:
            break
        done.append(action)
        _assert_clean(at, f"action {i} ({action}); all so far: {done}")
    if page != "app.py":  # the pages have widgets: the fuzz must really have used them
        assert len(done) == N_ACTIONS, done
        assert len(set(done)) >= 4, f"the fuzz touched too few widgets: {done}"


def test_the_fuzz_finds_an_uncaught_exception(tmp_path):
    # Power check: a page that trusts its input (float() on typed text, an unchecked
    # query parameter) is caught by the same links and actions within the same budget.
    page = tmp_path / "fragile_page.py"
    page.write_text(
        "import streamlit as st\n"
        "k = int(st.query_params.get('k', '3'))\n"
        "text = st.text_input('p', key='x_text')\n"
        "st.slider('s', 0, 10, key='x_slider')\n"
        "if text:\n"
        "    st.write(float(text) * k)\n",
        encoding="utf-8",
    )
    rng = random.Random(0)
    link_failures = sum(
        bool(open_page(str(page), {"k": rng.choice(HOSTILE_VALUES)}).exception)
        for _ in range(N_LINKS)
    )
    assert link_failures > 0
    at = open_page(str(page))
    for _ in range(N_ACTIONS):
        _act(rng, at, str(page))
        if at.exception:
            break
    assert at.exception, "the fuzz should have typed something float() refuses"
