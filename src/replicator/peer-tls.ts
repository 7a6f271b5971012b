/**
 * TLS for HTTPS replication peers, from CouchDB 1.6's `[replicator]` settings
 * (couch_replicator_utils:ssl_params): `verify_ssl_certificates` (off by default, as in CouchDB:
 * a peer's certificate is then not checked), `ssl_trusted_certificates_file` (the CAs trusted when
 * verifying; Node's own list when unset), `ssl_certificate_max_depth` (intermediate
 * certificates allowed between the peer's and the trusted one), and a client certificate
 * (`cert_file` and `key_file`, with `password` for an encrypted key).
 */
import { readFileSync } from 'node:fs';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import type { Config } from '../config/config.js';
import { CouchError } from '../errors.js';

/** What an HTTPS agent is given for a peer (a subset of Node's TLS connection options). */
export interface PeerTlsOptions {
  rejectUnauthorized: boolean;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  passphrase?: string;
  checkServerIdentity?: (host: string, cert: PeerCertificate) => Error | undefined;
}

const DEFAULT_MAX_DEPTH = 3;

export function peerTlsFromConfig(config: Config): PeerTlsOptions {
  const verify = config.getString('replicator', 'verify_ssl_certificates', 'false') === 'true';
  const options: PeerTlsOptions = { rejectUnauthorized: verify };
  if (verify) {
    const trusted = config.get('replicator', 'ssl_trusted_certificates_file');
    if (trusted !== undefined && trusted !== '') options.ca = readSettingFile('ssl_trusted_certificates_file', trusted);
    const maxDepth = config.getInt('replicator', 'ssl_certificate_max_depth', DEFAULT_MAX_DEPTH);
    options.checkServerIdentity = (host, cert) => checkServerIdentity(host, cert) ?? depthError(cert, maxDepth);
  }
  // As CouchDB, a client certificate needs both files; the password only unlocks the key.
  const certFile = config.get('replicator', 'cert_file');
  const keyFile = config.get('replicator', 'key_file');
  if (certFile && keyFile) {
    options.cert = readSettingFile('cert_file', certFile);
    options.key = readSettingFile('key_file', keyFile);
    const password = config.get('replicator', 'password');
    if (password !== undefined) options.passphrase = password;
  }
  return options;
}

function readSettingFile(setting: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new CouchError(500, 'replication_peer_error', `[replicator] ${setting} ${path} cannot be read: ${(err as Error).message}`);
  }
}

/** A certificate in the chain Node hands `checkServerIdentity` (each links to its issuer). */
type ChainCertificate = PeerCertificate & { issuerCertificate?: ChainCertificate };

/** Whether a certificate issued itself (a root): Node links a root to itself. */
function selfIssued(cert: ChainCertificate): boolean {
  const issuer = cert.issuerCertificate;
  return issuer === undefined || issuer === cert || issuer.fingerprint256 === cert.fingerprint256;
}

/**
 * Erlang's `depth`: how many intermediate certificates may sit between the peer's certificate
 * and the trusted root.
 */
function depthError(peer: ChainCertificate, maxDepth: number): Error | undefined {
  let intermediates = 0;
  for (let cert = peer; !selfIssued(cert); cert = cert.issuerCertificate!) {
    if (!selfIssued(cert.issuerCertificate!)) intermediates++;
  }
  if (intermediates <= maxDepth) return undefined;
  return new Error(`the certificate chain has ${intermediates} intermediate certificates, more than [replicator] ssl_certificate_max_depth ${maxDepth}`);
}
