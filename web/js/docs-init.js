// Swagger UI on /docs, from the app's own copy. Requests made with the web session's cookie carry its
// CSRF token (read from the thotqen_csrf cookie); a bearer token set with Authorize needs none.
"use strict";
(function () {
  function csrf() {
    const m = document.cookie.match(/(?:^|;\s*)thotqen_csrf=([^;]*)/);
    return m ? decodeURIComponent(m[1]) : "";
  }
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    persistAuthorization: false,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    requestInterceptor: function (req) {
      const method = (req.method || "GET").toUpperCase();
      const token = csrf();
      if (token && !["GET", "HEAD", "OPTIONS"].includes(method)) {
        req.headers["X-CSRF-Token"] = token;
      }
      return req;
    },
  });
})();
