"""The Settings panel and the theme: the form bound to ``app.settings``, saved in
``localStorage`` (the main thread's: the view writes it, a ``store`` op, and hands over what it
held at start); the relay URL checked as it is typed; with Format auto, the relay asked which
format it speaks; the theme (system, light, dark) applied to ``<html data-theme>``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..call.diagnose import label
from ..call.request import (
    advertised_format,
    body_format,
    check_relay_url,
    has_demo,
    needs_format_probe,
    relay_url,
)
from .endpoints import endpoints_of
from .platform import spawn
from .settings import (
    CHOICES,
    DEFAULTS,
    SETTINGS_KEY,
    UNREADABLE_KEY,
    coerce,
    dump_settings,
    load_settings,
    unreadable,
)

if TYPE_CHECKING:
    from ..chats.conversation import Conversation
    from .ports import SettingsHost

__all__ = ["SettingsForm"]

THEME_NEXT = {"system": "light", "light": "dark", "dark": "system"}


class SettingsForm:
    def __init__(self, app: SettingsHost) -> None:
        self.app = app
        self.site = app.site
        self.learned: dict[str, str] = {}  # relay URL -> the format it advertised
        self.settings = load_settings(app.platform.stored_settings, self.site)
        self.unreadable = unreadable(app.platform.stored_settings)
        self.notice = ""  # said once the chat is shown (``App.boot``)

    def q(self, selector: str) -> Any:
        return self.app.doc.querySelector(selector)

    def bind(self) -> None:
        q = self.q
        q("[data-role=settings]").addEventListener("change", self.read_form)
        q("[data-role=theme]").addEventListener(
            "click", lambda e: self.set_theme(THEME_NEXT[self.theme])
        )
        # Every field's value as the reader types it (a text field's change comes on blur)
        for el in self.app.doc.querySelectorAll("[data-setting]"):
            el.addEventListener("input", _mirror)
        if self.unreadable:  # kept aside before anything is saved over it, and said
            saved = str(self.app.platform.stored_settings)
            self.app.doc.ops.add(["store", UNREADABLE_KEY, saved])
            self.notice = (
                f"Your saved settings could not be read: {self.unreadable}. They are kept "
                f"unchanged in this browser's localStorage under {UNREADABLE_KEY}; the "
                "defaults apply until you change Settings."
            )
        self.fill()
        self.apply_theme()
        self.probe_format()

    def fill(self) -> None:
        q = self.q
        for key, value in self.settings.items():
            el = q(f"[data-setting={key}]")
            if el is not None:
                el.value = str(value)
        self.update_relay_hint()

    def update_relay_hint(self) -> None:
        q = self.q
        el = q("[data-role=relay-url]")
        if el is not None:
            default = self.resolved_url(ignore_setting=True)
            el.placeholder = f"{default}  (default)" if default else "not set: see the notice"
        problem = check_relay_url(str(self.settings["relay"]))
        more = q("[data-role=endpoints-error]")
        if more is not None:
            problems = endpoints_of(self.settings)[1]
            more.textContent = " ".join(p + "." for p in problems[:3])
            more.hidden = not problems
        err = q("[data-role=relay-url-error]")
        if err is not None:
            err.textContent = problem or ""
            err.hidden = not problem
        if el is not None:
            el.setAttribute("aria-invalid", "true" if problem else "false")
        for sel in ("[data-role=demo-hint]", "[data-role=demo-example]"):
            hint = q(sel)
            if hint is not None:
                hint.hidden = not has_demo(self.site)
        if not has_demo(self.site):  # (the page's hint less the demo; on a touch screen the
            # page has no key hint there: Enter starts a line, web/view.js)
            prompt = self.app.prompt
            prompt.placeholder = str(prompt.placeholder).replace(", or /demo help", "")

    def read_form(self, *_: Any) -> None:
        before = (self.settings["relay"], self.settings["format"])
        for key in DEFAULTS:
            el = self.q(f"[data-setting={key}]")
            if el is not None:
                self.settings[key] = coerce(key, el.value)
        self.save()
        self.update_relay_hint()
        self.apply_theme()
        if (self.settings["relay"], self.settings["format"]) != before:
            self.probe_format()
        self.app.picker.refresh()
        self.app.remember_next()

    def save(self) -> None:
        """Kept for the next visit (storage may be disabled: they still apply to this page)."""
        self.app.doc.ops.add(["store", SETTINGS_KEY, dump_settings(self.settings, self.site)])

    # -- theme ---------------------------------------------------------------------------------

    @property
    def theme(self) -> str:
        return str(self.settings["theme"])

    def set_theme(self, theme: str) -> None:
        self.settings["theme"] = theme if theme in CHOICES["theme"] else "system"
        self.save()
        el = self.q("[data-setting=theme]")
        if el is not None:
            el.value = self.theme
        self.apply_theme()

    def apply_theme(self) -> None:
        root = self.app.doc.documentElement
        if self.theme == "system":
            root.removeAttribute("data-theme")
        else:
            root.dataset.theme = self.theme
        btn = self.q("[data-role=theme]")
        if btn is not None:
            nxt = THEME_NEXT[self.theme]
            btn.setAttribute("aria-label", f"Theme: {self.theme} (switch to {nxt})")
            btn.title = f"Theme: {self.theme}; press for {nxt}"

    # -- where requests go ---------------------------------------------------------------------

    def resolved_url(
        self, ignore_setting: bool = False, settings: dict[str, Any] | None = None
    ) -> str | None:
        """Where a request goes: ``settings``' relay (a chat's endpoint: ``PickerView
        .effective``; Settings' own by default), or the site's, or the demo's."""
        s = self.settings if settings is None else settings
        return self.url_for("" if ignore_setting else str(s["relay"]), str(s["format"]))

    def for_chat(self, conv: Conversation) -> dict[str, Any]:
        """The settings ``conv``'s requests are made with (its endpoint and model)."""
        return self.app.picker.effective(conv)

    def url_for(self, relay: str, fmt: str) -> str | None:
        """The URL of the endpoint ``relay`` (as typed) in format ``fmt``."""
        written = body_format(fmt, self.site)
        return relay_url(relay, written, self.site, self.app.platform.location.origin)

    def probe_format(self) -> None:
        """With Format auto, ask the relay which format it speaks (a GET: no preflight, no
        key used) so the first message is already written in it."""
        s = self.settings
        url = self.resolved_url()
        if url is None or url in self.learned or check_relay_url(str(s["relay"])):
            return
        if needs_format_probe(s["format"], str(s["relay"]), self.site):
            spawn(self._learn_from_probe(url))

    async def _learn_from_probe(self, url: str) -> None:
        found = await self.app.platform.net.probe(url)
        fmt = advertised_format(found.text) if found.reached else None
        if fmt is not None:
            self.learned.setdefault(url, fmt)
            self.app.doc.body.dataset.relayFormat = fmt

    def learn_format(self, url: str, fmt: str) -> bool:
        """The relay at ``url`` says it speaks ``fmt`` (X-Pysse-Format). Later requests use
        it; a chosen Format that disagrees is switched to it (the relay knows, a saved value
        may be stale). True if the Format setting changed. Only Settings' own relay changes
        the Format field: another endpoint's (the picker's) is only learned."""
        self.learned[url] = fmt
        if self.settings["format"] in ("auto", fmt) or url != self.resolved_url():
            return False
        self.settings["format"] = fmt
        self.save()
        el = self.q("[data-setting=format]")
        if el is not None:
            el.value = fmt
        self.app.show_notice(
            f"Format is now {label(fmt)}: the relay at {url} says it speaks that. Press "
            "Regenerate to send again."
        )
        return True


def _mirror(e: Any) -> None:
    """A listener whose only job is that the view forwards the field's value as it changes
    (the model mirrors it: ``pysse.view.dom.Document.dispatch``)."""
