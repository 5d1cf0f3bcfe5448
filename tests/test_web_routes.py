"""The web page's routes without a browser: served without the token (they hold no data)
while the API still demands it, with a CSP that allows no inline script, and only the
page's own files."""

from __future__ import annotations

from test_serve_api import assert_error, call, make_app, make_home


def test_page_and_files_served_without_token_api_still_locked(tmp_path):
    app = make_app(make_home(tmp_path / "home"), token="a-token-of-sixteen-chars")
    page = call(app, "GET", "/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp
    assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert '<script type="module" src="/web/app.js">' in page.text
    js = call(app, "GET", "/web/render.js")
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    assert "textContent" in js.text and "innerHTML" not in js.text
    assert_error(call(app, "GET", "/v1/kbs"), 401, "no bearer token")
    # only the listed files: no path out of the folder, no other name
    assert_error(call(app, "GET", "/web/secret.txt"), 404, "no web file")
    assert call(app, "GET", "/web/..%2Fapp.py").status_code == 404


def test_no_script_of_the_page_builds_html_from_strings():
    from pathlib import Path

    web = Path(__file__).resolve().parent.parent / "quaderno" / "serve" / "web"
    for js in web.glob("*.js"):
        text = js.read_text()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                     "eval(", "new Function"):
            assert sink not in text, f"{js.name} uses {sink}"
