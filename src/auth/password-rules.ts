/**
 * `[couch_httpd_auth] password_regexp` (CouchDB 3): the regular expressions a new user-document
 * password must match, as an Erlang list whose items are `"RegExp"`, `{"RegExp"}` or
 * `{"RegExp", "Reason"}`. The first one a password misses refuses it (400, with its reason); a
 * setting that is not such a list refuses every password (403), as couch_users_db does.
 */
import { badRequest, forbidden, type CouchError } from '../errors.js';
import { parseErlangTerm, type ErlTerm } from '../config/erlang-term.js';

const REQUIREMENT_ERROR = 'Password does not conform to requirements.';
const PASSWORD_SERVER_ERROR = 'Server cannot hash passwords at this time.';

interface Requirement {
  pattern: RegExp;
  message: string;
}

/** Why `password` is refused under the setting `rules` (its text); undefined when it passes. */
export function passwordRefusal(password: string, rules: string): CouchError | undefined {
  if (rules === '' || rules === '[]') return undefined;
  const requirements = parseRules(rules);
  if (!requirements) return forbidden(PASSWORD_SERVER_ERROR);
  for (const { pattern, message } of requirements) {
    if (!pattern.test(password)) return badRequest(message);
  }
  return undefined;
}

function parseRules(text: string): Requirement[] | undefined {
  const term = parseErlangTerm(text);
  if (term?.t !== 'list') return undefined;
  const out: Requirement[] = [];
  for (const item of term.items) {
    const requirement = requirementOf(item);
    if (!requirement) return undefined;
    out.push(requirement);
  }
  return out;
}

/** An Erlang string is a list: the empty list is the empty pattern. */
function patternText(term: ErlTerm | undefined): string | undefined {
  if (term?.t === 'text') return term.v;
  if (term?.t === 'list' && term.items.length === 0) return '';
  return undefined;
}

function requirementOf(item: ErlTerm): Requirement | undefined {
  let source: string | undefined;
  let message = REQUIREMENT_ERROR;
  if (item.t === 'tuple' && (item.items.length === 1 || item.items.length === 2)) {
    source = patternText(item.items[0]);
    const reason = item.items[1];
    if (reason?.t === 'text' && reason.v !== '') message = `${REQUIREMENT_ERROR} ${reason.v}`;
  } else {
    source = patternText(item);
  }
  if (source === undefined) return undefined;
  try {
    return { pattern: new RegExp(source, 'u'), message };
  } catch {
    return undefined;
  }
}
