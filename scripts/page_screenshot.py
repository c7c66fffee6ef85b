"""Screenshot of the search service's page after one query (Debian's chromium + chromedriver via selenium).

    python scripts/page_screenshot.py --url http://127.0.0.1:8000/ --query "..." --output docs/figures/serve-page.png
"""
from __future__ import annotations

import argparse
import shutil
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default="http://127.0.0.1:8000/")
    p.add_argument("--query", required=True)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--output", required=True)
    p.add_argument("--size", default="1400,1250", help="window width,height in pixels")
    args = p.parse_args()
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    with tempfile.TemporaryDirectory() as profile:
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                    f"--user-data-dir={profile}", f"--window-size={args.size}", "--hide-scrollbars"):
            options.add_argument(arg)
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
        try:
            driver.get(args.url)
            driver.find_element(By.ID, "query").send_keys(args.query)
            k = driver.find_element(By.ID, "k")
            k.clear()
            k.send_keys(str(args.k))
            driver.find_element(By.CSS_SELECTOR, "#search-form button").click()
            WebDriverWait(driver, 120).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-done") == "1")
            driver.save_screenshot(args.output)
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
