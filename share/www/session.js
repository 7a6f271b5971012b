/*
 * The login page the server redirects browsers to (`[couch_httpd_auth] authentication_redirect`)
 * when a request needs a signed-in user: `?return=<path>&reason=<why>`. Logs in with
 * POST /_session and goes back to `return`.
 */
(function () {
  'use strict';

  const params = new URLSearchParams(window.location.search);
  /** Only a path on this server: an absolute URL here would make the page an open redirect. */
  function returnPath() {
    const value = params.get('return');
    return value && value.startsWith('/') && !value.startsWith('//') ? value : './';
  }

  document.getElementById('reason').textContent = params.get('reason') || '';
  document.getElementById('login').addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.target;
    const error = document.getElementById('error');
    error.textContent = '';
    try {
      // The page is <server>/_utils/session.html, also behind a proxy's path prefix.
      const root = window.location.pathname.replace(/\/_utils(\/.*)?$/, '');
      const response = await fetch(root + '/_session', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ name: form.elements.name.value, password: form.elements.password.value }),
      });
      if (response.ok) {
        window.location.assign(returnPath());
        return;
      }
      const body = await response.json().catch(() => ({}));
      error.textContent = body.reason || `Login failed (${response.status})`;
    } catch (err) {
      error.textContent = `Login failed: ${err.message}`;
    }
  });
})();
