/**
 * The languages design documents may be written in: CouchDB 1.6's two query servers,
 * `javascript` (the default, also when `language` is absent or null) and `coffeescript`.
 *
 * A CoffeeScript function is compiled to JavaScript before it enters the sandbox, as CouchDB's
 * main-coffee.js compiles each function's source (`bare`) before evaluating it. Compiling only
 * parses and rewrites text: nothing of the design document runs here, and what it compiles to
 * runs in QuickJS like any JavaScript function. Modules for `require()` stay JavaScript in
 * both languages, as in CouchDB.
 */
import { createRequire } from 'node:module';
import { CouchError } from '../errors.js';

const LANGUAGES = ['javascript', 'coffeescript'] as const;
export type Language = (typeof LANGUAGES)[number];

/**
 * The language of a design document, or CouchDB's 500 `EXIT` for one this server does not run
 * (raised when its code would run, not when it is saved).
 */
export function languageOf(language: unknown): Language {
  const name = language ?? 'javascript';
  if (!(LANGUAGES as readonly unknown[]).includes(name)) {
    throw new CouchError(500, 'EXIT', `Language '${String(name)}' is not supported: only ${LANGUAGES.join(' and ')}`);
  }
  return name as Language;
}

/**
 * A design function's source as JavaScript. Anything but a string is left as it is: the
 * sandbox reports it as a function that does not compile.
 */
export function javaScriptSource(language: Language, source: unknown): unknown {
  if (language === 'javascript' || typeof source !== 'string') return source;
  let compiled = compiledCoffee.get(source);
  if (compiled === undefined) {
    try {
      compiled = coffee().compile(source, { bare: true });
    } catch (err) {
      const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      throw new CouchError(400, 'compilation_error', `${reason} (${source})`);
    }
    compiledCoffee.set(source, compiled);
    if (compiledCoffee.size > MAX_COMPILED) compiledCoffee.delete(compiledCoffee.keys().next().value!);
  }
  return compiled;
}

interface CoffeeScriptCompiler {
  compile(source: string, options: { bare: boolean }): string;
}

/** Sources compiled lately: a design document's functions are compiled again on every load. */
const compiledCoffee = new Map<string, string>();
const MAX_COMPILED = 256;

let compiler: CoffeeScriptCompiler | undefined;

/** The CoffeeScript compiler, loaded on first use (most servers never see a CoffeeScript design document). */
function coffee(): CoffeeScriptCompiler {
  compiler ??= createRequire(import.meta.url)('coffeescript') as CoffeeScriptCompiler;
  return compiler;
}
