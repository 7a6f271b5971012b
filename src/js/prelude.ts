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
    if (typeof source !== "string" || source === "") {
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

  // CouchDB 1.6's query server refuses an undefined key (or array element of a key; object
  // members that are undefined are left out): that document then emits nothing for that view.
  // An undefined value stays null, so the common emit(key) keeps working.
  function encodable(v) {
    if (v === undefined) return false;
    if (typeof v !== "object" || v === null) return true;
    if (nativeIsArray(v)) {
      for (var i = 0; i < v.length; i++) if (!encodable(v[i])) return false;
      return true;
    }
    for (var k in v) {
      var m = v[k];
      if (m !== undefined && typeof m === "object" && m !== null && !encodable(m)) return false;
    }
    return true;
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
          fs[f](doc);
          for (var r = 0; r < rows.length; r++) {
            if (!encodable(rows[r][0])) throw "Cannot encode 'undefined' value as JSON";
          }
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
    if (job.kind === 0) runMaps(); else runReduces();
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
    batch: function (kind, json, fn) {
      job = null;
      logs = [];
      rows = [];
      job = { kind: kind, items: JSONparse(json), fn: fn, i: 0, mark: 0, out: [] };
      run();
      var s = finish();
      job = null;
      logs = [];
      return s;
    },
    run: run,
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
