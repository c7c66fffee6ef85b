"""The page in a real browser (Debian's chromium + chromedriver, driven by selenium): a German query typed into
the page fills both columns, each hit with a language badge and each column with its language-mix bar.

The index holds at most 8 documents per language (40 in 5 languages), so a top 10 has more than one language
by construction: the test checks what the page shows against the API's answers, not the tiny model's quality.
"""
from __future__ import annotations

import shutil
import socket
import threading
import time
from collections import Counter

import pytest

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                                 reason="needs Debian's chromium and chromium-driver (apt-get install -y chromium "
                                        "chromium-driver; .ci/run installs them)")]

GERMAN = "Wo liegt der Garten am Fluss?"


@pytest.fixture
def server(served):
    """The app on 127.0.0.1 at a free port, in a thread that stops when the test ends."""
    import uvicorn

    from mlirkit.serve.rest import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(served[0]), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the server did not start in 30 s"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def test_a_german_query_fills_both_columns(server, served, tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get(server + "/")
        box = driver.find_element(By.ID, "query")
        box.clear()
        box.send_keys(GERMAN)
        driver.find_element(By.CSS_SELECTOR, "#search-form button").click()
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-done") == "1")
        shown = {}
        for column in ("plain", "shifted"):
            section = driver.find_element(By.ID, column)
            hits = section.find_elements(By.CSS_SELECTOR, ".hits .hit")
            shown[column] = ([h.find_element(By.CLASS_NAME, "doc-id").text for h in hits],
                             [h.find_element(By.CLASS_NAME, "badge").text for h in hits],
                             [p.text for p in section.find_elements(By.CSS_SELECTOR, ".mix .mix-part")])
    finally:
        driver.quit()
    service = served[0]
    for column, shift in (("plain", False), ("shifted", True)):
        ids, badges, mix = shown[column]
        want = service.search({"query": GERMAN, "k": 10, "shift": shift})
        assert ids == [h["doc_id"] for h in want["hits"]] and badges == [h["lang"] for h in want["hits"]]
        assert sorted(mix) == sorted(f"{la} {n}" for la, n in Counter(badges).items())
    assert len(set(shown["shifted"][1])) > 1
    assert want["language"]["lang"] == "de"  # the page's shifted column searched with the German shift
