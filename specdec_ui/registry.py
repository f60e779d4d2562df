"""The app's pages, defined once: file, title, icon, address and the Home card's blurb.

``specdec_ui.router`` turns :data:`PAGES` into an ``st.navigation`` router (one ``st.Page``
per entry whose file exists), the Home page draws its cards from it, and every
page file calls ``page_setup(__file__)``, which looks its title and icon up
here. A page is four files (CONTRIBUTING's "A new page"): its script
``pages/scripts/<room>.py``, its address file ``pages/<url_path>.py`` (``pages/README.md``
says why), its room ``specdec_ui/<room>/`` (its view, figures, limits and its own
``questions.py``, found through :attr:`PageInfo.room` and ``asks``) and one :class:`PageInfo`
here. Every list of pages (the router, Home's cards, the Teach page, the class's questions,
the browser tests, the README's table check) reads :data:`PAGES`. ``url_path`` keeps
the addresses that the old ``pages/N_Name.py`` files had (the file name without its
number prefix), so old share links still open; the Home page is the default page, at the
app's root address.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PageInfo:
    """One page: ``path`` relative to the repository root, ``icon`` an emoji (no font CDN)."""

    path: str
    title: str
    icon: str
    url_path: str  # "" only for the default (Home) page
    blurb: str  # the Home page's card text
    heavy: bool = False  # draws big results: one at a time (specdec_ui.runtime.render_gate)
    # Has "What this page asks": its room's questions.py (specdec_ui.page_questions fails
    # loudly where it is missing); False only for a page that asks its class nothing.
    asks: bool = True

    @property
    def room(self) -> str:
        """The page's room ``specdec_ui/<room>/``, named after its script
        ``pages/scripts/<room>.py`` (tests/test_import_directions.py holds them together)."""
        return Path(self.path).stem

    @property
    def exists(self) -> bool:
        """Whether the page's file is in the tree (a page still being written is skipped)."""
        return (ROOT / self.path).is_file()

    @property
    def is_home(self) -> bool:
        return self.url_path == ""


HOME = PageInfo(
    "pages/scripts/home.py",
    "Home",
    "🎯",
    "",
    "The idea in plain words, a timeline picture and the algorithm in five lines.",
)

PAGES: tuple[PageInfo, ...] = (
    HOME,
    PageInfo(
        "pages/scripts/round.py",
        "Step through a round",
        "👣",
        "Step_through_a_round",
        "Follow one round decision by decision: the draft, each coin against min(1, p/q), the "
        "residual after a rejection, the bonus token. Every worked example of the course is a "
        "preset.",
    ),
    PageInfo(
        "pages/scripts/speedup.py",
        "Speedup explorer",
        "⚡",
        "Speedup_explorer",
        "Move alpha, K and the costs of the two models and watch the speedup, the best K and the "
        "milliseconds per token; compare the formula with published results.",
    ),
    PageInfo(
        "pages/scripts/losslessness.py",
        "Losslessness lab",
        "🧪",
        "Losslessness_lab",
        "Simulate a hundred thousand rounds and test that the output really follows p; switch on a "
        "deliberate bug and watch the test catch it.",
        heavy=True,
    ),
    PageInfo(
        "pages/scripts/self_test.py",
        "Self-test",
        "📝",
        "Self_test",
        "The quick questions of the worked examples and as many fresh numeric questions as you "
        "like, each with its worked answer.",
    ),
    PageInfo(
        "pages/scripts/model_pairs.py",
        "Model pair lab",
        "🤖",
        "Model_pair_lab",
        "Real (small) draft and target language models on this server: measure alpha, tokens per "
        "round and the speedup you actually get.",
        heavy=True,
    ),
    PageInfo(
        "pages/scripts/variants.py",
        "Variants lab",
        "🌳",
        "Variants_lab",
        "Beyond one draft: several drafts, a tree of drafts and typical acceptance. Which keep the "
        "output exactly p, and how many tokens per round does each buy?",
        heavy=True,
    ),
    PageInfo(
        "pages/scripts/serving.py",
        "Serving lab",
        "🚦",
        "Serving_lab",
        "When is it fast? From this CPU to a GPU cluster: batch size, hardware and the draft's "
        "cost decide, and under load the gain turns into a slowdown. Why yours may be slower, "
        "and what an engine's acceptance numbers mean.",
    ),
    PageInfo(
        "pages/scripts/teach.py",
        "Teach with it",
        "🎓",
        "Teach_with_it",
        "For the teacher: a 50-minute lesson path (each step opens its page in presenter view "
        "on the right numbers, with the question to ask), simple mode and printable "
        "worksheets with answer keys.",
        asks=False,
    ),
    PageInfo(
        "pages/scripts/classroom.py",
        "Class",
        "🏫",
        "Class",
        "The whole class takes part: join by a code or QR code, answer the pages' questions from "
        "every phone and pool the class's rounds to watch the tokens follow p (or a bug drift).",
        asks=False,
    ),
)


def available_pages() -> tuple[PageInfo, ...]:
    """The registered pages whose file exists, Home first."""
    return tuple(page for page in PAGES if page.exists)


def page_info(file: str | Path) -> PageInfo:
    """The entry of a page file (pass ``__file__``); KeyError names an unregistered file."""
    name = Path(file).name
    for page in PAGES:
        if Path(page.path).name == name:
            return page
    raise KeyError(f"{name} is not in specdec_ui.registry.PAGES; add a PageInfo for it")
