/**
 * Faster strings into QuickJS's memory. quickjs-emscripten copies every string it hands to
 * QuickJS (documents, batches of rows, source code) with Emscripten's `lengthBytesUTF8` and
 * `stringToUTF8`, which walk the string one UTF-16 unit at a time in JavaScript: about a third of
 * the cost of a map call on a ~250-byte document. Node's own UTF-8 encoder writes the same
 * bytes for every well-formed string; strings with lone surrogates keep Emscripten's encoding.
 */
import type { QuickJSWASMModule } from 'quickjs-emscripten';

interface EmscriptenStrings {
  HEAPU8: Uint8Array;
  lengthBytesUTF8(text: string): number;
  stringToUTF8(text: string, pointer: number, maxBytes: number): number;
}

/** `String.prototype.isWellFormed` (Node 20; not in this project's TypeScript lib yet). */
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Replaces the string encoders of `module`'s Emscripten instance; a no-op if it has none. */
export function useNativeUtf8(module: QuickJSWASMModule): void {
  const emscripten = (module as unknown as { module?: Partial<EmscriptenStrings> }).module;
  if (!emscripten || typeof emscripten.lengthBytesUTF8 !== 'function' || typeof emscripten.stringToUTF8 !== 'function') return;
  const m = emscripten as EmscriptenStrings;
  const length = m.lengthBytesUTF8.bind(m);
  const write = m.stringToUTF8.bind(m);
  m.lengthBytesUTF8 = (text) => (isWellFormed(text) ? Buffer.byteLength(text, 'utf8') : length(text));
  m.stringToUTF8 = (text, pointer, maxBytes) => {
    if (!isWellFormed(text) || maxBytes <= 0) return write(text, pointer, maxBytes);
    // HEAPU8 is replaced when the memory grows: take the current one on every call.
    const heap = m.HEAPU8;
    const written = Buffer.from(heap.buffer, heap.byteOffset, heap.byteLength).write(text, pointer, maxBytes - 1, 'utf8');
    heap[pointer + written] = 0;
    return written;
  };
}
