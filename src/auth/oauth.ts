/**
 * OAuth 1.0 (RFC 5849) request signatures, as CouchDB 1.6's couch_httpd_oauth accepts them:
 * HMAC-SHA1 (and PLAINTEXT) over the request, with consumer and token secrets and the token's
 * user from config (`[oauth_consumer_secrets]`, `[oauth_token_secrets]`, `[oauth_token_users]`)
 * or, with `[couch_httpd_oauth] use_users_db`, from user documents' `oauth` field
 * (`{consumer_keys: {key: secret}, tokens: {token: secret}}`).
 *
 * A timestamp more than `timestamp_window` seconds (default 600) from now is refused, and a
 * nonce is accepted once per consumer and timestamp while its window lasts (replays refused).
 * A request whose signature does not verify is treated as carrying no OAuth credentials.
 */
import { createHmac } from 'node:crypto';
import type { Config } from '../config/config.js';
import { HTTPD_OAUTH_SECTION, OAUTH_CONSUMER_SECRETS, OAUTH_TOKEN_SECRETS, OAUTH_TOKEN_USERS } from '../couchdb-names.js';
import { constantTimeEqual } from './password.js';
import type { UserContext } from './user-context.js';
import type { AuthRequest, UserCreds } from './authenticator.js';

export type OAuthUserLookup = (name: string) => Promise<UserCreds | undefined>;

/** RFC 3986 percent-encoding, as OAuth requires (stricter than encodeURIComponent). */
export function oauthEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The parameters of an `Authorization: OAuth ...` header; undefined when it is not OAuth. */
export function oauthHeaderParams(header: string | undefined): Map<string, string> | undefined {
  if (!header || !/^\s*oauth\s/i.test(header)) return undefined;
  const params = new Map<string, string>();
  for (const m of header.replace(/^\s*oauth\s+/i, '').matchAll(/([A-Za-z0-9_.~-]+)\s*=\s*"([^"]*)"/g)) {
    try {
      params.set(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!));
    } catch {
      return undefined;
    }
  }
  return params;
}

/** The signature base string of RFC 5849 section 3.4.1. */
export function signatureBase(method: string, baseUrl: string, params: readonly [string, string][]): string {
  const normalized = params
    .filter(([k]) => k !== 'oauth_signature' && k !== 'realm')
    .map(([k, v]) => [oauthEncode(k), oauthEncode(v)] as const)
    .sort(([ka, va], [kb, vb]) => (ka < kb ? -1 : ka > kb ? 1 : va < vb ? -1 : va > vb ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return [method.toUpperCase(), oauthEncode(baseUrl), oauthEncode(normalized)].join('&');
}

export function hmacSha1Signature(base: string, consumerSecret: string, tokenSecret: string): string {
  return createHmac('sha1', `${oauthEncode(consumerSecret)}&${oauthEncode(tokenSecret)}`).update(base).digest('base64');
}

interface OAuthSecrets {
  consumerSecret: string;
  tokenSecret: string;
  user: string;
}

export class OAuthVerifier {
  /** Nonces seen, by `consumer:timestamp:nonce`, with when they may be forgotten (ms). */
  private readonly nonces = new Map<string, number>();

  constructor(
    private readonly config: Config,
    private readonly lookup: OAuthUserLookup,
    /** Every user document, for `use_users_db`. */
    private readonly usersDocs: () => AsyncIterable<Record<string, unknown>>,
  ) {}

  async authenticate(req: AuthRequest): Promise<UserContext | undefined> {
    const authorization = req.header('authorization');
    // Most requests carry no OAuth at all: decide that without parsing anything.
    if ((authorization === undefined || !/^\s*oauth\s/i.test(authorization)) && !req.url.includes('oauth_')) return undefined;
    const header = oauthHeaderParams(authorization);
    const q = req.url.indexOf('?');
    const query = new URLSearchParams(q === -1 ? '' : req.url.slice(q + 1));
    const params: [string, string][] = [...query.entries()];
    if (header) params.push(...header.entries());
    const get = (name: string) => header?.get(name) ?? query.get(name) ?? undefined;
    const consumerKey = get('oauth_consumer_key');
    const signature = get('oauth_signature');
    const token = get('oauth_token');
    const method = get('oauth_signature_method');
    if (consumerKey === undefined || signature === undefined || token === undefined) return undefined;

    const timestamp = Number(get('oauth_timestamp'));
    const nonce = get('oauth_nonce') ?? '';
    const window = Math.max(1, this.config.getInt(HTTPD_OAUTH_SECTION, 'timestamp_window', 600));
    const now = Date.now();
    if (!Number.isInteger(timestamp) || Math.abs(now / 1000 - timestamp) > window || nonce === '') return undefined;

    const secrets = await this.secrets(consumerKey, token);
    if (!secrets) return undefined;
    let valid: boolean;
    if (method === 'HMAC-SHA1') {
      const path = q === -1 ? req.url : req.url.slice(0, q);
      const host = (req.header('host') ?? 'localhost').toLowerCase();
      const scheme = req.secure ? 'https' : 'http';
      const defaultPort = req.secure ? ':443' : ':80';
      const baseUrl = `${scheme}://${host.endsWith(defaultPort) ? host.slice(0, -defaultPort.length) : host}${path}`;
      const expected = hmacSha1Signature(signatureBase(req.method, baseUrl, params), secrets.consumerSecret, secrets.tokenSecret);
      valid = constantTimeEqual(expected, signature);
    } else if (method === 'PLAINTEXT') {
      valid = constantTimeEqual(`${oauthEncode(secrets.consumerSecret)}&${oauthEncode(secrets.tokenSecret)}`, signature);
    } else {
      return undefined;
    }
    if (!valid) return undefined;

    this.forgetOldNonces(now);
    const nonceKey = `${consumerKey}:${timestamp}:${nonce}`;
    if (this.nonces.has(nonceKey)) return undefined;
    this.nonces.set(nonceKey, now + window * 2000);

    const creds = await this.lookup(secrets.user);
    return { name: secrets.user, roles: creds?.roles ?? [] };
  }

  private forgetOldNonces(now: number): void {
    for (const [key, until] of this.nonces) {
      if (until > now) break; // inserted in time order
      this.nonces.delete(key);
    }
  }

  private async secrets(consumerKey: string, token: string): Promise<OAuthSecrets | undefined> {
    const consumerSecret = this.config.get(OAUTH_CONSUMER_SECRETS, consumerKey);
    const tokenSecret = this.config.get(OAUTH_TOKEN_SECRETS, token);
    const user = this.config.get(OAUTH_TOKEN_USERS, token);
    if (consumerSecret !== undefined && tokenSecret !== undefined && user !== undefined) return { consumerSecret, tokenSecret, user };
    if (!this.config.getBool(HTTPD_OAUTH_SECTION, 'use_users_db', false)) return undefined;
    for await (const doc of this.usersDocs()) {
      const oauth = doc['oauth'] as { consumer_keys?: Record<string, unknown>; tokens?: Record<string, unknown> } | undefined;
      const c = oauth?.consumer_keys?.[consumerKey];
      const t = oauth?.tokens?.[token];
      if (typeof c === 'string' && typeof t === 'string' && typeof doc['name'] === 'string') {
        return { consumerSecret: c, tokenSecret: t, user: doc['name'] };
      }
    }
    return undefined;
  }
}
