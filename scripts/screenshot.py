"""The README's picture of the viewer: ``rotary serve`` in headless Chromium, one position,
a point clicked so that its rotations show, saved as PNG.

    python scripts/screenshot.py [--db rotary-db/hex3-4v4] [--position P] [--out docs/img/viewer.png]

Without ``--db`` it solves hex(3) 4v4 into a temporary folder first (about a minute).
Needs Debian's ``chromium`` and ``chromium-driver`` and the test extra (selenium, flask).
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

POSITION = ".../..o./.o.../x.x.../.o.xx/..o. x"  # docs/rules.md §4: light wins in 21
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--window-size=1100,780", "--hide-scrollbars"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", help="a hex3 database to serve (default: solve hex3 4v4 now)")
    ap.add_argument("--position", default=POSITION)
    ap.add_argument("--click", default="e3", help="the point to click before the picture (its rotations show)")
    ap.add_argument("--out", default="docs/img/viewer.png")
    args = ap.parse_args()

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    work = Path(tempfile.mkdtemp(prefix="rotary-shot-"))
    db = args.db
    if db is None:
        db = str(work / "hex3-4v4")
        print("solving hex3 4v4 ...", flush=True)
        subprocess.run([sys.executable, "-m", "solver.cli.main", "solve", "--board", "hex3", "--balls", "4",
                        "--db", db, "-q"], check=True)
    server = subprocess.Popen([sys.executable, "-m", "solver.cli.main", "serve", "--db", db, "--port", "0", "-q"],
                              stdout=subprocess.PIPE, text=True)
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in FLAGS + [f"--user-data-dir={work / 'profile'}"]:
        options.add_argument(flag)
    driver = None
    try:
        url = re.search(r"http://\S+/", server.stdout.readline()).group(0)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        driver.get(url + "?" + urlencode({"p": args.position}))
        if args.click:
            driver.find_element(By.CSS_SELECTOR, f"svg [data-point='{args.click}']").click()
            time.sleep(0.5)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(args.out)
        print(f"wrote {args.out}")
    finally:
        if driver is not None:
            driver.quit()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
