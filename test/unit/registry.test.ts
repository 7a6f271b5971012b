/** The database registry against a real LMDB backend: opening and creating the same name at once. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbBackend } from '../../src/storage/lmdb.js';
import { DatabaseRegistry } from '../../src/core/registry.js';

test('creating a database while an open of the missing name is under way still creates it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'settee-registry-'));
  const backend = new LmdbBackend(dir);
  const registry = new DatabaseRegistry(backend, () => ({
    maxDbsOpen: 100, revsLimit: 1000, attachments: { compressibleTypes: '', compressionLevel: 0 },
  }));
  try {
    // The open starts first and fails (no such database); the creation must not share its failure.
    const opening = registry.get('people').then(() => 'opened', (err: { status?: number }) => err.status);
    const created = await registry.create('people');
    assert.equal(created.name, 'people');
    assert.equal(await opening, 404);
    assert.equal((await registry.get('people')).name, 'people');
  } finally {
    await registry.closeAll();
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
