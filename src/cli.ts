/**
 * `settee [--port N] [--bind ADDR] [--data-dir DIR] [--config LOCAL_INI]`
 * Each flag may also come from the environment: SETTEE_PORT, SETTEE_BIND, SETTEE_DATA_DIR,
 * SETTEE_CONFIG. Flags win over the environment, which wins over the ini files.
 */
import { parseArgs } from 'node:util';
import { Settee } from './settee.js';

const USAGE = `Usage: settee [--port N] [--bind ADDRESS] [--data-dir DIR] [--config LOCAL_INI] [--log-stderr]

  --port       HTTP port (default 5984; env SETTEE_PORT; 0 picks a free port)
  --bind       address to listen on (default 127.0.0.1; env SETTEE_BIND)
  --data-dir   where databases, local.ini and the log live (default ./data; env SETTEE_DATA_DIR)
  --config     the writable local.ini (default <data-dir>/local.ini; env SETTEE_CONFIG)
  --log-stderr copy log lines to stderr`;

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      bind: { type: 'string' },
      'data-dir': { type: 'string' },
      config: { type: 'string' },
      'log-stderr': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const env = process.env;
  const portText = values.port ?? env['SETTEE_PORT'];
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new Error(`Invalid port: ${portText}`);
  }
  const settee = await Settee.start({
    port,
    bind: values.bind ?? env['SETTEE_BIND'],
    dataDir: values['data-dir'] ?? env['SETTEE_DATA_DIR'],
    configFile: values.config ?? env['SETTEE_CONFIG'],
    logToStderr: values['log-stderr'] ?? false,
  });
  console.log(`Settee is listening on ${settee.url}`);
  if (settee.tlsUrl) console.log(`Settee is listening for HTTPS on ${settee.tlsUrl}`);
  const shutdown = () => {
    void settee.stop().finally(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}
