/**
 * `/_utils`: the built-in administration web interface, static files from `share/www`, served
 * as CouchDB 1.6 serves Futon: `/_utils` redirects to `/_utils/`, a directory serves its
 * `index.html`, anything outside the document root or missing is mochiweb's plain-text 404.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { raw, type Reply } from './reply.js';
import type { Route } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { absoluteUrl } from './common.js';

/** share/www at the project root (this file runs from dist/src/api), without a trailing separator. */
const DOCUMENT_ROOT = resolve(fileURLToPath(new URL('../../../share/www/', import.meta.url)));

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/** couch_httpd_misc_handlers:handle_utils_dir_req's caching headers. */
const UTILS_CACHING = { 'Cache-Control': 'private, must-revalidate' };

export const utilsRoutes: Route[] = [
  {
    shape: 'global', name: '_utils', access: 'public',
    methods: {
      GET: async (req, p, svc) => serve(req, p.rest, svc),
      HEAD: async (req, p, svc) => serve(req, p.rest, svc),
    },
  },
];

async function serve(req: Request, rest: readonly string[], svc: Services): Promise<Reply> {
  // The router drops a trailing slash: only the raw path tells `/_utils` from `/_utils/`.
  if (rest.length === 0 && !req.rawPath.endsWith('/')) return raw(301, '', 'text/plain', { Location: absoluteUrl(req, `${req.rawPath}/`, svc.config) });
  const file = await findFile(rest);
  // mochiweb's serve_file answers what it cannot serve with its own plain-text 404 (not_found/1),
  // carrying the handler's caching headers as any other answer of it.
  if (!file) return raw(404, 'Not found.', 'text/plain', UTILS_CACHING);
  return raw(200, await readFile(file), CONTENT_TYPES[extname(file)] ?? 'application/octet-stream', UTILS_CACHING);
}

/** The file a path names under the document root (a directory's index.html), if any. */
async function findFile(rest: readonly string[]): Promise<string | undefined> {
  if (rest.some((segment) => segment.includes('\0'))) return undefined;
  const path = resolve(DOCUMENT_ROOT, join(...rest));
  if (path !== DOCUMENT_ROOT && !path.startsWith(DOCUMENT_ROOT + sep)) return undefined;
  const info = await stat(path).catch(() => undefined);
  if (!info) return undefined;
  if (info.isFile()) return path;
  if (!info.isDirectory()) return undefined;
  const index = join(path, 'index.html');
  return (await stat(index).catch(() => undefined))?.isFile() ? index : undefined;
}
