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

export const HEADER_FULL_COMMIT = 'x-couch-full-commit';
export const HEADER_PERSIST = 'x-couch-persist';
export const HEADER_UPDATE_NEWREV = 'X-Couch-Update-NewRev';
export const HEADER_ID = 'X-Couch-Id';
export const HEADER_WWW_AUTHENTICATE = 'x-couchdb-www-authenticate';
export const HEADER_PROXY_USERNAME = 'x-auth-couchdb-username';
export const HEADER_PROXY_ROLES = 'x-auth-couchdb-roles';
export const HEADER_PROXY_TOKEN = 'x-auth-couchdb-token';
export const AUTH_COOKIE = 'AuthSession';

/** The statistics section that CouchDB names after itself. */
export const STATS_CORE_SECTION = 'couchdb';
