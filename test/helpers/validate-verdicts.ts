/**
 * Runs a validate_doc_update source in the QuickJS sandbox over cases, for the unit tests that
 * hold a system design document's stored function to the rules the server enforces natively.
 */
import type { QueryServer } from '../../src/js/query-server.js';
import type { UserContext } from '../../src/auth/user-context.js';

export interface ValidationCase {
  newDoc: Record<string, unknown>;
  oldDoc?: Record<string, unknown>;
  userCtx: UserContext;
  secObj?: Record<string, unknown>;
}

/** The function's verdict on each case: undefined (allowed) or its forbidden reason. */
export async function sandboxVerdicts(qs: QueryServer, validateSource: string, cases: readonly ValidationCase[]): Promise<(string | undefined)[]> {
  const map = `function (doc) {
    var validate = ${validateSource};
    try { validate(doc.newDoc, doc.oldDoc || null, doc.userCtx, doc.secObj || {}); emit('ok', null); }
    catch (e) { emit('refused', e && e.forbidden ? e.forbidden : String(e)); }
  }`;
  const program = await qs.views({ id: '_design/check', views: { v: { map } } });
  try {
    const rows = await program.map(cases.map((c) => ({ _id: 'case', ...c })));
    return rows.map((perView) => {
      const [row] = perView[0]!;
      return row![0] === 'ok' ? undefined : String(row![1]);
    });
  } finally {
    program.dispose();
  }
}
