/**
 * The JavaScript evaluated first in every sandbox context: CouchDB's query-server environment
 * (`emit`, `log`, `sum`, `isArray`, `toJSON`, `require`) and the batch runner the host drives.
 *
 * It evaluates to an object of entry points. The host keeps handles to them, so design-document
 * code, which shares the global object, can neither find nor replace them: the runner's state
 * lives in this closure. Nothing of the host is reachable from inside: the context has only
 * QuickJS's standard built-ins (no std/os modules, no module loader) and no host functions at all;
 * logs and emitted rows are buffered here and leave as one JSON string per batch.
 *
 * Semantics follow CouchDB's share/server (main.js, views.js, util.js):
 * - functions are given as source text, usually `function(doc) {...}` (an anonymous function
 *   "declaration" that CouchDB evaluates as an expression), with comments and whitespace around;
 * - a map function that throws skips that document for that view and logs
 *   "function raised exception ... with doc._id ..."; `throw 'fatal_error'` and
 *   `throw ['fatal', id, reason]` abort the batch;
 * - a reduce that throws logs the error and reduces to null;
 * - documents are deep-frozen before the map functions see them when a design document has more
 *   than one (CouchDB's recursivelySeal), so one view cannot alter what the next one sees;
 * - `require(path)` resolves `views/lib/...` (absolute from the root, `./` and `../` relative to
 *   the requiring module) and evaluates each module once per program.
 */
export const PRELUDE = String.raw`(function (global, evalWithRequire, evalPlain, evalGlobal) {
  "use strict";
  var JSONparse = JSON.parse, JSONstringify = JSON.stringify, freeze = Object.freeze;
  var nativeIsArray = Array.isArray, StringOf = String;
  var hasOwn = Object.prototype.hasOwnProperty, objectToString = Object.prototype.toString;
  var functionToString = Function.prototype.toString;
  var SyntaxErrorType = SyntaxError, ErrorType = Error;
  var InternalErrorType = typeof InternalError === "function" ? InternalError : null;

  var funs = [];        // compiled functions of the program
  var mapFuns = [];     // the ones a map batch runs, in result order
  var moduleCache = {}; // require() cache, per program
  var requireRoot = null;
  var rows = [];        // where emit() appends
  var logs = [];        // where log() appends
  var job = null;       // the batch in progress: survives an interrupt, so the host can resume it
  var ddocThis = null;  // \`this\` of design-document functions (CouchDB applies them to the ddoc)

  function isOutOfMemory(e) {
    return InternalErrorType !== null && e instanceof InternalErrorType && e.message === "out of memory";
  }

  function describe(e) {
    try {
      if (e instanceof ErrorType) return StringOf(e.name) + ": " + StringOf(e.message);
      var s = JSONstringify(e);
      if (typeof s === "string") return s;
    } catch (x) {
      if (isOutOfMemory(x)) throw x;
    }
    try { return StringOf(e); } catch (x) { if (isOutOfMemory(x)) throw x; return "[unprintable]"; }
  }

  // --- the query-server environment -------------------------------------------------------
  function emit(key, value) {
    rows[rows.length] = [key, value];
  }
  function log(message) {
    if (typeof message !== "string") message = JSONstringify(message);
    logs[logs.length] = StringOf(message);
  }
  function sum(values) {
    var rv = 0;
    for (var i in values) rv += values[i];
    return rv;
  }
  function isArray(obj) {
    return objectToString.call(obj) === "[object Array]";
  }
  global.emit = emit;
  global.log = log;
  global.sum = sum;
  global.isArray = isArray;
  global.toJSON = JSONstringify;

  // --- CommonJS require (CouchDB main.js: resolveModule + require) -------------------------
  function resolveModule(names, mod, root) {
    mod = mod || {};
    if (names.length === 0) {
      if (typeof mod.current !== "string") {
        throw ["error", "invalid_require_path", "Must require a JavaScript string, not: " + (typeof mod.current)];
      }
      return { current: mod.current, parent: mod.parent, id: mod.id, exports: {} };
    }
    var n = names.shift();
    if (n === "..") {
      if (!(mod.parent && mod.parent.parent)) {
        throw ["error", "invalid_require_path", "Object has no parent " + JSONstringify(mod.current)];
      }
      return resolveModule(names, {
        id: mod.id.slice(0, mod.id.lastIndexOf("/")),
        parent: mod.parent.parent,
        current: mod.parent.current
      });
    } else if (n === ".") {
      if (!mod.parent) {
        throw ["error", "invalid_require_path", "Object has no parent " + JSONstringify(mod.current)];
      }
      return resolveModule(names, { parent: mod.parent, current: mod.current, id: mod.id });
    } else if (root) {
      mod = { current: root };
    }
    if (mod.current === null || mod.current === undefined || typeof mod.current !== "object" ||
        mod.current[n] === undefined) {
      throw ["error", "invalid_require_path", "Object has no property \"" + n + "\". " + JSONstringify(mod.current)];
    }
    return resolveModule(names, { current: mod.current[n], parent: mod, id: mod.id ? mod.id + "/" + n : n });
  }

  function requireFrom(name, module) {
    module = module || {};
    var newModule = resolveModule(StringOf(name).split("/"), module.parent, requireRoot);
    if (!hasOwn.call(moduleCache, newModule.id)) {
      // an empty exports object first stops circular requires from filling the stack
      moduleCache[newModule.id] = {};
      var source = "function (module, exports, require) { " + newModule.current + "\n }";
      try {
        var func = evalGlobal("(" + source + ")");
        func.apply(global, [newModule, newModule.exports, function (name) { return requireFrom(name, newModule); }]);
      } catch (e) {
        if (isOutOfMemory(e)) throw e;
        throw ["error", "compilation_error", "Module require('" + name + "') raised error " + describe(e)];
      }
      moduleCache[newModule.id] = newModule.exports;
    }
    return moduleCache[newModule.id];
  }
  function require(name) { return requireFrom(name); }

  // --- compiling ---------------------------------------------------------------------------
  function compilationError(e, source) {
    if (isOutOfMemory(e)) return e;
    return ["error", "compilation_error", describe(e) + " (" + source + ")"];
  }

  function compileFunction(source, withRequire) {
    // util.js Couch.compileFunction: an empty source is no function at all.
    if (!source) throw ["error", "not_found", "missing function"];
    if (typeof source !== "string") {
      throw ["error", "compilation_error", "Expression does not eval to a function. (" + StringOf(source) + ")"];
    }
    var evaluate = withRequire
      ? function (code) { return evalWithRequire(require, code); }
      : function (code) { return evalPlain(code); };
    var fn, firstError;
    // 1. As an expression: "function(doc) {...}" with any comments and whitespace around it.
    try {
      fn = evaluate("(" + source + "\n)");
    } catch (e1) {
      if (!(e1 instanceof SyntaxErrorType)) throw compilationError(e1, source);
      firstError = e1;
      // 2. As a script whose completion value is the function: "var x = 1; (function(doc) {...})".
      try {
        fn = evaluate(source);
      } catch (e2) {
        if (!(e2 instanceof SyntaxErrorType)) throw compilationError(e2, source);
        // 3. "function(doc) {...};": the anonymous declaration with trailing semicolons.
        var stripped = source.replace(/[\s;]+$/, "");
        if (stripped === source) throw compilationError(firstError, source);
        try { fn = evaluate("(" + stripped + "\n)"); } catch (e3) { throw compilationError(firstError, source); }
      }
    }
    if (typeof fn !== "function") {
      throw ["error", "compilation_error", "Expression does not eval to a function. (" + source + ")"];
    }
    return fn;
  }

  // --- errors raised by functions (CouchDB views.js handleViewError) -------------------------
  function viewError(err, doc) {
    if (isOutOfMemory(err)) throw err;
    var fatal = false;
    try { fatal = err == "fatal_error"; } catch (x) { if (isOutOfMemory(x)) throw x; }
    if (fatal) throw ["error", "map_runtime_error", "function raised 'fatal_error'"];
    if (nativeIsArray(err) && err[0] === "fatal") throw err;
    var message = "function raised exception " + describe(err);
    if (doc) {
      var id;
      try { id = doc._id; } catch (x) { id = undefined; }
      message += " with doc._id " + id;
    }
    logs[logs.length] = message;
  }

  function seal(o) {
    freeze(o);
    if (nativeIsArray(o)) {
      for (var i = 0; i < o.length; i++) {
        var v = o[i];
        if (typeof v === "object" && v !== null) seal(v);
      }
    } else {
      for (var k in o) {
        var w = o[k];
        if (typeof w === "object" && w !== null) seal(w);
      }
    }
  }


  // --- errors of design-document functions (CouchDB main.js handleError, render.js renderError) ---
  // Turns anything a function threw into CouchDB's ["error", id, reason].
  function asCouchError(e) {
    if (isOutOfMemory(e)) throw e;
    if (nativeIsArray(e) && (e[0] === "error" || e[0] === "fatal") && e.length >= 3) return e;
    try {
      // loop.js handleError and render.js renderError test both members for truth.
      if (e !== null && typeof e === "object" && e.error && e.reason) {
        return ["error", StringOf(e.error), typeof e.reason === "string" ? e.reason : describe(e.reason)];
      }
      if (e instanceof ErrorType) return ["error", "render_error", "function raised error: " + describe(e)];
    } catch (x) {
      if (isOutOfMemory(x)) throw x;
    }
    return ["error", "unnamed_error", describe(e)];
  }
  // What a show, list or update function threw (CouchDB render.js renderError): errors that name
  // themselves keep their id, anything else (a string, a plain object) is a render_error.
  function asRenderError(e) {
    var c = asCouchError(e);
    return c[1] === "unnamed_error" ? ["error", "render_error", "function raised error: " + c[2]] : c;
  }

  // --- content negotiation: provides() and registerType() (CouchDB mimeparse.js, render.js) ---
  var mimesByKey = {}, keysByMime = {};
  function registerType() {
    var key = StringOf(arguments[0]), mimes = [];
    for (var i = 1; i < arguments.length; i++) { mimes[mimes.length] = StringOf(arguments[i]); keysByMime[arguments[i]] = key; }
    mimesByKey[key] = mimes;
  }
  registerType("all", "*/*");
  registerType("text", "text/plain; charset=utf-8", "txt");
  registerType("html", "text/html; charset=utf-8");
  registerType("xhtml", "application/xhtml+xml", "xhtml");
  registerType("xml", "application/xml", "text/xml", "application/x-xml");
  registerType("js", "text/javascript", "application/javascript", "application/x-javascript");
  registerType("css", "text/css");
  registerType("ics", "text/calendar");
  registerType("csv", "text/csv");
  registerType("rss", "application/rss+xml");
  registerType("atom", "application/atom+xml");
  registerType("yaml", "application/x-yaml", "text/yaml");
  registerType("multipart_form", "multipart/form-data");
  registerType("url_encoded_form", "application/x-www-form-urlencoded");
  registerType("json", "application/json", "text/x-json");

  var provided = [], providesUsed = false, responseContentType = null;
  function provides(type, fun) {
    providesUsed = true;
    provided[provided.length] = [StringOf(type), fun];
  }

  function parseMediaRange(range) {
    var parts = StringOf(range).split(";"), params = {};
    for (var i = 1; i < parts.length; i++) {
      var kv = parts[i].split("=");
      if (kv.length === 2) params[kv[0].trim()] = kv[1].trim();
    }
    var full = parts[0].trim();
    if (full === "*") full = "*/*";
    var ts = full.split("/");
    var q = parseFloat(params.q);
    if (!(q >= 0 && q <= 1)) q = 1;
    return { type: ts[0], subtype: ts[1] === undefined ? "*" : ts[1], params: params, q: q };
  }
  // [fitness, quality] of a mime type against parsed Accept ranges (mimeparse's fitnessAndQuality).
  function fitness(mime, ranges) {
    var t = parseMediaRange(mime), best = -1, bestQ = 0;
    for (var i = 0; i < ranges.length; i++) {
      var r = ranges[i];
      if ((r.type === t.type || r.type === "*" || t.type === "*") && (r.subtype === t.subtype || r.subtype === "*" || t.subtype === "*")) {
        var f = (r.type === t.type ? 100 : 0) + (r.subtype === t.subtype ? 10 : 0);
        for (var k in t.params) if (k !== "q" && r.params[k] === t.params[k]) f += 1;
        if (f > best) { best = f; bestQ = r.q; }
      }
    }
    return [best, bestQ];
  }
  // mimeparse's bestMatch as CouchDB's query server runs it: [[fitness, q], index, mime] entries
  // sorted by the default sort, which compares them as strings, and the last one wins if its q
  // is not 0. Ties and orders follow from that string order, as clients of CouchDB see them.
  function bestMatch(supported, header) {
    var ranges = StringOf(header).split(",").map(parseMediaRange), weighted = [];
    for (var i = 0; i < supported.length; i++) weighted.push([fitness(supported[i], ranges), i, supported[i]]);
    weighted.sort();
    var last = weighted[weighted.length - 1];
    return last && last[0][1] ? last[2] : "";
  }
  function headerOf(req, name) {
    var h = req && req.headers;
    if (!h) return undefined;
    if (h[name] !== undefined) return h[name];
    var lower = name.toLowerCase();
    for (var k in h) if (k.toLowerCase() === lower) return h[k];
    return undefined;
  }
  // render.js runProvides: a truthy "format" names the key (one never registered is a TypeError,
  // so a render_error); else Accept picks among the provided types, last provides() first (it
  // reverses its list for that, and only then); else the first provided. The refusal names the
  // Accept header if there is one, and lists the types in the list's order at that point.
  function runProvides(req) {
    var bestKey = null, accept = headerOf(req, "Accept"), format = req && req.query ? req.query.format : undefined;
    var order = provided, i;
    if (format) {
      bestKey = StringOf(format);
      responseContentType = mimesByKey[bestKey][0];
    } else if (accept) {
      order = provided.slice().reverse();
      var supported = [];
      for (i = 0; i < order.length; i++) {
        var ms = mimesByKey[order[i][0]];
        if (ms) supported = supported.concat(ms);
      }
      responseContentType = bestMatch(supported, accept);
      bestKey = keysByMime[responseContentType] || null;
    } else {
      bestKey = provided[0][0];
      responseContentType = mimesByKey[bestKey][0];
    }
    for (i = 0; i < order.length; i++) {
      if (order[i][0] === bestKey) return order[i][1]();
    }
    var types = order.map(function (p) { return mimesByKey[p[0]].join(", ") || p[0]; });
    throw ["error", "not_acceptable", "Content-Type " + (accept || bestKey) + " not supported, try one of: " + types.join(", ")];
  }
  // A Content-Type the function set itself stays (render.js's applyContentType).
  function applyContentType(resp) {
    if (responseContentType) {
      resp.headers = resp.headers || {};
      resp.headers["Content-Type"] = resp.headers["Content-Type"] || responseContentType;
    }
    return resp;
  }
  // A response is a string or an object; an array is neither (render.js typeOf), so no response.
  function wrapResponse(resp) {
    var type = typeof resp;
    if (type === "string") return { body: resp };
    if (type === "object" && resp !== null && !nativeIsArray(resp)) return resp;
    return null;
  }

  // --- the list API: start(), send(), getRow() (CouchDB render.js); also usable by shows ---
  var chunks = [], chunkBytes = 0, startResp = {}, started = false, listEnded = false;
  var rowBuffer = [], rowAt = 0, hostPull = null, lastFlush = 0;
  // How many of the chunks were sent before the last getRow(): render.js's getRow sends them
  // (blowChunks), so an error after it loses only what came later.
  var chunksAtRow = 0;
  var dateNow = Date.now;
  function resetList() {
    chunks = []; chunkBytes = 0; startResp = {}; started = false; listEnded = false;
    rowBuffer = []; rowAt = 0; provided = []; providesUsed = false; responseContentType = null;
    chunksAtRow = 0;
  }
  function start(resp) { startResp = resp || {}; }
  // What leaves at a flush: the response head the first time, then the chunks sent since.
  function takeOutput() {
    lastFlush = dateNow();
    var out = { chunks: chunks };
    if (!started) { out.start = applyContentType(startResp); started = true; }
    chunks = []; chunkBytes = 0; chunksAtRow = 0;
    return out;
  }
  function send(chunk) {
    // render.js send: chunk.toString(), so null and undefined are a TypeError (a render_error).
    var s = StringOf(chunk.toString());
    chunks[chunks.length] = s;
    chunkBytes += s.length;
    // A list that sends much between rows still streams: flush without asking for rows.
    if (hostPull !== null && chunkBytes >= 16384) hostPull(JSONstringify(takeOutput()), false);
  }
  function getRow() {
    if (rowAt < rowBuffer.length) {
      // Rows come in batches; output still leaves at least every 50 ms while the function works.
      if (chunks.length > 0 && dateNow() - lastFlush >= 50) hostPull(JSONstringify(takeOutput()), false);
      chunksAtRow = chunks.length;
      return rowBuffer[rowAt++];
    }
    if (listEnded || hostPull === null) return null;
    var text = hostPull(JSONstringify(takeOutput()), true);
    var rows = JSONparse(text);
    if (!nativeIsArray(rows) || rows.length === 0) { listEnded = true; rowBuffer = []; rowAt = 0; return null; }
    rowBuffer = rows; rowAt = 1;
    return rows[0];
  }
  global.registerType = registerType;
  global.provides = provides;
  global.start = start;
  global.send = send;
  global.getRow = getRow;

  // --- runners of design-document functions -----------------------------------------------
  // validate_doc_update(newDoc, oldDoc, userCtx, secObj) per [newDoc, oldDoc] item, with the
  // batch's [userCtx, secObj]: null (ok) or {error, reason}.
  function runValidates() {
    var j = job, items = j.items, n = items.length, out = j.out, fn = funs[j.fn], ctx = j.arg;
    for (var i = j.i; i < n; i++) {
      j.i = i;
      j.mark = logs.length;
      var a = items[i], r = null;
      try {
        fn.call(ddocThis, a[0], a[1], ctx[0], ctx[1]);
      } catch (e) {
        if (isOutOfMemory(e)) throw e;
        r = validationError(e);
      }
      out[i] = r;
    }
  }
  function validationError(e) {
    try {
      if (e !== null && typeof e === "object" && !(e instanceof ErrorType)) {
        if (e.forbidden !== undefined) return { error: "forbidden", reason: e.forbidden };
        if (e.unauthorized !== undefined) return { error: "unauthorized", reason: e.unauthorized };
      }
    } catch (x) {
      if (isOutOfMemory(x)) throw x;
    }
    var c = asCouchError(e);
    if (typeof e === "string") c = ["error", "unknown_error", e];
    return { error: StringOf(c[1]), reason: c[2], status: 500 };
  }
  // filters.<name>(doc, req) per document: whether it passes. An exception fails the batch.
  function runFilters() {
    var j = job, docs = j.items, n = docs.length, out = j.out, fn = funs[j.fn], req = j.arg;
    for (var i = j.i; i < n; i++) {
      j.i = i;
      j.mark = logs.length;
      var pass;
      try {
        pass = !!fn.call(ddocThis, docs[i], req);
      } catch (e) {
        throw asCouchError(e);
      }
      out[i] = pass;
    }
  }
  // shows.<name>(doc, req): the response object (CouchDB render.js runShow).
  function runShow(doc, req) {
    resetList();
    try {
      var resp = wrapResponse(funs[job.fn].call(ddocThis, doc, req) || {});
      if (resp === null) throw ["error", "render_error", "undefined response from show function"];
      if (chunks.length > 0) {
        resp.headers = resp.headers || {};
        for (var h in startResp) resp.headers[h] = startResp[h];
        resp.body = chunks.join("") + (resp.body || "");
        chunks = [];
      }
      if (providesUsed) {
        var p = wrapResponse(runProvides(req) || {}) || {};
        resp.body = (resp.body || "") + chunks.join("") + (p.body || "");
        resp = applyContentType(resp);
      }
      return resp;
    } catch (e) {
      // A show of a missing document that fails, however, is that document not being found.
      var docPath = false;
      try { docPath = req && nativeIsArray(req.path) && req.path.length > 5; } catch (x) { docPath = false; }
      if (doc === null && docPath) throw ["error", "not_found", "document not found"];
      throw asRenderError(e);
    } finally {
      resetList();
    }
  }
  // updates.<name>(doc, req): [doc or null, response] (CouchDB render.js runUpdate).
  function runUpdate(doc, req) {
    var result;
    try {
      result = funs[job.fn].call(ddocThis, doc, req);
    } catch (e) {
      throw asRenderError(e);
    }
    var resp = nativeIsArray(result) ? wrapResponse(result[1]) : null;
    if (resp === null) throw ["error", "render_error", "undefined response from update function"];
    var newDoc = result[0] === undefined ? null : result[0];
    return [newDoc, resp];
  }
  // rewrites(req), a function (CouchDB 2 render.js runRewrite): where to route, or what to answer.
  function runRewrite(req) {
    var result;
    try {
      result = funs[job.fn].call(ddocThis, req);
    } catch (e) {
      throw asCouchError(e);
    }
    if (!result) throw ["error", "rewrite_error", "rewrite function could not produce mapping"];
    if (typeof result === "string") result = { path: result };
    if (typeof result !== "object") throw ["error", "rewrite_error", "incomprehensible response from rewrite function"];
    if (!result.method) result.method = req.method;
    return result;
  }
  function runRender() {
    var j = job, a = j.items[0];
    j.out[0] = j.kind === 4 ? runShow(a[0], a[1]) : j.kind === 5 ? runUpdate(a[0], a[1]) : runRewrite(a[0]);
  }
  // lists.<name>(head, req): streams through hostPull; returns the output not yet flushed.
  function runList(fnIndex, headJson, reqJson, pull) {
    resetList();
    hostPull = pull;
    try {
      var req = JSONparse(reqJson);
      var tail = funs[fnIndex].call(ddocThis, JSONparse(headJson), req);
      if (providesUsed) tail = runProvides(req);
      if (!started) getRow();
      if (tail !== undefined && tail !== null) chunks[chunks.length] = StringOf(tail);
      var s = JSONstringify([logs, takeOutput()]);
      logs = [];
      return s;
    } catch (e) {
      var failure = asRenderError(e);
      // Once the response has started, what was sent before the last getRow() still goes out;
      // what was sent after it is lost with the error (render.js runList sends no chunks then).
      if (started && chunksAtRow > 0) {
        chunks = chunks.slice(0, chunksAtRow);
        try { hostPull(JSONstringify(takeOutput()), false); } catch (x) { if (isOutOfMemory(x)) throw x; }
      }
      throw failure;
    } finally {
      hostPull = null;
      resetList();
    }
  }

  // --- the batch runner ----------------------------------------------------------------------
  function runMaps() {
    var j = job, docs = j.items, n = docs.length, out = j.out;
    var fs = mapFuns, nf = fs.length, sealDocs = nf > 1;
    for (var i = j.i; i < n; i++) {
      j.i = i;
      j.mark = logs.length;
      var doc = docs[i], res = new Array(nf), f;
      if (sealDocs) {
        try { seal(doc); } catch (e) {
          viewError(e, doc);
          for (f = 0; f < nf; f++) res[f] = [];
          out[i] = res;
          continue;
        }
      }
      for (f = 0; f < nf; f++) {
        rows = [];
        try {
          // Rows leave as JSON: an undefined key (or array element) becomes null, an undefined
          // object member is left out, as CouchDB 1.6's query server sends them.
          fs[f](doc);
          res[f] = rows;
        } catch (e) {
          viewError(e, doc);
          res[f] = [];
        }
      }
      out[i] = res;
    }
    rows = [];
  }

  function runReduces() {
    var j = job, calls = j.items, n = calls.length, out = j.out, fn = funs[j.fn];
    for (var i = j.i; i < n; i++) {
      j.i = i;
      j.mark = logs.length;
      var c = calls[i], r;
      try {
        r = fn(c[0], c[1], c[2]);
        JSONstringify([r]); // a result that cannot be serialised fails here, as this call's error
      } catch (e) {
        viewError(e, null);
        r = null;
      }
      out[i] = r;
    }
  }

  // Serialises the whole batch at once (one JSON.stringify is several times cheaper than one per
  // document in QuickJS). If that fails (a cyclic or BigInt value, a throwing toJSON), the rows of
  // each function and document are serialised alone and the failing ones dropped and logged, as if
  // that map function had thrown for that document.
  function finish() {
    var j = job;
    try {
      return JSONstringify([logs, j.out]);
    } catch (e) {
      if (isOutOfMemory(e) || j.kind !== 0) throw e;
    }
    var out = j.out, docs = j.items, parts = new Array(out.length);
    for (var i = 0; i < out.length; i++) {
      var res = out[i], own = new Array(res.length);
      for (var f = 0; f < res.length; f++) {
        try {
          own[f] = JSONstringify(res[f]);
        } catch (e) {
          viewError(e, docs[i]);
          own[f] = "[]";
        }
      }
      parts[i] = "[" + own.join(",") + "]";
    }
    return "[" + JSONstringify(logs) + ",[" + parts.join(",") + "]]";
  }

  function run() {
    switch (job.kind) {
      case 0: runMaps(); break;
      case 1: runReduces(); break;
      case 2: runValidates(); break;
      case 3: runFilters(); break;
      default: runRender();
    }
    job.i = job.items.length;
    job.mark = logs.length; // an interrupt from here on (in finish) keeps every item's logs
  }

  // Whether a function's source mentions its first parameter (or arguments/eval) after the
  // parameter list: if not, a reduce cannot observe its keys and the host need not send them
  // (parsing [[key, id], ...] is most of the cost of a reduce call in QuickJS).
  function usesFirstParameter(fn) {
    var text;
    try { text = functionToString.call(fn); } catch (e) { return true; }
    var m = /^(?:async\s+)?(?:function\b[^(]*)?\(\s*([A-Za-z_$][\w$]*)\s*[,)]/.exec(text);
    if (!m) return true;
    var body = text.slice(m[0].length);
    var word = new RegExp("(^|[^\\w$])(" + m[1].replace(/\$/g, "\\$") + "|arguments|eval)($|[^\\w$])");
    return word.test(body);
  }

  return {
    load: function (specJson) {
      var spec = JSONparse(specJson);
      requireRoot = spec.requireRoot;
      ddocThis = spec.requireRoot;
      moduleCache = {};
      funs = [];
      for (var i = 0; i < spec.functions.length; i++) {
        var f = spec.functions[i];
        try {
          funs[i] = compileFunction(f.source, f.require);
        } catch (e) {
          if (nativeIsArray(e) && e[1] === "compilation_error") throw ["error", "compilation_error", e[2], i];
          throw e;
        }
      }
      mapFuns = [];
      for (var m = 0; m < spec.maps.length; m++) mapFuns[m] = funs[spec.maps[m]];
      logs = [];
      rows = [];
      var keys = [];
      for (var k = 0; k < funs.length; k++) keys[k] = usesFirstParameter(funs[k]);
      return JSONstringify({ usesKeys: keys });
    },
    // begin + run + finish in one call; after an interrupt the host resumes with rewind/run/finish.
    batch: function (kind, json, fn, argJson) {
      job = null;
      logs = [];
      rows = [];
      job = { kind: kind, items: JSONparse(json), fn: fn, arg: argJson ? JSONparse(argJson) : null, i: 0, mark: 0, out: [] };
      run();
      var s = finish();
      job = null;
      logs = [];
      return s;
    },
    run: run,
    list: function (fn, headJson, reqJson, pull) {
      job = null;
      logs = [];
      return runList(fn, headJson, reqJson, pull);
    },
    // After an interrupt: where the batch stopped (-1: before it started).
    position: function () {
      return job === null ? -1 : job.i;
    },
    // Before resuming at position(): forgets the logs of the interrupted item, which runs again.
    rewind: function () {
      logs.length = job.mark;
    },
    finish: function () {
      var s = finish();
      job = null;
      logs = [];
      return s;
    },
    abort: function () {
      var s = "[]";
      try { s = JSONstringify(logs); } catch (e) { s = "[]"; }
      job = null;
      logs = [];
      rows = [];
      return s;
    },
    // Classifies something thrown out of the runner: ["couch", id, reason] for CouchDB's
    // [error|fatal, id, reason] arrays, ["memory"] for out-of-memory, ["other", text] otherwise.
    classify: function (e) {
      if (isOutOfMemory(e)) return '["memory"]';
      if (nativeIsArray(e) && (e[0] === "error" || e[0] === "fatal")) {
        var out = ["couch", StringOf(e[0]), StringOf(e[1]), StringOf(e[2])];
        if (typeof e[3] === "number") out[4] = e[3];
        return JSONstringify(out);
      }
      return JSONstringify(["other", describe(e)]);
    }
  };
})`;

/** Direct-eval helpers, evaluated at global scope (sloppy), so user code sees only globals and `require`. */
export const EVAL_WITH_REQUIRE = '(function (require, __source__) { return eval(__source__); })';
export const EVAL_PLAIN = '(function (__source__) { return eval(__source__); })';
export const EVAL_GLOBAL = '(function (__source__) { return (0, eval)(__source__); })';
