/** Process entry point (the `settee` bin and the test harness run this file). */
// First: V8 settings must be in place before the rest of the server's code runs.
import './v8-tuning.js';
import { main } from './cli.js';

// A stray rejected promise must not take every client's server down: report it and go on.
process.on('unhandledRejection', (reason) => {
  console.error('settee: unhandled rejection:', reason instanceof Error ? reason.stack : reason);
});

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
