"""The README's screenshots, made again from the built site (``python build.py screenshots``):
the main states of the chat page in the light and the dark theme, at desktop and phone sizes,
two mid-stream moments (a table arriving, a code fence still open), the model's reasoning
(open while it thinks, folded after, with tool calls), search across chats and an Arabic
answer on an Arabic reader's phone (``rtl``: ``python -m bench.screenshots rtl`` makes only
that one), a table's and a code block's tools (``takeout``), an answer's sources with their
marks in the text (``sources``), an attached photo (``attach``) and a drawn diagram and a
broken one in both themes (``diagrams``), a Python block run (``run``) and the Model menu
(``models``), written to docs/.

Answers come from the demo relay; the mid-stream moments from the testing kit's scripted
server, which stalls the stream at the right event so the picture is the same every time.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from pysse.server.app import create_app
from pysse.testing import Script, ScriptServer
from pysse.testing.browser import CHROMIUM_ARGS, find_chromium
from pysse.testing.live import LiveServer

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
DESKTOP = {"width": 1100, "height": 760}
PHONE = {"width": 390, "height": 760}

TABLE = (
    "Here is how the providers end a stream:\n\n| Provider | Terminal signal | Line ends |\n"
    "|---|---|---|\n| OpenAI Chat | `data: [DONE]` | LF |\n| Anthropic | `message_stop` | LF |\n"
    "| Gemini | `finishReason` | CRLF |\n| OpenAI Responses | `response.completed` | LF |\n"
)
FENCE = (
    "Feed the bytes as they come:\n\n```python\nfrom pysse import ChatStream\n\n"
    'cs = ChatStream("auto")\nfor chunk in response.iter_bytes():\n'
    "    for event in cs.feed(chunk):\n        print(event)\nprint(cs.close())\n```\n\nDone.\n"
)


def page_for(browser: Any, base: str, theme: str, viewport: dict[str, int], **settings: Any) -> Any:
    ctx = browser.new_context(
        viewport=viewport,
        color_scheme="dark" if theme == "dark" else "light",
        device_scale_factor=1,
    )
    page = ctx.new_page()
    saved = {"headers": "X-Demo-Pace: 0.05", "theme": theme, **settings}
    page.add_init_script(
        f"localStorage.setItem('pysse.settings.v1', {json.dumps(json.dumps(saved))})"
    )
    page.goto(base + "/")
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    return page


def ask(page: Any, text: str) -> None:
    n = page.locator("[data-role=assistant]").count()
    page.fill("[data-role=prompt]", text)
    page.press("[data-role=prompt]", "Enter")
    page.wait_for_function(
        f"() => {{ const a = document.querySelectorAll('[data-role=assistant]');"
        f" return a.length > {n} && a[a.length - 1].dataset.state !== 'streaming'; }}",
        timeout=60_000,
    )


def shoot(page: Any, name: str) -> None:
    page.mouse.move(0, 0)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.wait_for_timeout(150)
    page.screenshot(path=str(DOCS / name))
    print(f"  docs/{name}")


def stall_point(script: Script, needle: str) -> int:
    """The first event after which the answer so far contains ``needle``."""
    for k in range(1, script.event_count + 1):
        if needle in script.truncate(after_event=k).chat().text:
            return k
    raise ValueError(f"{needle!r} never arrives")


def midstream(browser: Any, base: str, text: str, needle: str, name: str) -> None:
    """A moment mid-answer: the stream stalls once the text so far has ``needle``."""
    script = Script.answer(text).chunked("event")
    with ScriptServer() as server:
        server.play(script.stall(after_event=stall_point(script, needle)))
        page = page_for(browser, base, "light", DESKTOP, relay=server.url, format="openai-chat")
        page.fill("[data-role=prompt]", "Show me")
        page.press("[data-role=prompt]", "Enter")
        page.wait_for_function(
            "() => { const a = document.querySelector('[data-role=assistant]');"
            " return a && a.querySelector('.settled, .tail').textContent.length > 0; }"
        )
        page.wait_for_timeout(600)
        shoot(page, name)
        page.click("[data-role=stop]")
        page.context.close()


def rtl_phone(browser: Any, base: str) -> None:
    """An answer in Arabic, Hebrew and English to an Arabic question, on the phone of a reader
    whose language is Arabic (the page's chrome mirrors; issue #42)."""
    text = (ROOT / "tests" / "fixtures" / "rtl_answer.md").read_text()
    with ScriptServer() as server:
        server.play(Script.answer(text).chunked("event"))
        ctx = browser.new_context(
            viewport={"width": 390, "height": 844}, locale="ar", device_scale_factor=1
        )
        page = ctx.new_page()
        saved = {"headers": "", "theme": "light", "relay": server.url, "format": "openai-chat"}
        page.add_init_script(
            f"localStorage.setItem('pysse.settings.v1', {json.dumps(json.dumps(saved))})"
        )
        page.goto(base + "/")
        page.wait_for_selector("body[data-ready='1']", timeout=60_000)
        ask(page, "اشرح لي بايثون باختصار، مع مثال")
        page.evaluate("document.querySelector('[data-role=log]').scrollTop = 0")
        shoot(page, "rtl-phone.png")
        ctx.close()


def send(page: Any, text: str) -> None:
    page.fill("[data-role=prompt]", text)
    page.press("[data-role=prompt]", "Enter")


def reasoning_and_search(browser: Any, base: str) -> None:
    """``/demo think`` while it thinks and after (its disclosure folded, then opened),
    ``/demo tools``, then a search over the chats made."""
    page = page_for(browser, base, "light", DESKTOP, headers="X-Demo-Pace: 1")  # it thinks ~3 s
    send(page, "/demo think")
    page.wait_for_selector("[data-role=reasoning][data-state=thinking] .reasoning-text > *")
    page.wait_for_timeout(800)
    shoot(page, "reasoning-thinking.png")
    page.wait_for_function(
        "() => document.querySelector('[data-role=assistant]').dataset.state === 'completed'",
        timeout=60_000,
    )
    ask(page, "/demo tools")
    shoot(page, "reasoning-folded.png")
    page.click("[data-role=assistant] >> nth=0 >> [data-role=reasoning-summary]")
    page.wait_for_timeout(300)
    page.locator("[data-role=assistant] >> nth=0").scroll_into_view_if_needed()
    shoot(page, "reasoning-open.png")
    for question in ("What is a kaleidoscope?", "How do kaleidoscope mirrors work?"):
        page.click("[data-role=new-chat]")
        ask(page, question)
    page.fill("[data-role=search]", "kaleidoscope")
    page.wait_for_selector("[data-role=search-result] mark")
    page.wait_for_timeout(300)
    shoot(page, "search.png")
    page.context.close()


def takeout(browser: Any, base: str) -> None:
    """A table's tools (Copy, Copy TSV, Download CSV) and a code block's Copy and Download,
    just after the table's Copy was clicked."""
    page = page_for(browser, base, "light", DESKTOP)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    ask(page, "hello")
    page.evaluate("document.querySelector('.tablebox').scrollIntoView({block: 'start'})")
    page.click(".table-tools [data-role=table-md]")
    page.wait_for_function(
        "() => document.querySelector('.table-tools [data-role=table-md]').textContent === 'Copied'"
    )
    page.mouse.move(0, 0)
    table = page.locator(".tablebox").bounding_box()
    code = page.locator(".codeblock").bounding_box()
    left = min(table["x"], code["x"]) - 16
    right = max(table["x"] + table["width"], code["x"] + code["width"]) + 16
    top, bottom = table["y"] - 12, code["y"] + code["height"] + 12
    clip = {"x": left, "y": top, "width": right - left, "height": bottom - top}
    page.screenshot(path=str(DOCS / "takeout-light.png"), clip=clip)
    print("  docs/takeout-light.png")
    page.context.close()


def sources(browser: Any, base: str) -> None:
    """``/demo cite``: numbered marks after the cited words, the sources listed under it."""
    page = page_for(browser, base, "light", DESKTOP, format="openai-responses")
    ask(page, "/demo cite")
    page.wait_for_selector(".cite-mark")
    box = page.locator("[data-role=assistant]").bounding_box()
    page.screenshot(
        path=str(DOCS / "sources-light.png"),
        clip={
            "x": box["x"] - 12,
            "y": box["y"] - 12,
            "width": box["width"] + 24,
            "height": box["height"] + 24,
        },
    )
    print("  docs/sources-light.png")
    page.context.close()


def photo() -> bytes:
    """A 1200x800 gradient photo, made here (no picture is shipped)."""
    import io

    from PIL import Image

    size = (1200, 800)
    across = Image.linear_gradient("L").resize(size)
    down = Image.linear_gradient("L").rotate(90).resize(size)
    img = Image.merge("RGB", (across, down, Image.new("L", size, 170)))
    out = io.BytesIO()
    img.save(out, "JPEG", quality=80)
    return out.getvalue()


def attach(browser: Any, base: str) -> None:
    """A photo attached with the picker (its chip), then sent: its thumbnail in the question
    and the demo relay's account of what it received."""
    page = page_for(browser, base, "light", DESKTOP)
    page.set_input_files(
        "[data-role=attach-input]",
        files=[{"name": "sunset.jpg", "mimeType": "image/jpeg", "buffer": photo()}],
    )
    page.wait_for_selector("[data-role=attachments] img[alt='sunset.jpg']")
    page.fill("[data-role=prompt]", "/demo echo What is in this photo?")
    shoot(page, "attach-chip-light.png")
    page.click("[data-role=send]")
    page.wait_for_function(
        "() => { const a = document.querySelector('[data-role=assistant]');"
        " return a && a.dataset.state === 'completed'; }",
        timeout=60_000,
    )
    shoot(page, "attach-sent-light.png")
    page.context.close()


def diagrams(browser: Any, base: str) -> None:
    """``/demo diagram`` in both themes: the flowchart drawn, the broken one's source and
    error, clipped to the answer."""
    for theme in ("light", "dark"):
        page = page_for(browser, base, theme, {"width": 1000, "height": 1000})
        ask(page, "/demo diagram")
        page.wait_for_selector(f"[data-drawn={theme}] figure.diagram img", state="attached")
        page.wait_for_selector("[data-drawn=failed]", state="attached")
        page.wait_for_function("() => document.querySelector('figure.diagram img').complete")
        page.mouse.move(0, 0)
        page.wait_for_timeout(200)
        page.locator("[data-role=assistant]").last.screenshot(
            path=str(DOCS / f"diagram-{theme}.png")
        )
        print(f"  docs/diagram-{theme}.png")
        page.context.close()


def run_python(browser: Any, base: str) -> None:
    """A Python block run in its sandbox: what it printed and a traceback of the user's code."""
    page = page_for(browser, base, "light", DESKTOP)
    code = (
        "squares = [n * n for n in range(1, 8)]\nprint('squares:', squares)\n"
        "print('sum:', sum(squares))\ndef mean(xs):\n    return sum(xs) / len(xs)\n"
        "print(mean([]))"
    )
    ask(page, f"/demo echo ```python\n{code}\n```")
    page.click("[data-role=assistant] .codeblock .run")
    page.wait_for_function(
        "() => (document.querySelector('.run-status')?.textContent || '').startsWith('Failed')",
        timeout=120_000,
    )
    page.mouse.move(0, 0)
    page.wait_for_timeout(200)
    page.locator("[data-role=assistant]").last.screenshot(path=str(DOCS / "run-light.png"))
    print("  docs/run-light.png")
    page.context.close()


def models(browser: Any, base: str) -> None:
    """The Model menu beside Send, filled from the demo relay's ``/v1/models``: an answer by
    one model, regenerated with another (two versions, each footer naming its model)."""
    page = page_for(browser, base, "light", DESKTOP)
    picker = page.locator("[data-role=model-picker]")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-role=model-picker] option').length >= 5"
    )
    picker.select_option(label="demo-anthropic")
    ask(page, "hello")
    picker.select_option(label="demo-gemini")
    page.click("[data-role=assistant] >> nth=-1 >> [data-role=regenerate]")
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-role=assistant]')].at(-1)"
        ".dataset.state === 'completed'",
        timeout=60_000,
    )
    shoot(page, "models-light.png")
    page.context.close()


EXTRA = {
    "rtl": rtl_phone,
    "takeout": takeout,
    "sources": sources,
    "attach": attach,
    "diagrams": diagrams,
    "run": run_python,
    "models": models,
}


def main() -> None:
    site = Path(os.environ["PYSSE_SITE"])
    DOCS.mkdir(exist_ok=True)
    with LiveServer(create_app(site)) as live, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        if sys.argv[1:] and sys.argv[1] in EXTRA:  # one picture only
            EXTRA[sys.argv[1]](browser, live.url)
            browser.close()
            return
        for theme in ("light", "dark"):
            page = page_for(browser, live.url, theme, DESKTOP)
            shoot(page, f"welcome-{theme}.png")
            ask(page, "Show me the quadratic formula and a to-do list")
            ask(page, "hello")
            page.click("[data-role=assistant] >> nth=1 >> [data-role=regenerate]")
            page.wait_for_function(
                "() => [...document.querySelectorAll('[data-role=assistant]')].at(-1)"
                ".dataset.state === 'completed'"
            )
            page.locator("[data-role=assistant] >> nth=0").scroll_into_view_if_needed()
            page.evaluate("document.querySelector('[data-role=log]').scrollTop = 0")
            shoot(page, f"chat-{theme}.png")
            page.click("[data-role=assistant] >> nth=1 >> [data-role=inspect]")
            page.wait_for_selector("[data-role=inspector]:not([hidden])")
            page.click("[data-tab=events]")
            shoot(page, f"inspector-{theme}.png")
            page.context.close()
            phone = page_for(browser, live.url, theme, PHONE)
            ask(phone, "Show me the quadratic formula and a to-do list")
            phone.evaluate("document.querySelector('[data-role=log]').scrollTop = 0")
            shoot(phone, f"phone-{theme}.png")
            phone.click("[data-role=chats-toggle]")
            phone.wait_for_selector("body[data-chats-open='1']")
            phone.wait_for_timeout(300)
            shoot(phone, f"phone-chats-{theme}.png")
            phone.context.close()
        midstream(browser, live.url, TABLE, "| Gemini | `fini", "midstream-table-arriving.png")
        midstream(browser, live.url, FENCE, "    for event in", "midstream-fence-open.png")
        reasoning_and_search(browser, live.url)
        rtl_phone(browser, live.url)
        takeout(browser, live.url)
        sources(browser, live.url)
        attach(browser, live.url)
        diagrams(browser, live.url)
        run_python(browser, live.url)
        models(browser, live.url)
        browser.close()


if __name__ == "__main__":
    main()
