/**
 * Identifiers that real CouchDB clients hard-code. They live here, in one place,
 * so that the rest of the code never spells a CouchDB-specific name by hand.
 */
export const SERVER_VERSION = '1.6.1';
export const VENDOR_NAME = 'Settee';
export const WELCOME = 'Welcome';
/** Root object field that clients use to recognise a CouchDB-compatible server. */
export const ROOT_FIELD = 'couchdb';
export const SERVER_HEADER = `CouchDB/${SERVER_VERSION} (Settee)`;

export const USER_DOC_PREFIX = 'org.couchdb.user:';
export const MAIN_CONFIG_SECTION = 'couchdb';
export const HTTPD_AUTH_SECTION = 'couch_httpd_auth';
/** CouchDB 3's name for the authentication section; read first, then 1.6's. */
export const CHTTPD_AUTH_SECTION = 'chttpd_auth';
export const AUTH_SECTIONS = [CHTTPD_AUTH_SECTION, HTTPD_AUTH_SECTION] as const;

export const HEADER_FULL_COMMIT = 'x-couch-full-commit';
export const HEADER_PERSIST = 'x-couch-persist';
export const HEADER_UPDATE_NEWREV = 'X-Couch-Update-NewRev';
export const HEADER_ID = 'X-Couch-Id';
export const HEADER_WWW_AUTHENTICATE = 'x-couchdb-www-authenticate';
export const HEADER_PROXY_USERNAME = 'x-auth-couchdb-username';
export const HEADER_PROXY_ROLES = 'x-auth-couchdb-roles';
export const HEADER_PROXY_TOKEN = 'x-auth-couchdb-token';
/** What a `_rewrite` adds to the request it routes: the URL the client asked for. */
export const HEADER_REQUESTED_PATH = 'x-couchdb-requested-path';
/** What a virtual host adds to the request it routes: the path the client asked for under it. */
export const HEADER_VHOST_PATH = 'x-couchdb-vhost-path';
/** CouchDB 2's request id: the client's own, or one made up; every answer carries it. */
export const HEADER_REQUEST_ID = 'X-Couch-Request-ID';
/** CouchDB 2's time spent receiving a request's body, in ms, on every answer. */
export const HEADER_BODY_TIME = 'X-CouchDB-Body-Time';
export const AUTH_COOKIE = 'AuthSession';

/** The statistics section that CouchDB names after itself. */
export const STATS_CORE_SECTION = 'couchdb';

/** The role that makes a user a server admin. */
export const ADMIN_ROLE = '_admin';
/** The role of the replicator's own writes to the replicator database, exempt from its owner and triggered-state rules. */
export const REPLICATOR_ROLE = '_replicator';
/** Prefixes of server-admin password hashes in the `[admins]` config section. */
export const ADMIN_HASH_PBKDF2 = '-pbkdf2-';
export const ADMIN_HASH_SHA1 = '-hashed-';
/** The users database's design document that holds its validation function. */
export const USERS_DESIGN_DOC = '_design/_auth';
/** The replicator database's design document that holds its validation function. */
export const REPLICATOR_DESIGN_DOC = '_design/_replicator';
/** The `[httpd] authentication_handlers` entries CouchDB 1.6 ships, by the name `_session` reports. */
export const AUTH_HANDLER_NAMES: Record<string, string> = {
  '{couch_httpd_oauth, oauth_authentication_handler}': 'oauth',
  '{couch_httpd_auth, cookie_authentication_handler}': 'cookie',
  '{couch_httpd_auth, default_authentication_handler}': 'default',
  '{couch_httpd_auth, proxy_authentication_handler}': 'proxy',
  // CouchDB 1.6's own spelling of the proxy handler.
  '{couch_httpd_auth, proxy_authentification_handler}': 'proxy',
  '{couch_httpd_auth, null_authentication_handler}': 'null',
  // CouchDB's handler for its own test suite (X-Couch-Test-Auth): admin unless a test user is named.
  '{couch_httpd_auth, special_test_authentication_handler}': 'special',
  // CouchDB 3's JSON Web Token handler.
  '{couch_httpd_auth, jwt_authentication_handler}': 'jwt',
  // CouchDB 2 and 3 name the handlers of their clustered interface after chttpd_auth.
  '{chttpd_auth, cookie_authentication_handler}': 'cookie',
  '{chttpd_auth, default_authentication_handler}': 'default',
  '{chttpd_auth, proxy_authentication_handler}': 'proxy',
  '{chttpd_auth, jwt_authentication_handler}': 'jwt',
};
/** CouchDB 3's section of the handler list, read before 1.6's `[httpd]` when it is set. */
export const CHTTPD_SECTION = 'chttpd';
/** The HTTP server's settings: CouchDB 3's `[chttpd]` first, then 1.6's `[httpd]` (as 3.2+ reads them). */
export const HTTPD_SECTIONS = [CHTTPD_SECTION, 'httpd'] as const;
/** Where `require_valid_user` is read: CouchDB 3's `[chttpd]`, then the authentication sections. */
export const REQUIRE_VALID_USER_SECTIONS = [CHTTPD_SECTION, ...AUTH_SECTIONS] as const;
/** CouchDB 3's JSON Web Token settings: required claims and where the roles are. */
export const JWT_AUTH_SECTION = 'jwt_auth';
/** CouchDB 3's JSON Web Token keys, as `hmac:<kid>`, `rsa:<kid>` or `ec:<kid>`. */
export const JWT_KEYS_SECTION = 'jwt_keys';
/** The key id of a token that names none. */
export const JWT_DEFAULT_KID = '_default';
/** The claim that holds a token's roles unless `[jwt_auth] roles_claim_name` says otherwise. */
export const JWT_ROLES_CLAIM = '_couchdb.roles';
/** The request header and scheme the special test handler reads: `WWW-Authenticate: X-Couch-Test-Auth name:password`. */
export const TEST_AUTH_SCHEME = 'X-Couch-Test-Auth';
/** Config sections of OAuth 1.0 credentials, as CouchDB 1.6 reads them. */
export const OAUTH_CONSUMER_SECRETS = 'oauth_consumer_secrets';
export const OAUTH_TOKEN_SECRETS = 'oauth_token_secrets';
export const OAUTH_TOKEN_USERS = 'oauth_token_users';
export const HTTPD_OAUTH_SECTION = 'couch_httpd_oauth';
