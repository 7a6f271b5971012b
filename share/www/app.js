/*
 * Settee's administration interface: one page, routed by the URL's hash, talking to the
 * server's own CouchDB API with same-origin fetch.
 *
 * Server data only ever reaches the page as text nodes or attribute values (see el()), never
 * as HTML, so a document or database name cannot inject markup.
 */
(function () {
  'use strict';

  /** Rows per page of _all_docs, and the default limit of view queries. */
  const PAGE_SIZE = 20;
  /** Databases per page of the overview: each one costs a request for its info. */
  const DATABASES_PER_PAGE = 50;
  /** Database info requests in flight at once on the overview. */
  const INFO_REQUESTS_AT_ONCE = 6;
  const DEFAULT_LOG_BYTES = 5000;

  // ------------------------------------------------------------------------------ DOM helpers

  /** Attributes that must be set as properties for the element to reflect them. */
  const PROPERTIES = new Set(['value', 'checked', 'disabled', 'selected', 'readOnly']);

  /**
   * Creates an element. `props` are attributes, `on...` functions become listeners; children
   * are nodes or strings (added as text), null/undefined/false are skipped, arrays flattened.
   */
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name.startsWith('on') && typeof value === 'function') node.addEventListener(name.slice(2), value);
      else if (PROPERTIES.has(name)) node[name] = value;
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    return append(node, children);
  }

  function append(parent, children) {
    for (const child of children.flat(Infinity)) {
      if (child === undefined || child === null || child === false) continue;
      parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return parent;
  }

  let fieldCount = 0;

  /** A labelled input: the label names the input through a generated id. */
  function field(labelText, input) {
    if (!input.id) input.id = 'field-' + (++fieldCount);
    return el('div', { class: 'field' }, el('label', { for: input.id }, labelText), input);
  }

  function table(headings, rows, emptyText) {
    if (rows.length === 0) return el('p', { class: 'muted' }, emptyText);
    return el('table', {},
      el('thead', {}, el('tr', {}, headings.map((text) => el('th', { scope: 'col' }, text)))),
      el('tbody', {}, rows));
  }

  function button(text, onClick, props) {
    return el('button', Object.assign({ type: 'button', onclick: guarded(onClick) }, props), text);
  }

  function jsonText(value) {
    return JSON.stringify(value);
  }

  function formatBytes(bytes) {
    if (typeof bytes !== 'number') return '';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let value = bytes;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit++;
    }
    return (unit === 0 ? String(value) : value.toFixed(1)) + ' ' + units[unit];
  }

  /** CouchDB reports times as Unix seconds. */
  function formatTime(seconds) {
    return typeof seconds === 'number' ? new Date(seconds * 1000).toLocaleString() : '';
  }

  /** "a, b ,c" → ["a", "b", "c"] */
  function splitList(text) {
    return text.split(',').map((item) => item.trim()).filter((item) => item !== '');
  }

  // ------------------------------------------------------------------------------ messages

  function clearMessages() {
    document.getElementById('messages').replaceChildren();
  }

  function showMessage(text, kind) {
    const message = el('p', { class: 'message ' + (kind || 'info'), role: kind === 'error' ? 'alert' : 'status' }, text);
    message.appendChild(el('button', { type: 'button', class: 'dismiss', 'aria-label': 'Dismiss', onclick: () => message.remove() }, '×'));
    document.getElementById('messages').appendChild(message);
  }

  function showError(err) {
    showMessage(describeError(err), 'error');
  }

  function describeError(err) {
    if (err instanceof CouchError) {
      const status = err.status ? err.status + ' ' : '';
      return status + err.error + ': ' + err.reason;
    }
    return err && err.message ? err.message : String(err);
  }

  /**
   * Wraps an event handler: stops the default action (form submission), disables the form's
   * buttons (or the button) while the work runs, and reports any error to the user.
   */
  function guarded(work) {
    return async function (event) {
      event.preventDefault();
      const control = event.currentTarget;
      const buttons = control.tagName === 'FORM' ? Array.from(control.querySelectorAll('button')) : [control];
      for (const b of buttons) b.disabled = true;
      clearMessages();
      try {
        await work(event);
      } catch (err) {
        showError(err);
      } finally {
        for (const b of buttons) b.disabled = false;
      }
    };
  }

  // ------------------------------------------------------------------------------ HTTP

  /** An `{error, reason}` answer of the server, or a network failure (status 0). */
  class CouchError extends Error {
    constructor(status, error, reason) {
      super(error + ': ' + reason);
      this.status = status;
      this.error = error;
      this.reason = reason;
    }
  }

  /**
   * Sends a request; `options.json` is sent as a JSON body, `options.body` as is. Answers the
   * Response when it is a success, else throws a CouchError.
   */
  /**
   * Where the server's API is: the page's path before `/_utils/`, so the interface also works
   * behind a proxy that serves the server under a path prefix. API paths below start with `/`.
   */
  const SERVER_ROOT = location.pathname.replace(/\/_utils(\/.*)?$/, '');

  async function request(method, path, options) {
    const opts = options || {};
    // Without this header a 401 could carry a Basic challenge, and the browser's login popup.
    const headers = Object.assign({ Accept: 'application/json', 'X-CouchDB-WWW-Authenticate': 'Cookie' }, opts.headers);
    let body = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['Content-Type'] = 'application/json';
    }
    let response;
    try {
      response = await fetch(SERVER_ROOT + path, { method, headers, body, credentials: 'same-origin' });
    } catch (err) {
      throw new CouchError(0, 'network_error', 'the server could not be reached (' + err.message + ')');
    }
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  async function errorOf(response) {
    const text = await response.text();
    let error = 'http_' + response.status;
    let reason = text.trim() || response.statusText;
    try {
      const body = JSON.parse(text);
      if (body && typeof body.error === 'string') {
        error = body.error;
        if (typeof body.reason === 'string') reason = body.reason;
        else if (body.reason !== undefined) reason = jsonText(body.reason);
      }
    } catch (notJson) {
      // Keep the text as the reason.
    }
    return new CouchError(response.status, error, reason);
  }

  async function getJson(path) {
    return (await request('GET', path)).json();
  }

  async function sendJson(method, path, json) {
    return (await request(method, path, { json })).json();
  }

  /** A POST with an empty body that still says JSON: CouchDB refuses _compact without it. */
  async function postEmpty(path) {
    return (await request('POST', path, { body: '', headers: { 'Content-Type': 'application/json' } })).json();
  }

  // ------------------------------------------------------------------------------ server URLs

  const enc = encodeURIComponent;

  /** A database name may hold `/`, which must travel as %2F. */
  function dbUrl(db) {
    return '/' + enc(db);
  }

  /** Design and local document ids keep their prefix's slash; the rest is encoded. */
  function docUrl(db, id) {
    for (const prefix of ['_design/', '_local/']) {
      if (id.startsWith(prefix)) return dbUrl(db) + '/' + prefix + enc(id.slice(prefix.length));
    }
    return dbUrl(db) + '/' + enc(id);
  }

  /** Attachment names may hold `/`; the server reads the segments after the id as one name. */
  function attachmentUrl(db, id, name) {
    return docUrl(db, id) + '/' + name.split('/').map(enc).join('/');
  }

  function viewUrl(db, ddocName, viewName) {
    return docUrl(db, '_design/' + ddocName) + '/_view/' + enc(viewName);
  }

  /** Appends the parameters that have a value; JSON parameters must be stringified by the caller. */
  function withQuery(path, params) {
    const parts = [];
    for (const [name, value] of Object.entries(params)) {
      if (value !== undefined && value !== null && value !== '') parts.push(enc(name) + '=' + enc(String(value)));
    }
    return parts.length === 0 ? path : path + '?' + parts.join('&');
  }

  // ------------------------------------------------------------------------------ page links

  /**
   * Hash links of the pages. Every name and id is one encoded path segment, so parseHash()
   * can split on `/` before decoding.
   */
  const link = {
    overview: (page) => withQuery('#/', { page: page > 1 ? page : undefined }),
    database: (db, start) => withQuery('#/db/' + enc(db), { start }),
    document: (db, id, rev) => withQuery('#/db/' + enc(db) + '/doc/' + enc(id), { rev }),
    newDocument: (db, id) => withQuery('#/db/' + enc(db) + '/new', { id }),
    view: (db, ddocName, viewName, options) => withQuery('#/db/' + enc(db) + '/view/' + enc(ddocName) + '/' + enc(viewName), options || {}),
    changes: (db) => '#/db/' + enc(db) + '/changes',
    security: (db) => '#/db/' + enc(db) + '/security',
  };

  // ------------------------------------------------------------------------------ routing

  function parseHash(hash) {
    const text = hash.replace(/^#\/?/, '');
    const q = text.indexOf('?');
    const path = q === -1 ? text : text.slice(0, q);
    const params = new URLSearchParams(q === -1 ? '' : text.slice(q + 1));
    const segments = path === '' ? [] : path.split('/').map(decodeSegment);
    return { segments, params };
  }

  function decodeSegment(segment) {
    try {
      return decodeURIComponent(segment);
    } catch (malformed) {
      return segment;
    }
  }

  /** The page a hash names: its nav section, title and render function. */
  function pageFor(segments) {
    const [first, db, kind, ...rest] = segments;
    if (first === undefined) return { section: 'overview', title: 'Overview', render: renderOverview };
    if (first === 'config' && !db) return { section: 'config', title: 'Configuration', render: renderConfig };
    if (first === 'status' && !db) return { section: 'status', title: 'Status', render: renderStatus };
    if (first === 'replicate' && !db) return { section: 'replicate', title: 'Replicator', render: renderReplicator };
    if (first === 'log' && !db) return { section: 'log', title: 'Log', render: renderLog };
    if (first === 'db' && db) {
      const page = (title, render) => ({ section: 'overview', title: db + ' – ' + title, render });
      if (kind === undefined) return page('Documents', (params) => renderDatabase(db, params));
      if (kind === 'doc' && rest.length === 1) return page(rest[0], (params) => renderDocument(db, rest[0], params));
      if (kind === 'new' && rest.length === 0) return page('New document', (params) => renderNewDocument(db, params));
      if (kind === 'view' && rest.length === 2) return page(rest.join('/'), (params) => renderView(db, rest[0], rest[1], params));
      if (kind === 'changes' && rest.length === 0) return page('Changes', () => renderChanges(db));
      if (kind === 'security' && rest.length === 0) return page('Security', () => renderSecurity(db));
    }
    return { section: '', title: 'Not found', render: async () => el('p', {}, 'There is no such page. ', el('a', { href: '#/' }, 'Back to the overview')) };
  }

  /** Counts navigations, so a slow page does not replace one shown after it. */
  let navigation = 0;
  let keepMessagesOnce = false;

  async function route() {
    const current = ++navigation;
    if (!keepMessagesOnce) clearMessages();
    keepMessagesOnce = false;
    const { segments, params } = parseHash(location.hash);
    const page = pageFor(segments);
    markSection(page.section);
    document.title = page.title + ' – Settee';
    const content = document.getElementById('content');
    content.setAttribute('aria-busy', 'true');
    let node;
    try {
      node = await page.render(params);
    } catch (err) {
      node = el('div', { class: 'failure' }, el('h2', {}, page.title), el('p', { class: 'message error', role: 'alert' }, describeError(err)));
    }
    if (current !== navigation) return;
    content.replaceChildren(node);
    content.removeAttribute('aria-busy');
  }

  /** Shows a page; messages shown just before stay. Renders again when the hash is already there. */
  function go(hash) {
    keepMessagesOnce = true;
    if (location.hash === hash) route();
    else location.hash = hash;
  }

  /** Renders the current page again, keeping the messages. */
  function refresh() {
    keepMessagesOnce = true;
    return route();
  }

  function markSection(section) {
    for (const a of document.querySelectorAll('.sidebar a')) {
      if (a.dataset.section === section) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
  }

  // ------------------------------------------------------------------------------ header

  async function renderServerVersion() {
    const target = document.getElementById('server-version');
    try {
      const welcome = await getJson('/');
      const vendor = welcome.vendor || {};
      target.textContent = [vendor.name, vendor.version].filter(Boolean).join(' ') + ' · CouchDB ' + welcome.version;
    } catch (err) {
      target.textContent = describeError(err);
    }
  }

  async function renderSession() {
    const area = document.getElementById('session');
    let session;
    try {
      session = await getJson('/_session');
    } catch (err) {
      area.replaceChildren(el('span', { class: 'error' }, describeError(err)));
      return;
    }
    const name = session.userCtx.name ?? null;
    const roles = session.userCtx.roles || [];
    if (name !== null) {
      area.replaceChildren(
        el('span', {}, 'Signed in as ', el('strong', {}, name), roles.length > 0 ? ' (' + roles.join(', ') + ')' : ''),
        button('Log out', logOut));
      return;
    }
    // Admin party: no [admins] yet, so every request, signed in or not, is a server admin.
    const note = roles.includes('_admin')
      ? el('span', { class: 'party' }, 'Admin party: everyone is a server admin. ', el('a', { href: '#/config' }, 'Add an admin'), ' in [admins].')
      : el('span', { class: 'muted' }, 'Not signed in.');
    area.replaceChildren(note, loginForm());
  }

  function loginForm() {
    const name = el('input', { type: 'text', autocomplete: 'username', required: true, size: 12 });
    const password = el('input', { type: 'password', autocomplete: 'current-password', required: true, size: 12 });
    return el('form', {
      class: 'login',
      onsubmit: guarded(async () => {
        await sendJson('POST', '/_session', { name: name.value, password: password.value });
        await renderSession();
        await refresh();
      }),
    }, field('Name', name), field('Password', password), el('button', { type: 'submit' }, 'Log in'));
  }

  async function logOut() {
    await request('DELETE', '/_session');
    await renderSession();
    await refresh();
  }

  // ------------------------------------------------------------------------------ overview

  async function renderOverview(params) {
    const names = await getJson('/_all_dbs');
    const pageCount = Math.max(1, Math.ceil(names.length / DATABASES_PER_PAGE));
    const page = Math.min(pageCount, Math.max(1, parseInt(params.get('page'), 10) || 1));
    const shown = names.slice((page - 1) * DATABASES_PER_PAGE, page * DATABASES_PER_PAGE);
    const rows = shown.map(databaseRow);
    // The table shows at once; each row fills in as its database's info arrives.
    forEachAtMost(INFO_REQUESTS_AT_ONCE, rows, (row) => row.fill());
    return el('section', {},
      el('h2', {}, 'Databases'),
      createDatabaseForm(),
      table(['Name', 'Documents', 'Update sequence', 'Size on disk', ''], rows.map((row) => row.node), 'There are no databases yet.'),
      pageCount > 1 ? el('nav', { class: 'pager', 'aria-label': 'Database pages' },
        page > 1 ? el('a', { href: link.overview(page - 1) }, '← Previous') : null,
        el('span', {}, 'Page ' + page + ' of ' + pageCount + ' (' + names.length + ' databases)'),
        page < pageCount ? el('a', { href: link.overview(page + 1) }, 'Next →') : null) : null);
  }

  function databaseRow(db) {
    const cells = { docs: el('td', { class: 'number' }, '…'), seq: el('td', { class: 'number' }, ''), size: el('td', { class: 'number' }, '') };
    const node = el('tr', {},
      el('th', { scope: 'row' }, el('a', { href: link.database(db) }, db)),
      cells.docs, cells.seq, cells.size,
      el('td', {}, button('Delete', () => deleteDatabase(db), { class: 'danger', 'aria-label': 'Delete database ' + db })));
    async function fill() {
      try {
        const info = await getJson(dbUrl(db));
        cells.docs.textContent = String(info.doc_count);
        cells.seq.textContent = String(info.update_seq);
        cells.size.textContent = formatBytes(info.disk_size);
      } catch (err) {
        cells.docs.textContent = describeError(err);
      }
    }
    return { node, fill };
  }

  /** Runs `work` on every item with at most `limit` calls pending. */
  async function forEachAtMost(limit, items, work) {
    let next = 0;
    async function worker() {
      while (next < items.length) await work(items[next++]);
    }
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  }

  function createDatabaseForm() {
    const name = el('input', { type: 'text', required: true, placeholder: 'e.g. my-database' });
    return el('form', {
      class: 'inline',
      onsubmit: guarded(async () => {
        await sendJson('PUT', dbUrl(name.value));
        showMessage('Created database ' + name.value + '.');
        go(link.database(name.value));
      }),
    }, field('New database', name), el('button', { type: 'submit' }, 'Create'));
  }

  async function deleteDatabase(db) {
    if (!confirm('Delete the database "' + db + '" and all its documents? This cannot be undone.')) return;
    await request('DELETE', dbUrl(db));
    showMessage('Deleted database ' + db + '.');
    if (parseHash(location.hash).segments[0] === 'db') go(link.overview());
    else await refresh();
  }

  // ------------------------------------------------------------------------------ database

  /** Title, counts, tabs and maintenance buttons shared by a database's pages. */
  function databaseHeader(db, info, current) {
    const tab = (text, href, name) => el('a', { href, 'aria-current': current === name ? 'page' : undefined }, text);
    return el('header', { class: 'page-header' },
      el('h2', {}, el('a', { href: link.overview() }, 'Databases'), ' / ', db),
      el('p', { class: 'muted' },
        info.doc_count + ' documents, ' + info.doc_del_count + ' deleted, update sequence ' + info.update_seq +
        ', ' + formatBytes(info.disk_size) + ' on disk' + (info.compact_running ? ' (compacting)' : '')),
      el('nav', { class: 'tabs', 'aria-label': 'Database' },
        tab('Documents', link.database(db), 'documents'),
        tab('New document', link.newDocument(db), 'new'),
        tab('Changes', link.changes(db), 'changes'),
        tab('Security', link.security(db), 'security')),
      el('div', { class: 'toolbar' },
        button('Compact', async () => {
          await postEmpty(dbUrl(db) + '/_compact');
          showMessage('Compaction of ' + db + ' started; see Status.');
        }),
        button('Clean up views', async () => {
          await postEmpty(dbUrl(db) + '/_view_cleanup');
          showMessage('View cleanup of ' + db + ' started.');
        }),
        button('Delete database', () => deleteDatabase(db), { class: 'danger' })));
  }

  /** The design documents, each with its name (without `_design/`) and view names. */
  async function loadDesignDocs(db) {
    const result = await getJson(withQuery(dbUrl(db) + '/_all_docs', {
      startkey: jsonText('_design/'), endkey: jsonText('_design0'), include_docs: true,
    }));
    return result.rows.filter((row) => row.doc).map((row) => ({
      name: row.id.slice('_design/'.length),
      views: row.doc.views && typeof row.doc.views === 'object' ? row.doc.views : {},
    }));
  }

  /** A select of all documents and every view; choosing one opens it. */
  function viewSelect(db, designDocs, selected) {
    const choices = [];
    const select = el('select', {
      onchange: () => {
        const choice = choices[select.selectedIndex];
        location.hash = choice ? link.view(db, choice.ddoc, choice.view) : link.database(db);
      },
    }, el('option', { value: '' }, 'All documents'));
    choices.push(null);
    for (const ddoc of designDocs) {
      const names = Object.keys(ddoc.views).sort();
      if (names.length === 0) continue;
      const group = el('optgroup', { label: ddoc.name });
      for (const view of names) {
        choices.push({ ddoc: ddoc.name, view });
        group.appendChild(el('option', { selected: Boolean(selected) && selected.ddoc === ddoc.name && selected.view === view }, view));
      }
      select.appendChild(group);
    }
    return field('View', select);
  }

  function jumpToDocumentForm(db) {
    const id = el('input', { type: 'text', required: true });
    return el('form', { class: 'inline', onsubmit: guarded(async () => go(link.document(db, id.value))) },
      field('Document ID', id), el('button', { type: 'submit' }, 'Open'));
  }

  /**
   * Pages go forward by start key: a page asks for one row more than it shows, and that row's
   * id starts the next page. `start` (a document id) is the page's first row, if not the first page.
   */
  async function renderDatabase(db, params) {
    const start = params.get('start');
    const [info, page, designDocs] = await Promise.all([
      getJson(dbUrl(db)),
      getJson(withQuery(dbUrl(db) + '/_all_docs', { limit: PAGE_SIZE + 1, startkey: start === null ? undefined : jsonText(start) })),
      loadDesignDocs(db),
    ]);
    const rows = page.rows.slice(0, PAGE_SIZE);
    const atFirstPage = start === null || page.offset === 0;
    const nextStart = page.rows.length > PAGE_SIZE ? page.rows[PAGE_SIZE].id : undefined;
    const tableRows = rows.map((row) => el('tr', {},
      el('td', {}, el('a', { href: link.document(db, row.id) }, row.id)),
      el('td', { class: 'mono' }, row.value.rev)));
    return el('section', {},
      databaseHeader(db, info, 'documents'),
      el('div', { class: 'controls' }, jumpToDocumentForm(db), viewSelect(db, designDocs, null)),
      table(['ID', 'Revision'], tableRows, 'No documents.'),
      el('nav', { class: 'pager', 'aria-label': 'Document pages' },
        button('← Previous', async () => go(link.database(db, await previousPageStart(db, start))), { disabled: atFirstPage }),
        el('span', {}, rowRange(page.offset, rows.length, page.total_rows)),
        button('Next →', async () => go(link.database(db, nextStart)), { disabled: nextStart === undefined })));
  }

  function rowRange(offset, count, total) {
    if (count === 0 || typeof offset !== 'number') return '';
    return 'Rows ' + (offset + 1) + '–' + (offset + count) + ' of ' + total;
  }

  /** The first id of the page before the one starting at `start` (undefined: the first page). */
  async function previousPageStart(db, start) {
    // Backwards from `start` (included when it still exists), and one row more than a page to
    // know whether the previous page is the first.
    const before = await getJson(withQuery(dbUrl(db) + '/_all_docs', {
      descending: true, startkey: jsonText(start), limit: PAGE_SIZE + 2,
    }));
    const rows = before.rows.filter((row) => row.id !== start);
    return rows.length > PAGE_SIZE ? rows[PAGE_SIZE - 1].id : undefined;
  }

  // ------------------------------------------------------------------------------ views

  function viewOptions(params, hasReduce) {
    return {
      reduce: hasReduce && params.get('reduce') !== 'false',
      group: params.get('group') === 'true',
      descending: params.get('descending') === 'true',
      limit: params.get('limit') || String(PAGE_SIZE),
      key: params.get('key') || '',
    };
  }

  async function renderView(db, ddocName, viewName, params) {
    const [info, designDocs] = await Promise.all([getJson(dbUrl(db)), loadDesignDocs(db)]);
    const ddoc = designDocs.find((d) => d.name === ddocName);
    const view = ddoc ? ddoc.views[viewName] : undefined;
    const hasReduce = Boolean(view && view.reduce);
    const options = viewOptions(params, hasReduce);
    return el('section', {},
      databaseHeader(db, info, 'documents'),
      el('div', { class: 'controls' }, viewSelect(db, designDocs, { ddoc: ddocName, view: viewName })),
      el('h3', {}, el('a', { href: link.document(db, '_design/' + ddocName) }, '_design/' + ddocName), ' / ', viewName),
      view ? viewSource(view) : null,
      viewOptionsForm(db, ddocName, viewName, options, hasReduce),
      await viewResult(db, ddocName, viewName, options, hasReduce));
  }

  function viewSource(view) {
    return el('details', {},
      el('summary', {}, 'Source'),
      el('h4', {}, 'Map'), el('pre', {}, String(view.map)),
      view.reduce ? [el('h4', {}, 'Reduce'), el('pre', {}, String(view.reduce))] : null);
  }

  function viewOptionsForm(db, ddocName, viewName, options, hasReduce) {
    const reduce = el('input', { type: 'checkbox', checked: options.reduce, disabled: !hasReduce });
    const group = el('input', { type: 'checkbox', checked: options.group, disabled: !hasReduce });
    const descending = el('input', { type: 'checkbox', checked: options.descending });
    const limit = el('input', { type: 'number', min: 0, value: options.limit, size: 5 });
    const key = el('input', { type: 'text', value: options.key, placeholder: 'JSON, e.g. "a" or [1, 2]' });
    return el('form', {
      class: 'inline options',
      onsubmit: guarded(async () => {
        if (key.value !== '') parseJsonInput(key.value, 'The key');
        go(link.view(db, ddocName, viewName, {
          reduce: hasReduce && !reduce.checked ? 'false' : undefined,
          group: group.checked ? 'true' : undefined,
          descending: descending.checked ? 'true' : undefined,
          limit: limit.value,
          key: key.value,
        }));
      }),
    },
      el('label', { class: 'check' }, reduce, ' Reduce'),
      el('label', { class: 'check' }, group, ' Group'),
      el('label', { class: 'check' }, descending, ' Descending'),
      field('Limit', limit), field('Key', key),
      el('button', { type: 'submit' }, 'Run'));
  }

  /** The rows of a view query, or the server's error in their place. */
  async function viewResult(db, ddocName, viewName, options, hasReduce) {
    let result;
    try {
      result = await getJson(withQuery(viewUrl(db, ddocName, viewName), {
        reduce: hasReduce ? String(options.reduce) : undefined,
        group: options.reduce && options.group ? 'true' : undefined,
        descending: options.descending ? 'true' : undefined,
        limit: options.limit,
        key: options.key,
      }));
    } catch (err) {
      return el('p', { class: 'message error', role: 'alert' }, describeError(err));
    }
    const reduced = hasReduce && options.reduce;
    const rows = result.rows.map((row) => el('tr', {},
      el('td', { class: 'mono' }, jsonText(row.key)),
      el('td', { class: 'mono' }, jsonText(row.value)),
      reduced ? null : el('td', {}, row.id === undefined ? '' : el('a', { href: link.document(db, row.id) }, row.id))));
    return el('div', {},
      result.total_rows === undefined ? null : el('p', { class: 'muted' }, 'Offset ' + result.offset + ' of ' + result.total_rows + ' rows.'),
      table(reduced ? ['Key', 'Value'] : ['Key', 'Value', 'Document'], rows, 'No rows.'));
  }

  // ------------------------------------------------------------------------------ documents

  /** Parses JSON a user typed; the error names what was being parsed. */
  function parseJsonInput(text, what) {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new Error(what + ' is not valid JSON: ' + err.message);
    }
  }

  function parseDocument(text) {
    const doc = parseJsonInput(text, 'The document');
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('A document must be a JSON object.');
    return doc;
  }

  function jsonEditor(value) {
    return el('textarea', { class: 'json', rows: 24, spellcheck: 'false', value: JSON.stringify(value, null, 2) });
  }

  async function renderNewDocument(db, params) {
    const info = await getJson(dbUrl(db));
    const id = params.get('id') || await freshUuid();
    const editor = jsonEditor(id ? { _id: id } : {});
    return el('section', {},
      databaseHeader(db, info, 'new'),
      el('form', {
        onsubmit: guarded(async () => {
          const doc = parseDocument(editor.value);
          // With an _id the document is put under it; without one the server chooses the id.
          const saved = typeof doc._id === 'string' && doc._id !== ''
            ? await sendJson('PUT', docUrl(db, doc._id), doc)
            : await sendJson('POST', dbUrl(db), doc);
          showMessage('Created ' + saved.id + ' at revision ' + saved.rev + '.');
          go(link.document(db, saved.id));
        }),
      }, field('Document (JSON)', editor), el('div', { class: 'toolbar' }, el('button', { type: 'submit' }, 'Create document'))));
  }

  async function freshUuid() {
    try {
      return (await getJson('/_uuids')).uuids[0];
    } catch (err) {
      return '';
    }
  }

  async function renderDocument(db, id, params) {
    const rev = params.get('rev') || undefined;
    const [info, doc] = await Promise.all([
      getJson(dbUrl(db)),
      getJson(withQuery(docUrl(db, id), { rev, revs_info: true, conflicts: true })).catch((err) => {
        if (err instanceof CouchError && err.status === 404 && !rev) return null;
        throw err;
      }),
    ]);
    if (doc === null) return missingDocument(db, id, info);
    // _revs_info and _conflicts are read-only fields: saving them back would be refused.
    const editable = Object.assign({}, doc);
    delete editable._revs_info;
    delete editable._conflicts;
    const editor = jsonEditor(editable);
    return el('section', {},
      databaseHeader(db, info, 'document'),
      el('h3', {}, id),
      rev ? el('p', { class: 'message info' }, 'Showing revision ' + rev + ', which may not be the current one. ', el('a', { href: link.document(db, id) }, 'Show the current revision')) : null,
      el('form', { onsubmit: guarded(() => saveDocument(db, id, editor)) },
        field('Document (JSON)', editor),
        el('div', { class: 'toolbar' },
          el('button', { type: 'submit' }, 'Save'),
          button('Reload', () => go(link.document(db, id))),
          button('Delete document', () => deleteDocument(db, id, doc._rev), { class: 'danger' }))),
      attachmentsSection(db, id, doc),
      revisionsSection(db, id, doc));
  }

  function missingDocument(db, id, info) {
    return el('section', {},
      databaseHeader(db, info, 'document'),
      el('h3', {}, id),
      el('p', {}, 'There is no document with this ID (it may have been deleted). ',
        el('a', { href: link.newDocument(db, id) }, 'Create it')));
  }

  async function saveDocument(db, id, editor) {
    const doc = parseDocument(editor.value);
    try {
      const saved = await sendJson('PUT', docUrl(db, id), doc);
      showMessage('Saved ' + id + ' at revision ' + saved.rev + '.');
      go(link.document(db, id));
    } catch (err) {
      if (!(err instanceof CouchError) || err.status !== 409) throw err;
      // The editor keeps the user's changes, so they can be copied before reloading.
      showMessage('Not saved: the document was changed since this revision was loaded (409 conflict). ' +
        'Reload to get the current revision, then make your changes again.', 'error');
    }
  }

  async function deleteDocument(db, id, rev) {
    if (!confirm('Delete the document "' + id + '"?')) return;
    await request('DELETE', withQuery(docUrl(db, id), { rev }));
    showMessage('Deleted ' + id + '.');
    go(link.database(db));
  }

  function attachmentsSection(db, id, doc) {
    const attachments = doc._attachments || {};
    const rows = Object.keys(attachments).sort().map((name) => el('tr', {},
      el('td', {}, el('a', { href: SERVER_ROOT + attachmentUrl(db, id, name) }, name)),
      el('td', {}, String(attachments[name].content_type || '')),
      el('td', { class: 'number' }, formatBytes(attachments[name].length)),
      el('td', {}, button('Delete', () => deleteAttachment(db, id, doc._rev, name), { class: 'danger', 'aria-label': 'Delete attachment ' + name }))));
    return el('section', {},
      el('h3', {}, 'Attachments'),
      table(['Name', 'Type', 'Size', ''], rows, 'No attachments.'),
      uploadForm(db, id, doc._rev));
  }

  function uploadForm(db, id, rev) {
    const file = el('input', { type: 'file', required: true });
    return el('form', {
      class: 'inline',
      onsubmit: guarded(async () => {
        const chosen = file.files[0];
        if (!chosen) throw new Error('Choose a file to upload.');
        await request('PUT', withQuery(attachmentUrl(db, id, chosen.name), { rev }), {
          body: chosen,
          headers: { 'Content-Type': chosen.type || 'application/octet-stream' },
        });
        showMessage('Uploaded ' + chosen.name + '.');
        go(link.document(db, id));
      }),
    }, field('Upload a file', file), el('button', { type: 'submit' }, 'Upload'));
  }

  async function deleteAttachment(db, id, rev, name) {
    if (!confirm('Delete the attachment "' + name + '"?')) return;
    await request('DELETE', withQuery(attachmentUrl(db, id, name), { rev }));
    showMessage('Deleted attachment ' + name + '.');
    go(link.document(db, id));
  }

  function revisionsSection(db, id, doc) {
    const revisionLink = (rev) => el('a', { href: link.document(db, id, rev), class: 'mono' }, rev);
    const history = (doc._revs_info || []).map((entry) => el('li', {},
      entry.status === 'available' ? revisionLink(entry.rev) : el('span', { class: 'mono' }, entry.rev),
      ' ', el('span', { class: 'muted' }, entry.rev === doc._rev ? 'shown' : entry.status)));
    const conflicts = (doc._conflicts || []).map((rev) => el('li', {}, revisionLink(rev)));
    return el('section', {},
      el('h3', {}, 'Revisions'),
      history.length > 0 ? el('ol', { class: 'revisions' }, history) : el('p', { class: 'muted' }, 'No revision history.'),
      conflicts.length > 0 ? [el('h3', {}, 'Conflicting revisions'), el('ul', {}, conflicts)] : null);
  }

  // ------------------------------------------------------------------------------ changes, security

  async function renderChanges(db) {
    const [info, changes] = await Promise.all([
      getJson(dbUrl(db)),
      getJson(withQuery(dbUrl(db) + '/_changes', { descending: true, limit: 20 })),
    ]);
    const rows = changes.results.map((change) => el('tr', {},
      el('td', { class: 'number' }, jsonText(change.seq)),
      el('td', {}, change.deleted ? change.id : el('a', { href: link.document(db, change.id) }, change.id)),
      el('td', { class: 'mono' }, change.changes.map((c) => c.rev).join(', ')),
      el('td', {}, change.deleted ? 'deleted' : '')));
    return el('section', {},
      databaseHeader(db, info, 'changes'),
      el('h3', {}, 'Last 20 changes'),
      table(['Sequence', 'ID', 'Revisions', ''], rows, 'No changes yet.'));
  }

  async function renderSecurity(db) {
    const [info, security] = await Promise.all([getJson(dbUrl(db)), getJson(dbUrl(db) + '/_security')]);
    const admins = security.admins || {};
    const members = security.members || {};
    const listInput = (values) => el('input', { type: 'text', value: (values || []).join(', '), placeholder: 'comma-separated' });
    const inputs = {
      adminNames: listInput(admins.names), adminRoles: listInput(admins.roles),
      memberNames: listInput(members.names), memberRoles: listInput(members.roles),
    };
    return el('section', {},
      databaseHeader(db, info, 'security'),
      el('p', { class: 'muted' }, 'Database admins may change design documents and this security object. ' +
        'With no members, anyone may read and write; otherwise only members and admins may.'),
      el('form', {
        onsubmit: guarded(async () => {
          // Keys the form does not show are kept as they are.
          const updated = Object.assign({}, security, {
            admins: Object.assign({}, admins, { names: splitList(inputs.adminNames.value), roles: splitList(inputs.adminRoles.value) }),
            members: Object.assign({}, members, { names: splitList(inputs.memberNames.value), roles: splitList(inputs.memberRoles.value) }),
          });
          await sendJson('PUT', dbUrl(db) + '/_security', updated);
          showMessage('Saved the security object of ' + db + '.');
          await refresh();
        }),
      },
        el('fieldset', {}, el('legend', {}, 'Admins'), field('Names', inputs.adminNames), field('Roles', inputs.adminRoles)),
        el('fieldset', {}, el('legend', {}, 'Members'), field('Names', inputs.memberNames), field('Roles', inputs.memberRoles)),
        el('div', { class: 'toolbar' }, el('button', { type: 'submit' }, 'Save security'))));
  }

  // ------------------------------------------------------------------------------ configuration

  function configUrl(section, key) {
    return '/_config/' + enc(section) + '/' + enc(key);
  }

  async function renderConfig() {
    const config = await getJson('/_config');
    const sections = Object.keys(config).sort().map((section) => el('section', { class: 'config-section' },
      el('h3', {}, '[' + section + ']'),
      table(['Key', 'Value', ''], Object.keys(config[section]).sort().map((key) => configRow(section, key, config[section][key])), 'Empty.')));
    return el('section', {}, el('h2', {}, 'Configuration'), addConfigForm(), sections);
  }

  function configRow(section, key, value) {
    const input = el('input', { type: 'text', value, class: 'mono wide', 'aria-label': section + ' ' + key });
    return el('tr', {},
      el('th', { scope: 'row', class: 'mono' }, key),
      el('td', {}, input),
      el('td', { class: 'actions' },
        button('Save', async () => {
          await sendJson('PUT', configUrl(section, key), input.value);
          showMessage('Saved [' + section + '] ' + key + '.');
          await afterConfigChange(section);
        }),
        button('Delete', async () => {
          if (!confirm('Delete [' + section + '] ' + key + '?')) return;
          await request('DELETE', configUrl(section, key));
          showMessage('Deleted [' + section + '] ' + key + '.');
          await afterConfigChange(section);
          await refresh();
        }, { class: 'danger' })));
  }

  /** A change of [admins] can end the admin party, or the current admin's password: sign-in may change. */
  async function afterConfigChange(section) {
    if (section === 'admins') await renderSession();
  }

  function addConfigForm() {
    const section = el('input', { type: 'text', required: true });
    const key = el('input', { type: 'text', required: true });
    const value = el('input', { type: 'text' });
    return el('form', {
      class: 'inline',
      onsubmit: guarded(async () => {
        await sendJson('PUT', configUrl(section.value, key.value), value.value);
        showMessage('Set [' + section.value + '] ' + key.value + '.');
        await afterConfigChange(section.value);
        await refresh();
      }),
    }, field('Section', section), field('Key', key), field('Value', value), el('button', { type: 'submit' }, 'Add'));
  }

  // ------------------------------------------------------------------------------ status, replicator, log

  /** Task fields shown in their own columns; the rest go to Details. */
  const TASK_COLUMNS = ['pid', 'type', 'progress', 'started_on', 'updated_on'];

  async function renderStatus() {
    const tasks = await getJson('/_active_tasks');
    const rows = tasks.map((task) => el('tr', {},
      el('td', {}, String(task.type)),
      el('td', {}, Object.keys(task).filter((k) => !TASK_COLUMNS.includes(k)).map((k) => el('div', {}, k + ': ' + jsonText(task[k])))),
      el('td', { class: 'number' }, task.progress === undefined ? '' : task.progress + '%'),
      el('td', {}, formatTime(task.started_on)),
      el('td', {}, formatTime(task.updated_on)),
      el('td', { class: 'mono' }, String(task.pid))));
    return el('section', {},
      el('h2', {}, 'Active tasks'),
      el('div', { class: 'toolbar' }, button('Refresh', refresh)),
      table(['Type', 'Details', 'Progress', 'Started', 'Updated', 'PID'], rows, 'No tasks are running.'));
  }

  async function renderReplicator() {
    // Local names are offered as suggestions; URLs of other servers can be typed.
    const names = await getJson('/_all_dbs').catch(() => []);
    const suggestions = el('datalist', { id: 'local-databases' }, names.map((name) => el('option', { value: name })));
    const source = el('input', { type: 'text', required: true, list: 'local-databases', class: 'wide' });
    const target = el('input', { type: 'text', required: true, list: 'local-databases', class: 'wide' });
    const continuous = el('input', { type: 'checkbox' });
    const createTarget = el('input', { type: 'checkbox' });
    const result = el('pre', { class: 'result', hidden: true });
    return el('section', {},
      el('h2', {}, 'Replicator'),
      el('p', { class: 'muted' }, 'Source and target are database names on this server or URLs such as http://host:5984/db.'),
      suggestions,
      el('form', {
        onsubmit: guarded(async () => {
          result.hidden = false;
          result.textContent = 'Replicating…';
          try {
            const answer = await sendJson('POST', '/_replicate', {
              source: source.value, target: target.value, continuous: continuous.checked, create_target: createTarget.checked,
            });
            result.textContent = JSON.stringify(answer, null, 2);
          } catch (err) {
            result.textContent = describeError(err);
            throw err;
          }
        }),
      },
        field('Source', source), field('Target', target),
        el('label', { class: 'check' }, continuous, ' Continuous'),
        el('label', { class: 'check' }, createTarget, ' Create the target'),
        el('div', { class: 'toolbar' }, el('button', { type: 'submit' }, 'Replicate'))),
      result);
  }

  async function renderLog(params) {
    const bytes = params.get('bytes') || String(DEFAULT_LOG_BYTES);
    const text = await (await request('GET', withQuery('/_log', { bytes }))).text();
    const bytesInput = el('input', { type: 'number', min: 0, value: bytes });
    return el('section', {},
      el('h2', {}, 'Log'),
      el('form', { class: 'inline', onsubmit: guarded(async () => go(withQuery('#/log', { bytes: bytesInput.value }))) },
        field('Bytes from the end', bytesInput), el('button', { type: 'submit' }, 'Show')),
      el('pre', { class: 'log' }, text || '(empty)'));
  }

  // ------------------------------------------------------------------------------ start

  window.addEventListener('hashchange', () => route());
  renderServerVersion();
  renderSession();
  route();
})();
