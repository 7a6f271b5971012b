/**
 * Map functions written in a small subset of JavaScript, evaluated by an interpreter over their
 * syntax tree instead of in QuickJS.
 *
 * Most map functions only read fields of the document and emit them:
 * `function(doc) { if (doc.type === 'post') emit([doc.author, doc.date], null); }`. In QuickJS
 * such a map costs ~10 µs per document, most of it parsing the document's JSON; here V8 parses
 * it and the tree is walked in well under a microsecond. This is not running the function in
 * the host: nothing of the source is ever evaluated by V8. The compiler accepts only syntax it
 * knows how to evaluate with JavaScript's exact semantics over JSON data, and the interpreter
 * touches nothing but that data:
 *
 * - names are the function's parameters and locals (`undefined`, `NaN`, `Infinity` aside; a
 *   named function expression's own name, which shadows them, is never used);
 *   the only global it may use is `emit`, and the only method `.forEach` with an inline function;
 * - properties are read only when they are the value's own data (JSON members, array items,
 *   `length`); a name that exists on a prototype (`constructor`, `toString`, `__proto__`...)
 *   is never read;
 * - operators that would convert an object to a primitive (calling `valueOf`/`toString`) are
 *   not applied to objects;
 * - nothing is assigned except local variables.
 *
 * Whenever a document takes the function somewhere this does not model (an exception such as
 * reading a member of `undefined`, a `throw`, an inherited name, a key holding `undefined`, or more
 * than the step, string or size budget), `map` answers undefined and the caller maps that
 * document in the sandbox, which gives CouchDB's behaviour (logs, timeouts, memory limit)
 * exactly. A function is fast or not as a whole; a document falls back as a whole.
 */
import { parse } from 'acorn';
import type {
  ArrowFunctionExpression, BlockStatement, Expression, ForInStatement, ForOfStatement, FunctionExpression, Identifier,
  Node, Pattern, Statement, SwitchCase, VariableDeclaration,
} from 'acorn';

export type Row = [unknown, unknown];

/** Iterations, callback calls and emits one document may take before it falls back. */
const MAX_STEPS = 1_000_000;
/** The longest string concatenation may build. */
const MAX_STRING = 1 << 20;
/** Upper bound (in JSON bytes) of the values one document may emit, and of one built value. */
const MAX_WEIGHT = 1 << 25;

/** Thrown to stop evaluating a document: the sandbox maps it instead. */
class Fallback {
  private constructor() {}
  static readonly signal = new Fallback();
}

function fallback(): never {
  throw Fallback.signal;
}

/** What a validator's `throw` threw (validate mode only): its verdict is read from it. */
class Thrown {
  constructor(readonly value: unknown) {}
}

/** The state of one document's evaluation. */
interface State {
  slots: unknown[];
  rows: Row[];
  steps: number;
  /** JSON bytes emitted so far (an upper bound). */
  emitted: number;
  maxEmitted: number;
  /** Upper bound of the JSON size of any value taken from the document: its own size. */
  docWeight: number;
  /** Sizes of the arrays and objects the function built. */
  built: Map<object, number>;
}

type Evaluate = (s: State) => unknown;
/** A statement: its completion. */
type Execute = (s: State) => Completion;
const enum Completion { Normal, Break, Continue, Return }

/** Marks a `let`/`const` binding that is not initialised yet (reading it is a ReferenceError). */
const UNINITIALISED: unique symbol = Symbol('uninitialised');

/** A binding's value, which must be initialised: using a `let` before its declaration throws. */
function initialised(value: unknown): unknown {
  if (value === UNINITIALISED) fallback();
  return value;
}

class Unsupported extends Error {}

function unsupported(node: Node): never {
  throw new Unsupported(node.type);
}

export class FastMapFunction {
  /** Upper bound of the JSON size of the rows the last `map` returned. */
  lastEmitted = 0;

  constructor(private readonly body: Execute, private readonly slotCount: number, private readonly docSlot: number) {}

  /**
   * The rows `doc` emits (`docBytes`: the length of its JSON text), or undefined when the
   * sandbox must map it (also when its rows may exceed `maxEmitted` bytes of JSON).
   */
  map(doc: unknown, docBytes: number, maxEmitted = MAX_WEIGHT): Row[] | undefined {
    const slots = new Array<unknown>(this.slotCount);
    if (this.docSlot >= 0) slots[this.docSlot] = doc;
    const s: State = { slots, rows: [], steps: 0, emitted: 0, maxEmitted: Math.min(maxEmitted, MAX_WEIGHT), docWeight: docBytes, built: new Map() };
    this.lastEmitted = 0;
    try {
      this.body(s);
    } catch {
      // Fallback.signal, or anything V8 itself threw (a string too long, a deep structure)
      return undefined;
    }
    this.lastEmitted = s.emitted;
    return s.rows;
  }
}

/** A validate_doc_update verdict as the sandbox's validationError gives it for `{forbidden}` and `{unauthorized}`. */
export interface ValidationVerdict {
  error: 'forbidden' | 'unauthorized';
  reason: unknown;
}

/**
 * A validate_doc_update function for the interpreter. It passes (null), or throws an object whose
 * own `forbidden` (else `unauthorized`) member is not undefined: that is its verdict, as the
 * sandbox reads it. Anything else it throws, or anything outside the subset, falls back.
 */
export class FastValidator {
  constructor(private readonly body: Execute, private readonly slotCount: number, private readonly params: number[]) {}

  /**
   * The verdict on one write, or undefined when the sandbox must judge it. `weight`: an upper
   * bound of the JSON size of the arguments.
   */
  validate(args: readonly [unknown, unknown, unknown, unknown], weight: number): ValidationVerdict | null | undefined {
    const slots = new Array<unknown>(this.slotCount);
    this.params.forEach((slot, i) => { slots[slot] = args[i]; });
    const s: State = { slots, rows: [], steps: 0, emitted: 0, maxEmitted: 0, docWeight: weight, built: new Map() };
    try {
      this.body(s);
      return null;
    } catch (err) {
      if (!(err instanceof Thrown)) return undefined; // Fallback.signal, or anything V8 threw
      const e = err.value;
      if (!isObject(e) || Array.isArray(e)) return undefined;
      const record = e as Record<string, unknown>;
      if (Object.hasOwn(record, 'forbidden') && record['forbidden'] !== undefined) return { error: 'forbidden', reason: record['forbidden'] };
      if (Object.hasOwn(record, 'unauthorized') && record['unauthorized'] !== undefined) return { error: 'unauthorized', reason: record['unauthorized'] };
      return undefined;
    }
  }
}

/**
 * The source of a map function as the sandbox compiles it (`prelude.ts` compileFunction's first
 * and third forms: a function expression, with comments, whitespace and trailing semicolons),
 * or undefined for any other form.
 */
export function functionNode(source: unknown): FunctionExpression | ArrowFunctionExpression | undefined {
  if (typeof source !== 'string' || source === '') return undefined;
  const stripped = source.replace(/[\s;]+$/, '');
  for (const text of stripped === source ? [source] : [source, stripped]) {
    let program;
    try {
      program = parse(`(${text}\n)`, { ecmaVersion: 2020, sourceType: 'script' });
    } catch {
      continue;
    }
    const [statement, ...rest] = program.body;
    if (rest.length > 0 || statement?.type !== 'ExpressionStatement') return undefined;
    const fn = statement.expression;
    return fn.type === 'FunctionExpression' || fn.type === 'ArrowFunctionExpression' ? fn : undefined;
  }
  return undefined;
}

/**
 * Names on the sandbox's (QuickJS's) Object, Array, String, Number and Boolean prototypes that
 * V8's lack: the interpreter treats them as inherited on every value, as it does V8's own names
 * (`key in value`). None with the QuickJS this project ships; a unit test compares the two
 * engines' prototypes, so a QuickJS that brings new names fails it until they are listed here.
 */
export const SANDBOX_ONLY_PROTOTYPE_NAMES: readonly string[] = [];

/**
 * A map function compiled for the interpreter, or undefined when its source uses anything
 * outside the subset. `inherited`: property names to treat as inherited on every value (the
 * names on the sandbox's prototypes that V8's lack).
 */
export function compileFastMap(source: unknown, inherited: ReadonlySet<string> = new Set()): FastMapFunction | undefined {
  return compileSource(source, (fn) => new Compiler(inherited).compileMap(fn));
}

/** A validate_doc_update function compiled for the interpreter, or undefined when outside the subset (no `emit` there). */
export function compileFastValidator(source: unknown, inherited: ReadonlySet<string> = new Set()): FastValidator | undefined {
  return compileSource(source, (fn) => new Compiler(inherited, 'validate').compileValidator(fn));
}

/** `compile` applied to the function a source holds; undefined for another form or syntax outside the subset. */
function compileSource<T>(source: unknown, compile: (fn: FunctionExpression | ArrowFunctionExpression) => T): T | undefined {
  const fn = functionNode(source);
  if (!fn || fn.async || fn.generator) return undefined;
  try {
    return compile(fn);
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
}

// ------------------------------------------------------------------------------------ scopes

interface Binding {
  slot: number;
  /** `name`: a named function expression's own name (the function itself, which is never used). */
  kind: 'var' | 'let' | 'const' | 'param' | 'name';
}

class Scope {
  readonly names = new Map<string, Binding>();
  constructor(readonly parent: Scope | undefined) {}

  lookup(name: string): Binding | undefined {
    for (let scope: Scope | undefined = this; scope; scope = scope.parent) {
      const found = scope.names.get(name);
      if (found) return found;
    }
    return undefined;
  }
}

// ------------------------------------------------------------------------------------ values

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null;

/** A value that JavaScript would convert without calling any function: anything but an object. */
function primitive(v: unknown): unknown {
  if (isObject(v)) fallback();
  return v;
}

/** Upper bound of a value's JSON size. */
function weightOf(v: unknown, s: State): number {
  if (typeof v === 'string') return v.length * 6 + 2;
  if (!isObject(v)) return 24;
  return s.built.get(v) ?? s.docWeight;
}

/** A property key as ToPropertyKey makes it from a primitive. */
function propertyKey(key: unknown): string {
  if (typeof key === 'string') return key;
  if (isObject(key)) fallback();
  return String(key);
}

const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;

function stringIndex(key: string, length: number): number {
  if (!ARRAY_INDEX.test(key)) return -1;
  const index = Number(key);
  return index < length ? index : -1;
}

/**
 * Whether a key holds no `undefined` (as the key or in an array; object members that are
 * undefined are left out anyway). Other keys are left to the sandbox, whose JSON makes them null.
 */
function encodable(v: unknown): boolean {
  if (v === undefined) return false;
  if (!isObject(v)) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!encodable(v[i])) return false;
    return true;
  }
  const record = v as Record<string, unknown>;
  for (const k in record) {
    const m = record[k];
    if (m !== undefined && isObject(m) && !encodable(m)) return false;
  }
  return true;
}

function step(s: State): void {
  if (++s.steps > MAX_STEPS) fallback();
}

type BinaryOperation = (a: unknown, b: unknown) => unknown;

function checkedString(v: unknown): unknown {
  if (typeof v === 'string' && v.length > MAX_STRING) fallback();
  return v;
}

const ARITHMETIC: Record<string, BinaryOperation> = {
  '+': (a, b) => checkedString((primitive(a) as string) + (primitive(b) as string)),
  '-': (a, b) => (primitive(a) as number) - (primitive(b) as number),
  '*': (a, b) => (primitive(a) as number) * (primitive(b) as number),
  '/': (a, b) => (primitive(a) as number) / (primitive(b) as number),
  '%': (a, b) => (primitive(a) as number) % (primitive(b) as number),
};

/** `==` without ToPrimitive: null/undefined never convert; an object against a primitive would. */
function looseEquals(a: unknown, b: unknown): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return a == b;
  if (isObject(a) || isObject(b)) {
    if (isObject(a) && isObject(b)) return a === b;
    fallback();
  }
  return a == b;
}

const BINARY: Record<string, BinaryOperation> = {
  ...ARITHMETIC,
  '===': (a, b) => a === b,
  '!==': (a, b) => a !== b,
  '==': looseEquals,
  '!=': (a, b) => !looseEquals(a, b),
  '<': (a, b) => (primitive(a) as number) < (primitive(b) as number),
  '<=': (a, b) => (primitive(a) as number) <= (primitive(b) as number),
  '>': (a, b) => (primitive(a) as number) > (primitive(b) as number),
  '>=': (a, b) => (primitive(a) as number) >= (primitive(b) as number),
};

// ------------------------------------------------------------------------------------ compiler

class Compiler {
  private slotCount = 0;
  /** Slots of `let`/`const` bindings per block (reset to UNINITIALISED on entry). */
  private readonly lexicalSlots = new Map<Node, number[]>();

  /** `validate`: a validator's compiler, where `throw` is its verdict and there is no `emit`. */
  constructor(private readonly inherited: ReadonlySet<string>, private readonly mode: 'map' | 'validate' = 'map') {}

  compileValidator(fn: FunctionExpression | ArrowFunctionExpression): FastValidator {
    const { run, params } = this.entryPoint(fn, 4);
    return new FastValidator(run, this.slotCount, params.slice(0, 4));
  }

  compileMap(fn: FunctionExpression | ArrowFunctionExpression): FastMapFunction {
    const { run, params } = this.entryPoint(fn, 1);
    return new FastMapFunction(run, this.slotCount, params[0] ?? -1);
  }

  /** The function the interpreter calls (its `var`s reset on entry), and its parameters' slots. */
  private entryPoint(fn: FunctionExpression | ArrowFunctionExpression, maxParams: number): { run: Execute; params: number[] } {
    const { enter, body, params } = this.compileFunction(fn, new Scope(undefined), maxParams);
    const run: Execute = (s) => {
      enter(s);
      return body(s);
    };
    return { run, params };
  }

  private newSlot(): number {
    return this.slotCount++;
  }

  /**
   * A function (the map function or a forEach callback): its parameters' slots, what entering
   * it resets (its `var`s to undefined, parameters beyond `maxParams` to undefined), and its body.
   */
  private compileFunction(fn: FunctionExpression | ArrowFunctionExpression, parent: Scope, maxParams: number): { enter: (s: State) => void; body: Execute; params: number[] } {
    if (fn.async || fn.generator) unsupported(fn);
    // `function name(...) {...}`: inside, `name` is the function (it shadows `emit`, `NaN`, outer
    // locals...), between the enclosing scope and the parameters.
    let outer = parent;
    if (fn.type === 'FunctionExpression' && fn.id) {
      outer = new Scope(parent);
      outer.names.set(fn.id.name, { slot: -1, kind: 'name' });
    }
    const scope = new Scope(outer);
    const params: number[] = [];
    for (const param of fn.params) {
      if (param.type !== 'Identifier' || scope.names.has(param.name)) unsupported(param);
      const slot = this.newSlot();
      scope.names.set(param.name, { slot, kind: 'param' });
      params.push(slot);
    }
    // `var` declarations anywhere in the body (not in nested functions) belong to the function.
    const vars: number[] = [];
    const hoist = (name: string) => {
      if (scope.names.has(name)) return;
      const slot = this.newSlot();
      scope.names.set(name, { slot, kind: 'var' });
      vars.push(slot);
    };
    if (fn.body.type === 'BlockStatement') this.collectVars(fn.body, hoist);
    const extraParams = params.slice(maxParams);
    const enter = (s: State) => {
      for (const slot of vars) s.slots[slot] = undefined;
      for (const slot of extraParams) s.slots[slot] = undefined;
    };
    let body: Execute;
    if (fn.body.type === 'BlockStatement') {
      body = this.block(fn.body, scope);
    } else {
      const value = this.expression(fn.body, scope);
      body = (s) => {
        value(s);
        return Completion.Return;
      };
    }
    return { enter, body, params };
  }

  private collectVars(node: Node, hoist: (name: string) => void): void {
    const visit = (n: Node | null | undefined): void => {
      if (!n) return;
      switch (n.type) {
        case 'VariableDeclaration': {
          const decl = n as VariableDeclaration;
          if (decl.kind === 'var') for (const d of decl.declarations) if (d.id.type === 'Identifier') hoist(d.id.name);
          return;
        }
        case 'BlockStatement': for (const st of (n as BlockStatement).body) visit(st); return;
        case 'IfStatement': { const i = n as Statement & { consequent: Statement; alternate?: Statement | null }; visit(i.consequent); visit(i.alternate); return; }
        case 'ForStatement': { const f = n as Statement & { init?: Node | null; body: Statement }; visit(f.init); visit(f.body); return; }
        case 'ForInStatement':
        case 'ForOfStatement': { const f = n as ForInStatement | ForOfStatement; visit(f.left); visit(f.body); return; }
        case 'WhileStatement':
        case 'DoWhileStatement': visit((n as Statement & { body: Statement }).body); return;
        case 'SwitchStatement': for (const c of (n as Statement & { cases: SwitchCase[] }).cases) for (const st of c.consequent) visit(st); return;
        case 'TryStatement': {
          const t = n as Statement & { block: BlockStatement; handler?: { body: BlockStatement } | null; finalizer?: BlockStatement | null };
          visit(t.block); visit(t.handler?.body); visit(t.finalizer);
          return;
        }
        default:
      }
    };
    visit(node);
  }

  /** Declares a block's `let`/`const` bindings in `scope`. */
  private declareLexical(statements: readonly Node[], scope: Scope, owner: Node): void {
    const slots: number[] = [];
    for (const st of statements) {
      if (st.type !== 'VariableDeclaration') continue;
      const decl = st as VariableDeclaration;
      if (decl.kind === 'var') continue;
      if (decl.kind !== 'let' && decl.kind !== 'const') unsupported(decl);
      for (const d of decl.declarations) {
        if (d.id.type !== 'Identifier') unsupported(d.id);
        if (scope.names.has(d.id.name)) unsupported(d);
        const slot = this.newSlot();
        scope.names.set(d.id.name, { slot, kind: decl.kind });
        slots.push(slot);
      }
    }
    if (slots.length > 0) this.lexicalSlots.set(owner, slots);
  }

  private resetLexical(owner: Node): ((s: State) => void) | undefined {
    const slots = this.lexicalSlots.get(owner);
    if (!slots) return undefined;
    return (s) => {
      for (const slot of slots) s.slots[slot] = UNINITIALISED;
    };
  }

  private block(node: BlockStatement, parent: Scope): Execute {
    const scope = new Scope(parent);
    this.declareLexical(node.body, scope, node);
    return this.sequence(node.body, scope, this.resetLexical(node));
  }

  private sequence(statements: readonly Statement[], scope: Scope, reset: ((s: State) => void) | undefined): Execute {
    const list = statements.map((st) => this.statement(st, scope));
    if (list.length === 1 && !reset) return list[0]!;
    return (s) => {
      reset?.(s);
      for (let i = 0; i < list.length; i++) {
        const c = list[i]!(s);
        if (c !== Completion.Normal) return c;
      }
      return Completion.Normal;
    };
  }

  private statement(node: Statement, scope: Scope): Execute {
    switch (node.type) {
      case 'EmptyStatement':
        return () => Completion.Normal;
      case 'ExpressionStatement': {
        const e = this.expression(node.expression, scope);
        return (s) => {
          e(s);
          return Completion.Normal;
        };
      }
      case 'BlockStatement':
        return this.block(node, scope);
      case 'VariableDeclaration':
        return this.declaration(node, scope);
      case 'IfStatement': {
        const test = this.expression(node.test, scope);
        const then = this.statement(node.consequent, scope);
        const otherwise = node.alternate ? this.statement(node.alternate, scope) : undefined;
        return (s) => (test(s) ? then(s) : otherwise ? otherwise(s) : Completion.Normal);
      }
      case 'ReturnStatement': {
        const value = node.argument ? this.expression(node.argument, scope) : undefined;
        return (s) => {
          value?.(s);
          return Completion.Return;
        };
      }
      case 'BreakStatement':
        if (node.label) unsupported(node);
        return () => Completion.Break;
      case 'ContinueStatement':
        if (node.label) unsupported(node);
        return () => Completion.Continue;
      case 'ThrowStatement': {
        // A map's throw: the sandbox logs what is thrown (or stops the build for 'fatal_error').
        if (this.mode === 'map') return () => fallback();
        // A validator's throw is its verdict (FastValidator.validate reads it).
        const argument = this.expression(node.argument, scope);
        return (s) => {
          throw new Thrown(argument(s));
        };
      }
      case 'ForStatement':
        return this.forStatement(node, scope);
      case 'WhileStatement': {
        const test = this.expression(node.test, scope);
        const body = this.statement(node.body, scope);
        return (s) => {
          while (test(s)) {
            step(s);
            const c = body(s);
            if (c === Completion.Break) break;
            if (c === Completion.Return) return c;
          }
          return Completion.Normal;
        };
      }
      case 'DoWhileStatement': {
        const test = this.expression(node.test, scope);
        const body = this.statement(node.body, scope);
        return (s) => {
          do {
            step(s);
            const c = body(s);
            if (c === Completion.Break) break;
            if (c === Completion.Return) return c;
          } while (test(s));
          return Completion.Normal;
        };
      }
      case 'ForInStatement':
      case 'ForOfStatement':
        return this.forEachStatement(node, scope);
      case 'SwitchStatement': {
        const discriminant = this.expression(node.discriminant, scope);
        const inner = new Scope(scope);
        this.declareLexical(node.cases.flatMap((c) => c.consequent), inner, node);
        const reset = this.resetLexical(node);
        const cases = node.cases.map((c) => ({ test: c.test ? this.expression(c.test, inner) : undefined, body: c.consequent.map((st) => this.statement(st, inner)) }));
        const defaultAt = cases.findIndex((c) => c.test === undefined);
        return (s) => {
          const value = discriminant(s);
          reset?.(s);
          let start = -1;
          for (let i = 0; i < cases.length; i++) {
            const test = cases[i]!.test;
            if (test && test(s) === value) {
              start = i;
              break;
            }
          }
          if (start < 0) start = defaultAt;
          if (start < 0) return Completion.Normal;
          for (let i = start; i < cases.length; i++) {
            for (const st of cases[i]!.body) {
              const c = st(s);
              if (c === Completion.Break) return Completion.Normal;
              if (c !== Completion.Normal) return c;
            }
          }
          return Completion.Normal;
        };
      }
      case 'TryStatement': {
        // Anything the block would throw makes the document fall back, so a handler never runs.
        const block = this.block(node.block, scope);
        if (node.handler?.param && node.handler.param.type !== 'Identifier') unsupported(node.handler);
        const finalizer = node.finalizer ? this.block(node.finalizer, scope) : undefined;
        const tried: Execute = !finalizer ? block : (s) => {
          const c = block(s);
          const f = finalizer(s);
          return f !== Completion.Normal ? f : c;
        };
        if (this.mode === 'map') return tried;
        // A validator's throw there would reach a handler or a finalizer: the sandbox judges it.
        return (s) => {
          try {
            return tried(s);
          } catch (err) {
            if (err instanceof Thrown) fallback();
            throw err;
          }
        };
      }
      default:
        return unsupported(node);
    }
  }

  private declaration(node: VariableDeclaration, scope: Scope): Execute {
    const inits: [number, Evaluate | undefined][] = node.declarations.map((d) => {
      if (d.id.type !== 'Identifier') unsupported(d.id);
      const binding = scope.lookup(d.id.name);
      if (!binding) unsupported(d);
      return [binding.slot, d.init ? this.expression(d.init, scope) : undefined];
    });
    const lexical = node.kind !== 'var';
    return (s) => {
      for (const [slot, init] of inits) {
        if (init) s.slots[slot] = init(s);
        else if (lexical) s.slots[slot] = undefined;
      }
      return Completion.Normal;
    };
  }

  private forStatement(node: Statement & { type: 'ForStatement' }, parent: Scope): Execute {
    const scope = new Scope(parent);
    let init: Execute | Evaluate | undefined;
    if (node.init?.type === 'VariableDeclaration') {
      this.declareLexical([node.init], scope, node);
      init = this.declaration(node.init, scope);
    } else if (node.init) {
      init = this.expression(node.init, scope);
    }
    const reset = this.resetLexical(node);
    const test = node.test ? this.expression(node.test, scope) : undefined;
    const update = node.update ? this.expression(node.update, scope) : undefined;
    const body = this.statement(node.body, scope);
    return (s) => {
      reset?.(s);
      init?.(s);
      for (; !test || test(s); update?.(s)) {
        step(s);
        const c = body(s);
        if (c === Completion.Break) break;
        if (c === Completion.Return) return c;
      }
      return Completion.Normal;
    };
  }

  /** `for (x in value)` and `for (x of value)`. */
  private forEachStatement(node: ForInStatement | ForOfStatement, parent: Scope): Execute {
    if (node.type === 'ForOfStatement' && node.await) unsupported(node);
    const scope = new Scope(parent);
    let target: number;
    if (node.left.type === 'VariableDeclaration') {
      const [d, ...more] = node.left.declarations;
      if (!d || more.length > 0 || d.init || d.id.type !== 'Identifier') unsupported(node.left);
      if (node.left.kind !== 'var') this.declareLexical([node.left], scope, node);
      const binding = scope.lookup(d.id.name);
      if (!binding) unsupported(node.left);
      target = binding.slot;
    } else {
      target = this.assignable(node.left, scope);
    }
    // The right side sees the loop's own `let`/`const` binding, uninitialised.
    const value = this.expression(node.right, scope);
    const reset = this.resetLexical(node);
    const body = this.statement(node.body, scope);
    const items = node.type === 'ForInStatement' ? forInKeys : forOfItems;
    return (s) => {
      reset?.(s);
      const list = items(value(s));
      for (let i = 0; i < list.length; i++) {
        step(s);
        s.slots[target] = list[i];
        const c = body(s);
        if (c === Completion.Break) break;
        if (c === Completion.Return) return c;
      }
      return Completion.Normal;
    };
  }

  /** The slot of a local variable an assignment may write. */
  private assignable(node: Pattern | Expression, scope: Scope): number {
    if (node.type !== 'Identifier') return unsupported(node);
    const binding = scope.lookup(node.name);
    if (!binding || binding.kind === 'const' || binding.kind === 'name') unsupported(node);
    return binding.slot;
  }

  private expression(node: Expression | Pattern | Node, scope: Scope): Evaluate {
    switch (node.type) {
      case 'Literal': {
        const lit = node as Expression & { type: 'Literal'; value?: unknown; regex?: unknown; bigint?: string };
        if (lit.regex !== undefined || lit.bigint !== undefined) unsupported(node);
        const v = lit.value;
        return () => v;
      }
      case 'Identifier':
        return this.identifier(node as Identifier, scope);
      case 'TemplateLiteral': {
        const t = node as Expression & { type: 'TemplateLiteral' };
        const quasis = t.quasis.map((q) => q.value.cooked);
        if (quasis.some((q) => q === null || q === undefined)) unsupported(node);
        const parts = t.expressions.map((e) => this.expression(e, scope));
        return (s) => {
          let out = quasis[0]!;
          for (let i = 0; i < parts.length; i++) out += String(primitive(parts[i]!(s))) + quasis[i + 1]!;
          return checkedString(out);
        };
      }
      case 'ArrayExpression': {
        const elements = (node as Expression & { type: 'ArrayExpression' }).elements.map((e) => {
          if (!e || e.type === 'SpreadElement') return unsupported(node);
          return this.expression(e, scope);
        });
        return (s) => {
          const out = new Array<unknown>(elements.length);
          let weight = 2;
          for (let i = 0; i < elements.length; i++) {
            const v = elements[i]!(s);
            out[i] = v;
            weight += weightOf(v, s) + 1;
          }
          if (weight > MAX_WEIGHT) fallback();
          s.built.set(out, weight);
          return out;
        };
      }
      case 'ObjectExpression': {
        const members = (node as Expression & { type: 'ObjectExpression' }).properties.map((p) => {
          if (p.type !== 'Property' || p.kind !== 'init' || p.method || p.computed) return unsupported(p);
          const key = p.key.type === 'Identifier' ? p.key.name : p.key.type === 'Literal' && (typeof p.key.value === 'string' || typeof p.key.value === 'number') ? String(p.key.value) : unsupported(p.key);
          // `__proto__: value` in a literal sets the prototype.
          if (key === '__proto__') unsupported(p);
          return [key, this.expression(p.value, scope)] as const;
        });
        return (s) => {
          const out: Record<string, unknown> = {};
          let weight = 2;
          for (const [key, value] of members) {
            const v = value(s);
            out[key] = v;
            weight += key.length * 6 + 3 + weightOf(v, s) + 1;
          }
          if (weight > MAX_WEIGHT) fallback();
          s.built.set(out, weight);
          return out;
        };
      }
      case 'MemberExpression': {
        const m = node as Expression & { type: 'MemberExpression' };
        if (m.optional || m.object.type === 'Super') unsupported(node);
        const object = this.expression(m.object, scope);
        if (!m.computed) {
          if (m.property.type !== 'Identifier') unsupported(m.property);
          const name = m.property.name;
          return (s) => this.member(object(s), name);
        }
        const property = this.expression(m.property, scope);
        return (s) => {
          const base = object(s);
          return this.member(base, propertyKey(property(s)));
        };
      }
      case 'UnaryExpression': {
        const u = node as Expression & { type: 'UnaryExpression' };
        const arg = this.expression(u.argument, scope);
        switch (u.operator) {
          case '!': return (s) => !arg(s);
          case '-': return (s) => -(primitive(arg(s)) as number);
          case '+': return (s) => +(primitive(arg(s)) as number);
          case 'typeof': return (s) => typeof arg(s);
          case 'void': return (s) => void arg(s);
          default: return unsupported(node);
        }
      }
      case 'BinaryExpression': {
        const b = node as Expression & { type: 'BinaryExpression' };
        const op = BINARY[b.operator];
        if (!op || b.left.type === 'PrivateIdentifier') return unsupported(node);
        const left = this.expression(b.left, scope);
        const right = this.expression(b.right, scope);
        return (s) => op(left(s), right(s));
      }
      case 'LogicalExpression': {
        const l = node as Expression & { type: 'LogicalExpression' };
        const left = this.expression(l.left, scope);
        const right = this.expression(l.right, scope);
        switch (l.operator) {
          case '&&': return (s) => left(s) && right(s);
          case '||': return (s) => left(s) || right(s);
          case '??': return (s) => left(s) ?? right(s);
        }
        return unsupported(node);
      }
      case 'ConditionalExpression': {
        const c = node as Expression & { type: 'ConditionalExpression' };
        const test = this.expression(c.test, scope);
        const then = this.expression(c.consequent, scope);
        const otherwise = this.expression(c.alternate, scope);
        return (s) => (test(s) ? then(s) : otherwise(s));
      }
      case 'SequenceExpression': {
        const parts = (node as Expression & { type: 'SequenceExpression' }).expressions.map((e) => this.expression(e, scope));
        return (s) => {
          let v: unknown;
          for (const part of parts) v = part(s);
          return v;
        };
      }
      case 'AssignmentExpression': {
        const a = node as Expression & { type: 'AssignmentExpression' };
        const slot = this.assignable(a.left, scope);
        const value = this.expression(a.right, scope);
        if (a.operator === '=') {
          return (s) => {
            const next = value(s);
            initialised(s.slots[slot]);
            return (s.slots[slot] = next);
          };
        }
        const op = ARITHMETIC[a.operator.slice(0, -1)];
        if (!op) return unsupported(node);
        return (s) => {
          const current = initialised(s.slots[slot]);
          return (s.slots[slot] = op(current, value(s)));
        };
      }
      case 'UpdateExpression': {
        const u = node as Expression & { type: 'UpdateExpression' };
        const slot = this.assignable(u.argument, scope);
        const delta = u.operator === '++' ? 1 : -1;
        const prefix = u.prefix;
        return (s) => {
          const old = +(primitive(initialised(s.slots[slot])) as number);
          s.slots[slot] = old + delta;
          return prefix ? old + delta : old;
        };
      }
      case 'CallExpression':
        return this.call(node as Expression & { type: 'CallExpression' }, scope);
      default:
        return unsupported(node);
    }
  }

  private identifier(node: Identifier, scope: Scope): Evaluate {
    const binding = scope.lookup(node.name);
    if (binding) {
      if (binding.kind === 'name') unsupported(node);
      const slot = binding.slot;
      if (binding.kind === 'let' || binding.kind === 'const') return (s) => initialised(s.slots[slot]);
      return (s) => s.slots[slot];
    }
    switch (node.name) {
      case 'undefined': return () => undefined;
      case 'NaN': return () => NaN;
      case 'Infinity': return () => Infinity;
      default: return unsupported(node);
    }
  }

  /** A property of a value, when it is the value's own data; anything inherited falls back. */
  private member(base: unknown, key: string): unknown {
    if (base === null || base === undefined) fallback(); // a TypeError in JavaScript
    if (typeof base === 'object') {
      if (Object.hasOwn(base, key)) return (base as Record<string, unknown>)[key];
      if (key in base || this.inherited.has(key)) fallback();
      return undefined;
    }
    if (typeof base === 'string') {
      if (key === 'length') return base.length;
      const index = stringIndex(key, base.length);
      if (index >= 0) return base[index];
    }
    if (key in Object(base) || this.inherited.has(key)) fallback();
    return undefined;
  }

  private call(node: Expression & { type: 'CallExpression' }, scope: Scope): Evaluate {
    if (node.optional || node.arguments.some((a) => a.type === 'SpreadElement')) unsupported(node);
    const callee = node.callee;
    if (callee.type === 'Identifier' && callee.name === 'emit' && !scope.lookup('emit')) {
      if (this.mode === 'validate') unsupported(node);
      const args = node.arguments.map((a) => this.expression(a, scope));
      const [key, value] = args;
      const rest = args.slice(2);
      return (s) => {
        const k = key ? key(s) : undefined;
        const v = value ? value(s) : undefined;
        for (const r of rest) r(s);
        step(s);
        if (!encodable(k)) fallback();
        s.emitted += weightOf(k, s) + weightOf(v, s);
        if (s.emitted > s.maxEmitted) fallback();
        s.rows.push([k, v]);
        return undefined;
      };
    }
    if (callee.type === 'MemberExpression' && !callee.computed && !callee.optional && callee.property.type === 'Identifier' && callee.property.name === 'forEach') {
      const [fnNode, thisArg, ...more] = node.arguments;
      if (!fnNode || more.length > 0 || (fnNode.type !== 'FunctionExpression' && fnNode.type !== 'ArrowFunctionExpression')) return unsupported(node);
      if (callee.object.type === 'Super') return unsupported(node);
      const array = this.expression(callee.object, scope);
      const thisValue = thisArg ? this.expression(thisArg, scope) : undefined;
      const { enter, body, params } = this.compileFunction(fnNode, scope, 3);
      const [itemSlot, indexSlot, arraySlot] = params;
      return (s) => {
        const list = array(s);
        // Arrays of JSON data or built here have no own `forEach`; anything else is not modelled.
        if (!Array.isArray(list) || Object.hasOwn(list, 'forEach')) fallback();
        thisValue?.(s);
        const length = list.length;
        for (let i = 0; i < length; i++) {
          step(s);
          enter(s);
          if (itemSlot !== undefined) s.slots[itemSlot] = list[i];
          if (indexSlot !== undefined) s.slots[indexSlot] = i;
          if (arraySlot !== undefined) s.slots[arraySlot] = list;
          body(s);
        }
        return undefined;
      };
    }
    return unsupported(node);
  }
}

/** `for (k in value)`: the keys JavaScript enumerates (plain data has no inherited enumerable ones). */
function forInKeys(value: unknown): unknown[] {
  if (value === null || value === undefined) return [];
  const keys: string[] = [];
  for (const k in Object(value) as object) keys.push(k);
  return keys;
}

/** `for (x of value)` over an array or a string (by code point); anything else throws in JavaScript. */
function forOfItems(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') return [...value];
  return fallback();
}
