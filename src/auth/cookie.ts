/**
 * CouchDB's `AuthSession` cookie: base64url of `name:<time in hex seconds>:<mac>`, the mac being
 * the raw HMAC-SHA1 of `name:<hex time>` keyed with the server secret followed by the user's
 * salt. A new password (new salt) thus ends every session of that user.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest } from '../errors.js';
import { decodeBase64UrlStrictly } from './base64.js';

export interface SessionToken {
  name: string;
  /** Seconds since the epoch when the token was issued; undefined when the time is no number. */
  issued: number | undefined;
  /** The issue time as the token spells it (the mac covers this text). */
  hexTime: string;
  mac: Buffer;
}

function mac(secret: string, salt: string, name: string, hexTime: string): Buffer {
  return createHmac('sha1', secret + salt).update(`${name}:${hexTime}`).digest();
}

export function makeSessionToken(name: string, issued: number, secret: string, salt: string): string {
  const hexTime = issued.toString(16).toUpperCase();
  const raw = Buffer.concat([Buffer.from(`${name}:${hexTime}:`, 'utf8'), mac(secret, salt, name, hexTime)]);
  return raw.toString('base64url');
}

/**
 * Splits a cookie value as couch_httpd_auth:cookie_authentication_handler does: one that does
 * not decode or has fewer than three `:`-separated parts is a 400; a time that is no hex number
 * (list_to_integer fails) only makes the cookie authenticate no one.
 */
export function parseSessionToken(value: string): SessionToken {
  const raw = decodeBase64UrlStrictly(value);
  const first = raw ? raw.indexOf(0x3a) : -1; // ':'
  const second = first === -1 ? -1 : raw!.indexOf(0x3a, first + 1);
  if (!raw || second === -1) throw badRequest('Malformed AuthSession cookie. Please clear your cookies.');
  const hexTime = raw.subarray(first + 1, second).toString('latin1');
  const issued = /^[+-]?[0-9A-Fa-f]+$/.test(hexTime) ? Number.parseInt(hexTime, 16) : undefined;
  return { name: raw.subarray(0, first).toString('utf8'), issued, hexTime, mac: raw.subarray(second + 1) };
}

/** Whether the token's mac is the one this secret and salt give (constant-time). */
export function tokenMacValid(token: SessionToken, secret: string, salt: string): boolean {
  const expected = mac(secret, salt, token.name, token.hexTime);
  return expected.length === token.mac.length && timingSafeEqual(expected, token.mac);
}

/** The value of one cookie in a `Cookie` header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return undefined;
}
