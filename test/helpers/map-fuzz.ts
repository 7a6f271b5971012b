/**
 * Random map functions inside the map interpreter's subset (a small grammar of its statements and
 * expressions), and random documents built to reach every corner (missing members, wrong types,
 * inherited names, odd numbers, unicode): the differential fuzzers of the interpreter
 * (test/unit/fast-map-fuzz.test.ts, fast-validate.test.ts) compare it with QuickJS over them.
 */

export type Random = () => number;

// ------------------------------------------------------------------------------ map functions

type Kind = 'param' | 'var' | 'let' | 'const' | 'counter';
/** What the generator knows of a value: a primitive (safe in arithmetic), or anything. */
type Type = 'scalar' | 'any';

interface Binding {
  name: string;
  kind: Kind;
  type: Type;
}

interface Scope {
  bindings: Binding[];
  /** A function's scope: where its `var`s go. */
  fn: boolean;
}

/** Where a statement is: which jumps are allowed, and how deep loops and callbacks nest. */
interface Context {
  loop: boolean;
  switch: boolean;
  loops: number;
  callbacks: number;
}

/** Reads of the document that usually succeed (the documents below mostly have these shapes). */
const DOC_SCALARS = ['doc.type', 'doc.n', 'doc.s', 'doc._id', 'doc["type"]', 'doc.s.length', 'doc.tags.length', 'doc.arr.length', 'doc.tags[0]', 'doc.s[0]', 'doc.obj.a', 'doc.obj["b"]', 'doc._id.length'];
/** Members the documents mostly lack (undefined). */
const DOC_ABSENT = ['doc.missing', 'doc.length', 'doc["é"]', 'doc["0"]', 'doc[""]'];
const DOC_VALUES = ['doc', 'doc.arr', 'doc.obj', 'doc.tags', 'doc.nested', 'doc.nested.a', 'doc.nested.a.b', 'doc.obj.c', 'doc.arr[0]', 'doc.arr[1]', 'doc["arr"]'];
/** Names a member may be read by (own data, array indexes, and names found on prototypes). */
const DOT_NAMES = ['a', 'b', 'c', 'n', 's', 'type', 'arr', 'obj', 'tags', 'nested', 'missing', 'length', 'constructor', 'toString', '__proto__', 'valueOf', 'hasOwnProperty', 'é', '$x', '_id'];
const COMPUTED_KEYS = ['"a"', '"b"', '"length"', '"0"', '"1"', '""', '"00"', '"constructor"', '"__proto__"', '"toString"', '"é"', '"a b"', '0', '1', '2', '-0', '1.5', '-1', 'null', 'true', 'undefined', 'NaN', '1e21'];
const DOC_FIELDS = ['type', 'n', 's', 'arr', 'obj', 'tags', 'nested', 'missing', '_id', '__proto__', 'constructor', 'length', 'toString', '0', 'é', ''];
const NUMBERS = ['0', '-1', '-2.5', '1', '2', '3', '5', '2.5', '.5', '10', '1e21', '1e-7', '9007199254740993', '0x10', '1e400', '123456789012', '0.1', '4294967296'];
const STRINGS = ['', 'a', 'b', 't1', 't2', '5', '0', '-0', '12', ' 7 ', 'length', 'constructor', '__proto__', 'é', 'e\u0301', '😀', '日本', 'A', 'z', 'true', 'null', '1e3', 'Infinity', '0x1f'];
const TEMPLATE_TEXT = ['', 'k:', '-', ' ', 'é', '😀', '/'];
const ARITHMETIC = ['+', '+', '-', '*', '/', '%'];
const COMPARISON = ['===', '!==', '==', '!=', '<', '<=', '>', '>='];
const ASSIGN = ['=', '=', '+=', '-=', '*=', '/=', '%='];

export class FunctionGenerator {
  private scopes: Scope[] = [];
  private names = 0;
  private budget = 0;
  /** How often this function takes a turn the interpreter gives up on (or that may throw). */
  private risk = 0;

  constructor(private readonly rnd: Random) {}

  private chance(p: number): boolean {
    return this.rnd() < p;
  }

  private risky(): boolean {
    return this.rnd() < this.risk;
  }

  private int(n: number): number {
    return Math.floor(this.rnd() * n);
  }

  private pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** Picks one of several weighted alternatives. */
  private choose(options: [number, () => string][]): string {
    let total = 0;
    for (const [w] of options) total += w;
    let at = this.rnd() * total;
    for (const [w, make] of options) {
      if (w > 0 && (at -= w) < 0) return make();
    }
    return options.filter(([w]) => w > 0).pop()![1]();
  }

  private fresh(prefix: string): string {
    return `${prefix}${this.names++}`;
  }

  private visible(type: Type = 'any'): Binding[] {
    return this.scopes.flatMap((s) => s.bindings).filter((b) => type === 'any' || b.type === 'scalar');
  }

  /** Locals an assignment may write (rarely the document itself: that would end most reads of it). */
  private assignable(): Binding[] {
    const withDoc = this.chance(0.05);
    return this.visible().filter((b) => (b.kind === 'var' || b.kind === 'let' || b.kind === 'param') && (withDoc || b.name !== 'doc'));
  }

  private declare(name: string, kind: Kind, type: Type): void {
    const scope = kind === 'var' ? [...this.scopes].reverse().find((s) => s.fn)! : this.scopes[this.scopes.length - 1]!;
    scope.bindings.push({ name, kind, type });
  }

  private withScope(fn: boolean, make: () => string): string {
    this.scopes.push({ bindings: [], fn });
    try {
      return make();
    } finally {
      this.scopes.pop();
    }
  }

  /** A whole map function. */
  map(): string {
    this.scopes = [];
    this.names = 0;
    this.budget = 6 + this.int(18);
    this.risk = this.pick([0.005, 0.02, 0.05, 0.1, 0.25]);
    return this.withScope(true, () => {
      this.declare('doc', 'param', 'any');
      const ctx: Context = { loop: false, switch: false, loops: 0, callbacks: 0 };
      const form = this.rnd();
      if (form < 0.08) return `(doc) => ${this.emitExpression()}`;
      const body = this.statements(ctx, 1 + this.int(4), 3) + ` ${this.emitStatement()}`;
      if (form < 0.2) return `doc => { ${body} }`;
      if (form < 0.27) {
        this.declare('extra', 'param', 'scalar');
        return `function (doc, extra) { ${body} }`;
      }
      if (form < 0.32) return `// generated\nfunction(doc) { /* body */ ${body} };\n`;
      return `function${this.functionName()}(doc) { ${body} }`;
    });
  }

  /**
   * Usually none; sometimes a name for a function expression (inside, it is the function: it
   * shadows `emit`, `NaN`, outer locals; the interpreter takes only functions that never use it).
   */
  private functionName(): string {
    if (this.chance(0.9)) return '';
    return ` ${this.chance(0.5) ? this.fresh('f') : this.pick(['emit', 'NaN', 'undefined', 'Infinity', ...this.visible().map((b) => b.name)])}`;
  }

  private statements(ctx: Context, count: number, depth: number): string {
    const out: string[] = [];
    for (let i = 0; i < count; i++) out.push(this.statement(ctx, depth));
    return out.join(' ');
  }

  /** `{ ... }` with its own scope. */
  private block(ctx: Context, depth: number): string {
    return this.withScope(false, () => `{ ${this.statements(ctx, 1 + this.int(3), depth)} }`);
  }

  /** The body of an `if` or a loop: a block, or one statement that declares nothing. */
  private body(ctx: Context, depth: number, uses: string[] = []): string {
    return this.withScope(false, () => {
      const first = this.uses(uses);
      if (this.chance(0.75) || depth <= 0) return this.chance(0.1) && !first ? '{}' : `{ ${first}${this.statements(ctx, 1 + this.int(3), depth)} }`;
      return first ? `{ ${first}}` : this.simpleStatement(ctx);
    });
  }

  /** Often, a statement that uses a name just bound (a loop's variable, a callback's parameters). */
  private uses(names: string[]): string {
    if (names.length === 0 || this.chance(0.4)) return '';
    const name = this.pick(names);
    return this.choose([
      [3, () => `emit(${name} ?? null, ${this.chance(0.5) ? name : `[typeof ${name}, ${this.expression(1)}]`}); `],
      [1, () => `emit([${name} ?? 0, ${this.expression(1, 'scalar')} ?? 0]); `],
      [1, () => `if (${name} ${this.pick(COMPARISON)} ${this.literal()}) ${this.emitStatement()} `],
      [1, () => { const v = this.fresh('v'); this.declare(v, 'let', 'any'); return `let ${v} = ${name}; `; }],
    ]);
  }

  private simpleStatement(ctx: Context): string {
    return this.choose([
      [5, () => this.emitStatement()],
      [2, () => this.assignmentStatement()],
      [ctx.loop || ctx.switch ? 1 : 0, () => 'break;'],
      [ctx.loop ? 1 : 0, () => 'continue;'],
      [0.3, () => 'return;'],
    ]);
  }

  private statement(ctx: Context, depth: number): string {
    this.budget--;
    if (depth <= 0 || this.budget <= 0) return this.chance(0.7) ? this.emitStatement() : this.assignmentStatement();
    const nested = depth - 1;
    const loopsLeft = ctx.loops < 2 && this.budget > 3;
    return this.choose([
      [8, () => this.emitStatement()],
      [6, () => this.declaration()],
      [4, () => this.assignmentStatement()],
      [4, () => `if (${this.condition()}) ${this.body(ctx, nested)}${this.chance(0.4) ? ` else ${this.chance(0.3) ? `if (${this.condition()}) ` : ''}${this.body(ctx, nested)}` : ''}`],
      [loopsLeft ? 2 : 0, () => this.forLoop(ctx, nested)],
      [loopsLeft ? 2 : 0, () => this.forEachLoop(ctx, nested, 'in')],
      [loopsLeft ? 2 : 0, () => this.forEachLoop(ctx, nested, 'of')],
      [loopsLeft ? 1.5 : 0, () => this.whileLoop(ctx, nested)],
      [loopsLeft ? 1.5 : 0, () => this.doWhile(ctx, nested)],
      [ctx.callbacks < 2 && ctx.loops < 2 ? 2.5 : 0, () => `${this.forEach(ctx, nested)};`],
      [2, () => this.switchStatement(ctx, nested)],
      [2.5, () => this.tryStatement(ctx, nested)],
      [1, () => this.block(ctx, nested)],
      [ctx.loop || ctx.switch ? 1.5 : 0, () => `if (${this.condition()}) break;`],
      [ctx.loop ? 1.5 : 0, () => `if (${this.condition()}) continue;`],
      [0.7, () => `if (${this.condition()}) return${this.chance(0.5) ? ` ${this.expression(1)}` : ''};`],
      [this.risk, () => `if (${this.condition()}) throw ${this.pick(['"stop"', '["error", "x"]', 'doc.type'])};`],
      [this.risk, () => this.temporalDeadZone()],
      [0.5, () => this.hoisted(ctx, nested)],
      [0.3, () => ';'],
      [0.8, () => `${this.logical()};`],
      [0.5, () => `(${this.expression(2)}, ${this.expression(1)});`],
    ]);
  }

  private emitStatement(): string {
    return `${this.emitExpression()};`;
  }

  private emitExpression(): string {
    const key = () => this.choose([
      [4, () => this.chance(0.7) ? `${this.expression(2, 'scalar')} ?? null` : this.expression(2, 'scalar')],
      [3, () => `[${Array.from({ length: 1 + this.int(3) }, () => this.chance(0.7) ? `${this.expression(1, 'scalar')} ?? 0` : this.expression(1, 'scalar')).join(', ')}]`],
      [1, () => this.expression(2)],
      [1, () => `{${this.objectMembers(1)}}`],
      [1, () => `[${this.docRead('any')}, [${this.expression(1)}, {a: ${this.expression(1)}}]]`],
      [this.risk * 3, () => `[${this.pick(['undefined', 'void 0', 'doc.missing'])}]`],
      [0.5, () => `{k: ${this.pick(['undefined', 'doc.missing', this.risky() ? '[doc.missing]' : '[null]', this.risky() ? '{d: [undefined]}' : '{d: undefined}'])}}`],
      [1, () => this.docRead('any')],
    ]);
    const value = () => this.choose([
      [4, () => this.expression(2)],
      [1, () => this.pick(['NaN', 'Infinity', '-Infinity', '-0', '0 / 0', '-1 / 0', 'null', 'undefined', '1e400', '-(0)', '[-0, NaN, -Infinity]', '{z: -0, i: Infinity}'])],
      [1, () => `[${this.expressions(this.int(4), 1)}]`],
      [1, () => `{${this.objectMembers(1)}}`],
      [1, () => this.docRead('any')],
    ]);
    const call = this.choose([
      [this.risk * 3, () => 'emit()'],
      [2, () => `emit(${key()})`],
      [8, () => `emit(${key()}, ${value()})`],
      [0.5, () => `emit(${key()}, ${value()}, ${this.expression(1)})`],
    ]);
    if (this.chance(0.12)) return `(${this.condition()}) && ${call}`;
    return call;
  }

  private expressions(count: number, depth: number, type: Type = 'any'): string {
    return Array.from({ length: count }, () => this.expression(depth, type)).join(', ');
  }

  private objectMembers(depth: number): string {
    const members: string[] = [];
    for (let i = this.int(4); i > 0; i--) {
      const key = this.pick(['a', 'b', 'c', '"x y"', '"length"', '"constructor"', 'toString', '0', '1', '10', '2.5', '"é"', '"-0"']);
      members.push(`${key}: ${this.expression(depth)}`);
    }
    const short = this.visible();
    if (short.length > 0 && this.chance(0.2)) members.push(this.pick(short).name);
    return members.join(', ');
  }

  private declaration(): string {
    const kind = this.pick(['var', 'var', 'let', 'let', 'const'] as const);
    const parts: string[] = [];
    const names: [string, Type][] = [];
    for (let i = this.chance(0.2) ? 2 : 1; i > 0; i--) {
      const name = this.fresh('v');
      const type: Type = this.chance(0.7) ? 'scalar' : 'any';
      const init = kind === 'const' || this.chance(0.85);
      parts.push(init ? `${name} = ${this.expression(2, type)}` : name);
      names.push([name, type]);
    }
    // Declared after the initialisers are written: they see only what is already in scope.
    for (const [name, type] of names) this.declare(name, kind, type);
    return `${kind} ${parts.join(', ')};`;
  }

  private assignmentStatement(): string {
    const targets = this.assignable();
    if (targets.length === 0) return this.emitStatement();
    return `${this.assignment(targets)};`;
  }

  private assignment(targets: Binding[]): string {
    const target = this.pick(targets);
    const name = target.name;
    if (target.type === 'any' && !this.risky()) return `${name} = ${this.expression(2)}`;
    return this.choose([
      [4, () => `${name} ${this.pick(ASSIGN)} ${this.expression(2, 'scalar')}`],
      [1, () => `${name}++`],
      [1, () => `${name}--`],
      [1, () => `++${name}`],
      [1, () => `--${name}`],
    ]);
  }

  /** A `let` read before its declaration (a ReferenceError in JavaScript), sometimes in a branch not taken. */
  private temporalDeadZone(): string {
    return this.withScope(false, () => {
      const name = this.fresh('t');
      const use = this.pick([`emit(${name})`, `${name} = 1`, `emit(1, typeof ${name})`, `${name}++`]);
      const guard = this.chance(0.5) ? `if (${this.condition()}) ` : '';
      return `{ ${guard}${use}; let ${name} = ${this.expression(1)}; emit("tdz", ${name}); }`;
    });
  }

  /** A `var` used before its declaration (hoisted: undefined). */
  private hoisted(ctx: Context, depth: number): string {
    const name = this.fresh('h');
    this.declare(name, 'var', 'scalar');
    return `emit("hoisted", [${name} === undefined, typeof ${name}]); ${this.chance(0.5) ? `if (${this.condition()}) ` : ''}{ var ${name} = ${this.expression(1, 'scalar')}; } ${this.statement(ctx, depth)}`;
  }

  private loopContext(ctx: Context): Context {
    return { loop: true, switch: false, loops: ctx.loops + 1, callbacks: ctx.callbacks };
  }

  private forLoop(ctx: Context, depth: number): string {
    return this.withScope(false, () => {
      const c = this.fresh('i');
      const limit = this.int(4);
      const kind = this.pick(['let', 'var', 'let'] as const);
      let head: string;
      if (this.chance(0.25)) {
        head = `${kind} ${c} = ${limit}; ${c} > 0; ${c} -= 1`;
      } else if (this.chance(0.2)) {
        const d = this.fresh('v');
        head = `${kind} ${c} = 0, ${d} = ${this.expression(1)}; ${c} < ${limit}; ${c}++, ${d} = [${d}]`;
        this.declare(d, kind, 'any');
      } else {
        head = `${kind} ${c} = 0; ${c} < ${limit}${this.chance(0.3) ? ` && ${this.condition()}` : ''}; ${this.pick([`${c}++`, `++${c}`, `${c} += 1`])}`;
      }
      this.declare(c, 'counter', 'scalar');
      return `for (${head}) ${this.body(this.loopContext(ctx), depth, [c])}`;
    });
  }

  private iterable(forIn: boolean): string {
    return this.choose([
      [4, () => this.pick(forIn ? ['doc', 'doc.obj', 'doc.arr', 'doc.nested', 'doc.s', 'doc.tags', 'doc.obj.c', 'doc.n', 'doc.missing'] : ['doc.arr', 'doc.tags', 'doc.s', 'doc._id', 'doc.nested.a.b'])],
      [2, () => `[${this.expressions(this.int(4), 1)}]`],
      [forIn ? 1 : 0, () => `{${this.objectMembers(1)}}`],
      [forIn ? 1 : 3, () => this.pick(['"ab😀"', '"e\\u0301"', '""', '"xyz"', '"😀\\ud83d"', '"𝒳😀"', 'doc.s', 'doc.type'])],
      [this.risk * 5, () => this.pick(forIn ? [this.expression(1)] : ['doc.obj', 'doc.n', 'doc.missing', 'doc.arr[0]', this.expression(1)])],
    ]);
  }

  private forEachLoop(ctx: Context, depth: number, word: 'in' | 'of'): string {
    return this.withScope(false, () => {
      const over = this.iterable(word === 'in');
      const type: Type = word === 'in' ? 'scalar' : 'any';
      const targets = this.assignable().filter((b) => b.type === 'any' || type === 'scalar');
      let left: string;
      let name: string;
      if (targets.length > 0 && this.chance(0.2)) {
        name = this.pick(targets).name;
        left = name;
      } else {
        const kind = this.pick(['let', 'const', 'var'] as const);
        name = this.fresh('k');
        this.declare(name, kind, type);
        left = `${kind} ${name}`;
      }
      return `for (${left} ${word} ${over}) ${this.body(this.loopContext(ctx), depth, [name])}`;
    });
  }

  private whileLoop(ctx: Context, depth: number): string {
    const c = this.fresh('w');
    const kind = this.pick(['let', 'var'] as const);
    const init = `${kind} ${c} = 0;`;
    this.declare(c, 'counter', 'scalar');
    const test = this.chance(0.3) ? `${c}++ < ${this.int(4)} && ${this.condition()}` : `${c}++ < ${this.int(4)}`;
    return `${init} while (${test}) ${this.body(this.loopContext(ctx), depth, [c])}`;
  }

  private doWhile(ctx: Context, depth: number): string {
    const c = this.fresh('w');
    const init = `let ${c} = 0;`;
    this.declare(c, 'counter', 'scalar');
    const body = this.withScope(false, () => `{ ${this.uses([c])}${this.statements(this.loopContext(ctx), 1 + this.int(2), depth)} }`);
    return `${init} do ${body} while (++${c} < ${this.int(4)}${this.chance(0.3) ? ` && ${this.condition()}` : ''});`;
  }

  /** `array.forEach(function (x, i, all) {...})` or with an arrow function (sometimes a `thisArg`). */
  private forEach(ctx: Context, depth: number): string {
    const target = this.choose([
      [4, () => this.pick(['doc.arr', 'doc.tags', 'doc.nested.a.b', 'doc["tags"]'])],
      [1, () => `[${this.expressions(this.int(4), 1)}]`],
      [1, () => `(${this.pick(['doc.tags || []', 'doc.arr || doc.tags', 'doc.tags ?? ["none"]'])})`],
      [this.risk * 4, () => this.pick(['doc.s', 'doc.obj', 'doc.arr[1]', `(${this.expression(1)})`])],
    ]);
    const inner: Context = { loop: false, switch: false, loops: ctx.loops + 1, callbacks: ctx.callbacks + 1 };
    const fn = this.withScope(true, () => {
      const params = Array.from({ length: this.int(5) }, () => this.fresh('p'));
      params.forEach((p, i) => this.declare(p, 'param', i === 1 ? 'scalar' : 'any'));
      if (this.chance(0.45)) {
        const head = params.length === 1 && this.chance(0.5) ? params[0]! : `(${params.join(', ')})`;
        if (this.chance(0.4)) return `${head} => ${this.chance(0.7) ? this.emitExpression() : this.expression(2)}`;
        return `${head} => { ${this.callbackBody(inner, depth, params)} }`;
      }
      return `function${this.functionName()} (${params.join(', ')}) { ${this.callbackBody(inner, depth, params)} }`;
    });
    return `${target}.forEach(${fn}${this.chance(0.1) ? `, ${this.expression(1)}` : ''})`;
  }

  /**
   * A callback's statements: often using its parameters, and `var`s that must start undefined on
   * every call (hoisted, declared without a value, assigned after they are read).
   */
  private callbackBody(ctx: Context, depth: number, params: string[]): string {
    let out = this.uses(params);
    if (this.chance(0.3)) {
      const v = this.fresh('v');
      this.declare(v, 'var', 'scalar');
      out += `emit("var", [${v} === undefined, typeof ${v}]); var ${v}${this.chance(0.3) ? '' : ` = ${this.expression(1, 'scalar')}`}; ${v} = ${this.expression(1, 'scalar')}; `;
    }
    return out + this.statements(ctx, 1 + this.int(3), depth);
  }

  private switchStatement(ctx: Context, depth: number): string {
    const discriminant = this.chance(0.6) ? this.pick(['doc.type', 'doc.n', 'doc.s', 'doc.arr', 'doc.missing']) : this.expression(1);
    const inner: Context = { ...ctx, switch: true };
    return this.withScope(false, () => {
      const cases: string[] = [];
      const count = 1 + this.int(4);
      const defaultAt = this.chance(0.6) ? this.int(count + 1) : -1;
      for (let i = 0; i <= count; i++) {
        const label = i === defaultAt ? 'default:' : `case ${this.chance(0.8) ? this.pick(['"t1"', '"t2"', '5', '"5"', '0', '-0', 'null', 'undefined', 'true', 'NaN', '""', '"a"']) : this.expression(1)}:`;
        const body: string[] = [];
        for (let j = this.int(3); j > 0; j--) body.push(this.statement(inner, depth));
        if (this.chance(0.5)) body.push('break;');
        cases.push(`${label} ${body.join(' ')}`);
      }
      return `switch (${discriminant}) { ${cases.join(' ')} }`;
    });
  }

  private tryStatement(ctx: Context, depth: number): string {
    const block = this.withScope(false, () => `{ ${this.statements(ctx, 1 + this.int(3), depth)} ${this.jump(ctx)}}`);
    const finalizer = () => this.withScope(false, () => `{ ${this.statements(ctx, 1 + this.int(2), depth)} ${this.jump(ctx)}}`);
    return this.choose([
      [2, () => `try ${block} finally ${finalizer()}`],
      [2, () => `try ${block} catch (e) { emit("caught", String(e)); }`],
      [1, () => `try ${block} catch { emit("caught"); } finally ${finalizer()}`],
      [1, () => `try ${block} catch (err) { log("caught " + err); ${this.block(ctx, depth)} }`],
    ]);
  }

  /** Sometimes a jump out of a `try` block or a `finally` (the finally's wins). */
  private jump(ctx: Context): string {
    if (this.chance(0.4)) return '';
    const guard = this.chance(0.5) ? `if (${this.condition()}) ` : '';
    return this.choose([
      [2, () => `${guard}return; `],
      [ctx.loop || ctx.switch ? 2 : 0, () => `${guard}break; `],
      [ctx.loop ? 2 : 0, () => `${guard}continue; `],
      [1, () => `${this.emitStatement()} `],
    ]);
  }

  private condition(): string {
    return this.choose([
      [3, () => this.expression(2, 'scalar')],
      [2, () => `${this.docRead('scalar')} ${this.pick(['===', '==', '!==', '<', '>=', '!='])} ${this.literal()}`],
      [1, () => `typeof ${this.docRead('any')} === ${this.pick(['"string"', '"number"', '"object"', '"undefined"', '"boolean"'])}`],
      [1, () => this.docRead('any')],
      [1, () => this.expression(2)],
    ]);
  }

  private logical(): string {
    const targets = this.assignable();
    const right = this.chance(0.5) ? this.emitExpression() : targets.length > 0 ? this.assignment(targets) : this.expression(1);
    return `(${this.condition()}) ${this.pick(['&&', '||', '??'])} (${right})`;
  }

  private literal(): string {
    return this.choose([
      [4, () => this.pick(NUMBERS)],
      [4, () => JSON.stringify(this.pick(STRINGS))],
      [1, () => this.pick(['true', 'false', 'null', 'undefined', 'NaN', 'Infinity'])],
    ]);
  }

  /** A read of the document: usually of a member it mostly has; sometimes any path. */
  private docRead(type: Type): string {
    if (!this.risky()) return this.pick(this.chance(0.1) ? DOC_ABSENT : type === 'scalar' || this.chance(0.5) ? DOC_SCALARS : DOC_VALUES);
    let out = 'doc';
    for (let i = 0, steps = 1 + this.int(3); i < steps; i++) {
      const field = this.pick(i === 0 ? DOC_FIELDS : DOT_NAMES);
      out += /^[a-z_$][\w$]*$/i.test(field) && this.chance(0.7) ? `.${field}` : `[${this.chance(0.5) ? JSON.stringify(field) : this.pick(COMPUTED_KEYS)}]`;
    }
    return out;
  }

  private atom(type: Type): string {
    const vars = this.visible(type);
    return this.choose([
      [3, () => this.literal()],
      [4, () => this.docRead(type)],
      [vars.length > 0 ? 4 : 0, () => this.pick(vars).name],
    ]);
  }

  expression(depth: number, type: Type = 'any'): string {
    if (depth <= 0 || this.chance(0.3)) return this.atom(type);
    // A risky expression may put any value anywhere (objects into arithmetic, members of undefined...).
    const operand: Type = this.risky() ? 'any' : 'scalar';
    const sub = (t: Type = operand) => this.expression(depth - 1, t);
    const targets = this.assignable();
    return this.choose([
      [3, () => this.atom(type)],
      [this.risky() ? 3 : 0, () => `(${sub('any')})${this.chance(0.5) ? `.${this.pick(DOT_NAMES)}` : `[${this.chance(0.7) ? this.pick(COMPUTED_KEYS) : sub()}]`}`],
      [2, () => `(${this.pick(['doc.obj', 'doc.nested', 'doc.arr', 'doc.tags'])} || {})${this.chance(0.5) ? `.${this.pick(['a', 'b', 'c', 'length'])}` : `[${this.pick(['"a"', '0', '1', '"length"'])}]`}`],
      [1, () => `(${this.pick(['doc.s', 'doc._id', 'doc.type'])} || "")${this.pick(['.length', '[0]', '[1]', '[2]', '["length"]'])}`],
      [1, () => `${this.pick(['!', 'typeof ', 'void ', '!!'])}(${sub('any')})`],
      [1, () => `${this.pick(['-', '+', '- -'])}(${sub()})`],
      [3, () => `(${sub()} ${this.pick(ARITHMETIC)} ${sub()})`],
      [3, () => `(${sub()} ${this.pick(COMPARISON)} ${sub()})`],
      [1, () => `(${sub('any')} ${this.pick(['===', '!=='])} ${sub('any')})`],
      [2, () => `(${sub(type)} ${this.pick(['&&', '||', '??'])} ${sub(type)})`],
      [1.5, () => `(${sub('any')} ? ${sub(type)} : ${sub(type)})`],
      [0.7, () => `(${sub('any')}, ${sub(type)})`],
      [1.5, () => `\`${this.pick(TEMPLATE_TEXT)}\${${sub()}}${this.pick(TEMPLATE_TEXT)}${this.chance(0.4) ? `\${${sub()}}` : ''}\``],
      [type === 'any' ? 1.5 : 0, () => `[${this.expressions(this.int(4), depth - 1)}]`],
      [type === 'any' ? 1.5 : 0, () => `({${this.objectMembers(depth - 1)}})`],
      [targets.length > 0 ? 1 : 0, () => `(${this.assignment(targets)})`],
    ]);
  }
}

// ------------------------------------------------------------------------------ documents

/** Written into the JSON text as they are (JSON.stringify cannot write them). */
const RAW_NUMBERS = ['-0', '1e400', '-1e400', '1E2', '1e-400', '0.0', '-0.0', '1.0e1', '9007199254740993', '1e21', '1e-7', '123456789012345678901234567890'];
const RAW_STRINGS = ['"\\ud83d"', '"\\udc00x"', '"a\\u0000b"', '"\\u2028\\u2029"', '"\\/"'];

export function documentGenerator(rnd: Random): (i: number) => string {
  const chance = (p: number) => rnd() < p;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]!;
  const raw = (text: string) => `\u0001${text}\u0001`;
  const number = () => pick([
    () => 0, () => 1, () => 5, () => -3, () => 2.5, () => 1 / 3, () => 1e21, () => 1e-7, () => 2 ** 53 + 2, () => -(2 ** 31),
    () => Math.floor(rnd() * 100) - 20, () => raw(pick(RAW_NUMBERS)),
  ])();
  const string = () => pick([
    '', 'a', 'b', 't1', 't2', '5', '12', '0', 'é', 'e\u0301', '😀', 'a😀b', '😀😀', '𝒳y', 'n\u0303o', '日本語', 'Ωmega', ' ', 'length', 'constructor', '__proto__', 'toString',
    'hasOwnProperty', 'A', 'z', 'item 1', '1e3', 'true', 'null', '\u00ad', '\ufeff',
  ]);
  const scalar = (): unknown => pick([number, string, string, () => null, () => true, () => false, () => raw(pick(RAW_STRINGS))])();
  const value = (depth: number): unknown => {
    if (depth <= 0 || chance(0.55)) return scalar();
    return chance(0.5) ? array(depth - 1) : object(depth - 1);
  };
  const array = (depth: number): unknown[] => Array.from({ length: Math.floor(rnd() * 5) }, () => value(depth));
  const object = (depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (let i = Math.floor(rnd() * 4); i > 0; i--) out[pick(['a', 'b', 'c', 'x y', 'é', '0', '1', '10', 'length', 'toString', 'valueOf', 'constructor', 'hasOwnProperty', ''])] = value(depth);
    return out;
  };
  /** Usually of the type a map expects, sometimes anything. */
  const field = (p: number, usual: () => unknown): [boolean, () => unknown] => [chance(p), () => (chance(0.9) ? usual() : value(2))];
  return (i) => {
    const doc: Record<string, unknown> = { _id: `d${i}`, _rev: `1-${(i * 7919).toString(16).padStart(32, '0')}` };
    const fields: [string, [boolean, () => unknown]][] = [
      ['type', field(0.95, () => pick(['t1', 't2', 't3', 'a', '', '5']))],
      ['n', field(0.95, number)],
      ['s', field(0.95, string)],
      ['arr', field(0.9, () => array(1))],
      ['tags', field(0.9, () => Array.from({ length: Math.floor(rnd() * 4) }, string))],
      ['obj', field(0.95, () => ({ ...object(1), ...(chance(0.7) ? { a: value(1) } : {}), ...(chance(0.5) ? { c: value(2) } : {}) }))],
      ['nested', field(0.9, () => ({ a: chance(0.9) ? { b: array(1) } : value(1) }))],
      ['length', field(0.05, number)],
      ['0', field(0.1, scalar)],
      ['constructor', field(0.04, scalar)],
      ['toString', field(0.04, scalar)],
      ['é', field(0.1, scalar)],
      ['', field(0.05, scalar)],
    ];
    for (const [name, [present, make]] of fields) if (present) doc[name] = make();
    let text = JSON.stringify(doc).replace(/"\\u0001(.*?)\\u0001"/g, (_, t: string) => t.replace(/\\\\/g, '\\').replace(/\\"/g, '"'));
    // Members JSON.stringify cannot write: `__proto__`, and a repeated member (the last one counts).
    if (chance(0.06)) text = text.replace(/^\{/, `{"__proto__":${pick(['{"polluted":true}', '[1,2]', '"str"', 'null', '5'])},`);
    if (chance(0.04)) text = text.replace(/^\{/, '{"type":"dup","n":1,');
    return text;
  };
}
