"""Screenshots of the web page's main views, for docs/screenshots/ (referenced from README.md).

    .venv/bin/python scripts/web_screenshots.py [--out docs/screenshots]

The server is the browser tests' (tests/web_server.py): a real quaderno server with the
scripted fake model of the tests and two small knowledge bases, driven by Playwright in
Debian's chromium (scripts/install.sh installs it). The answers are the fake model's: the
pictures show the page, not a model's quality.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from web_server import (DOCSAGE_QUESTION, MISKNOW_QUESTION, PAGER_QUESTION,  # noqa: E402
                        WebServer, make_eval_run, make_workspace, write_dataset)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
log = logging.getLogger("web_screenshots")


def ask(page, question: str, method: str, kbs: list[str], box: str) -> None:
    page.fill("#question", question)
    page.select_option("#method", method)
    page.select_option("#ask-kbs", kbs)
    page.click("#ask-button")
    page.wait_for_selector(f"{box}:not([hidden])", timeout=60000)
    page.wait_for_selector("#ask-button:not([disabled])")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = make_workspace(root / "home")
        write_dataset(root / "data")
        with WebServer(home, root / "data", delay_s=0.3) as url, sync_playwright() as p:
            make_eval_run(url)
            browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url)
            page.wait_for_selector("body[data-ready='1']")

            def shot(name: str) -> None:
                path = args.out / f"{name}.png"
                page.screenshot(path=str(path), full_page=True)
                log.info("wrote %s", path.relative_to(ROOT))

            # PAGER mid-fill: the outline is there, the first slot filled, the rest waiting
            page.fill("#question", PAGER_QUESTION)
            page.select_option("#method", "pager")
            page.select_option("#ask-kbs", ["mma"])
            page.click("#ask-button")
            page.wait_for_selector("#slots li.slot.filled")
            shot("ask-pager-filling")
            page.wait_for_selector("#answer-box:not([hidden])")
            page.locator("#evidence a.cite").first.click()
            page.wait_for_selector("#chunk-box:not([hidden])")
            shot("ask-pager-answer")
            ask(page, MISKNOW_QUESTION, "misknow", ["mma"], "#misknow-box")
            shot("ask-misknow")
            ask(page, DOCSAGE_QUESTION, "docsage", ["unis"], "#docsage-box")
            page.locator("#docsage-view a.source").first.click()
            page.wait_for_selector("#chunk-box:not([hidden])")
            shot("ask-docsage")
            page.click("nav .tab[data-tab='kbs']")
            doc = root / "notes.jsonl"
            doc.write_text("".join(f'{{"id": "n{i}", "title": "Note {i}", "contents": '
                                   f'"Note number {i} of the notebook."}}\n'
                                   for i in range(200)))
            page.fill("#kb-name", "notes")
            page.set_input_files("#kb-file", str(doc))
            page.click("#kb-add")
            page.wait_for_selector("#job[data-state='succeeded']", timeout=60000)
            shot("knowledge-bases")
            page.click("nav .tab[data-tab='evals']")
            page.locator("#run-table tr[data-run='mini'] button.open-run").click()
            page.wait_for_selector("#report:not([hidden])")
            page.wait_for_function("[...document.querySelectorAll('#report-plots img')]"
                                   ".every(i => i.complete && i.naturalWidth > 0)")
            shot("evaluation-report")
            browser.close()


if __name__ == "__main__":
    main()
