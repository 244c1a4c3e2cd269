"""``build.py wheels`` (docs/embedding.md): the simple index micropip installs pysse from,
checked with pip as a second real client; pysse's browser wheel metadata; micropip vendored
beside Pyodide; ``build.py examples``: every asset local; docs/embedding.md's minimal
example is the tested file."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tomllib
import zipfile
from email.parser import HeaderParser
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from buildtools.wheel_index import browser_metadata, canonical

ROOT = Path(__file__).resolve().parents[1]


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.links.append(dict(attrs))


def links(page: Path) -> list[dict[str, str | None]]:
    parser = Links()
    parser.feed(page.read_text())
    return parser.links


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest(index_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((index_dir / "wheels.json").read_text())
    return data


@pytest.fixture(scope="module")
def wheels_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What ``build.py wheels DIR`` writes."""
    import build

    out = tmp_path_factory.mktemp("wheels")
    build.write_wheels(out)
    return out


@pytest.fixture(params=["wheels", "site"])
def index_dir(request: pytest.FixtureRequest) -> Path:
    """``build.py wheels DIR`` and the same in the site's ``wheels/``."""
    if request.param == "wheels":
        return Path(request.getfixturevalue("wheels_dir"))
    return Path(request.getfixturevalue("site")) / "wheels"


def test_every_link_resolves_to_its_file_with_its_hashes(index_dir: Path) -> None:
    simple = index_dir / "simple"
    projects = {str(a["href"]).rstrip("/") for a in links(simple / "index.html")}
    listed = {w["project"] for w in manifest(index_dir)["wheels"]}
    assert projects == listed | {"micropip"}
    for project in projects:
        assert canonical(project) == project
        (link,) = links(simple / project / "index.html")
        href = str(link["href"])
        assert ".." not in href and not href.startswith("/")  # survives "simple//pysse/"
        path, _, fragment = href.partition("#")
        wheel = simple / project / path
        assert fragment == f"sha256={sha256(wheel)}"
        meta = wheel.with_name(wheel.name + ".metadata")
        assert link["data-core-metadata"] == f"sha256={sha256(meta)}"
        with zipfile.ZipFile(wheel) as whl:
            name = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
            assert whl.read(name) == meta.read_bytes()
        assert wheel.parent.name == sha256(wheel)[:12]  # content-addressed
    for js in ("install.js", "bridge.js", "dom_writer.js"):
        assert (index_dir / js).read_bytes() == (ROOT / "pysse" / "browser" / js).read_bytes()


def test_pip_resolves_pysse_markdown_from_the_index_alone(wheels_dir: Path, tmp_path: Path) -> None:
    """A second real client: pip, with no other index or config (``--isolated``), finds
    pysse and every wheel the markdown extra needs there, and checks their hashes."""
    index = wheels_dir
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--isolated",
            "-q",
            "--index-url",
            (index / "simple").as_uri(),
            "--only-binary=:all:",
            "--python-version",
            "3.14",
            "-d",
            str(tmp_path),
            "pysse[markdown]",
        ],
        check=True,
        capture_output=True,
    )
    got = {p.name: sha256(p) for p in tmp_path.iterdir()}
    want = {Path(w["url"]).name: w["sha256"] for w in manifest(index)["wheels"]}
    assert got == want


def test_the_browser_wheel_offers_only_the_markdown_extra(wheels_dir: Path) -> None:
    (pysse,) = [w for w in manifest(wheels_dir)["wheels"] if w["project"] == "pysse"]
    with zipfile.ZipFile(wheels_dir / pysse["url"]) as whl:
        names = whl.namelist()
        metadata = HeaderParser().parsestr(
            whl.read("pysse-0.1.0.dist-info/METADATA").decode("utf-8")
        )
    assert not [n for n in names if n.endswith("entry_points.txt") or n.endswith("install.js")]
    assert metadata.get_all("Provides-Extra") == ["markdown"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["optional-dependencies"]["markdown"]
    required = metadata.get_all("Requires-Dist") or []
    assert len(required) == len(wanted)
    for req in wanted:
        name = re.split(r"[<>=~!]", req, maxsplit=1)[0]
        assert any(r.startswith(name) and "extra == 'markdown'" in r for r in required), req
    assert len(metadata.get_payload()) < 500  # not the README (~70 KB on every page load)


def test_browser_metadata_keeps_the_headers_and_only_the_kept_extras() -> None:
    full = (
        "Metadata-Version: 2.4\nName: pysse\nVersion: 1.0\nRequires-Python: >=3.11\n"
        "Requires-Dist: always>=1\nProvides-Extra: markdown\n"
        "Requires-Dist: markdown-it-py<5,>=3; extra == 'markdown'\nProvides-Extra: serve\n"
        'Requires-Dist: starlette>=0.37; extra == "serve"\n'
        "Description-Content-Type: text/markdown\n\n# pysse\n\nthe README\n"
    )
    out = HeaderParser().parsestr(browser_metadata(full))
    assert out["Name"] == "pysse" and out["Requires-Python"] == ">=3.11"
    assert out.get_all("Provides-Extra") == ["markdown"]
    assert out.get_all("Requires-Dist") == [
        "always>=1",
        "markdown-it-py<5,>=3; extra == 'markdown'",
    ]
    assert "the README" not in out.get_payload()


@pytest.mark.parametrize("where", ["site", "examples_dir"])
def test_micropip_is_beside_pyodide_with_its_lock_entry_rewritten(
    where: str, request: pytest.FixtureRequest
) -> None:
    built = Path(request.getfixturevalue(where))
    pyodide = built / "pyodide" / "314.0.7"
    lock = json.loads((pyodide / "pyodide-lock.json").read_text())
    entry = lock["packages"]["micropip"]
    assert entry["sha256"] == sha256(pyodide / entry["file_name"])
    npm = json.loads((ROOT / ".cache" / "pyodide-314.0.7" / "pyodide-lock.json").read_text())
    assert npm["packages"]["micropip"]["sha256"] != entry["sha256"]  # the npm lock's is not PyPI's
    assert {k: v for k, v in lock["packages"].items() if k != "micropip"} == {
        k: v for k, v in npm["packages"].items() if k != "micropip"
    }
    assert lock["info"] == npm["info"]


LOCAL_REF = re.compile(r"""(?:src|href)="([^"]+)"|from "([^"]+)"|here\("([^"]+)"\)""")


def test_the_examples_use_only_their_own_assets(examples_dir: Path) -> None:
    for name in ("index.html", "minimal/index.html", "pyscript/index.html", "worker/index.html"):
        assert (examples_dir / name).read_text() == (ROOT / "examples" / name).read_text()
    for page in sorted(examples_dir.glob("*/*.html")) + sorted(examples_dir.glob("*/*.js")):
        if page.parent.name not in ("minimal", "pyscript", "worker"):
            continue
        text = page.read_text()
        urls = [next(g for g in m.groups() if g) for m in LOCAL_REF.finditer(text)]
        assert urls, page
        for url in urls:
            assert not re.match(r"^[a-z]+:", url), (page, url)  # no CDN, no absolute URL
            assert (page.parent / url.split("#")[0]).resolve().exists(), (page, url)
        for absolute in re.findall(r"https?://[^\s\"'`]+", text):
            assert absolute == "http://127.0.0.1:8787/relay", (page, absolute)  # the relay only
    assert len((ROOT / "examples" / "minimal" / "index.html").read_text().splitlines()) <= 40


@pytest.mark.parametrize(
    ("doc", "heading"),
    [("docs/embedding.md", "## The minimal page"), ("README.md", "## Use pysse in your own page")],
)
def test_the_docs_show_the_minimal_example_verbatim(doc: str, heading: str) -> None:
    docs = (ROOT / doc).read_text()
    section = docs.split(heading, 1)[1]
    block = section.split("```html\n", 1)[1].split("```", 1)[0]
    assert block == (ROOT / "examples" / "minimal" / "index.html").read_text()
