/**
 * OAuth 1.0 (RFC 5849) request signatures, as CouchDB 1.6's couch_httpd_oauth accepts them:
 * HMAC-SHA1 (and PLAINTEXT) over the request, with consumer and token secrets and the token's
 * user from config (`[oauth_consumer_secrets]`, `[oauth_token_secrets]`, `[oauth_token_users]`)
 * or, with `[couch_httpd_oauth] use_users_db`, from user documents' `oauth` field
 * (`{consumer_keys: {key: secret}, tokens: {token: secret}}`).
 *
 * A request signed with a timestamp more than `timestamp_window` seconds (default 600) from now
 * is refused, and a nonce is accepted once per consumer and timestamp while its window lasts
 * (replays refused). A request whose signature does not verify is treated as carrying no OAuth
 * credentials; one naming a consumer, signature method or token this server does not know is a
 * 400, as in CouchDB.
 */
import { createHmac } from 'node:crypto';
import type { Config } from '../config/config.js';
import { HTTPD_OAUTH_SECTION, OAUTH_CONSUMER_SECRETS, OAUTH_TOKEN_SECRETS, OAUTH_TOKEN_USERS } from '../couchdb-names.js';
import { CouchError } from '../errors.js';
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
    // The token endpoints check their requests' signatures themselves (their tokens are not users').
    if (req.url.startsWith('/_oauth/')) return undefined;
    const signed = signedRequest(req);
    if (!signed) return undefined;
    // A consumer or token this server does not know makes a bad request, not an anonymous one
    // (CouchDB 1.6); only a signature that does not verify leaves the request to other handlers.
    const { consumerSecret, secrets } = await this.credentials(signed.consumerKey, signed.token);
    if (consumerSecret === undefined || !SIGNATURE_METHODS.has(signed.method ?? '')) throw invalidConsumer();
    if (!secrets) throw new CouchError(400, 'invalid_token', 'Invalid OAuth token.');
    if (!signatureValid(signed, secrets.consumerSecret, secrets.tokenSecret) || !this.fresh(signed)) return undefined;
    const creds = await this.lookup(secrets.user);
    return { name: secrets.user, roles: creds?.roles ?? [] };
  }

  /**
   * CouchDB 1.6's `/_oauth/{request_token,authorize,access_token}`: its fixed demonstration
   * tokens, handed out for a request signed with a known consumer and token (access_token: the
   * request token `requestkey`, secret `requestsecret`). A form-encoded answer.
   */
  async tokenEndpoint(req: AuthRequest, step: 'request_token' | 'authorize' | 'access_token'): Promise<string> {
    const signed = signedRequest(req);
    if (!signed) throw new CouchError(400, 'invalid_consumer', 'Invalid consumer.');
    // access_token is signed with the request token this endpoint handed out, not a stored one.
    const access = step === 'access_token';
    const { consumerSecret, secrets } = await this.credentials(signed.consumerKey, access ? undefined : signed.token);
    if (consumerSecret === undefined || !SIGNATURE_METHODS.has(signed.method ?? '')) throw invalidConsumer();
    if (access && signed.token !== 'requestkey') throw new CouchError(400, 'invalid_token', 'Invalid OAuth token.');
    const tokenSecret = access ? 'requestsecret' : secrets?.tokenSecret;
    if (tokenSecret === undefined || !signatureValid(signed, consumerSecret, tokenSecret)) {
      throw new CouchError(400, 'invalid_signature', 'Invalid signature value.');
    }
    return step === 'access_token' ? 'oauth_token=accesskey&oauth_token_secret=accesssecret' : 'oauth_token=requestkey&oauth_token_secret=requestsecret';
  }

  /**
   * Replays refused: a request with a timestamp must be within `timestamp_window` of now and
   * its nonce new for that consumer and timestamp. (CouchDB checks neither; a request signed
   * without them is accepted, as there.)
   */
  private fresh(signed: SignedRequest): boolean {
    if (signed.timestamp === undefined && signed.nonce === undefined) return true;
    const timestamp = Number(signed.timestamp);
    const nonce = signed.nonce ?? '';
    const window = Math.max(1, this.config.getInt(HTTPD_OAUTH_SECTION, 'timestamp_window', 600));
    const now = Date.now();
    if (!Number.isInteger(timestamp) || Math.abs(now / 1000 - timestamp) > window || nonce === '') return false;
    this.forgetOldNonces(now);
    const nonceKey = `${signed.consumerKey}:${timestamp}:${nonce}`;
    if (this.nonces.has(nonceKey)) return false;
    this.nonces.set(nonceKey, now + window * 2000);
    return true;
  }

  private forgetOldNonces(now: number): void {
    for (const [key, until] of this.nonces) {
      if (until > now) break; // inserted in time order
      this.nonces.delete(key);
    }
  }

  /**
   * What this server knows of a consumer and, unless `token` is undefined, a token: the
   * consumer's secret (configured, or with `use_users_db` from the first user document that has
   * the key) and the token's secrets and user when they are known together. One pass over the
   * user documents at most.
   */
  private async credentials(consumerKey: string, token: string | undefined): Promise<{ consumerSecret: string | undefined; secrets: OAuthSecrets | undefined }> {
    let consumerSecret = this.config.get(OAUTH_CONSUMER_SECRETS, consumerKey);
    if (token !== undefined) {
      const tokenSecret = this.config.get(OAUTH_TOKEN_SECRETS, token);
      const user = this.config.get(OAUTH_TOKEN_USERS, token);
      if (consumerSecret !== undefined && tokenSecret !== undefined && user !== undefined) {
        return { consumerSecret, secrets: { consumerSecret, tokenSecret, user } };
      }
    }
    if (!this.config.getBool(HTTPD_OAUTH_SECTION, 'use_users_db', false)) return { consumerSecret, secrets: undefined };
    if (token === undefined && consumerSecret !== undefined) return { consumerSecret, secrets: undefined };
    for await (const doc of this.usersDocs()) {
      const oauth = doc['oauth'] as { consumer_keys?: Record<string, unknown>; tokens?: Record<string, unknown> } | undefined;
      const c = oauth?.consumer_keys?.[consumerKey];
      if (typeof c !== 'string') continue;
      consumerSecret ??= c;
      if (token === undefined) break;
      const t = oauth?.tokens?.[token];
      if (typeof t === 'string' && typeof doc['name'] === 'string') {
        return { consumerSecret, secrets: { consumerSecret: c, tokenSecret: t, user: doc['name'] } };
      }
    }
    return { consumerSecret, secrets: undefined };
  }
}

const SIGNATURE_METHODS = new Set(['HMAC-SHA1', 'PLAINTEXT']);

const invalidConsumer = (): CouchError => new CouchError(400, 'invalid_consumer', 'Invalid consumer (key or signature method).');

/** An OAuth-signed request's parameters (header and query string) and what is signed. */
interface SignedRequest {
  params: [string, string][];
  consumerKey: string;
  token: string;
  signature: string;
  method: string | undefined;
  timestamp: string | undefined;
  nonce: string | undefined;
  /** The request method and base URL the signature covers. */
  httpMethod: string;
  baseUrl: string;
}

/** The request's OAuth parameters; undefined when it is not signed (no consumer, token or signature). */
function signedRequest(req: AuthRequest): SignedRequest | undefined {
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
  if (consumerKey === undefined || signature === undefined || token === undefined) return undefined;
  const path = q === -1 ? req.url : req.url.slice(0, q);
  const host = (req.header('host') ?? 'localhost').toLowerCase();
  const defaultPort = req.secure ? ':443' : ':80';
  const baseUrl = `${req.secure ? 'https' : 'http'}://${host.endsWith(defaultPort) ? host.slice(0, -defaultPort.length) : host}${path}`;
  return {
    params, consumerKey, token, signature, method: get('oauth_signature_method'),
    timestamp: get('oauth_timestamp'), nonce: get('oauth_nonce'), httpMethod: req.method, baseUrl,
  };
}

/** Whether the request's signature is the one these secrets make (HMAC-SHA1 or PLAINTEXT). */
function signatureValid(signed: SignedRequest, consumerSecret: string, tokenSecret: string): boolean {
  if (signed.method === 'HMAC-SHA1') {
    const expected = hmacSha1Signature(signatureBase(signed.httpMethod, signed.baseUrl, signed.params), consumerSecret, tokenSecret);
    return constantTimeEqual(expected, signed.signature);
  }
  if (signed.method === 'PLAINTEXT') return constantTimeEqual(`${oauthEncode(consumerSecret)}&${oauthEncode(tokenSecret)}`, signed.signature);
  return false;
}
