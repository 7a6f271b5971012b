/**
 * Getting a QuickJS WebAssembly instance: the module is compiled once on the main thread and
 * shared (compiled code is posted to the workers, not compiled again in each).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { newQuickJSWASMModule, newVariant, RELEASE_SYNC, type QuickJSWASMModule } from 'quickjs-emscripten';

/** A compiled WebAssembly.Module (the WebAssembly global is not in this project's TypeScript lib). */
export type WasmModule = object;

/** QuickJS's WebAssembly, compiled; undefined if that failed (each instance then loads its own). */
export async function compileQuickJS(): Promise<WasmModule | undefined> {
  try {
    const require = createRequire(import.meta.url);
    const variant = createRequire(require.resolve('quickjs-emscripten')).resolve('@jitl/quickjs-wasmfile-release-sync/wasm');
    const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> } }).WebAssembly;
    return await wasm.compile(await readFile(variant));
  } catch {
    return undefined;
  }
}

/** A fresh QuickJS instance (its own memory) of the compiled module. */
export function newQuickJS(wasm: WasmModule | undefined): Promise<QuickJSWASMModule> {
  return newQuickJSWASMModule(wasm ? newVariant(RELEASE_SYNC, { wasmModule: wasm as never }) : RELEASE_SYNC);
}

/** Own property names of the sandbox's Object, Array, String, Number and Boolean prototypes. */
export function prototypeNamesOf(module: QuickJSWASMModule): string[] {
  const ctx = module.newContext();
  try {
    const names = ctx.unwrapResult(ctx.evalCode('[Object, Array, String, Number, Boolean].map(function (c) { return Object.getOwnPropertyNames(c.prototype); })'));
    const dumped = ctx.dump(names) as string[][];
    names.dispose();
    return [...new Set(dumped.flat())];
  } finally {
    ctx.dispose();
  }
}
