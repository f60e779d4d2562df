"""A minimal client of Streamlit's own websocket protocol, for load tests (loopback only).

A browser tab talks to a Streamlit server over one websocket,
``ws://HOST:PORT/_stcore/stream`` with the subprotocol ``"streamlit"``:

- the browser sends ``BackMsg`` protobufs; a click or a slider move is a
  ``BackMsg.rerun_script`` holding a ``ClientState``: the page to run
  (``page_script_hash``, or ``page_name`` = the URL path on the first load), the
  query string, and ``WidgetStates``, one ``WidgetState`` per widget, identified
  by the widget's element id (``$$ID-<hash>-<key>`` for a keyed widget). A button
  click is ``trigger_value = True``; a slider value is ``double_array_value``.
- the server answers with ``ForwardMsg`` protobufs: ``new_session``,
  ``navigation`` (the pages and their hashes), ``delta`` (one element each:
  markdown, text, widgets with their ids, charts...), and ``script_finished``.

This mirrors what the Streamlit 1.67 frontend sends (``WidgetStateManager`` keeps
the values of every widget it has seen and sends them all on each rerun;
``sendRerunBackMsg`` adds the query string and the page hash). Only the parts a
load test needs are implemented: no caching of ForwardMsgs by hash (the client
reports no cached hashes, so the server sends every message in full; a browser
would receive less), no file uploads.

With ``browser_like=True`` (the class scenario) a session also does what the frontend does
for fragments and the address bar: it keeps the query string the server sets
(``page_info_changed``) and sends it with every rerun; it learns each
``st.fragment(run_every=...)`` from ``auto_rerun`` (fragment id and interval) and which
fragment drew each widget (``Delta.fragment_id``); :meth:`rerun_fragment` is the timer's
fragment rerun, and a click on a widget drawn by a fragment reruns only that fragment.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
TEXT_ELEMENTS = ("markdown", "text", "heading", "alert", "code", "metric", "progress")


def check_loopback(url: str) -> None:
    """Refuse anything but a loopback address: this tool is never pointed at a real host."""
    host = urlsplit(url).hostname
    if host not in LOOPBACK_HOSTS:
        raise ValueError(f"only loopback addresses are allowed, got {host!r}")


@dataclass
class RunResult:
    """What one rerun sent back."""

    latency_s: float
    status: str  # "ok", or why it failed ("timeout", "exception element", "closed", ...)
    n_messages: int = 0
    n_bytes: int = 0
    texts: list[str] = field(default_factory=list)  # bodies of text-like elements
    widget_ids: dict[str, str] = field(default_factory=dict)  # user key -> element id
    disabled: dict[str, bool] = field(default_factory=dict)  # user key -> disabled
    slider_max: dict[str, float] = field(default_factory=dict)  # user key -> slider maximum
    element_types: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def text(self) -> str:
        return "\n".join(self.texts)


class StreamlitSession:
    """One browser tab: a websocket, the widget ids it has seen, the pages it knows."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 30.0,
        cookie: str | None = None,
        browser_like: bool = False,
    ):
        check_loopback(base_url)
        self.cookie = cookie  # sent with the websocket upgrade (a load balancer's affinity)
        self.response_headers: dict[str, str] = {}  # of the upgrade response
        parts = urlsplit(base_url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.ws_url = f"ws://{parts.netloc}/_stcore/stream"
        self.timeout_s = timeout_s
        self.ws = None
        self.page_hash = ""  # the page on screen (from the navigation message)
        self.pages: dict[str, str] = {}  # url_pathname -> page_script_hash
        self.widget_ids: dict[str, str] = {}  # key -> id, for the page on screen
        self.disabled: dict[str, bool] = {}
        self.slider_max: dict[str, float] = {}
        self.values: dict[str, tuple[str, object]] = {}  # id -> (proto field, value)
        self.browser_like = browser_like
        self.query_string = ""  # the address bar's query (browser_like: sent with each rerun)
        self.fragments: dict[str, float] = {}  # fragment id -> run_every interval (s)
        self.widget_fragment: dict[str, str] = {}  # widget key -> the fragment that drew it

    async def connect(self) -> None:
        self.ws = await websockets.connect(
            self.ws_url,
            subprotocols=["streamlit"],
            origin=self.origin,
            max_size=None,
            open_timeout=self.timeout_s,
            ping_interval=None,
            additional_headers={"Cookie": self.cookie} if self.cookie else None,
        )
        response = getattr(self.ws, "response", None)
        if response is not None:
            self.response_headers = {k.lower(): v for k, v in response.headers.raw_items()}

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None

    async def open_page(self, page_name: str, query_string: str = "") -> RunResult:
        """Load a page as a browser does on a fresh tab (the URL path names the page)."""
        self.values.clear()
        self.query_string = query_string
        msg = BackMsg()
        msg.rerun_script.query_string = query_string
        if page_name in self.pages:
            msg.rerun_script.page_script_hash = self.pages[page_name]
        else:
            msg.rerun_script.page_name = page_name
        return await self._run(msg)

    async def click(self, key: str) -> RunResult:
        """Press a button (a trigger: true for this rerun only)."""
        return await self._rerun_with(key, "trigger_value", True, sticky=False)

    async def set_slider(self, key: str, *values: float) -> RunResult:
        return await self._rerun_with(key, "double_array_value", [float(v) for v in values])

    async def set_value(self, key: str, proto_field: str, value: object) -> RunResult:
        return await self._rerun_with(key, proto_field, value)

    async def rerun_fragment(self, fragment_id: str) -> RunResult:
        """What the frontend's ``run_every`` timer sends: a rerun of one fragment."""
        msg = self._rerun_msg(fragment_id)
        msg.rerun_script.is_auto_rerun = True
        for wid, (proto_field, value) in self.values.items():
            _set(msg.rerun_script.widget_states.widgets.add(), wid, proto_field, value)
        return await self._run(msg)

    def _rerun_msg(self, fragment_id: str = "") -> BackMsg:
        msg = BackMsg()
        msg.rerun_script.page_script_hash = self.page_hash
        if self.browser_like:
            msg.rerun_script.query_string = self.query_string
            msg.rerun_script.fragment_id = fragment_id
        return msg

    async def _rerun_with(
        self, key: str, proto_field: str, value: object, *, sticky: bool = True
    ) -> RunResult:
        if key not in self.widget_ids:
            return RunResult(0.0, f"no widget with key {key!r} on the page")
        wid = self.widget_ids[key]
        msg = self._rerun_msg(self.widget_fragment.get(key, ""))
        states = msg.rerun_script.widget_states
        for other_id, (other_field, other_value) in self.values.items():
            if other_id != wid:
                _set(states.widgets.add(), other_id, other_field, other_value)
        _set(states.widgets.add(), wid, proto_field, value)
        if sticky:
            self.values[wid] = (proto_field, value)
        return await self._run(msg)

    def _read(self, data: bytes, result: RunResult) -> bool:
        """Take in one message of a run; True when it ends the run (``script_finished``)."""
        fwd = ForwardMsg()
        fwd.ParseFromString(data)
        kind = fwd.WhichOneof("type")
        if kind == "navigation":
            self.page_hash = fwd.navigation.page_script_hash
            self.pages = {p.url_pathname: p.page_script_hash for p in fwd.navigation.app_pages}
        elif kind == "delta":
            seen = len(result.widget_ids)
            self._read_delta(fwd, result)
            if self.browser_like and len(result.widget_ids) > seen:
                key = list(result.widget_ids)[-1]  # the widget this delta drew
                self.widget_fragment[key] = fwd.delta.fragment_id
        elif kind == "page_info_changed" and self.browser_like:
            self.query_string = fwd.page_info_changed.query_string
        elif kind == "auto_rerun":
            self.fragments[fwd.auto_rerun.fragment_id] = fwd.auto_rerun.interval
        elif kind == "script_finished":
            if fwd.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                return False  # the script called st.rerun(): a browser waits for that run
            if fwd.script_finished not in (
                ForwardMsg.FINISHED_SUCCESSFULLY,
                ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
            ):
                result.status = f"script_finished={fwd.script_finished}"
            return True
        return False

    async def _run(self, msg: BackMsg) -> RunResult:
        if self.ws is None:
            return RunResult(0.0, "not connected")
        start = time.perf_counter()
        result = RunResult(0.0, "ok")
        try:
            await self.ws.send(msg.SerializeToString())
            deadline = start + self.timeout_s
            while True:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    raise TimeoutError
                data = await asyncio.wait_for(self.ws.recv(), remaining)
                result.n_messages += 1
                result.n_bytes += len(data)
                if self._read(data, result):
                    break
        except TimeoutError:
            result.status = "timeout"
        except websockets.ConnectionClosed as err:
            result.status = f"closed ({err.code})"
        result.latency_s = time.perf_counter() - start
        if result.ok and "exception" in result.element_types:
            result.status = "exception element"
        if result.ok and result.n_messages and result.widget_ids:
            if msg.rerun_script.fragment_id:  # a fragment redraws its own widgets only
                self.widget_ids.update(result.widget_ids)
                self.disabled.update(result.disabled)
                self.slider_max.update(result.slider_max)
            else:
                self.widget_ids = result.widget_ids
                self.disabled = result.disabled
                self.slider_max = result.slider_max
        return result

    @staticmethod
    def _read_delta(fwd: ForwardMsg, result: RunResult) -> None:
        if fwd.delta.WhichOneof("type") != "new_element":
            return
        element = fwd.delta.new_element
        kind = element.WhichOneof("type")
        if kind is None:
            return
        result.element_types.append(kind)
        body = getattr(element, kind)
        if kind in TEXT_ELEMENTS:
            text = getattr(body, "body", "") or getattr(body, "label", "")
            if kind == "metric":
                text = f"{body.label}: {body.body}"
            elif kind == "progress":
                text = body.text
            result.texts.append(text)
        wid = (
            getattr(body, "id", "")
            if hasattr(type(body), "DESCRIPTOR")
            and any(f.name == "id" for f in body.DESCRIPTOR.fields)
            else ""
        )
        if wid:
            key = wid.split("-", 2)[2] if wid.startswith("$$ID-") and wid.count("-") >= 2 else wid
            result.widget_ids[key] = wid
            result.disabled[key] = bool(getattr(body, "disabled", False))
            if kind == "slider":
                result.slider_max[key] = body.max


def _set(state, wid: str, proto_field: str, value: object) -> None:
    state.id = wid
    if proto_field == "double_array_value":
        state.double_array_value.data.extend(value)  # type: ignore[arg-type]
    elif proto_field == "int_array_value":
        state.int_array_value.data.extend(value)  # type: ignore[arg-type]
    elif proto_field == "string_array_value":
        state.string_array_value.data.extend(value)  # type: ignore[arg-type]
    else:
        setattr(state, proto_field, value)
