/** Process entry point (the `settee` bin and the test harness run this file). */
import { main } from './cli.js';

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
