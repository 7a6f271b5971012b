/**
 * Erlang terms in configuration values, as CouchDB 1.6 parses them (couch_util:parse_term):
 * `[httpd] config_whitelist`, `[compactions]` rules, handler tuples.
 */

/** Erlang terms as settings are written in them: atoms, strings and binaries (all `text`), integers, tuples, lists. */
export type ErlTerm =
  | { t: 'text'; v: string }
  | { t: 'int'; v: number }
  | { t: 'tuple'; items: ErlTerm[] }
  | { t: 'list'; items: ErlTerm[] };

export function termText(term: ErlTerm | undefined): string | undefined {
  return term?.t === 'text' ? term.v : undefined;
}

/** Parses one Erlang term (as couch_util:parse_term does); undefined when it is not valid. */
export function parseErlangTerm(text: string): ErlTerm | undefined {
  let i = 0;
  const ws = () => { while (i < text.length && /\s/.test(text[i]!)) i++; };
  const quoted = (quote: string): string => {
    let out = '';
    i++; // opening quote
    while (i < text.length && text[i] !== quote) {
      if (text[i] === '\\' && i + 1 < text.length) i++;
      out += text[i++];
    }
    if (text[i] !== quote) throw new Error('unterminated');
    i++;
    return out;
  };
  const seq = (close: string): ErlTerm[] => {
    const items: ErlTerm[] = [];
    ws();
    if (text[i] === close) { i++; return items; }
    for (;;) {
      items.push(value());
      ws();
      if (text[i] === ',') { i++; continue; }
      if (text[i] === close) { i++; return items; }
      throw new Error('bad sequence');
    }
  };
  const value = (): ErlTerm => {
    ws();
    const ch = text[i];
    if (ch === '{') { i++; return { t: 'tuple', items: seq('}') }; }
    if (ch === '[') { i++; return { t: 'list', items: seq(']') }; }
    if (ch === '"') return { t: 'text', v: quoted('"') };
    if (ch === "'") return { t: 'text', v: quoted("'") };
    if (text.startsWith('<<', i)) {
      i += 2;
      ws();
      const v = text[i] === '"' ? quoted('"') : '';
      ws();
      if (!text.startsWith('>>', i)) throw new Error('bad binary');
      i += 2;
      return { t: 'text', v };
    }
    const atom = /^[a-z][A-Za-z0-9_@]*/.exec(text.slice(i));
    if (atom) { i += atom[0].length; return { t: 'text', v: atom[0] }; }
    const int = /^-?\d+/.exec(text.slice(i));
    if (int) { i += int[0].length; return { t: 'int', v: Number(int[0]) }; }
    throw new Error('bad term');
  };
  try {
    const term = value();
    ws();
    if (text[i] === '.') { i++; ws(); }
    return i === text.length ? term : undefined;
  } catch {
    return undefined;
  }
}
