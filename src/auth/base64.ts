/**
 * Base64 as Erlang/OTP's base64:decode reads it, which CouchDB uses for Basic credentials
 * (couch_httpd_auth:basic_name_pw) and the AuthSession cookie (couch_util:decodeBase64Url):
 * whitespace is skipped, the rest must be whole groups of four characters with `=` only as the
 * last group's padding. Node's decoder skips what it cannot read instead, which would turn a
 * malformed value into some other one.
 */

const STRICT_BASE64 = /^[A-Za-z0-9+/]*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The decoded bytes; undefined when base64:decode would fail on the text. */
export function decodeBase64Strictly(text: string): Buffer | undefined {
  const compact = text.replace(/[ \t\r\n]/g, '');
  if (compact.length % 4 !== 0 || !STRICT_BASE64.test(compact)) return undefined;
  return Buffer.from(compact, 'base64');
}

/** couch_util:decodeBase64Url: `-` and `_` read as `+` and `/`, padding added, then decoded. */
export function decodeBase64UrlStrictly(text: string): Buffer | undefined {
  const standard = text.replace(/-/g, '+').replace(/_/g, '/');
  return decodeBase64Strictly(standard + '='.repeat((4 - (standard.length % 4)) % 4));
}
