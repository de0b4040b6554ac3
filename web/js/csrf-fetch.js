// Loaded into LangServe's playground page (api/routes/web.py injects it): the page authenticates with the
// web session's HttpOnly cookie, and a state-changing request that a cookie authenticates must also
// carry the session's CSRF token. This adds X-CSRF-Token to the page's own same-origin POSTs.
"use strict";
(function () {
  const original = window.fetch.bind(window);
  function csrf() {
    const m = document.cookie.match(/(?:^|;\s*)thotqen_csrf=([^;]*)/);
    return m ? decodeURIComponent(m[1]) : "";
  }
  window.fetch = function (input, init) {
    const request = new Request(input, init);
    const url = new URL(request.url, window.location.href);
    if (url.origin === window.location.origin && !["GET", "HEAD", "OPTIONS"].includes(request.method)) {
      const headers = new Headers(request.headers);
      if (!headers.has("X-CSRF-Token")) headers.set("X-CSRF-Token", csrf());
      return original(new Request(request, { headers: headers }));
    }
    return original(request);
  };
})();
