"""The built site in Chromium: the home page, a guide page's screenshot, an API page, search.

Runs with the browser suite's tools (Debian's chromium and chromium-driver, selenium) and
is skipped without them, saying so.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

_MISSING = [name for name, there in (
    ("chromium", shutil.which("chromium") or shutil.which("chromium-browser")),
    ("chromedriver", shutil.which("chromedriver")),
) if not there]
if _MISSING:
    pytest.skip(f"the site's browser check needs {', '.join(_MISSING)} "
                "(apt install chromium chromium-driver)", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))
from jupyter_page import chrome  # noqa: E402


@pytest.fixture(scope="module")
def served(site):
    """The site on an HTTP server on 127.0.0.1 (search needs http, not file://)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    d = chrome(tmp_path_factory.mktemp("chromium"))
    yield d
    d.quit()


def _until(check, timeout: float, what: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"waited {timeout:.0f} s for {what}")


def _images_loaded(browser) -> list[tuple[str, int]]:
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('article img'))"
        ".map(i => [i.getAttribute('src'), i.complete ? i.naturalWidth : -1]);")


def test_home_page_renders(browser, served):
    browser.get(served + "/")
    assert browser.title.startswith("specscope")
    text = browser.find_element("css selector", "article").text
    assert "Explore recordings spectrally" in text
    assert "**[" not in text and "](" not in text, "Markdown left unrendered on the home page"
    images = _until(lambda: (imgs := _images_loaded(browser)) and
                    all(w >= 0 for _, w in imgs) and imgs, 30, "the home page's images")
    assert all(width > 400 for _, width in images), f"an image did not load: {images}"


def test_guide_page_shows_its_screenshot(browser, served):
    browser.get(served + "/guide/filter-design/")
    heading = browser.find_element("css selector", "article h1").text
    assert "ilter" in heading
    images = _until(lambda: (imgs := _images_loaded(browser)) and
                    all(w >= 0 for _, w in imgs) and imgs, 30, "the guide page's screenshot")
    assert any("filter-designer.png" in src and width > 400 for src, width in images), images


def test_api_page_of_open_recording(browser, served):
    browser.get(served + "/reference/api/specscope.compute.io/#specscope.compute.io.open_recording")
    entry = browser.find_element("id", "specscope.compute.io.open_recording")
    block = entry.find_element("xpath", "./ancestor::div[contains(@class, 'doc-object')][1]")
    text = block.text
    assert "open_recording" in text
    assert "Parameters" in text and "Returns" in text, text[:500]


def test_search_for_notch_finds_the_filter_page(browser, served):
    browser.get(served + "/")
    # the search field is behind the search button on narrow layouts; this window is wide
    field = _until(lambda: browser.find_elements("css selector", "input.md-search__input"), 30,
                   "the search field")[0]
    browser.execute_script("arguments[0].focus();", field)
    field.send_keys("notch")
    links = _until(lambda: [a.get_attribute("href") for a in browser.find_elements(
        "css selector", ".md-search-result__link")], 30, "search results for 'notch'")
    assert any("guide/filter-design/" in href for href in links), links
