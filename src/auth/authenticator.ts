/**
 * The authentication engine: who a request is, from its credentials, by the handlers that
 * `[httpd] authentication_handlers` lists, in order (CouchDB 1.6's couch_httpd_auth and
 * couch_httpd_oauth; CouchDB 3's `[chttpd]` list, when set, comes first):
 *
 *   default  HTTP Basic against `[admins]` and the users database; with no credentials and no
 *            admins, the caller is a server admin ("admin party")
 *   cookie   the AuthSession cookie `POST /_session` issues
 *   proxy    a trusted proxy's X-Auth-CouchDB-* headers, optionally signed with the secret
 *   oauth    OAuth 1.0 HMAC-SHA1 signatures
 *   jwt      a JSON Web Token signed with a key from `[jwt_keys]` (CouchDB 3)
 *
 * A handler that finds no credentials of its kind passes; wrong Basic credentials are a 401;
 * when no handler decides, the caller is anonymous (or refused, with `require_valid_user`).
 *
 * Credentials are cached (`auth_cache_size` users, least recently used out): a cached user whose
 * password already verified costs one keyed digest, not a PBKDF2 run.
 */
import { randomBytes, createHmac } from 'node:crypto';
import { LayeredSection, type Config } from '../config/config.js';
import type { DatabaseRegistry } from '../core/registry.js';
import type { Database } from '../core/database.js';
import type { DocInfo } from '../core/records.js';
import type { IncomingDoc } from '../core/document.js';
import { winner } from '../core/revtree.js';
import { validationOldDoc } from '../core/old-doc.js';
import { CouchError, badRequest, unauthorized } from '../errors.js';
import {
  ADMIN_ROLE, AUTH_COOKIE, AUTH_HANDLER_NAMES, AUTH_SECTIONS, CHTTPD_SECTION, REQUIRE_VALID_USER_SECTIONS, HEADER_PROXY_ROLES, HEADER_PROXY_TOKEN, HEADER_PROXY_USERNAME,
  HTTPD_AUTH_SECTION, JWT_AUTH_SECTION, JWT_DEFAULT_KID, JWT_KEYS_SECTION, JWT_ROLES_CLAIM, REPLICATOR_DESIGN_DOC, TEST_AUTH_SCHEME, USER_DOC_PREFIX,
  USERS_DESIGN_DOC,
} from '../couchdb-names.js';
import { adminPartyContext, isServerAdmin, type UserContext } from './user-context.js';
import { prepareReplicationDoc, REPLICATOR_VALIDATE_FUNCTION, validateReplicationDoc } from './replicator-db.js';
import {
  constantTimeEqual, hashAdminPassword, isHashedAdminValue, parseAdminHash, passwordFingerprint, userDocHash, verifyPassword,
  type PasswordHash,
} from './password.js';
import { decodeBase64Strictly } from './base64.js';
import { cookieValue, makeSessionToken, parseSessionToken, tokenMacValid } from './cookie.js';
import { isDbAdmin } from './access.js';
import { beforeUserDocUpdate, ensureAuthDesignDoc, USERS_VALIDATE_FUNCTION, validateUserDoc } from './users-db.js';
import { OAuthVerifier, type OAuthUserLookup } from './oauth.js';
import { decodeConfiguredKey, parseRequiredClaims, rolesFromClaims, verifyJwt } from './jwt.js';

export type AuthMethod = 'default' | 'cookie' | 'proxy' | 'oauth' | 'jwt' | 'null' | 'special';

/** What authentication needs of a request; the API's Request has all of it. */
export interface AuthRequest {
  method: string;
  /** Path and query string as sent. */
  url: string;
  header(name: string): string | undefined;
  /** Whether it came over TLS (OAuth signs the scheme). */
  secure: boolean;
}

/** Settee's own header (not CouchDB's): the signed identity of a loopback request of this server. */
const HEADER_INTERNAL_IDENTITY = 'x-settee-internal-identity';

export interface Authentication {
  ctx: UserContext;
  /** The handler that established `ctx` (`_session`'s `info.authenticated`). */
  method?: AuthMethod;
  /** A refreshed session cookie to send with the reply (a `Set-Cookie` value). */
  setCookie?: string;
}

/** A user or server admin as authentication knows them. */
export interface UserCreds {
  name: string;
  roles: string[];
  hash: PasswordHash | undefined;
  /** The user's current revision (or the admin's hash): a new one invalidates cached verdicts. */
  stamp: string;
  /** OAuth credentials from the user document (`oauth` field), when `use_users_db` is on. */
  oauth?: unknown;
}

interface CacheEntry {
  creds: UserCreds;
  /** A server admin's (from `[admins]`, with the roles of a user document of that name). */
  admin: boolean;
  /** Users-database update sequence when the entry was read (undefined: no users database). */
  seq: number | undefined;
  /** Which opening of the users database `seq` belongs to (a recreated database starts over). */
  dbInstance?: string;
  /** Fingerprint of the password that last verified against these credentials. */
  verified?: Buffer;
}

/**
 * An `AuthSession` cookie with its attributes in the order mochiweb_cookies writes them:
 * Version, then Expires and Max-Age (persistent cookies), Secure, Path, HttpOnly.
 */
function authCookie(value: string, secure: boolean, expiry: { now: number; maxAge: number } | undefined): string {
  const expires = expiry ? `; Expires=${new Date((expiry.now + expiry.maxAge) * 1000).toUTCString()}; Max-Age=${expiry.maxAge}` : '';
  return `${AUTH_COOKIE}=${value}; Version=1${expires}${secure ? '; Secure' : ''}; Path=/; HttpOnly`;
}

/** `require_valid_user`: every request needs a user, admin party or not. */
export function requireValidUser(config: Config): boolean {
  return config.layered(REQUIRE_VALID_USER_SECTIONS).getBool('require_valid_user', false);
}

const HANDLER_PATTERN = /\{\s*([A-Za-z0-9_]+)\s*,\s*([A-Za-z0-9_]+)\s*\}/g;

export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly fingerprintKey = randomBytes(32);
  private adminCount: number;
  private handlerSpec = '';
  private handlerList: AuthMethod[] = [];
  private readonly unsubscribe: () => void;
  private unwatchDbs: () => void = () => undefined;
  private readonly oauth: OAuthVerifier;
  private hitCount = 0;
  private missCount = 0;

  /** The authentication settings: `[chttpd_auth]` (CouchDB 3) before `[couch_httpd_auth]`. */
  readonly settings: LayeredSection;

  private constructor(private readonly config: Config, private readonly dbs: DatabaseRegistry) {
    this.settings = config.layered(AUTH_SECTIONS);
    this.adminCount = Object.keys(config.section('admins')).length;
    this.unsubscribe = config.onChange((section, key) => {
      if (section === 'admins') {
        this.adminCount = Object.keys(config.section('admins')).length;
        this.cache.clear();
      } else if (this.settings.sections.includes(section)) {
        this.cache.clear();
        // A new authentication database exists once the change naming it has answered.
        if (key === 'authentication_db') return this.ensureUsersDb().catch(() => undefined);
      }
    });
    const lookup: OAuthUserLookup = async (name) => this.userCreds(name);
    this.oauth = new OAuthVerifier(config, lookup, () => this.allUserDocs());
  }

  /** Every user document of the users database (OAuth with `use_users_db`). */
  private async *allUserDocs(): AsyncIterable<Record<string, unknown>> {
    const db = await this.dbs.get(this.usersDbName);
    for await (const rows of db.allDocs({ start: USER_DOC_PREFIX, end: `${USER_DOC_PREFIX}\uffff`, inclusiveEnd: false })) {
      for (const row of rows) {
        const doc = await db.renderKnown(row.id, row.rev, false);
        if (doc) yield JSON.parse(doc.json) as Record<string, unknown>;
      }
    }
  }

  /**
   * Starts authentication: hashes plain `[admins]` passwords (and every one written later),
   * makes the cookie secret once, and creates the users database with `_design/_auth`.
   */
  static async start(config: Config, dbs: DatabaseRegistry): Promise<Authenticator> {
    const settings = config.layered(AUTH_SECTIONS);
    const iterations = () => Math.max(1, settings.getInt('iterations', 10));
    config.setWriteFilter(async (section, _key, value) =>
      section === 'admins' && !isHashedAdminValue(value) ? hashAdminPassword(value, iterations()) : value);
    for (const [name, value] of Object.entries(config.section('admins'))) {
      if (!isHashedAdminValue(value)) await config.set('admins', name, value, true);
    }
    if (!settings.get('secret')) {
      await config.set(HTTPD_AUTH_SECTION, 'secret', randomBytes(16).toString('hex'), true);
    }
    const auth = new Authenticator(config, dbs);
    await auth.ensureUsersDb();
    // A deleted users database comes back at once, empty, as CouchDB's auth cache recreates it.
    auth.unwatchDbs = dbs.onEvent((name, type) => (type === 'deleted' && name === auth.usersDbName ? auth.ensureUsersDb().catch(() => undefined) : undefined));
    return auth;
  }

  /** The users database, with its `_design/_auth`, created when missing. */
  private async ensureUsersDb(): Promise<void> {
    await ensureAuthDesignDoc(await this.dbs.ensure(this.usersDbName));
  }

  close(): void {
    this.unsubscribe();
    this.unwatchDbs();
  }

  get usersDbName(): string {
    return this.settings.getString('authentication_db', '_users');
  }

  /** The replicator's database (`[replicator] db`), whose documents have owners. */
  get replicatorDbName(): string {
    return this.config.getString('replicator', 'db', '_replicator');
  }

  /**
   * Whether a design document's validate_doc_update states checks `screenWrites` already makes
   * natively on every write: the replicator database's `_design/_replicator` and the users
   * database's `_design/_auth` as the server wrote them. One with another text (no one can
   * change `_design/_auth`, but a database named users database later may hold its own) runs
   * as any other, as does either outside the database whose rules it states.
   */
  enforcesNatively(dbName: string, ddocId: string, validateSource: unknown): boolean {
    if (ddocId === REPLICATOR_DESIGN_DOC) return validateSource === REPLICATOR_VALIDATE_FUNCTION && dbName === this.replicatorDbName;
    if (ddocId === USERS_DESIGN_DOC) return validateSource === USERS_VALIDATE_FUNCTION && dbName === this.usersDbName;
    return false;
  }

  /** False while `[admins]` is empty: admin party. */
  get hasAdmins(): boolean {
    return this.adminCount > 0;
  }

  /** Auth cache hits and misses (CouchDB's couchdb/auth_cache_hits and auth_cache_misses). */
  get cacheStats(): { hits: number; misses: number } {
    return { hits: this.hitCount, misses: this.missCount };
  }

  /** The configured handlers, in order, by the names `_session` reports. */
  handlers(): AuthMethod[] {
    const spec = this.config.getString(CHTTPD_SECTION, 'authentication_handlers', '') || this.config.getString('httpd', 'authentication_handlers', '');
    if (spec !== this.handlerSpec) {
      const list: AuthMethod[] = [];
      for (const m of spec.matchAll(HANDLER_PATTERN)) {
        const name = AUTH_HANDLER_NAMES[`{${m[1]}, ${m[2]}}`] as AuthMethod | undefined;
        if (name && !list.includes(name)) list.push(name);
      }
      this.handlerSpec = spec;
      this.handlerList = list;
    }
    return this.handlerList;
  }

  /** CouchDB 3's `[chttpd] require_valid_user_except_for_up`: everything but `/_up` needs a user. */
  private requiresValidUser(req: AuthRequest): boolean {
    if (requireValidUser(this.config)) return true;
    return this.config.getBool(CHTTPD_SECTION, 'require_valid_user_except_for_up', false) && !/^\/_up(?:[?#]|$)/.test(req.url);
  }

  get sessionTimeout(): number {
    return Math.max(1, this.settings.getInt('timeout', 600));
  }

  private get secret(): string {
    return this.settings.getString('secret', '');
  }

  /** Establishes who a request is; throws 401 for wrong Basic credentials or a missing valid user. */
  async authenticate(req: AuthRequest): Promise<Authentication> {
    const internal = this.internalIdentity(req);
    if (internal) return internal;
    for (const method of this.handlers()) {
      const result = await this.tryHandler(method, req);
      if (result) return result;
    }
    if (this.requiresValidUser(req)) throw unauthorized('Authentication required.');
    return { ctx: { name: null, roles: [] } };
  }

  /** Known only to this process: it signs the identities of the server's own loopback requests. */
  private readonly internalSecret = randomBytes(32).toString('hex');

  /**
   * Headers with which a loopback request of this server (a `_replicator` job) acts as `ctx`:
   * the user's name and roles, signed with a secret no client ever sees.
   */
  internalHeaders(ctx: UserContext): Record<string, string> {
    const identity = JSON.stringify([ctx.name, ctx.roles]);
    return { [HEADER_INTERNAL_IDENTITY]: `${Buffer.from(identity).toString('base64url')}.${this.signIdentity(identity)}` };
  }

  private signIdentity(identity: string): string {
    return createHmac('sha256', this.internalSecret).update(identity).digest('hex');
  }

  private internalIdentity(req: AuthRequest): Authentication | undefined {
    const header = req.header(HEADER_INTERNAL_IDENTITY);
    if (!header) return undefined;
    const [encoded = '', signature = ''] = header.split('.');
    const identity = Buffer.from(encoded, 'base64url').toString('utf8');
    if (!constantTimeEqual(this.signIdentity(identity), signature)) throw unauthorized('Name or password is incorrect.');
    const [name, roles] = JSON.parse(identity) as [string | null, string[]];
    return { ctx: { name, roles } };
  }

  private async tryHandler(method: AuthMethod, req: AuthRequest): Promise<Authentication | undefined> {
    switch (method) {
      case 'default': return this.basic(req);
      case 'cookie': return this.cookie(req);
      case 'proxy': return this.proxy(req);
      case 'oauth': {
        const ctx = await this.oauth.authenticate(req);
        return ctx ? { ctx, method } : undefined;
      }
      case 'jwt': return this.jwt(req);
      case 'null': return { ctx: adminPartyContext(), method };
      case 'special': return specialTestAuthentication(req);
    }
  }

  private async basic(req: AuthRequest): Promise<Authentication | undefined> {
    const credentials = basicCredentials(req.header('authorization'));
    if (credentials) {
      const creds = await this.checkPassword(credentials.name, credentials.password);
      if (!creds) throw unauthorized('Name or password is incorrect.');
      return { ctx: { name: creds.name, roles: creds.roles }, method: 'default' };
    }
    if (!this.hasAdmins && !requireValidUser(this.config)) return { ctx: adminPartyContext(), method: 'default' };
    return undefined;
  }

  private async cookie(req: AuthRequest): Promise<Authentication | undefined> {
    const value = cookieValue(req.header('cookie'), AUTH_COOKIE);
    if (!value) return undefined;
    const token = parseSessionToken(value);
    const secret = this.secret;
    if (!secret) return undefined;
    const creds = await this.userCreds(token.name);
    if (!creds?.hash) return undefined;
    const now = Math.floor(Date.now() / 1000);
    const timeout = this.sessionTimeout;
    const issued = token.issued;
    if (issued === undefined || issued + timeout <= now || !tokenMacValid(token, secret, creds.hash.salt)) return undefined;
    const result: Authentication = { ctx: { name: creds.name, roles: creds.roles }, method: 'cookie' };
    // Refreshed once a tenth of its life is used, so active sessions never expire.
    if (issued + timeout - now < timeout * 0.9) result.setCookie = this.sessionCookie(creds, req.secure, now);
    return result;
  }

  private proxy(req: AuthRequest): Authentication | undefined {
    const nameHeader = this.settings.getString('x_auth_username', HEADER_PROXY_USERNAME);
    const name = req.header(nameHeader);
    if (!name) return undefined;
    if (this.settings.getBool('proxy_use_secret', false)) {
      const token = req.header(this.settings.getString('x_auth_token', HEADER_PROXY_TOKEN));
      const secret = this.secret;
      if (!token || !secret) return undefined;
      // Compared as sent: couch_httpd_auth:proxy_auth_user expects couch_util:to_hex's lower case.
      if (!constantTimeEqual(proxyToken(secret, name), token)) return undefined;
    }
    const rolesHeader = req.header(this.settings.getString('x_auth_roles', HEADER_PROXY_ROLES));
    // string:tokens(Roles, ","), as couch_httpd_auth:proxy_auth_user splits them: the text
    // between commas as it is, spaces included (` _admin` is no server admin), empty ones dropped.
    const roles = (rolesHeader ?? '').split(',').filter((r) => r !== '');
    return { ctx: { name, roles }, method: 'proxy' };
  }

  private jwt(req: AuthRequest): Authentication | undefined {
    const header = req.header('authorization');
    if (!header?.startsWith('Bearer ')) return undefined;
    const required = parseRequiredClaims(this.config.getString(JWT_AUTH_SECTION, 'required_claims', 'exp'));
    const claims = verifyJwt(header.slice('Bearer '.length), required, (family, kid) => {
      const text = this.config.get(JWT_KEYS_SECTION, `${family}:${kid ?? JWT_DEFAULT_KID}`);
      if (text === undefined) throw badRequest('Unknown kid');
      return decodeConfiguredKey(family, text);
    });
    const roles = rolesFromClaims(
      claims,
      this.config.getString(JWT_AUTH_SECTION, 'roles_claim_name', JWT_ROLES_CLAIM),
      this.config.get(JWT_AUTH_SECTION, 'roles_claim_path'),
    );
    const name = claims['sub'];
    if (typeof name !== 'string') throw unauthorized('Token missing sub claim.');
    return { ctx: { name, roles }, method: 'jwt' };
  }

  /** The `Set-Cookie` value of a new session for these credentials; `Secure` when issued over TLS. */
  sessionCookie(creds: UserCreds, secure: boolean, now = Math.floor(Date.now() / 1000)): string {
    const token = makeSessionToken(creds.name, now, this.secret, creds.hash?.salt ?? '');
    const persistent = this.settings.getBool('allow_persistent_cookies', false);
    return authCookie(token, secure, persistent ? { now, maxAge: this.sessionTimeout } : undefined);
  }

  /** The form-encoded answer of an `/_oauth/...` token endpoint (see OAuthVerifier.tokenEndpoint). */
  oauthTokens(req: AuthRequest, step: 'request_token' | 'authorize' | 'access_token'): Promise<string> {
    return this.oauth.tokenEndpoint(req, step);
  }

  /** An `[admins]` value for a password: PBKDF2 with the configured iterations. */
  hashAdminPassword(password: string): Promise<string> {
    return hashAdminPassword(password, Math.max(1, this.settings.getInt('iterations', 10)));
  }

  /** The `Set-Cookie` value that ends a session: an empty cookie, as CouchDB's cookie_auth_clear. */
  clearedCookie(secure: boolean): string {
    return authCookie('', secure, undefined);
  }

  /** The credentials of a user or server admin; undefined when there is none of that name. */
  async userCreds(name: string): Promise<UserCreds | undefined> {
    return (await this.entry(name))?.creds;
  }

  /** The user's credentials when `password` is theirs; undefined otherwise. */
  async checkPassword(name: string, password: string): Promise<UserCreds | undefined> {
    const entry = await this.entry(name);
    if (!entry?.creds.hash) {
      // As long to answer for a user who does not exist as for a wrong password: names stay private.
      await verifyPassword(password, this.decoyHash());
      return undefined;
    }
    const fingerprint = passwordFingerprint(this.fingerprintKey, password);
    if (entry.verified && entry.verified.equals(fingerprint)) return entry.creds;
    if (!(await verifyPassword(password, entry.creds.hash))) return undefined;
    entry.verified = fingerprint;
    return entry.creds;
  }

  private decoyHash(): PasswordHash {
    const iterations = Math.max(1, this.settings.getInt('iterations', 10));
    return { scheme: 'pbkdf2', derivedKey: '', salt: 'decoy', iterations };
  }

  /** A cache entry, fresh: admins by their config value, users by the users database's sequence. */
  private async entry(name: string): Promise<CacheEntry | undefined> {
    const adminValue = this.config.get('admins', name);
    const cached = this.cache.get(name);
    const db = await this.dbs.get(this.usersDbName).catch(() => undefined);
    const fresh = (entry: CacheEntry | undefined): entry is CacheEntry =>
      entry !== undefined && entry.seq === db?.updateSeq && entry.dbInstance === db?.instanceStartTime;
    if (adminValue !== undefined) {
      if (fresh(cached) && cached.admin && cached.creds.stamp === adminValue) return this.hit(name, cached);
      this.missCount++;
      // A server admin also has the roles of a user document of the same name (CouchDB 1.6).
      const doc = db ? await openWinner(db, USER_DOC_PREFIX + name) : undefined;
      const roles = [ADMIN_ROLE, ...rolesOf(doc).filter((role) => role !== ADMIN_ROLE)];
      if (cached?.admin && cached.creds.stamp === adminValue) {
        // Same password: only the roles are read again; the password verified stays verified.
        cached.creds.roles = roles;
        cached.seq = db?.updateSeq;
        cached.dbInstance = db?.instanceStartTime;
        return cached;
      }
      const hash = parseAdminHash(adminValue);
      return this.store(name, { creds: { name, roles, hash, stamp: adminValue }, admin: true, seq: db?.updateSeq, dbInstance: db?.instanceStartTime });
    }
    if (!db) return undefined;
    if (fresh(cached) && !cached.admin) return this.hit(name, cached);
    this.missCount++;
    const seq = db.updateSeq;
    const doc = await openWinner(db, USER_DOC_PREFIX + name, { conflicts: true });
    if (!doc) {
      this.cache.delete(name);
      return undefined;
    }
    if (doc['_conflicts'] !== undefined) {
      this.cache.delete(name);
      throw unauthorized('User document conflicts must be resolved before the document is used for authentication purposes.');
    }
    const rev = String(doc['_rev']);
    if (cached && !cached.admin && cached.creds.stamp === rev) {
      cached.seq = seq;
      cached.dbInstance = db.instanceStartTime;
      return cached;
    }
    return this.store(name, { creds: { name, roles: rolesOf(doc), hash: userDocHash(doc), stamp: rev, oauth: doc['oauth'] }, admin: false, seq, dbInstance: db.instanceStartTime });
  }

  private hit(name: string, entry: CacheEntry): CacheEntry {
    this.hitCount++;
    // Least recently used first: a hit moves the entry to the end.
    this.cache.delete(name);
    this.cache.set(name, entry);
    return entry;
  }

  private store(name: string, entry: CacheEntry): CacheEntry {
    this.cache.delete(name);
    this.cache.set(name, entry);
    const size = Math.max(1, this.settings.getInt('auth_cache_size', 50));
    while (this.cache.size > size) this.cache.delete(this.cache.keys().next().value!);
    return entry;
  }

  /**
   * The refusals (one per document, undefined when allowed) of a write, before it is applied:
   * design documents need a database admin; the users and replicator databases' rules apply to
   * their documents, which may be changed in place (passwords hashed, owners recorded). As in
   * CouchDB 1.6, what those databases' before_doc_update refuses fails the whole request (thrown);
   * what their validation functions refuse is that document's refusal, judged against the oldDoc
   * CouchDB's validation would get (`validationOldDoc`).
   */
  async screenWrites(
    db: Database, docs: readonly IncomingDoc[], ctx: UserContext, options: { newEdits: boolean; allOrNothing: boolean },
  ): Promise<(CouchError | undefined)[] | undefined> {
    const usersDb = db.name === this.usersDbName;
    const replicatorDb = db.name === this.replicatorDbName;
    if (!usersDb && !replicatorDb && isServerAdmin(ctx)) return undefined;
    const security = db.getSecurity();
    let refusals: (CouchError | undefined)[] | undefined;
    const refuse = (i: number, err: CouchError) => { (refusals ??= new Array(docs.length).fill(undefined))[i] = err; };
    const dbAdmin = isDbAdmin(ctx, security);
    const w = {
      ctx, security, iterations: Math.max(1, this.settings.getInt('iterations', 10)), passwordRules: this.settings.getString('password_regexp', ''),
    };
    if (usersDb) {
      // couch_users_db:before_doc_update sees every document, design documents too, before any
      // validation: what it refuses is the whole request's answer.
      for (const doc of docs) {
        const refusal = await beforeUserDocUpdate(doc, w);
        if (refusal) throw refusal;
      }
    }
    const screened: number[] = [];
    docs.forEach((doc, i) => {
      if ((doc.id ?? '').startsWith('_design/') && !dbAdmin) refuse(i, unauthorized('You are not a db or server admin.'));
      else if (usersDb || replicatorDb) screened.push(i);
    });
    if (screened.length === 0) return refusals;
    const infos = await db.docInfos(screened.map((i) => docs[i]!.id!));
    // The revision CouchDB validates each write against (null: none; undefined: not validated).
    const oldDocs = await Promise.all(screened.map(async (i, k) => {
      const json = await validationOldDoc(db, docs[i]!, infos[k], options);
      return json === undefined ? undefined : JSON.parse(json) as Record<string, unknown> | null;
    }));

    if (replicatorDb) {
      for (const [k, i] of screened.entries()) {
        const doc = docs[i]!;
        if (doc.id!.startsWith('_design/')) continue;
        // Settee also holds a write to the current winner's rules (its owner, its triggered state),
        // whatever revision CouchDB would judge it against: never less strict than either.
        const winning = await winnerOf(db, infos[k]);
        const old = oldDocs[k];
        const ownerRefusal = prepareReplicationDoc(doc, winning, ctx, dbAdmin) ?? (old ? prepareReplicationDoc(doc, old, ctx, dbAdmin) : undefined);
        if (ownerRefusal) throw ownerRefusal;
        const refusal = validateReplicationDoc(doc, winning, ctx, dbAdmin)
          ?? (old !== undefined ? validateReplicationDoc(doc, old ?? undefined, ctx, dbAdmin) : undefined);
        if (refusal) refuse(i, refusal);
      }
      return refusals;
    }

    for (const [k, i] of screened.entries()) {
      const doc = docs[i]!;
      // A conflict in a user document locks its owner out until an admin resolves it (a user
      // document in conflict authenticates no one, as in CouchDB), and a revision that wins
      // would be the writer's: CouchDB 1.6 lets anyone add one with all_or_nothing or
      // new_edits=false (validated then with no oldDoc); only admins may here.
      if (!dbAdmin && !doc.id!.startsWith('_design/')) doc.noNewConflict = true;
      const old = oldDocs[k];
      // Not validated: the updater answers a conflict, or the revision is there already (but
      // `_design/_auth` takes no revision at all).
      if (old === undefined && doc.id !== USERS_DESIGN_DOC) continue;
      const refusal = validateUserDoc(doc, old ?? undefined, w);
      if (refusal) refuse(i, refusal);
    }
    return refusals;
  }
}

/** The fixed users of CouchDB's special test handler, with their passwords. */
const TEST_USERS: ReadonlyMap<string, string> = new Map([
  ['Jan Lehnardt', 'apple'], ['Christopher Lenz', 'dog food'], ['Noah Slater', 'biggiesmalls endian'],
  ['Chris Anderson', 'mp3'], ['Damien Katz', 'pecan pie'],
]);

/**
 * CouchDB 1.6's special_test_authentication_handler, for suites written against it: a request
 * naming a test user (`WWW-Authenticate: X-Couch-Test-Auth name:password`) is that user; any
 * other request is a server admin, so a suite can restore the configuration it changed.
 */
function specialTestAuthentication(req: AuthRequest): Authentication {
  const header = req.header('www-authenticate');
  if (!header?.startsWith(`${TEST_AUTH_SCHEME} `)) return { ctx: adminPartyContext(), method: 'special' };
  const credentials = header.slice(TEST_AUTH_SCHEME.length + 1);
  const colon = credentials.indexOf(':');
  const name = colon === -1 ? credentials : credentials.slice(0, colon);
  if (colon === -1 || TEST_USERS.get(name) !== credentials.slice(colon + 1)) throw unauthorized('Name or password is incorrect.');
  return { ctx: { name, roles: [] }, method: 'special' };
}

/**
 * `Authorization: Basic base64(name:password)`; undefined when absent or not Basic. As
 * couch_httpd_auth:basic_name_pw reads it: the scheme is `Basic ` exactly (another spelling is
 * not Basic credentials), and a value base64:decode cannot read is CouchDB 3's 400 (1.6 crashed
 * on it, a 500 function_clause).
 */
export function basicCredentials(header: string | undefined): { name: string; password: string } | undefined {
  if (!header?.startsWith('Basic ')) return undefined;
  const decoded = decodeBase64Strictly(header.slice('Basic '.length));
  if (!decoded) throw badRequest('Authorization header has invalid base64 value');
  const text = decoded.toString('utf8');
  const colon = text.indexOf(':');
  // `_:_` is how a browser forgets its Basic credentials: no credentials (CouchDB 1.6).
  if (colon === -1 || text === '_:_') return undefined;
  return { name: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** The proxy token for a user name: hex HMAC-SHA1 keyed with the server secret. */
export function proxyToken(secret: string, name: string): string {
  return createHmac('sha1', secret).update(name).digest('hex');
}

/** The string roles of a user document (none without one). */
function rolesOf(doc: Record<string, unknown> | undefined): string[] {
  const roles = doc?.['roles'];
  return Array.isArray(roles) ? roles.filter((r): r is string => typeof r === 'string') : [];
}

/** A document's current winning revision as an object (`_rev` included); undefined when missing or deleted. */
async function openWinner(db: Database, id: string, options: { conflicts?: boolean } = {}): Promise<Record<string, unknown> | undefined> {
  return winnerOf(db, await db.docInfo(id), options);
}

/** `openWinner` of a document whose info is already read. */
async function winnerOf(db: Database, info: DocInfo | undefined, options: { conflicts?: boolean } = {}): Promise<Record<string, unknown> | undefined> {
  if (!info || winner(info.tree)!.deleted) return undefined;
  try {
    return JSON.parse((await db.openFromInfo(info, options)).json) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof CouchError && err.status === 404) return undefined;
    throw err;
  }
}
