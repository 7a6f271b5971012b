/**
 * The requests CouchDB 1.6's browser test suite makes through couch.js, for the scripts ported
 * in test/http/couchdb16-*.test.ts: option encoding, and the database and document calls every
 * script starts with.
 */
import assert from 'node:assert/strict';
import type { Client, Response } from './http.js';

type Doc = Record<string, any>;

/** couch.js encodeOptions: key, keys, startkey, endkey and open_revs (not "all") go as JSON. */
export function encodeOptions(options?: Record<string, unknown>): string {
  if (!options) return '';
  const parts: string[] = [];
  for (const [name, raw] of Object.entries(options)) {
    const value = ['key', 'keys', 'startkey', 'endkey'].includes(name) || (name === 'open_revs' && raw !== 'all')
      ? JSON.stringify(raw) : String(raw);
    parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

/** couch.js's database and document calls, made with `c`. */
export function couchJs(c: Client) {
  const E = encodeURIComponent;
  return {
    /** deleteDb() then createDb(), as every script starts. */
    async freshDb(name: string): Promise<void> {
      await c.del(`/${E(name)}`);
      const r = await c.put(`/${E(name)}`);
      assert.equal(r.status, 201, r.text);
    },

    /**
     * CouchDB.prototype.open: the document, null when 404 (anything else fails the test). The id
     * is encoded whole, so a design document's is redirected, which the browser follows.
     */
    async open(db: string, id: string, options?: Record<string, unknown>): Promise<Doc | null> {
      const r = await c.get(`/${E(db)}/${E(id)}${encodeOptions(options)}`, { followRedirects: true });
      if (r.status === 404) return null;
      assert.equal(r.status, 200, r.text);
      return r.body;
    },

    /** CouchDB.prototype.deleteDoc: DELETE ?rev=, the document then carries the deletion. */
    async deleteDoc(db: string, doc: Doc): Promise<Response> {
      const r = await c.del(`/${E(db)}/${E(doc._id)}?rev=${doc._rev}`);
      if (r.status < 300) {
        doc._rev = r.body.rev;
        doc._deleted = true;
      }
      return r;
    },
  };
}
