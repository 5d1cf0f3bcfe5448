"""The web page in a real browser (Playwright driving Debian's chromium) against a real server
with the scripted fake model: PAGER's slots fill live, citations open their chunk, a file
becomes a knowledge base with a progress bar, an evaluation report opens with its plots,
DocSage's result rows link to their source chunk, and HTML inside a document stays text.

Chromium comes from the project's setup (scripts/install.sh: Debian's ``chromium``); never
``playwright install``. Without it these tests skip, or fail when
``QUADERNO_REQUIRE_BROWSER=1`` (as ``make test`` and CI set it)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from quaderno.llm.types import ChatRequest, Message
from web_server import (DOCSAGE_QUESTION, INVENTING_QUESTION, MISKNOW_QUESTION, PAGER_QUESTION,
                        DemoModel, PacedFake, WebServer, make_eval_run, make_workspace,
                        write_dataset)

CHROMIUM = os.environ.get("QUADERNO_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = pytest.mark.slow


def _browser_missing() -> str | None:
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "the playwright package is missing (pip install 'quaderno[dev]')"
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"no chromium at {CHROMIUM} (scripts/install.sh installs Debian's chromium)"
    return None


@pytest.fixture(scope="module")
def browser():
    why = _browser_missing()
    if why:
        if os.environ.get("QUADERNO_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests required (QUADERNO_REQUIRE_BROWSER=1) but {why}")
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="quaderno-chromium-")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM,
                                                       args=ARGS, headless=True)
        yield context
        context.close()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("web")
    home = make_workspace(root / "home")
    write_dataset(root / "data")
    server = WebServer(home, root / "data", delay_s=0.15)
    with server:
        yield server


@pytest.fixture(scope="module")
def site(server):
    return server.url


@pytest.fixture
def page(browser, site):
    tab = browser.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.goto(site)
    tab.wait_for_selector("body[data-ready='1']")
    yield tab
    assert not errors, errors  # no script error on any page
    tab.close()


def ask(page, question: str, method: str, kbs: list[str]) -> None:
    page.fill("#question", question)
    page.select_option("#method", method)
    page.select_option("#ask-kbs", kbs)
    page.click("#ask-button")


def test_pager_slots_fill_live_then_the_answer_and_a_citation_opens(page, server):
    with server.model.paused_after_next_fill() as resume:
        ask(page, PAGER_QUESTION, "pager", ["mma"])
        # the outline appears with every slot to be filled, before any answer
        page.wait_for_selector("#slots li.slot")
        assert page.locator("#slots li.slot").count() == 3
        assert page.is_hidden("#answer-box")
        # a slot shows its sub-query and the titles of its documents while later slots still wait
        first = page.locator("#slots li.slot").nth(0)
        first.locator(".docs li").first.wait_for()
        assert "Who is Kazuyuki Fujita?" in first.locator(".subquery").inner_text()
        page.wait_for_selector("#slots li.slot.filled")
        # the model holds after the first fill: the page shows it filled, the rest waiting
        assert page.is_hidden("#answer-box")
        assert page.locator("#slots li.slot:not(.filled)").count() == 2
        resume.set()
    page.wait_for_selector("#answer-box:not([hidden])")
    assert page.inner_text("#answer") == "mixed martial artist"
    assert page.locator("#slots li.slot.filled").count() == 3
    assert "Kazuyuki Fujita: filled from documents." in page.inner_text("#slots")
    steps = page.inner_text("#steps")
    assert "pager.outline" in steps and "pager.fill_rewrite" in steps
    # a citation opens the chunk it points to
    page.locator("#evidence a.cite", has_text="Kazuyuki Fujita").click()
    page.wait_for_selector("#chunk-box:not([hidden])")
    assert "Japanese mixed martial artist" in page.inner_text("#chunk-text")
    assert "mma · f1" in page.inner_text("#chunk-id")


def test_the_held_fake_model_is_released_on_any_exit_and_fails_if_never_resumed():
    """The pause the live-fill test arms: a failure inside it must not hold the model for the
    tests after it, and a call held past its limit fails rather than going on silently."""
    model = DemoModel()
    fake = PacedFake(model, 0.0, hold_s=0.2)
    request = ChatRequest(messages=(Message(role="user", content="# Question\nx"),))
    with pytest.raises(RuntimeError, match="never released"):
        with model.paused_after_next_fill():
            model.open.clear()  # as after PAGER's first fill
            # in a thread of its own: Playwright's sync API keeps a loop running in this one
            with ThreadPoolExecutor(1) as pool:
                pool.submit(asyncio.run, fake.achat(request)).result()
    assert model.open.is_set()  # leaving the block by an error reopened it
    with pytest.raises(AssertionError):
        with model.paused_after_next_fill():
            model.open.clear()
            raise AssertionError("a failed check inside the pause")
    assert model.open.is_set() and not model._pause_after_fill


def test_html_in_a_document_renders_as_text(page):
    ask(page, PAGER_QUESTION, "pager", ["mma"])
    page.wait_for_selector("#answer-box:not([hidden])")
    page.locator("#evidence a.cite", has_text="Gilbert Yvel").click()
    page.wait_for_selector("#chunk-box:not([hidden])")
    assert '<img src=x onerror="document.body.dataset.pwned=1">' in page.inner_text(
        "#chunk-text")
    assert page.locator("img").count() == 0  # no element was made from the text
    assert page.evaluate("document.body.dataset.pwned") is None  # and no script ran
    # the page forbids inline script and other origins
    res = page.request.get(page.url)
    csp = res.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp


def test_docsage_rows_link_to_their_source_chunk(page):
    ask(page, DOCSAGE_QUESTION, "docsage", ["unis"])
    page.wait_for_selector("#docsage-box:not([hidden])", timeout=60000)
    view = page.inner_text("#docsage-view")
    assert "institution" in view and "founded" in view
    # every row is shown, so the heading gives the whole count, not "first N"
    assert re.search(r"Table institution \(\d+ rows\)", view), view
    assert "SELECT name, founded, staff FROM institution" in page.inner_text(
        "#docsage-view pre.sql")
    assert page.inner_text("#answer") == "Varnholt University"
    # a number beside the document's own words for it, as text (a year says no more)
    assert page.inner_text("#docsage-view span.written") == ' (written "2,300 staff")'
    assert page.locator("#docsage-view span.written").count() == 1
    page.locator("#docsage-view a.source").first.click()
    page.wait_for_selector("#chunk-box:not([hidden])")
    assert "Varnholt University was founded in 1874" in page.inner_text("#chunk-text")


def test_docsage_says_when_the_answer_is_the_rows_for_a_number_it_invented(page):
    ask(page, INVENTING_QUESTION, "docsage", ["unis"])
    page.wait_for_selector("#docsage-box:not([hidden])", timeout=60000)
    assert page.inner_text("#docsage-view p.ungrounded") == (
        "The model's answers gave 9,999, which no result row holds: the answer is the "
        "result rows.")
    assert page.inner_text("#answer").startswith("Varnholt University, 1874, 2300")
    # a question answered from the result shows no such note
    ask(page, DOCSAGE_QUESTION, "docsage", ["unis"])
    page.wait_for_selector("#docsage-view pre.sql")
    page.wait_for_function("document.querySelector('#answer').innerText === "
                           "'Varnholt University'")
    assert page.locator("#docsage-view p.ungrounded").count() == 0


def test_docsage_lists_the_links_left_out_as_ended_as_text(page):
    """The view itself, given a DocSage result whose CLEAR report left out a link row; the
    clause is a document's text and must stay text."""
    quote = 'Former members: <img src=x onerror="document.body.dataset.pwned=1">Oslo.'
    page.evaluate("""async (quote) => {
        const { docsageView } = await import("/web/views.js");
        docsageView({ clear: { links_ended: [{ table: "league_city",
            values: { league: "Northern League", city: "Oslo" }, chunk_id: "d2#0",
            quote, said_in: "varn#0" }] } }, () => { document.body.dataset.opened = "1"; });
    }""", quote)
    item = page.locator("#docsage-view ul.links-ended li")
    assert item.count() == 1
    assert item.inner_text() == f'league_city(Northern League, Oslo) varn#0: "{quote}"'
    assert page.locator("#docsage-view img").count() == 0
    assert page.inner_text("#docsage-view h3") == "Left out as ended (1)"
    item.locator("a.source").click()
    assert page.evaluate("document.body.dataset.opened") == "1"
    assert page.evaluate("document.body.dataset.pwned") is None


def test_docsage_lists_the_ids_numbered_per_chunk_as_text(page):
    note = "company.id (and <b>membership.company_id</b>): no chunk states it"
    page.evaluate("""async (note) => {
        const { docsageView } = await import("/web/views.js");
        docsageView({ scoped_keys: [note] }, () => {});
    }""", note)
    assert page.inner_text("#docsage-view h3") == "Ids numbered per chunk"
    assert page.inner_text("#docsage-view ul.scoped-keys li") == note
    assert page.locator("#docsage-view b").count() == 0


def test_docsage_says_why_the_answer_is_the_rows_when_no_number_was_invented(page):
    """Review 1: an answer of "not found" from rows, or one naming no number of a
    one-number result, became the rows with no note; the view says why, as text."""
    why = "the answer was '<b>not found</b>' from a result with values, asked once more"
    page.evaluate("""async (why) => {
        const { docsageView } = await import("/web/views.js");
        docsageView({ from_rows: true, from_rows_why: why, ungrounded: [] }, () => {});
    }""", why)
    assert page.inner_text("#docsage-view p.ungrounded") == (
        "The answer was '<b>not found</b>' from a result with values, asked once more: the "
        "answer is the result rows.")
    assert page.locator("#docsage-view b").count() == 0


def test_misknow_shows_the_judgment_and_both_rounds(page):
    ask(page, MISKNOW_QUESTION, "misknow", ["mma"])
    page.wait_for_selector("#misknow-box:not([hidden])", timeout=60000)
    view = page.inner_text("#misknow-view")
    assert "Gilbert Yvel's profession" in view and "Gilbert Yvel profession" in view
    assert page.locator("#misknow-view ol.rounds li").count() == 2


def test_gate_decision_is_shown(page):
    page.fill("#gate", "never")
    ask(page, "Capital of France?", "vanilla-rag", ["mma"])
    page.wait_for_selector("#gate-box:not([hidden])")
    assert "answer closed-book (no retrieval)" in page.inner_text("#gate-view")


def test_upload_a_file_as_a_knowledge_base_with_progress(page, tmp_path):
    page.click("nav .tab[data-tab='kbs']")
    page.wait_for_selector("#kb-table tr[data-kb='mma']")
    doc = tmp_path / "notes.jsonl"
    doc.write_text('{"id": "n1", "title": "Note", "contents": "Quaderno means notebook."}\n'
                   '{"id": "n2", "title": "Other", "contents": "A second note."}\n')
    page.fill("#kb-name", "notes")
    page.set_input_files("#kb-file", str(doc))
    page.click("#kb-add")
    page.wait_for_selector("#job[data-state='succeeded']", timeout=60000)
    assert page.get_attribute("#job-progress", "value") == "1"
    row = page.locator("#kb-table tr[data-kb='notes']")
    row.wait_for()
    assert row.locator("td").nth(2).inner_text() == "2"
    assert "default" in row.locator("td").nth(3).inner_text()
    # the new knowledge base can be asked at once
    page.click("nav .tab[data-tab='ask']")
    assert page.locator("#ask-kbs option[value='notes']").count() == 1


def test_an_evaluation_report_opens_with_its_table_and_plots(page, site):
    make_eval_run(site)
    page.click("nav .tab[data-tab='evals']")
    page.wait_for_selector("#run-table tr[data-run='mini']")
    page.locator("#run-table tr[data-run='mini'] button.open-run").click()
    page.wait_for_selector("#report:not([hidden])")
    assert "vanilla-llm" in page.inner_text("#report-cells")
    assert page.locator("#report-plots img").count() == 3
    page.wait_for_function("[...document.querySelectorAll('#report-plots img')]"
                           ".every(i => i.complete && i.naturalWidth > 0)")
    assert "| vanilla-llm |" in page.locator("#report-md").text_content()


def test_the_page_asks_for_the_token_when_the_server_wants_one(browser, tmp_path):
    home = make_workspace(tmp_path / "home")
    with WebServer(home, tmp_path, token="s3cret-token-of-the-test") as url:
        tab = browser.new_page()
        tab.goto(url)  # the page itself needs no token: it holds no data
        tab.wait_for_selector("#token-form:not([hidden])")
        assert "unauthorized" in tab.inner_text("#error")
        tab.fill("#token", "s3cret-token-of-the-test")
        tab.click("#token-form button")
        tab.wait_for_selector("body[data-ready='1']")
        assert tab.locator("#method option").count() > 3
        tab.close()


def test_the_page_says_when_the_embedded_model_answers_one_at_a_time(browser, page, tmp_path):
    assert page.is_hidden("#serialized")  # the fake model answers concurrently
    home = make_workspace(tmp_path / "home")
    with WebServer(home, tmp_path, embedded=True) as url:  # no question: nothing is loaded
        tab = browser.new_page()
        tab.goto(url)
        tab.wait_for_selector("body[data-ready='1']")
        assert "one request at a time" in tab.inner_text("#serialized")
        assert "llama-cpp" in tab.inner_text("#llm-info")
        tab.close()


def test_the_web_files_are_package_data():
    web = Path(__file__).resolve().parent.parent / "quaderno" / "serve" / "web"
    from quaderno.serve.routes_web import FILES

    assert sorted(FILES) == sorted(p.name for p in web.iterdir() if p.is_file())
