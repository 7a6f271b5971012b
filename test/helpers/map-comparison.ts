/**
 * Two query servers alike but for the map interpreter: one runs maps within its subset there,
 * the other runs every map in QuickJS. Each keeps its logs, so tests can require the same rows
 * and logs from both.
 */
import { after } from 'node:test';
import { QueryServer } from '../../src/js/query-server.js';

export class MapComparison {
  private constructor(
    readonly interpreted: QueryServer,
    readonly sandboxed: QueryServer,
    readonly interpretedLogs: string[],
    readonly sandboxedLogs: string[],
  ) {}

  /** A pair for the whole test file, closed after its tests (as serverForFile does for servers). */
  static async forFile(): Promise<MapComparison> {
    const servers = await MapComparison.start();
    after(() => servers.close());
    return servers;
  }

  private static async start(): Promise<MapComparison> {
    const options = { timeoutMs: 10000, memoryLimitBytes: 256 * 1024 * 1024, workers: 2 };
    const interpretedLogs: string[] = [];
    const sandboxedLogs: string[] = [];
    return new MapComparison(
      await QueryServer.create({ ...options, log: (m) => interpretedLogs.push(m), mapInterpreter: () => true }),
      await QueryServer.create({ ...options, log: (m) => sandboxedLogs.push(m), mapInterpreter: () => false }),
      interpretedLogs,
      sandboxedLogs,
    );
  }

  /** Empties both logs. */
  clearLogs(): void {
    this.interpretedLogs.length = 0;
    this.sandboxedLogs.length = 0;
  }

  /** Both logs, sorted (two workers: lines arrive in the order the batches finish). */
  sortedLogs(): { interpreted: string[]; sandboxed: string[] } {
    return { interpreted: [...this.interpretedLogs].sort(), sandboxed: [...this.sandboxedLogs].sort() };
  }

  /** The rows `server`'s program of these map functions gives for the documents (JSON texts). */
  async map(server: QueryServer, maps: readonly string[], docs: readonly string[]): Promise<unknown> {
    const views = Object.fromEntries(maps.map((map, i) => [`v${String(i).padStart(2, '0')}`, { map }]));
    const program = await server.views({ id: '_design/d', views });
    try {
      return await program.mapJson(docs);
    } finally {
      program.dispose();
    }
  }

  async close(): Promise<void> {
    await this.interpreted.close();
    await this.sandboxed.close();
  }
}
