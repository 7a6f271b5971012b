/**
 * CouchDB's `AuthSession` cookie: base64url of `name:<time in hex seconds>:<mac>`, the mac being
 * the raw HMAC-SHA1 of `name:<hex time>` keyed with the server secret followed by the user's
 * salt. A new password (new salt) thus ends every session of that user.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest } from '../errors.js';

export interface SessionToken {
  name: string;
  /** Seconds since the epoch when the token was issued. */
  issued: number;
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

/** Splits a cookie value; a value that is not CouchDB's shape is a 400, as CouchDB answers. */
export function parseSessionToken(value: string): SessionToken {
  const raw = Buffer.from(value, 'base64url');
  const first = raw.indexOf(0x3a); // ':'
  const second = first === -1 ? -1 : raw.indexOf(0x3a, first + 1);
  const hexTime = second === -1 ? '' : raw.subarray(first + 1, second).toString('latin1');
  if (second === -1 || !/^[0-9A-Fa-f]{1,12}$/.test(hexTime)) {
    throw badRequest('Malformed AuthSession cookie. Please clear your cookies.');
  }
  return { name: raw.subarray(0, first).toString('utf8'), issued: Number.parseInt(hexTime, 16), hexTime, mac: raw.subarray(second + 1) };
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
