"""Every page of the built book, opened in headless Chromium (``make browser``, part of ``make test``).

Checks what a reader meets and what a static build cannot see: MathJax typeset all math
without a TeX error (an error box is typeset too, so it is looked for by name), no
code cell, output, table or display equation is wider than its column, every image has a
caption or a real alt text and is shown at its own size on a desktop, on a 412-px phone the
smallest text of every figure (recorded in its PNG by ``renyi.plotting``) is at least
``MIN_TEXT_PX`` CSS pixels as shown, no table breaks a number over two lines, and the
console has no errors.

The book is read from ``RENYI_BOOK_HTML`` (``make browser`` points it at the ``-W`` build of
``make book-check``).  Without Chromium the module is skipped with a message saying how to
install it; ``RENYI_REQUIRE_BROWSER=1`` (set by ``.ci/run``) turns that skip into a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from browser import Browser, check_page, find_chromium
from renyi.plotting import MIN_TEXT_PX, TEXT_KEY

HTML = Path(os.environ.get("RENYI_BOOK_HTML", "_build/html"))
SKIP = {"genindex.html", "search.html", "py-modindex.html"}
#: An image may be drawn this much smaller than its pixels (sub-pixel rounding only).
MIN_IMAGE_SCALE = 0.97

EXE = find_chromium()
if EXE is None:
    message = (
        "browser test skipped: no Chromium found; install Debian's chromium and "
        "chromium-driver (apt-get install chromium chromium-driver) or set RENYI_CHROMIUM"
    )
    if os.environ.get("RENYI_REQUIRE_BROWSER") == "1":  # .ci/run: CI must run it
        raise RuntimeError(message)
    pytest.skip(message, allow_module_level=True)


def _pages() -> list[Path]:
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book at {HTML}; run 'make book-check' first (or set RENYI_BOOK_HTML)")
    pages = [
        p for p in HTML.rglob("*.html") if p.name not in SKIP and not {"_static", "_sources", "_images"} & set(p.parts)
    ]
    # The root index.html is only a redirect to book/index.html.
    return sorted(p for p in pages if 'http-equiv="Refresh"' not in p.read_text(encoding="utf-8")[:2000])


@pytest.fixture(scope="module")
def browser():
    with Browser(EXE) as b:
        yield b


def png_text(path: Path) -> dict:
    """The tEXt chunks of a PNG file (keyword -> text)."""
    data, found, i = path.read_bytes(), {}, 8
    while i + 8 <= len(data):
        size, kind = struct.unpack(">I", data[i : i + 4])[0], data[i + 4 : i + 8]
        if kind == b"tEXt":
            key, _, value = data[i + 8 : i + 8 + size].partition(b"\0")
            found[key.decode("latin-1")] = value.decode("latin-1")
        i += 12 + size
    return found


def _smallest_text(report: dict) -> list[str]:
    """Images whose smallest text is drawn below MIN_TEXT_PX CSS pixels (read from the PNG)."""
    out = []
    for shown in report["imageShown"]:
        url = urlparse(shown["src"])
        if url.scheme != "file" or not url.path.endswith(".png"):
            continue
        recorded = png_text(Path(unquote(url.path))).get(TEXT_KEY)
        name = Path(url.path).name[:24]
        if recorded is None:
            out.append(f"figure {name} records no smallest text size (draw it after plotting.use_style())")
        elif float(recorded) * shown["scale"] < MIN_TEXT_PX - 0.05:
            out.append(f"figure {name}: smallest text {float(recorded) * shown['scale']:.1f} CSS px")
    return out


def _problems(report: dict, *, phone: bool = False) -> list[str]:
    out = [f"raw TeX in text: {t!r}" for t in report["rawMath"]]
    out += [f"MathJax error: {e!r}" for e in report["mathErrors"]]
    if report["unTypeset"]:
        out.append(f"{report['unTypeset']} math element(s) not typeset by MathJax")
    out += [
        f"overflow: {o['what']} is {o['scroll']} px in a {o['client']} px box: {o['text']!r}"
        for o in report["overflow"]
    ]
    out += [f"image without caption or alt text: {src[:80]}" for src in report["images"]]
    if phone and report["layoutWidth"] > report["deviceWidth"] + 2:
        # some element is wider than the phone: the page is laid out wider and shown zoomed out
        out.append(f"page laid out {report['layoutWidth']} px wide on a {report['deviceWidth']} px phone")
    if not phone:  # a phone's column is narrower than the figures: the theme scales them down
        out += [f"image shown at {s:.0%} of its size" for s in report["imageScale"] if s < MIN_IMAGE_SCALE]
    else:  # ... and the text in them must stay readable
        out += _smallest_text(report)
    out += [f"table breaks a number over two lines: {t!r}" for t in report["brokenNumbers"]]
    out += [f"table {t['width']} px wide in a {t['room']} px column ({t['titles']} ...)" for t in report["wideTables"]]
    out += [f"console error: {e}" for e in report["console"]]
    return out


def _emulate(browser, width: int) -> None:
    """A screen ``width`` CSS pixels wide: a phone below 700, a desktop above."""
    browser.command(
        "Emulation.setDeviceMetricsOverride",
        session=browser.session,
        width=width,
        height=1000 if width > 700 else 900,
        deviceScaleFactor=1,
        mobile=width < 700,
    )


@pytest.mark.parametrize("width", [412, 1400, 1920])
def test_every_page(browser, width):
    """A phone (412 px, where wide boxes may scroll inside the column) and two desktops."""
    _emulate(browser, width)
    failures, pages = {}, _pages()
    for page in pages:
        problems = _problems(check_page(browser, page), phone=width < 700)
        if problems:
            failures[str(page.relative_to(HTML))] = problems
    print(f"browser test at {width} px: {len(pages)} pages, {len(failures)} with problems")
    assert not failures, "\n".join(f"{k}:\n  " + "\n  ".join(v) for k, v in failures.items())


def test_the_checks_can_fail(browser, tmp_path):
    """A copy of a real page with an over-long code line and raw TeX must be reported."""
    page = HTML / "book" / "common-ground.html"
    html = page.read_text(encoding="utf-8")
    long_line = "x = [" + ", ".join(str(i) for i in range(120)) + "]"
    injected = f'<div class="highlight"><pre>{long_line}</pre></div><p>a formula left raw: $\\alpha$-lift</p>'
    injected += '<mjx-merror data-mjx-error="\\tag not allowed in split environment"></mjx-merror>'
    html = re.sub(r"(<article[^>]*>)", r"\1" + injected.replace("\\", "\\\\"), html, count=1)
    copy = page.with_name("_browser_selftest.html")
    try:
        copy.write_text(html, encoding="utf-8")
        problems = _problems(check_page(browser, copy))
    finally:
        copy.unlink(missing_ok=True)
    assert any(p.startswith("overflow") for p in problems), problems
    assert any(p.startswith("raw TeX") for p in problems), problems
    assert any(p.startswith("MathJax error") and "split" in p for p in problems), problems
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_page_wider_than_the_phone_is_reported(browser):
    """An unbreakable word wider than a 412-px phone widens the page's layout: reported."""
    page = HTML / "book" / "common-ground.html"
    html = page.read_text(encoding="utf-8")
    word = '<p><span style="white-space: nowrap">' + "renyi.lift.optimum." * 12 + "</span></p>"
    html = re.sub(r"(<article[^>]*>)", r"\1" + word, html, count=1)
    copy = page.with_name("_browser_selftest_wide.html")
    _emulate(browser, 412)
    try:
        copy.write_text(html, encoding="utf-8")
        problems = _problems(check_page(browser, copy), phone=True)
    finally:
        copy.unlink(missing_ok=True)
    assert any(p.startswith("page laid out") for p in problems), problems


def test_small_figure_text_a_broken_number_and_a_wide_table_are_reported(browser, tmp_path):
    """At 412 px: a figure recording 12-px text in a 2,400-px-wide image (shown near 355 px,
    so under 2 CSS px), a number squeezed into a narrow table cell, and a table of twelve
    number columns (wider than the column, in a scrolling box) are all reported."""
    import zlib

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    raw = b"\0" + b"\xff\xff\xff" * 2400  # one white row
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2400, 1, 8, 2, 0, 0, 0))
    png += chunk(b"tEXt", TEXT_KEY.encode() + b"\0" + b"12.00") + chunk(b"IDAT", zlib.compress(raw))
    png += chunk(b"IEND", b"")
    image = HTML / "_images" / "_browser_selftest.png"
    page = HTML / "book" / "common-ground.html"
    html = page.read_text(encoding="utf-8")
    planted = f'<figure><img src="../_images/{image.name}" alt="a planted figure"><figcaption>x</figcaption></figure>'
    planted += '<table><tr><td style="width:3em; max-width:3em">1.234567890e-07</td></tr></table>'
    wide = "".join(f"<th>column {i}</th>" for i in range(12))
    wide += "<tr>" + "".join("<td>0.123456</td>" for _ in range(12)) + "</tr>"
    planted += f'<div class="pst-scrollable-table-container"><table>{wide}</table></div>'
    html = re.sub(r"(<article[^>]*>)", r"\1" + planted, html, count=1)
    copy = page.with_name("_browser_selftest_phone.html")
    _emulate(browser, 412)
    try:
        image.write_bytes(png)
        copy.write_text(html, encoding="utf-8")
        problems = _problems(check_page(browser, copy), phone=True)
    finally:
        copy.unlink(missing_ok=True)
        image.unlink(missing_ok=True)
    assert any(p.startswith(f"figure {image.name[:24]}: smallest text") for p in problems), problems
    assert any(p.startswith("table breaks a number") and "1.234567890e-07" in p for p in problems), problems
    assert any(p.startswith("table ") and "column 0 | column 1" in p for p in problems), problems
