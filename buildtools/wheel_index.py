"""pysse for any page that runs Pyodide: its browser wheel and the wheels it needs, as a
PEP 503 "simple" index that micropip installs from, on the page's own origin.

    DIR/simple/index.html                 the projects
    DIR/simple/PROJECT/index.html         one link per wheel, with its sha256 (PEP 503) and
                                          its core metadata's (PEP 658/714)
    DIR/simple/PROJECT/HASH/FILE.whl      the wheel, at a content-addressed path (immutable)
    DIR/simple/PROJECT/HASH/FILE.whl.metadata
    DIR/wheels.json                       the same wheels as a plain list, in install order,
                                          with what each one lets you import (install.js)
    DIR/install.js, bridge.js, dom_writer.js

Every link is relative to the page that holds it and never climbs (``../``): micropip 0.11.1
asks for ``f"{index_url}/{name}/"``, so an index URL given with a trailing ``/`` is fetched as
``simple//pysse/``; a static server that accepts that still resolves these links right.

The PEP 658 metadata lets micropip learn a wheel's requirements before the wheel itself has
arrived, so pysse's dependencies download while pysse does. micropip itself is listed too
(``micropip``: the npm ``pyodide`` package lists it in its lock but does not ship it), and
``vendor_micropip`` puts PyPI's wheel beside a copy of Pyodide with the lock entry rewritten to
its sha256, so ``pyodide.loadPackage("micropip")`` works there (PyScript calls exactly that).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import shutil
import zipfile
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path, PurePosixPath

from .compress import link_or_copy

__all__ = [
    "IndexedWheel",
    "browser_metadata",
    "canonical",
    "vendor_micropip",
    "write_index",
]

HASH_CHARS = 12  # the content-addressed directory's name: the first hex digits of the sha256


def canonical(name: str) -> str:
    """A project's name as PEP 503 spells it in URLs (``Markdown_It.py`` -> ``markdown-it-py``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class IndexedWheel:
    project: str  # canonical name
    version: str
    path: str  # relative to the index's root directory (DIR)
    sha256: str
    size: int
    imports: tuple[str, ...]  # its top-level modules: what to import to check it is there

    def as_json(self) -> dict[str, object]:
        return {
            "project": self.project,
            "version": self.version,
            "url": self.path,
            "sha256": self.sha256,
            "bytes": self.size,
            "imports": list(self.imports),
        }


def _metadata_name(whl: zipfile.ZipFile) -> str:
    return next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))


def core_metadata(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as whl:
        return whl.read(_metadata_name(whl))


def top_level_modules(wheel: Path) -> tuple[str, ...]:
    """The importable top-level names a wheel installs (packages and single modules)."""
    names: set[str] = set()
    with zipfile.ZipFile(wheel) as whl:
        for name in whl.namelist():
            first, _, rest = name.partition("/")
            if first.endswith((".dist-info", ".data")):
                continue
            if rest and name.endswith("/__init__.py") and rest.count("/") == 0:
                names.add(first)
            elif not rest and first.endswith(".py"):
                names.add(first.removesuffix(".py"))
    return tuple(sorted(names))


def browser_metadata(metadata: str, keep_extras: tuple[str, ...] = ("markdown",)) -> str:
    """The ``METADATA`` of pysse's browser wheel: the full wheel's headers with only the extras
    a page can use (``markdown``: what ``pysse[markdown]`` makes micropip fetch), and no long
    description (the README is ~70 KB; the page never reads it). The server-side extras
    (``serve``, ``relay``, ``test``...) name packages that cannot run in a page and modules that
    are not in this wheel."""
    msg = HeaderParser().parsestr(metadata)
    lines: list[str] = []
    for key, value in msg.items():
        if key in ("Description-Content-Type",):
            continue
        if key == "Provides-Extra" and value not in keep_extras:
            continue
        if key == "Requires-Dist" and not _kept_requirement(value, keep_extras):
            continue
        lines.append(f"{key}: {value}")
    lines.append("Description-Content-Type: text/plain")
    body = (
        "pysse's browser wheel (no server or testing code): install it with micropip from the\n"
        "index `python build.py wheels DIR` writes; see docs/embedding.md.\n"
    )
    return "\n".join(lines) + "\n\n" + body


def _kept_requirement(value: str, keep: tuple[str, ...]) -> bool:
    m = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", value)
    return m is None or m.group(1) in keep


def _page(title: str, links: list[str]) -> str:
    body = "\n".join(f"    {link}<br>" for link in links)
    return (
        "<!DOCTYPE html>\n<html>\n  <head>\n"
        '    <meta name="pypi:repository-version" content="1.0">\n'
        f"    <title>{html.escape(title)}</title>\n  </head>\n  <body>\n"
        f"    <h1>{html.escape(title)}</h1>\n{body}\n  </body>\n</html>\n"
    )


def _wheel_link(name: str, digest: str, requires_python: str | None, meta_digest: str) -> str:
    href = html.escape(f"{name}#sha256={digest}")
    attrs = [f'href="{href}"']
    if requires_python:
        attrs.append(f'data-requires-python="{html.escape(requires_python)}"')
    attrs.append(f'data-core-metadata="sha256={meta_digest}"')
    attrs.append(f'data-dist-info-metadata="sha256={meta_digest}"')  # PEP 658's first spelling
    file_name = html.escape(PurePosixPath(name).name)
    return f"<a {' '.join(attrs)}>{file_name}</a>"


def _place(dest: Path, wheel: Path) -> IndexedWheel:
    """``wheel`` into ``dest/simple/PROJECT/HASH/`` with its ``.metadata`` beside it."""
    data = wheel.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    metadata = core_metadata(wheel)
    fields = HeaderParser().parsestr(metadata.decode("utf-8"))
    project = canonical(fields["Name"])
    rel = PurePosixPath("simple", project, digest[:HASH_CHARS], wheel.name)
    target = dest / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    link_or_copy(wheel, target)
    target.with_name(wheel.name + ".metadata").write_bytes(metadata)
    return IndexedWheel(
        project, fields["Version"], str(rel), digest, len(data), top_level_modules(wheel)
    )


def write_index(
    dest: Path, wheels: list[Path], micropip: Path, js_modules: list[Path]
) -> dict[str, object]:
    """The index in ``dest`` (see the module docstring) for ``wheels`` (in install order: a
    plain list of URLs gets no dependency resolution from ``loadPackage``), ``micropip``'s
    wheel, and the JavaScript modules copied beside them. Returns ``wheels.json``'s content."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(dest / "simple", ignore_errors=True)  # ours: no stale wheel stays listed
    placed = [_place(dest, w) for w in wheels]
    mp = _place(dest, micropip)
    projects: dict[str, list[tuple[IndexedWheel, Path]]] = {}
    for info, src in [*zip(placed, wheels, strict=True), (mp, micropip)]:
        projects.setdefault(info.project, []).append((info, src))
    for project, entries in projects.items():
        links = []
        for info, src in entries:
            fields = HeaderParser().parsestr(core_metadata(src).decode("utf-8"))
            meta = hashlib.sha256(core_metadata(src)).hexdigest()
            name = str(PurePosixPath(info.path).relative_to(f"simple/{project}"))
            links.append(_wheel_link(name, info.sha256, fields.get("Requires-Python"), meta))
        (dest / "simple" / project / "index.html").write_text(
            _page(f"Links for {project}", links), encoding="utf-8"
        )
    root_links = [f'<a href="{html.escape(p)}/">{html.escape(p)}</a>' for p in sorted(projects)]
    (dest / "simple" / "index.html").write_text(_page("Simple index", root_links), encoding="utf-8")
    for module in js_modules:
        shutil.copyfile(module, dest / module.name)
    manifest: dict[str, object] = {
        "requirement": "pysse[markdown]",
        "index": "simple",
        "wheels": [w.as_json() for w in placed],
        "micropip": mp.as_json(),
    }
    (dest / "wheels.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def vendor_micropip(pyodide_dir: Path, micropip: Path) -> None:
    """``micropip``'s wheel into a copy of Pyodide (``pyodide_dir``), its lock entry rewritten
    to that file's sha256: Pyodide checks every package it loads by name against the lock
    (Subresource Integrity), and PyPI's wheel is not the file the lock was made for. The
    lock is written anew (the copy may be a hard link to the cache's: never write in place)."""
    lock_path = pyodide_dir / "pyodide-lock.json"
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    entry = lock["packages"]["micropip"]
    name = micropip.name.split("-")
    if entry["version"] != name[1]:
        raise SystemExit(
            f"micropip {name[1]} is vendored but Pyodide's lock lists micropip "
            f"{entry['version']}: update MICROPIP in build.py to the lock's version"
        )
    entry["file_name"] = micropip.name
    entry["sha256"] = hashlib.sha256(micropip.read_bytes()).hexdigest()
    target = pyodide_dir / micropip.name
    link_or_copy(micropip, target)
    lock_path.unlink()
    lock_path.write_text(json.dumps(lock, separators=(",", ":")), encoding="utf-8")
