"""Search across chats (``python build.py bench --only search``, issue #23): 500 chats of 20
long answers (``bench.search_corpus``, ~60 MB of text), in CPython and in Pyodide under Node.

What the page does, timed piece by piece:

* **read**: a stored chat's search record (``search_record``: its searched messages, stored
  with it) to its ``ChatText`` (folded once; the page does this the first time a search
  needs a chat not in memory), beside the same from the chat's whole JSON (a ``Conversation``
  first: what a chat stored without a record costs);
* **search**: one keystroke's whole search over all 500 kept texts (``chats.search``), for a
  term in one chat, in every chat (found early in each), a two-letter term, and a term in
  none (the whole corpus scanned: the worst case);
* **longest step**: the longest stretch between two yields of ``search_steps`` (the page
  gives the event loop a turn at most every 8 ms of it: this is the floor of a task);
* **baseline, side by side**: the same search folding every message again per keystroke
  (what a scan without kept folded texts costs).

Medians of ``SEARCH_RUNS`` runs (default 5); the load average is printed with the table.
``SEARCH_CHATS`` (default 500) sets the corpus size.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.search_corpus import _WORDS as WORDS  # noqa: E402
from bench.search_corpus import chats, needle_for  # noqa: E402
from buildtools.pyodide_node import PyodideRunError, run_with_wheels  # noqa: E402

# Runs the same in CPython and in Pyodide: INPUT is {"bodies": [...], "terms": {...}, "runs"}.
SEARCH_PY = r"""
import json, statistics, time
from pysse.chats.conversation import Conversation
from pysse.chats.search import ChatText, fold, fold_term, search, search_record, search_steps

def _ms(t0):
    return (time.perf_counter() - t0) * 1000

def run_search(data):
    bodies, terms, runs = data["bodies"], data["terms"], data["runs"]
    t0 = time.perf_counter()
    read = []
    texts = []
    for body in bodies:
        t1 = time.perf_counter()
        texts.append(ChatText.of(Conversation.from_json(json.loads(body))))
        read.append(_ms(t1))
    read_total = _ms(t0)
    records = [search_record(Conversation.from_json(json.loads(b))) for b in bodies]
    t0 = time.perf_counter()
    again = []
    for t, record in zip(texts, records):
        t1 = time.perf_counter()
        again.append(ChatText.from_record(t.chat_id, t.title, t.updated, record))
        read.append(_ms(t1))
    rec_total = _ms(t0)
    assert again == texts, "a record read back differs from its chat's text"
    rec = read[len(bodies):]
    read = read[:len(bodies)]
    out = {"read_total_ms": read_total, "read_median_ms": statistics.median(read),
           "read_max_ms": max(read), "chars": sum(len(t.folded) for t in texts), "terms": {},
           "rec_total_ms": rec_total, "rec_median_ms": statistics.median(rec),
           "rec_max_ms": max(rec), "rec_mb": sum(map(len, records)) / 1e6}
    for name, term in terms.items():
        whole, longest, naive = [], [], []
        hits = 0
        for _ in range(runs):
            t1 = time.perf_counter()
            hits = len(search(texts, term))
            whole.append(_ms(t1))
            steps = search_steps(texts, term)
            worst = 0.0
            t1 = time.perf_counter()
            while True:
                try:
                    next(steps)
                except StopIteration:
                    break
                worst = max(worst, _ms(t1))
                t1 = time.perf_counter()
            longest.append(max(worst, _ms(t1)))
            folded = fold_term(term)
            t1 = time.perf_counter()
            n = 0
            for t in texts:  # the baseline: every message folded again
                if any(folded in fold(m) for m in t.texts):
                    n += 1
            naive.append(_ms(t1))
        out["terms"][name] = {"hits": hits, "search_ms": statistics.median(whole),
                              "step_ms": statistics.median(longest),
                              "naive_ms": statistics.median(naive)}
    return out
"""

TERMS = {
    "in one chat (its needle, upper case)": needle_for(250).upper(),
    "in every chat (the commonest word)": WORDS[0].upper(),
    "two letters, in none": "qj",
    "a phrase, in none": "no such phrase here",
}


def corpus(n: int) -> list[str]:
    return [json.dumps(doc) for doc in chats(n)]


def in_cpython(data: dict[str, Any]) -> dict[str, Any]:
    scope: dict[str, Any] = {}
    exec(compile(SEARCH_PY, "search", "exec"), scope)
    return dict(scope["run_search"](data))


def in_pyodide(data: dict[str, Any]) -> dict[str, Any] | None:
    site = Path(os.environ.get("PYSSE_SITE", ROOT / "build" / "site"))
    if not shutil.which("node") or not (site / "site.json").exists():
        print("(Pyodide: skipped, needs node and a built site: python build.py site)")
        return None
    cfg = json.loads((site / "site.json").read_text())
    wheels = [str(site / w) for w in cfg["wheels"]]
    code = SEARCH_PY + "\njson.dumps(run_search(json.loads(INPUT)))\n"
    try:
        out = run_with_wheels(code, json.dumps(data), site / "pyodide" / "314.0.7", wheels, 3600)
    except PyodideRunError as exc:
        raise SystemExit(str(exc)) from None
    return dict(json.loads(out))


def table(title: str, res: dict[str, Any]) -> list[str]:
    rows = [
        f"**{title}**: read {res['rec_total_ms']:.0f} ms for all chats from their search "
        f"records ({res['rec_mb']:.0f} MB; median {res['rec_median_ms']:.2f} ms a chat, "
        f"longest {res['rec_max_ms']:.1f} ms), {res['read_total_ms']:.0f} ms from their "
        f"whole JSON (median {res['read_median_ms']:.2f} ms, longest "
        f"{res['read_max_ms']:.1f} ms); {res['chars'] / 1e6:.1f} M folded characters kept",
        "",
        "| term | chats found | search, all chats | longest step | baseline (fold per "
        "keystroke) | baseline / search |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, r in res["terms"].items():
        rows.append(
            f"| {name} | {r['hits']} | {r['search_ms']:.1f} ms | {r['step_ms']:.2f} ms "
            f"| {r['naive_ms']:.0f} ms | {r['naive_ms'] / max(r['search_ms'], 1e-3):.0f}x |"
        )
    return rows


def page_table(res: dict[str, Any]) -> list[str]:
    rows = [
        f"**Chromium, CPU throttled {res['rate']:.0f}x** (a fixed JS loop: "
        f"{res['loop_ms']:.0f} ms): a needle typed into the search field, a key every 150 ms",
        "",
        "| pass | chats found | result after the last key | longest task | tasks over 50 ms "
        "| slowest key (Event Timing) | longest search work in a task |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    passes = (
        ("base", "baseline: the keys into the message box, before"),
        ("cold", "search, cold: every chat's search record read from storage"),
        ("warm", "search, warm"),
        ("again", "baseline: the keys into the message box, after"),
        ("old", "search, cold, chats stored without records (each body read, records written)"),
    )
    for name, label in passes:
        r = res[name]
        found = "" if r["found"] != r["found"] else f"{r['found']:.0f}"  # (nan: a baseline)
        took = "" if r["to_result_ms"] != r["to_result_ms"] else f"{r['to_result_ms']:.0f} ms"
        own = "" if r["own_ms"] != r["own_ms"] else f"{r['own_ms']:.0f} ms"
        rows.append(
            f"| {label} | {found} | {took} | {r['longest_task_ms']:.0f} ms "
            f"| {r['tasks_over_50']:.0f} | {r['worst_key_ms']:.0f} ms | {own} |"
        )
    return rows


def main() -> None:
    n = int(os.environ.get("SEARCH_CHATS", "500"))
    runs = int(os.environ.get("SEARCH_RUNS", "5"))
    bodies = corpus(n)
    data = {"bodies": bodies, "terms": TERMS, "runs": runs}
    print(f"search bench: {n} chats, {sum(map(len, bodies)) / 1e6:.0f} MB of JSON, {runs} runs")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    out = table("CPython " + sys.version.split()[0], in_cpython(data))
    pyo = in_pyodide(data)
    if pyo is not None:
        out += ["", *table("Pyodide 314.0.7 in Node", pyo)]
    if os.environ.get("SEARCH_CHROMIUM", "1") != "0":
        from .search_page import in_chromium

        page = in_chromium(bodies, (needle_for(n // 2), needle_for(n - 1)))
        if page is not None:
            out += ["", *page_table(page)]
    print("\n".join(out))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
