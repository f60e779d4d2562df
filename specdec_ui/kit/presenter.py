"""Presenter view: any page as a projector layout, switched on in the sidebar or by ``present=1``.

What the switch does (a page helper calls these; pages stay thin):

- ``presenting()`` reads the state (a link's ``present=1``/``0`` once, then the toggle);
  the page helper collapses the sidebar and pages fold their input expanders with it.
- ``presenter_toggle()`` draws the switch in the sidebar; ``link_params()`` is the
  ``present=1`` a page adds to its own link so a reload keeps the view.
- ``presenter_style()`` adds static CSS (less padding, larger text) and a static key
  script: the right arrow / Page Down of a clicker presses the page's ``*_next`` button,
  the left arrow / Page Up its ``*_back`` button, one press after the other's rerun has
  ended (a clicker's quick presses all count). Both strings are module constants:
  no user text ever reaches them (tests/test_security.py checks that).
- ``app_style()`` adds the static CSS of every page, in both views (``APP_CSS``): long
  formulas wrap after "=" instead of being cut at the right edge, and on a phone (narrow
  or touch-only screen) charts lose plotly's toolbar and drag-to-zoom, so a swipe over a
  chart scrolls the page.
- ``chart(fig, ...)`` is ``st.plotly_chart`` with ``theme.presenter_figure`` applied in
  presenter view (chart text >= 20 px, thicker lines, high-contrast ink) and no scroll-zoom;
  the figure's text alternative (:mod:`specdec_ui.kit.chart_text`) is its accessible name, and
  its numbers follow as a table in an expander (issue 28).
- ``app_style()`` also runs ``A11Y_JS`` on every page (the skip link, keyboard-reachable
  scrolling boxes, charts' SVG hidden behind their names; issue 33: the charts' toolbars
  and heading anchors out of the Tab order, names without emoji, help texts as
  descriptions, the focus kept when its button becomes disabled).
- ``qr_button()`` draws "📱 Show QR code" (top-right corner in presenter view, the sidebar
  in normal view); it opens the page's current link as a large QR code in a dialog.
- ``share_panel(link)`` shows the QR code of the page's link, the link itself (with
  Streamlit's copy button) and a warning when the link only works on this computer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from specdec_ui.kit.chart_text import ChartText, chart_text
from specdec_ui.kit.link_switch import LinkSwitch, parse_yes_no
from specdec_ui.kit.qr import LinkTooLongError, is_local_link, qr_png
from specdec_ui.kit.share import share_query
from specdec_ui.kit.tables import show_table
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.theme import presenter_figure
from specdec_ui.registry import PageInfo

PRESENT_PARAM = "present"
STATE_KEY = "presenter"  # not a widget key: survives page switches
TOGGLE_KEY = "presenter_toggle"
SEEN_KEY = "presenter_link_seen"  # the last ``present`` value read from the link
SWITCH = LinkSwitch(PRESENT_PARAM, STATE_KEY, TOGGLE_KEY, SEEN_KEY)
QR_WIDTH = 240  # px on screen: scannable from a phone a few metres from the projector

# Static CSS for the projector layout. A module constant: never formatted with user text.
# ``--specdec-presenter`` tells the key script below that presenter view is on.
# The key numbers (st.metric values) are the largest text on the screen, above every
# heading, so the back row reads them; their labels and deltas are smaller than the body.
# The QR button sits in the top-right corner, on every page, whatever the scroll.
# Section headings are h2 and a section's own headings h3 (issue 28: headings in order), at
# the sizes h3 and h4 had when sections were h3s.
PRESENTER_CSS = """<style>
:root { --specdec-presenter: 1; }
[data-testid="stMainBlockContainer"] { padding-top: 3.25rem; padding-bottom: 2rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 2rem; padding-top: 0; }
[data-testid="stMainBlockContainer"] h2 { font-size: 1.5rem; }
[data-testid="stMainBlockContainer"] h3 { font-size: 1.35rem; }
[data-testid="stMainBlockContainer"] h4 { font-size: 1.2rem; }
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] li { font-size: 1.2rem; }
[data-testid="stMainBlockContainer"] [data-testid="stCaptionContainer"] { font-size: 1.05rem; }
[data-testid="stMainBlockContainer"] button p { font-size: 1.2rem; font-weight: 600; }
[data-testid="stMainBlockContainer"] div[data-testid="stMetricValue"],
[data-testid="stMainBlockContainer"] div[data-testid="stMetricValue"] p {
  font-size: 3rem; line-height: 1.15; font-weight: 700;
}
[data-testid="stMainBlockContainer"] label[data-testid="stMetricLabel"] p,
[data-testid="stMainBlockContainer"] div[data-testid="stMetricDelta"] p { font-size: 1.05rem; }
[class*="st-key-present_theme_rerun"] { display: none; }
.st-key-presenter_qr_corner {
  position: fixed; top: 0.55rem; right: 4.5rem; z-index: 999991; width: auto;
}
.st-key-presenter_qr_corner button p { font-size: 1.05rem; }
[data-testid="stLayoutWrapper"]:has(> .st-key-presenter_qr_corner) { position: absolute; }
</style>"""

# Static CSS of every page, in both views (a module constant, like the one above).
# - Display formulas (KaTeX) may wrap after a relation or an operator ("=", "+", ...):
#   KaTeX writes each unbreakable chunk as its own inline block, and Streamlit's
#   nowrap cut "= 2.773" to "= 2." on a phone; a wrapped line gets a little air.
# - A phone (narrow, or a touch screen without hover): no plotly toolbar (it covered the
#   chart titles) and no drag layer, so a swipe over a chart scrolls the page instead of
#   zooming the chart; Streamlit's own full-screen button stays.
# - Steppers (specdec_ui/kit/stepper.py): buttons at least 44 px tall (a thumb's target); the
#   Back / Next row repeated under a step's chart shows only on a narrow screen.
# - Accessibility (issue 28, WCAG 2.1 AA): captions and the primary button's words at a
#   contrast of at least 4.5:1 in both themes (``light-dark`` follows Streamlit's theme,
#   which sets ``color-scheme`` on the app: light captions 6.3:1 on white, dark 8.9:1 on
#   #171614; the dark theme's primary button #56B4E9 gets dark words, 8.2:1, for white
#   ones read 2.3:1); a thick focus ring on whatever the keyboard reaches; the skip link
#   (:data:`A11Y_JS`) shown when it has the focus; a metric's label and value, a widget's
#   label and a button's words wrap instead of being cut with "…" on a narrow or zoomed
#   screen; and with ``prefers-reduced-motion``
#   no transition or animation runs (the progress bar, the expanders, the sidebar).
APP_CSS = """<style>
/* a wide markdown table (the Model pair lab's prices) scrolls in its own box at 320 px */
.st-key-lm_prices [data-testid="stMarkdownContainer"] { overflow-x: auto; }
.st-key-round_stepper button, .st-key-lm_stepper button, .st-key-var_stepper button,
.st-key-round_below button, .st-key-lm_below button, .st-key-var_below button {
  min-height: 44px;
}
@media (min-width: 641px) {
  .st-key-round_below, .st-key-lm_below, .st-key-var_below { display: none; }
}
.katex-display > .katex, .katex-display > .katex > .katex-html { white-space: normal; }
.katex-display > .katex > .katex-html > .base { margin: 0.2em 0; }
@media (max-width: 640px), (hover: none) and (pointer: coarse) {
  [data-testid="stPlotlyChart"] .modebar-container { display: none !important; }
  [data-testid="stPlotlyChart"] .draglayer,
  [data-testid="stPlotlyChart"] .draglayer * { pointer-events: none !important; }
}
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p {
  color: light-dark(#5C5B58, #B9B7B2); opacity: 1;
}
[data-testid="stBaseButton-primary"], [data-testid="stBaseButton-primary"] p {
  color: light-dark(#FFFFFF, #171614);
}
:focus-visible { outline: 3px solid light-dark(#0072B2, #56B4E9) !important; outline-offset: 2px; }
[data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"],
[data-testid="stMetricLabel"] p, [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"],
[data-testid="stMetricValue"] p,
[data-testid="stWidgetLabel"] [data-testid="stMarkdownContainer"], [data-testid="stWidgetLabel"] p,
.stButton [data-testid="stMarkdownContainer"], .stButton p {
  white-space: normal; overflow: visible; text-overflow: clip; overflow-wrap: anywhere;
}
.specdec-skip {
  position: fixed; left: 0.5rem; top: -4rem; z-index: 1000000; padding: 0.6rem 1rem;
  background: #0072B2; color: #FFFFFF; border-radius: 0.4rem; font-weight: 600;
}
.specdec-skip:focus { top: 0.5rem; }
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after {
    animation-duration: 0.001ms !important; animation-iteration-count: 1 !important;
    transition-duration: 0.001ms !important; transition-delay: 0s !important;
    scroll-behavior: auto !important;
  }
}
</style>"""

# Static accessibility script of every page (issue 28; runs once per browser tab, a flag on
# window stops a second copy). Only ARIA and focus, never text of the page:
# - a "Skip to the lesson" link, the first thing Tab reaches, that moves the focus to the
#   page's h1 (past the sidebar's navigation and the header's buttons);
# - a display formula (KaTeX), a table (a chart's numbers) or a code block that scrolls
#   sideways on a narrow screen gets tabindex=0 and a name, so a keyboard can reach and
#   scroll it (axe: scrollable-region-focusable; WCAG 1.4.10 lets a data table scroll in
#   its own box);
# - the SVG inside a named chart (``chart(alt=...)`` makes its box a figure named by the
#   chart's summary) is hidden from screen readers, which would read its tick labels one
#   by one; the summary and the data table under the chart carry the same numbers.
# Issue 33 (less noise, nothing lost):
# - plotly's mode bar leaves the Tab order and the accessibility tree (its numbers are in
#   the chart's table; a mouse still gets it on hover), and so does plotly's off-screen
#   "js-plotly-tester" drawing; a heading's "Link to heading" anchor leaves both too;
# - a slider is named once (Streamlit's range input has an aria-label and an
#   aria-labelledby that repeats it); a number field's Increment / Decrement say which
#   field; a button, an expander, a switch or a page link whose words hold an emoji or an
#   arrow is named by its words alone ("Next", not "Next black right-pointing triangle"),
#   and a stepper's Back / Next repeated under a chart on a phone (``*_below``) says so
#   ("Next (under the chart)"), so the two pairs have different names;
# - a "Help for ..." button is described by its help text (``aria-describedby``, a hidden
#   copy of the text Streamlit shows in its tooltip, which exists only while shown), and so
#   is the control it helps; Enter or Space shows the tooltip again after Escape hid it;
# - focus is never lost: when the focused button becomes disabled (the last Next, Back at
#   the first step, Reset, Play to end) or is redrawn, the focus moves to the nearest
#   enabled button of the same row (towards Back after a forward move, towards Next after
#   a backward one), or to the same button redrawn, instead of falling to the page body.
A11Y_JS = """<script>
(() => {
  if (window.__specdecA11y) { return; }
  window.__specdecA11y = true;
  const skip = document.createElement("a");
  skip.href = "#specdec-lesson";
  skip.className = "specdec-skip";
  skip.textContent = "Skip to the lesson";
  const landmark = document.createElement("nav");
  landmark.setAttribute("aria-label", "Skip link");
  landmark.appendChild(skip);
  skip.addEventListener("click", (event) => {
    event.preventDefault();
    const lesson = document.getElementById("specdec-lesson");
    const target = (lesson && lesson.querySelector("h1")) || lesson;
    if (!target) { return; }
    target.setAttribute("tabindex", "-1");
    target.focus();
    target.scrollIntoView({ block: "start" });
  });
  document.body.prepend(landmark);
  const SCROLLERS = [[".katex-display", "Formula (scrolls sideways)"],
                     ['[data-testid="stTable"] > div', "Table (scrolls sideways)"],
                     ['[data-testid="stCode"] pre', "Code (scrolls sideways)"],
                     ['.st-key-lm_prices [data-testid="stMarkdownContainer"]',
                      "Table (scrolls sideways)"]];
  const fix = () => {
    const lesson = document.querySelector('[data-testid="stMainBlockContainer"]');
    if (lesson && !document.getElementById("specdec-lesson")) { lesson.id = "specdec-lesson"; }
    for (const [selector, what] of SCROLLERS) {
      for (const box of document.querySelectorAll(selector)) {
        const scrolls = box.scrollWidth > box.clientWidth + 1
          || box.scrollHeight > box.clientHeight + 1;
        if (scrolls && !box.hasAttribute("tabindex")
            && ["auto", "scroll"].includes(getComputedStyle(box).overflowX)) {
          box.setAttribute("tabindex", "0");
          box.setAttribute("role", "group");
          box.setAttribute("aria-label", what);
        }
      }
    }
    const named = '[data-testid="stPlotlyChart"][role="figure"] svg';
    for (const svg of document.querySelectorAll(named)) {
      if (!svg.hasAttribute("aria-hidden")) { svg.setAttribute("aria-hidden", "true"); }
    }
    quiet();
    names();
    helps();
    refocus();
  };
  const set = (el, name, value) => {
    if (el.getAttribute(name) !== value) { el.setAttribute(name, value); }
  };
  const quiet = () => {
    const noise = '.modebar-container, #js-plotly-tester, '
      + '[data-testid="stHeaderActionElements"]';
    for (const box of document.querySelectorAll(noise)) {
      set(box, "aria-hidden", "true");
      for (const el of box.querySelectorAll("a, button")) { set(el, "tabindex", "-1"); }
    }
    const ranges = '[data-testid="stSlider"] input[type="range"]';
    for (const input of document.querySelectorAll(ranges)) {
      if (input.hasAttribute("aria-labelledby") && input.getAttribute("aria-label")) {
        input.removeAttribute("aria-labelledby");
      }
    }
    for (const step of document.querySelectorAll('[data-testid^="stNumberInputStep"]')) {
      const field = step.closest('[data-testid="stNumberInput"]');
      const input = field && field.querySelector("input");
      const what = step.dataset.testid === "stNumberInputStepUp" ? "Increment" : "Decrement";
      if (input && input.getAttribute("aria-label")) {
        set(step, "aria-label", what + " " + input.getAttribute("aria-label"));
      }
    }
  };
  // words without emoji, arrows and the triangles of "Next ▶" (a screen reader reads them)
  const SYMBOLS = new RegExp("[\\\\p{Extended_Pictographic}\\u2190-\\u21FF\\u25A0-\\u25FF"
    + "\\u2B05-\\u2B07\\uFE0F\\u200D\\u20E3]", "gu");
  const plain = (text) => text.replace(SYMBOLS, "").replace(/\\s+/g, " ").trim();
  const shown = (el) => {  // the words shown, without icons hidden from screen readers
    let out = "";
    const walk = (node) => {
      if (node.nodeType === 3) { out += node.textContent; return; }
      if (node.nodeType !== 1 || node.getAttribute("aria-hidden") === "true"
          || node.dataset.testid === "stIconMaterial") { return; }
      for (const child of node.childNodes) { walk(child); }
      if (/^(P|DIV|LI)$/.test(node.tagName)) { out += " "; }
    };
    walk(el);
    return out;
  };
  const NAMED = 'button, summary, a[data-testid="stSidebarNavLink"], [role="tab"], '
    + 'input[role="switch"]';
  const names = () => {
    for (const el of document.querySelectorAll(NAMED)) {
      if (el.closest(".modebar-container")) { continue; }
      const ours = el.getAttribute("data-specdec-name");
      const label = el.getAttribute("aria-label");
      // an aria-label of the page's own (not ours) is the source; else the words shown
      const fromLabel = label !== null && label !== ours;
      if (fromLabel) { el.setAttribute("data-specdec-label", label); }
      const source = fromLabel ? label : (el.getAttribute("data-specdec-label") || shown(el));
      let name = plain(source);
      const below = el.closest("[class*='st-key-'][class*='_below']");
      if (name && below && el.tagName === "BUTTON") {
        name += " (under the chart)";
      }
      const raw = source.replace(/\\s+/g, " ").trim();
      if (!name || (name === raw && !fromLabel && ours === null)) { continue; }
      if (name !== label) { el.setAttribute("aria-label", name); }
      set(el, "data-specdec-name", name);
    }
  };
  // help texts: Streamlit renders a tooltip's text only while it is shown; its React props
  // hold it from the start (read only, copied as plain text into hidden elements)
  let store = null;
  const helpText = (target) => {
    const key = Object.keys(target).find((k) => k.startsWith("__reactFiber$"));
    let fiber = key ? target[key] : null;
    for (let depth = 0; fiber && depth < 12; depth++, fiber = fiber.return) {
      const props = fiber.memoizedProps;
      if (props && typeof props.content === "string" && props.content.trim()) {
        return props.content;
      }
    }
    const tip = target.getAttribute("aria-describedby");
    const shownTip = tip ? document.getElementById(tip) : null;
    return shownTip ? shownTip.textContent : "";
  };
  const describe = (el, id) => {
    const ids = (el.getAttribute("aria-describedby") || "").split(/\\s+/).filter(Boolean);
    if (!ids.includes(id)) { el.setAttribute("aria-describedby", [...ids, id].join(" ")); }
  };
  const helps = () => {
    for (const target of document.querySelectorAll('[data-testid="stTooltipHoverTarget"]')) {
      const help = target.querySelector('[data-testid="stTooltipIcon"] button')
        || (target.closest('[data-testid="stTooltipIcon"]') && target.querySelector("button"));
      if (!help) { continue; }
      // as written (its arrows say which keys), less markdown's bold and code marks
      const text = helpText(target).replace(/\\*\\*|`/g, "").replace(/\\s+/g, " ").trim();
      if (!text) { continue; }
      if (!store) {
        store = document.createElement("div");
        store.hidden = true;
        store.id = "specdec-help-texts";
        document.body.appendChild(store);
      }
      let copy = [...store.children].find((c) => c.textContent === text);
      if (!copy) {
        copy = document.createElement("span");
        copy.id = "specdec-help-" + store.children.length;
        copy.textContent = text;
        store.appendChild(copy);
      }
      describe(help, copy.id);
      const box = target.closest('[data-testid="stElementContainer"]');
      const control = box && box.querySelector(
        'input:not([type="hidden"]), textarea, [role="combobox"], [data-testid^="stBaseButton"]');
      if (control && control !== help) { describe(control, copy.id); }
    }
  };
  document.addEventListener("keydown", (event) => {
    const help = event.target.closest
      && event.target.closest('[data-testid="stTooltipIcon"] button');
    if (!help || !["Enter", " "].includes(event.key)) { return; }
    event.preventDefault();
    help.blur();  // the tooltip shows on focus: focus it again
    help.focus();
  }, true);
  // focus: remember the focused button and its row; put it back when it is lost
  let last = null;
  document.addEventListener("focusin", (event) => {
    const el = event.target;
    if (el.tagName === "BUTTON" && el.closest("[class*='st-key-']")) {
      const box = el.closest("[class*='st-key-']");
      const key = [...box.classList].find((c) => c.startsWith("st-key-"));
      const row = box.parentElement && box.parentElement.closest("[class*='st-key-']");
      const rowKey = row ? [...row.classList].find((c) => c.startsWith("st-key-")) : null;
      last = { el, key, rowKey, backward: /_(back|first)(_below)?$/.test(key) };
    } else {
      last = null;
    }
  });
  const refocus = () => {
    const active = document.activeElement;
    if (!last) { return; }
    const { el, key, rowKey, backward } = last;
    const lost = !active || active === document.body || (active === el && el.disabled);
    if (!lost || (el.isConnected && !el.disabled)) { return; }  // not lost, or left by hand
    const same = document.querySelector("." + key + " button");
    let next = same && !same.disabled ? same : null;
    const row = rowKey ? document.querySelector("." + rowKey) : null;
    if (!next && row) {
      const buttons = [...row.querySelectorAll("button")];
      const at = buttons.findIndex((b) => b.closest("." + key));
      const order = backward ? [...buttons.slice(at + 1), ...buttons.slice(0, at).reverse()]
        : [...buttons.slice(0, at).reverse(), ...buttons.slice(at + 1)];
      next = order.find((b) => !b.disabled && b.offsetParent !== null) || null;
    }
    if (next) { next.focus({ preventScroll: true }); }
  };
  let queued = false;
  const later = () => {
    if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; fix(); }); }
  };
  new MutationObserver(later).observe(document.body, {
    childList: true, subtree: true, characterData: true, attributes: true,
    attributeFilter: ["disabled", "aria-label", "aria-labelledby", "aria-describedby"],
  });
  window.addEventListener("resize", later);
  later();
})();
</script>"""

# Static key script (runs once per browser tab; a flag on window stops a second listener).
# It presses the visible, enabled button of an element whose key ends in _next / _back, and
# only while presenter view is on and the focus is not in a field, slider, menu or data grid,
# nor in a box that scrolls that way (issue 33: → on a focused table that scrolls sideways,
# at 200 % zoom, scrolls it; Page Down in a box that scrolls down scrolls it).
# Issue 33, a clicker's quick presses: each press is queued, and the next one is pressed only
# once the rerun of the one before has ended (the app's ``data-test-script-state`` went to
# "running" and back to "notRunning", seen in the observer's records too, since a short run
# can begin and end between two of its callbacks; a press whose rerun never starts is given
# up after 20 s: a busy server can take seconds to start a rerun, and a next press clicked
# before it started would be merged into it by the server, one step for two presses).
# A click during a rerun replaced that rerun's button press, so
# four quick presses moved two or three steps. A press queued in the browser, not counted on
# the server: the page's own rule (a step from the position kept now, a disabled Next at the
# end) decides each press, and a queued press is dropped when its button is disabled by then.
PRESENTER_KEYS_JS = """<script>
(() => {
  if (window.__specdecPresenterKeys) { return; }
  window.__specdecPresenterKeys = true;
  const NEXT = ["ArrowRight", "PageDown"];
  const BACK = ["ArrowLeft", "PageUp"];
  const MAX_QUEUED = 12;
  const GIVE_UP_MS = 20000;
  const typing = (el) => el && el.closest && el.closest(
    "input, textarea, select, [contenteditable='true'], [role='slider'], [role='listbox'], " +
    "[role='combobox'], [role='menu'], [role='tablist'], [data-testid='stDataFrame']");
  // a box between the focus and the page that can scroll on this key's axis
  const scrolls = (el, sideways) => {
    const page = document.querySelector('[data-testid="stMain"]');
    for (let box = el; box && box !== page && box !== document.body; box = box.parentElement) {
      const style = getComputedStyle(box);
      const overflow = sideways ? style.overflowX : style.overflowY;
      const room = sideways ? box.scrollWidth - box.clientWidth
        : box.scrollHeight - box.clientHeight;
      if (["auto", "scroll"].includes(overflow) && room > 1) { return true; }
    }
    return false;
  };
  const button = (suffix) => {
    for (const box of document.querySelectorAll("[class*='st-key-']")) {
      const mine = [...box.classList].some((c) => c.startsWith("st-key-") && c.endsWith(suffix));
      const b = mine ? box.querySelector("button") : null;
      if (b && !b.disabled && b.offsetParent !== null) { return b; }
    }
    return null;
  };
  const app = () => document.querySelector('[data-testid="stApp"]');
  const idle = () => {
    const a = app();
    return !a || a.getAttribute("data-test-script-state") !== "running";
  };
  const queue = [];
  let waiting = null;  // {ran, since}: the press whose rerun has not ended yet
  // a run that began and ended between two callbacks shows only in the records' old values
  new MutationObserver((records) => {
    const began = records.some((r) => r.oldValue === "running");
    if (waiting && (began || !idle())) { waiting.ran = true; }
  }).observe(document.documentElement, {
    subtree: true, attributes: true, attributeOldValue: true,
    attributeFilter: ["data-test-script-state"],
  });
  const pump = () => {
    if (waiting) {
      if (!idle()) { waiting.ran = true; }
      const over = waiting.ran ? idle() : Date.now() - waiting.since > GIVE_UP_MS;
      if (!over) { setTimeout(pump, 25); return; }
      waiting = null;
    }
    if (!queue.length) { return; }
    if (!idle()) { setTimeout(pump, 25); return; }
    const target = button(queue.shift());
    if (!target) { pump(); return; }  // at the end (or the start): this press does nothing
    waiting = { ran: false, since: Date.now() };
    target.click();
    setTimeout(pump, 25);
  };
  document.addEventListener("keydown", (event) => {
    const on = getComputedStyle(document.documentElement)
      .getPropertyValue("--specdec-presenter").trim() === "1";
    if (!on || event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) {
      return;
    }
    const suffix = NEXT.includes(event.key) ? "_next" : BACK.includes(event.key) ? "_back" : "";
    if (!suffix || scrolls(event.target, event.key.startsWith("Arrow"))) { return; }
    if (!button(suffix) && !waiting && !queue.length) { return; }
    event.preventDefault();
    if (queue.length < MAX_QUEUED) { queue.push(suffix); }
    pump();
  });
})();
</script>"""


# Static theme script of presenter view (runs once per tab). Presenter view draws its charts
# for the theme the server was told on the last run (``st.context.theme.type``: black or
# white ink, colours swapped), and Streamlit does not rerun when the theme changes (the
# viewer's system turns dark at sunset, or the settings menu's theme is picked): the charts
# kept black text on the dark background. The script reads the app's background every
# half second and, when it turns from light to dark or back, presses the hidden button
# ``present_theme_rerun_<theme>``: one rerun, with the new theme (the key names the theme the
# charts were drawn for, which the browser tests wait for).
THEME_JS = """<script>
(() => {
  if (window.__specdecThemeWatch) { return; }
  window.__specdecThemeWatch = true;
  const dark = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    const rgb = app ? getComputedStyle(app).backgroundColor.match(/\\d+/g) : null;
    if (!rgb) { return null; }
    const [r, g, b] = rgb.map(Number);
    return 0.299 * r + 0.587 * g + 0.114 * b < 128;
  };
  let seen = dark();
  setInterval(() => {
    const now = dark();
    if (seen === null) { seen = now; return; }  // the app was not drawn yet: its first theme
    if (now === null || now === seen) { return; }
    const button = document.querySelector("[class*='st-key-present_theme_rerun'] button");
    if (!button) { return; }  // not in presenter view now: nothing is drawn for a theme
    seen = now;
    button.click();
  }, 500);
})();
</script>"""


# Static stepper script of every page (runs once per tab, like the key script above): after
# a tap on the Back / Next row repeated under a step's chart (``*_below``, shown on a phone
# only), it keeps that whole row on the bottom edge of the screen, so the new step's chart
# sits right above the thumb (the step's words above it change height from step to step,
# and moved the chart away). It follows the row until the reader moves the page (scrolls,
# types, touches or clicks elsewhere), and for at most 60 s after the last rerun it saw
# running (a loaded machine lays a chart out many seconds after its script has ended, and a
# background result can rerun the page once more). It polls the app's script state from
# the tap on: an observer of that attribute missed the end of some reruns (CI, stop 30).
STEPPER_JS = """<script>
(() => {
  if (window.__specdecStepperScroll) { return; }
  window.__specdecStepperScroll = true;
  const FOLLOW_MS = 60000;
  let row = null;  // the class of the row kept on the bottom edge, from the tap on
  let until = 0;
  let follow = null;
  const stop = () => { clearInterval(follow); follow = null; row = null; };
  // the reader moves the page: stop following the row at once (a tap on the row itself
  // stops it too, and its click starts following again)
  for (const what of ["wheel", "touchstart", "keydown", "pointerdown"]) {
    document.addEventListener(what, stop, { capture: true, passive: true });
  }
  const keyed = (el) => el && el.closest && el.closest("[class*='st-key-']");
  // the outermost ``*_below`` keyed box around the button: the row, not the button alone
  const rowOf = (target) => {
    let found = null;
    for (let box = keyed(target); box; box = keyed(box.parentElement)) {
      const name = [...box.classList].find((c) => c.startsWith("st-key-") && c.endsWith("_below"));
      if (name) { found = name; }
    }
    return found;
  };
  const keepRow = () => {
    if (Date.now() > until) { stop(); return; }
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute("data-test-script-state") !== "notRunning") {
      until = Date.now() + FOLLOW_MS;  // a rerun runs: the window starts when it has ended
      return;
    }
    const box = document.querySelector("." + row);  // absent for a moment while redrawn
    if (box && Math.abs(box.getBoundingClientRect().bottom - window.innerHeight) > 2) {
      box.scrollIntoView({ block: "end" });
    }
  };
  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("button");
    const name = button ? rowOf(button) : null;
    if (!name) { return; }
    stop();
    row = name;
    until = Date.now() + FOLLOW_MS;
    follow = setInterval(keepRow, 150);
  }, true);
})();
</script>"""


def parse_present(raw: str | None) -> bool | None:
    """``present`` link value -> True/False, or None when absent or not a yes/no word."""
    return parse_yes_no(raw)


def presenting() -> bool:
    """Whether presenter view is on; a changed ``present`` link value is applied once
    (:class:`specdec_ui.kit.link_switch.LinkSwitch`)."""
    return SWITCH.on()


def presenter_toggle() -> bool:
    """The sidebar switch; returns the (possibly new) state."""
    return SWITCH.toggle(
        "🖥️ Presenter view",
        help="Projector layout: inputs folded away, larger chart text, thicker lines. "
        "→ / Page Down (a clicker) presses Next, ← / Page Up presses Back. "
        "The link gets present=1 so a reload keeps it.",
    )


def link_params() -> dict[str, str]:
    """``{"present": "1"}`` in presenter view, else ``{}``: add it to the page's link."""
    return SWITCH.link_params()


def sync_link() -> None:
    """Write the presenter state into the address bar (after the page wrote its own)."""
    SWITCH.sync_link()


def presenter_style() -> None:
    """Static CSS and the static key script, only in presenter view."""
    if not presenting():
        return
    st.html(PRESENTER_CSS)  # style only: Streamlit puts it out of the page flow
    st.sidebar.html(PRESENTER_KEYS_JS, unsafe_allow_javascript=True)
    st.sidebar.html(THEME_JS, unsafe_allow_javascript=True)
    drawn_for = st.context.theme.type or "unknown"
    st.sidebar.button("Redraw for the theme", key=f"present_theme_rerun_{drawn_for}")  # hidden


def app_style() -> None:
    """The static CSS of every page (wrapping formulas, phone-friendly charts, steppers,
    contrast, focus, reduced motion) and the static scripts: accessibility (skip link,
    ARIA) and the steppers (a phone's repeated Back / Next keeps the chart in view)."""
    st.html(APP_CSS)  # style only: Streamlit puts it out of the page flow
    st.sidebar.html(A11Y_JS, unsafe_allow_javascript=True)
    st.sidebar.html(STEPPER_JS, unsafe_allow_javascript=True)


def page_heading(
    page: PageInfo,
    intro: str,
    *,
    presenting: bool,
    questions: Callable[[str | None], None] | None = None,
) -> None:
    """The page's title and its intro paragraph (markdown, the page's own text); in
    presenter view the intro folds away, so the result comes first. ``questions(intro)``
    draws "What this page asks" (the page's questions for the class, folded), given the
    intro when the page shows it nowhere else; a page without questions folds its intro
    into that box instead."""
    st.title(f"{page.icon} {page.title}")
    if questions is None:
        (st.expander("What this page asks") if presenting else st.container()).write(intro)
        return
    if not presenting:
        st.write(intro)
    questions(intro if presenting else None)


# plotly's config for every chart: no zoom by the mouse wheel or a two-finger scroll (it
# took the page's scroll), no plotly logo. The figure itself is never changed: figures are
# shared read-only between sessions. Phones lose the toolbar and drag-zoom by APP_CSS.
CHART_CONFIG = {"scrollZoom": False, "displaylogo": False}


def chart(
    fig: go.Figure, *, config: Mapping | None = None, alt: str | None = None, **kwargs
) -> None:
    """``st.plotly_chart`` with the presenter look applied in presenter view, and the
    chart's text alternative (issue 28): the summary the figure carries
    (:func:`specdec_ui.kit.chart_text.chart_text`) is the chart's accessible name, and its data
    follows as a table in an expander. ``alt`` (the page's words about this moment, e.g.
    the decision shown) is added after the summary.

    ``config`` (plotly's) is merged over :data:`CHART_CONFIG`.
    """
    text = chart_text(fig)
    if presenting():
        fig = presenter_figure(fig, theme_type=st.context.theme.type)
    name = " ".join(part for part in (text.summary, alt) if part)
    st.plotly_chart(fig, config={**CHART_CONFIG, **(config or {})}, alt=name, **kwargs)
    chart_table(text)


DATA_LABEL = "🔢 This chart's numbers as a table"


def chart_table(text: ChartText) -> None:
    """The chart's summary and its data as a table, folded under the chart. The cells are
    the numbers as chart_text wrote them (kit.tables escapes labels a student typed for
    st.table's markdown; the headers are escaped here); the table's name says which chart
    it belongs to (:func:`table_name`)."""
    if not text.rows:
        return
    with st.expander(DATA_LABEL):
        st.caption(md_escape(text.summary))
        frame = pd.DataFrame(list(text.rows), columns=[md_escape(c) for c in text.columns])
        show_table(frame, name=table_name(text.summary))
        if text.note:
            st.caption(md_escape(text.note))


TABLE_NAME_WORDS = 14  # a table's name: the start of its chart's summary, this many words


def table_name(summary: str) -> str:
    """A chart's data table's accessible name: "Numbers of the chart: " and the start of
    the chart's summary (its first sentence, at most :data:`TABLE_NAME_WORDS` words)."""
    first = summary.split(". ")[0].split()
    short = " ".join(first[:TABLE_NAME_WORDS]) + (" …" if len(first) > TABLE_NAME_WORDS else "")
    return f"Numbers of the chart: {short.rstrip('.')}" if short else "Numbers of a chart"


def share_link(params: Mapping[str, str] | None = None) -> str | None:
    """This page's full address with its state (``present`` left out), or None if unknown.

    ``st.context.url`` is the page address the browser used (no query); ``params``
    defaults to the current query parameters. Presenter view is a screen setting, not
    state: a student's phone opens the normal page.
    """
    base = st.context.url
    if not base:
        return None
    values = dict(st.query_params.to_dict() if params is None else params)
    values.pop(PRESENT_PARAM, None)
    return base + (share_query(values) if values else "")


QR_ALT = "QR code of this page's link (the link is written beside it)"
LOCAL_NOTE = (
    "This address points at this computer (localhost), so phones cannot open it; serve the "
    "app on the network or a public host to share it."
)


def share_panel(link: str | None) -> None:
    """QR code of ``link`` beside the link as copyable text, and a note on local addresses."""
    if not link:
        st.caption("The share link appears here once the page has loaded in a browser.")
        return
    # A row that wraps instead of columns: a fixed 240 px code in a quarter column stuck out
    # over the link beside it on narrower screens (issue 25); now the link moves under it.
    row = st.container(horizontal=True, vertical_alignment="center", key="share_row")
    code = row.container(width=QR_WIDTH)
    text = row.container(width="stretch")
    try:
        png = qr_png(link)
    except LinkTooLongError as err:
        code.info(f"No QR code: {err}. Copy the link instead.", icon="🔗")
    else:
        code.image(
            png, width=QR_WIDTH, caption="Scan to open this page in the same state", alt=QR_ALT
        )
    with text:
        st.code(link, language=None, wrap_lines=True)
        if is_local_link(link):
            st.caption(LOCAL_NOTE)


QR_BUTTON_KEY = "presenter_qr"
QR_CORNER_KEY = "presenter_qr_corner"  # PRESENTER_CSS pins this container top right
QR_DIALOG_WIDTH = 460  # px: a class scans it from the back of the room (the dialog fits 768)
QR_DIALOG_SCALE = 12  # px per module, drawn larger than shown: sharp when scaled down


def qr_button() -> None:
    """ "📱 Show QR code": the page's current link as a large QR code in a dialog.

    In presenter view the button sits in the top-right corner of every page (pinned by
    ``PRESENTER_CSS``), reachable without scrolling; in normal view it is in the sidebar.
    The link is the address bar's: the page wrote its state into the query parameters on
    the run before the click, and a click changes no state.
    """
    where = st.container(key=QR_CORNER_KEY) if presenting() else st.sidebar
    if where.button(
        "📱 Show QR code",
        key=QR_BUTTON_KEY,
        help="Opens this page's link as a large QR code, for a class to scan.",
    ):
        qr_dialog(share_link())


@st.dialog("📱 Scan to open this page", width="large")
def qr_dialog(link: str | None) -> None:
    """The QR code of ``link`` at projector size, the link itself and the local-address note."""
    if not link:
        st.caption("The link is known once the page has loaded in a browser; try again.")
        return
    code, text = st.columns([1, 1], vertical_alignment="center")
    try:
        png = qr_png(link, scale=QR_DIALOG_SCALE)
    except LinkTooLongError as err:
        code.info(f"No QR code: {err}. Copy the link instead.", icon="🔗")
    else:
        code.image(png, width=QR_DIALOG_WIDTH, alt=QR_ALT)
    with text:
        st.markdown("**Scan with a phone camera** to open this page in the same state.")
        st.code(link, language=None, wrap_lines=True)
        if is_local_link(link):
            st.warning(LOCAL_NOTE, icon="⚠️")


def share_page(params: Mapping[str, str] | None = None) -> None:
    """For a page without ``PageState``: keep ``present=1`` in its link, show the QR panel."""
    sync_link()
    share_panel(share_link(params))
