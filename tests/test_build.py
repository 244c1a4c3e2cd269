"""build.py: the static site it writes. The wheel the page loads holds only what runs there,
and the page's Format menu comes from the provider registry."""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from pathlib import Path

from pysse.providers import PROVIDERS


def pysse_wheel(site: Path) -> Path:
    urls = json.loads((site / "site.json").read_text())["wheels"]
    (url,) = [u for u in urls if "/pysse-" in u]
    return site / url


def test_the_browser_wheel_leaves_server_code_out(site: Path) -> None:
    with zipfile.ZipFile(pysse_wheel(site)) as whl:
        names = whl.namelist()
        assert "pysse/browser/app.py" in names and "pysse/render/streaming.py" in names
        assert not [n for n in names if n.startswith(("pysse/server/", "pysse/testing/"))]
        record = next(n for n in names if n.endswith(".dist-info/RECORD"))
        rows = [r.split(",") for r in whl.read(record).decode().splitlines()]
        listed = {r[0] for r in rows}
        assert listed == set(names)
        for name, digest, size in rows:
            if name == record:
                continue
            data = whl.read(name)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={want}" and int(size) == len(data), name


def test_the_format_menu_comes_from_the_registry(site: Path) -> None:
    html = (site / "index.html").read_text()
    for name, provider in PROVIDERS.items():
        assert f'<option value="{name}">{provider.label}</option>' in html
    assert "<!--formats" not in html


def test_site_with_a_relay_and_format_writes_them_to_site_json(tmp_path: Path) -> None:
    import build

    assert build.site_relay_check("relay.example/relay", None) is not None
    assert "expected one of" in (build.site_relay_check("", "cohere") or "")
    assert build.site_relay_check("https://relay.example/relay", "anthropic") is None
    out = build.build_site(tmp_path / "site", relay="https://relay.example/relay", fmt="anthropic")
    config = json.loads((out / "site.json").read_text())
    assert config["relay"] == "https://relay.example/relay" and config["format"] == "anthropic"
    plain = json.loads((build.build_site(tmp_path / "plain") / "site.json").read_text())
    assert plain["relay"] == "" and "format" not in plain and "demo" not in plain


def test_the_site_loads_the_math_wheels_in_order_and_never_ships_axe(site: Path) -> None:
    urls = json.loads((site / "site.json").read_text())["wheels"]
    names = [u.rsplit("/", 1)[1].split("-")[0] for u in urls]
    assert names.index("markdown_it_py") < names.index("mdit_py_plugins")  # no resolution
    assert "latex2mathml" in names
    files = [p.name.lower() for p in site.rglob("*")]
    assert not [n for n in files if "axe" in n]
    for page in ("index.html", "app.js", "store.js", "theme.js"):
        assert "axe" not in (site / page).read_text().lower()
