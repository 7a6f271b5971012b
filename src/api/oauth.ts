/**
 * `/_oauth/request_token`, `/_oauth/authorize`, `/_oauth/access_token`: CouchDB 1.6's OAuth
 * token endpoints. Like CouchDB's, they hand out its fixed demonstration tokens for a correctly
 * signed request (the auth engine checks the signature); real deployments configure tokens.
 */
import type { Handler, Route } from './route.js';
import { raw } from './reply.js';
import { methodNotAllowed, notFound } from '../errors.js';

const STEPS = ['request_token', 'authorize', 'access_token'] as const;
type Step = (typeof STEPS)[number];

const tokens: Handler = async (req, params, svc) => {
  const step = params.rest.length === 1 ? STEPS.find((s) => s === params.rest[0]) : undefined;
  if (!step) throw notFound('missing');
  if (!allowedMethods(step).includes(req.method)) {
    throw methodNotAllowed(allowedMethods(step).join(','));
  }
  return raw(200, await svc.auth.oauthTokens(req, step), 'application/x-www-form-urlencoded');
};

function allowedMethods(step: Step): string[] {
  return step === 'access_token' ? ['GET'] : ['GET', 'POST'];
}

export const oauthRoutes: Route[] = [
  { shape: 'global', name: '_oauth', access: 'public', methods: { GET: tokens, POST: tokens } },
];
