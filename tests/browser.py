"""A headless Chromium driven through the DevTools protocol over a pipe: no extra packages.

Chromium started with ``--remote-debugging-pipe`` reads JSON commands, each terminated by
a NUL byte, from file descriptor 3 and writes replies and events to descriptor 4.  That is
the whole transport, so the browser test needs neither selenium nor a websocket client,
and nothing downloads a browser: it uses Debian's ``chromium`` (``/usr/bin/chromium``) or
whatever ``RENYI_CHROMIUM`` names.

Used by ``tests/test_browser.py`` and by ``python tests/browser.py PAGE.html [...]``, which
prints each page's report (handy when a check fails).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Flags for a sandboxed CI machine with no network (see the machine notes): no GPU, no
#: background connections, a fresh profile.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
    "--remote-debugging-pipe",
]


def find_chromium() -> str | None:
    """The Chromium executable, or None: ``RENYI_CHROMIUM``, then chromium on the PATH."""
    for candidate in (os.environ.get("RENYI_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


class Browser:
    """One headless Chromium with one page (tab), driven by DevTools commands."""

    def __init__(self, executable: str, *, width: int = 1400, height: int = 1000, timeout: float = 60.0):
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="renyi-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        # Chromium wants the pipe on descriptors 3 and 4; a shell puts it there (dup2 in a
        # preexec_fn would be undone by subprocess closing every descriptor it was not given).
        args = [
            executable,
            *FLAGS,
            f"--user-data-dir={self._profile}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        self._proc = subprocess.Popen(
            ["/bin/sh", "-c", f'exec "$@" 3<&{to_browser_r} 4>&{from_browser_w}', "chromium", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(to_browser_r, from_browser_w),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        target = self.command("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.command("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.command(f"{domain}.enable", session=self.session)
        self.command(
            "Emulation.setDeviceMetricsOverride",
            session=self.session,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    # -- transport
    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe (did it start?)")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def command(self, method: str, *, session: str | None = None, **params) -> dict:
        """Send one command and return its result; events that arrive meanwhile are kept."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for_event(self, method: str) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    # -- page helpers
    def open(self, url: str) -> None:
        """Navigate and wait for the load event."""
        self.events.clear()
        self.command("Page.navigate", session=self.session, url=url)
        self.wait_for_event("Page.loadEventFired")

    def evaluate(self, expression: str):
        """The value of a JavaScript expression (promises are awaited)."""
        result = self.command(
            "Runtime.evaluate", session=self.session, expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(
                f"JavaScript failed: {result['exceptionDetails'].get('text')}: "
                f"{result['exceptionDetails'].get('exception', {}).get('description')}"
            )
        return result["result"].get("value")

    def screenshot(self, path) -> None:
        import base64

        data = self.command("Page.captureScreenshot", session=self.session, format="png", captureBeyondViewport=True)[
            "data"
        ]
        Path(path).write_bytes(base64.b64decode(data))

    def console_errors(self) -> list[str]:
        """Errors logged since the last :meth:`open`: exceptions, console.error, failed loads."""
        out = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                out.append(details.get("exception", {}).get("description") or details.get("text", "?"))
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                out.append(f"{entry.get('text')} ({entry.get('url', '')})")
        return out

    def close(self) -> None:
        try:
            self._proc.terminate()
            self._proc.wait(timeout=10)
        except Exception:  # pragma: no cover - a stuck browser is killed
            self._proc.kill()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


#: Runs in the page once MathJax is done; returns every finding as plain data.
CHECKS_JS = r"""
(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await new Promise(r => setTimeout(r, 50));
  // The page's own content: the article column, not the sidebars and the header's logos.
  const main = document.querySelector("article.bd-article") || document.querySelector("main")
      || document.body;
  const report = {rawMath: [], overflow: [], images: [], mathCount: 0, imageScale: [], imageShown: [],
                  mathErrors: [], brokenNumbers: [], wideTables: [],
                  layoutWidth: window.innerWidth, deviceWidth: screen.width};
  // 1. Raw TeX left in text: $...$, \( \), \[ \] outside code, scripts and typeset math.
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT, {
    acceptNode(n) {
      const skip = n.parentElement.closest("pre, code, script, style, mjx-container, .MathJax, textarea, .highlight");
      return skip ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
    }});
  const raw = /\$[^$\s][^$]*\$|\\\(|\\\)|\\\[|\\\]|\\[a-zA-Z]{2,}\{/;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (raw.test(n.textContent)) report.rawMath.push(n.textContent.trim().slice(0, 120));
  }
  report.mathCount = main.querySelectorAll("mjx-container").length;
  // A TeX error is typeset too (as a red mjx-merror box), so it counts as math above.
  report.mathErrors = Array.from(main.querySelectorAll("mjx-merror"),
      e => (e.getAttribute("data-mjx-error") || e.textContent || "").trim().slice(0, 120));
  report.unTypeset = main.querySelectorAll(
      "span.math:not(:has(mjx-container)), div.math:not(:has(mjx-container))").length;
  // 2. Horizontal overflow of code, outputs, display equations and tables.
  const boxes = main.querySelectorAll("div.highlight pre, div.cell_output pre, .output pre, " +
      "mjx-container[display='true'], div.math, table, .cell_output img");
  // On a phone (a narrow window) a wide equation, table or code block may scroll inside its
  // own box, as long as that box stays within the column and, for an equation, its left
  // edge is in view; on a desktop nothing may need to scroll.
  const narrow = window.innerWidth < 700;
  const mainRect = main.getBoundingClientRect();
  const scrolls = e => ["auto", "scroll"].includes(getComputedStyle(e).overflowX);
  const scroller = el => {
    for (let e = el; e && e !== main; e = e.parentElement) {
      if (scrolls(e)) return e;
    }
    return null;
  };
  for (const el of boxes) {
    // the scrolling element is the element itself or its nearest scrollable ancestor
    const box = el.closest("mjx-container[display='true']") || el;
    if (narrow) {
      const own = scroller(box);
      const r = (own || box).getBoundingClientRect();
      const fits = r.left >= mainRect.left - 1 && r.right <= mainRect.right + 1;
      const wide = box.scrollWidth > box.clientWidth + 1 || box.getBoundingClientRect().width > mainRect.width + 1;
      let leftCut = false;
      if (box.tagName.toLowerCase() === "mjx-container") {
        const inner = box.querySelector("mjx-math");
        leftCut = inner && inner.getBoundingClientRect().left < box.getBoundingClientRect().left - 1
            && !scrolls(box);
      }
      if ((wide && !(own && fits)) || leftCut) {
        report.overflow.push({what: box.tagName.toLowerCase() + "." + (box.className || "") +
                                    (leftCut ? " (left part cut off)" : " (wider than the column, no scroll)"),
                              scroll: box.scrollWidth, client: Math.round(mainRect.width),
                              text: (box.textContent || "").trim().slice(0, 80)});
      }
      continue;
    }
    if (box.scrollWidth > box.clientWidth + 1) {
      report.overflow.push({what: box.tagName.toLowerCase() + "." + (box.className || ""),
                            scroll: box.scrollWidth, client: box.clientWidth,
                            text: (box.textContent || "").trim().slice(0, 80)});
      continue;
    }
    const container = (box.closest(".cell_output, .cell_input, .math-wrapper, .table-wrapper") || main);
    const r = box.getBoundingClientRect(), c = container.getBoundingClientRect();
    if (r.right > c.right + 1 || r.width > main.getBoundingClientRect().width + 1) {
      report.overflow.push({what: box.tagName.toLowerCase() + "." + (box.className || ""),
                            scroll: Math.round(r.width), client: Math.round(c.width),
                            text: (box.textContent || "").trim().slice(0, 80)});
    }
  }
  // 2b. An inline formula cannot scroll: it must fit the column.
  for (const m of main.querySelectorAll("mjx-container:not([display='true'])")) {
    const w = m.getBoundingClientRect().width;
    if (w > mainRect.width + 1) {
      report.overflow.push({what: "inline formula wider than the column", scroll: Math.round(w),
                            client: Math.round(mainRect.width), text: (m.textContent || "").slice(0, 80)});
    }
  }
  // 3. Every image has a caption or an alt text that is not a file name.
  for (const img of main.querySelectorAll("img")) {
    const fig = img.closest("figure");
    const caption = fig && fig.querySelector("figcaption");
    const alt = (img.getAttribute("alt") || "").trim();
    const altOk = alt && !/\.(png|jpe?g|svg|gif)$/i.test(alt) && !alt.includes("/");
    if (!(caption && caption.textContent.trim()) && !altOk) {
      report.images.push(img.getAttribute("src"));
    }
    if (img.naturalWidth) {
      report.imageScale.push(img.getBoundingClientRect().width / img.naturalWidth);
      report.imageShown.push({src: img.src, scale: img.getBoundingClientRect().width / img.naturalWidth});
    }
  }
  // 4. A number in a table broken over two lines ("9.0e-" / "07"): a cell of one word whose
  //    text takes more than one line box.
  for (const cell of main.querySelectorAll("td, th")) {
    const text = (cell.textContent || "").trim();
    if (!text || /\s/.test(text) || !/\d/.test(text) || cell.querySelector("mjx-container")) continue;
    // the line boxes of the cell's text itself (an element's own box would count as a line)
    const tops = new Set();
    const texts = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let t = texts.nextNode(); t; t = texts.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(t);
      for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
    }
    if (tops.size > 1) report.brokenNumbers.push(text.slice(0, 40));
  }
  // 5. A table wider than the box it sits in (its scrolling wrapper, or the column): on a
  //    phone its right-hand columns, where the results are, would start off the screen.
  for (const table of main.querySelectorAll("table")) {
    let box = table.parentElement;
    while (box && box !== main && !scrolls(box)) box = box.parentElement;
    const room = (box || main).getBoundingClientRect().width;
    const width = table.getBoundingClientRect().width;
    if (width > room + 1) {
      const titles = Array.from(table.querySelectorAll("th"), h => h.textContent.trim()).slice(0, 4);
      report.wideTables.push({width: Math.round(width), room: Math.round(room), titles: titles.join(" | ")});
    }
  }
  report.mainWidth = Math.round(main.getBoundingClientRect().width);
  return report;
})()
"""


def check_page(browser: Browser, path: Path) -> dict:
    """Open one built page and return its findings (see :data:`CHECKS_JS`), plus console errors."""
    browser.open(path.resolve().as_uri())
    report = browser.evaluate(CHECKS_JS)
    report["console"] = browser.console_errors()
    return report


def main(argv: list[str]) -> int:
    exe = find_chromium()
    if exe is None:
        print("no Chromium found (install Debian's chromium, or set RENYI_CHROMIUM)", file=sys.stderr)
        return 2
    with Browser(exe) as browser:
        for arg in argv:
            print(arg, json.dumps(check_page(browser, Path(arg)), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
