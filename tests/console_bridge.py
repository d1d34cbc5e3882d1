"""A tiny stand-in for the LangBot WebUI plugin-page host, for the console browser tests.

It reproduces what the WebUI does with a plugin page (docs/HOST-FACTS.md 9.2, host
web/src/app/home/plugin-pages/page.tsx):
- fetch the page HTML, turn it into a ``blob:`` URL and load it into
  ``<iframe sandbox="allow-scripts allow-forms">`` (opaque origin: no storage,
  no modals, no downloads, no relative URLs);
- send ``{type: "langbot:context", theme, language}`` on iframe load and on every
  change (``window.setHostContext(theme, language)``);
- answer ``{type: "langbot:api"}`` messages from that iframe only, after the same
  checks as the host (endpoint starts with "/" and has no "..", known method;
  invalid messages are dropped silently), by calling the plugin's real Page
  dispatch through ``PluginHarness.page_api``; a ``PageResponse.error`` comes
  back as the string "[object Object]", as on the real host.

The HTML is served by a stdlib HTTP server on 127.0.0.1 (a free port); the
page-API bridge is a Playwright binding running on the test's event loop.
"""

from __future__ import annotations

import threading
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PAGE_HTML = Path(__file__).resolve().parents[1] / "components" / "pages" / "console" / "index.html"

HOST_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>LangBot page host (test)</title>
<link rel="icon" href="data:,">
<style>html,body{margin:0;height:100%;background:#888}
iframe{border:0;display:block;width:100%;height:100vh}</style></head>
<body>
<iframe id="plugin-page" title="plugin page" sandbox="allow-scripts allow-forms"></iframe>
<script>
(function () {
  var frame = document.getElementById('plugin-page');
  var ctx = { theme: 'light', language: 'en-US' };
  var METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
  window.hostApiLog = [];
  window.hostReady = false;
  function sendContext() {
    frame.contentWindow.postMessage({ type: 'langbot:context', theme: ctx.theme, language: ctx.language }, '*');
  }
  window.setHostContext = function (theme, language) { ctx.theme = theme; ctx.language = language; sendContext(); };
  window.addEventListener('message', function (event) {
    if (event.source !== frame.contentWindow) return;
    var msg = event.data;
    if (!msg || typeof msg !== 'object' || msg.type !== 'langbot:api') return;
    var endpoint = msg.endpoint, method = String(msg.method || 'GET').toUpperCase();
    if (typeof endpoint !== 'string' || endpoint.charAt(0) !== '/' || endpoint.indexOf('..') !== -1) return;
    if (METHODS.indexOf(method) === -1) return;
    window.hostApiLog.push({ endpoint: endpoint, method: method, body: msg.body });
    window.__pluginPageApi(endpoint, method, msg.body === undefined ? null : msg.body).then(function (res) {
      var reply = { type: 'langbot:api:response', requestId: msg.requestId };
      if (res && res.error) reply.error = '[object Object]'; else reply.data = res ? res.data : null;
      frame.contentWindow.postMessage(reply, '*');
    }, function (err) {
      frame.contentWindow.postMessage({ type: 'langbot:api:response', requestId: msg.requestId,
        error: String((err && err.message) || err) }, '*');
    });
  });
  fetch('/plugin/index.html').then(function (r) { return r.text(); }).then(function (html) {
    frame.addEventListener('load', function () { window.hostReady = true; sendContext(); });
    frame.src = URL.createObjectURL(new Blob([html], { type: 'text/html' }));
  });
})();
</script>
</body></html>
"""


class _Handler(BaseHTTPRequestHandler):
    def __init__(self, *args: Any, page_path: Path, **kwargs: Any) -> None:
        self._page_path = page_path
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:
        if self.path in ("/", "/index.html"):
            self._send(HOST_HTML.encode("utf-8"), "text/html; charset=utf-8")
        elif self.path == "/plugin/index.html":
            self._send(self._page_path.read_bytes(), "text/html; charset=utf-8")
        else:
            self._send(b"not found", "text/plain", status=404)

    def _send(self, body: bytes, content_type: str, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None


class PageHostServer:
    """Serves the host page and the plugin HTML on 127.0.0.1:<free port> from a thread."""

    def __init__(self, page_path: Path = PAGE_HTML) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, page_path=page_path))
        self._thread = threading.Thread(target=self._server.serve_forever, name="page-host", daemon=True)

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> PageHostServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


async def attach_page_api(page: Any, harness: Any, page_id: str = "console",
                          calls: list[dict[str, Any]] | None = None) -> None:
    """Expose the plugin's Page dispatch to the host page as ``window.__pluginPageApi``."""

    async def page_api(endpoint: str, method: str, body: Any) -> dict[str, Any]:
        result = await harness.page_api(page_id, endpoint, method, body)
        if calls is not None:
            calls.append({"endpoint": endpoint, "method": method, "body": body, "result": result})
        return result

    await page.expose_function("__pluginPageApi", page_api)


__all__ = ["HOST_HTML", "PAGE_HTML", "PageHostServer", "attach_page_api"]
