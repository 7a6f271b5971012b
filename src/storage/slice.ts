/** Skip and limit applied to a chunked scan (see ReadView.rangeChunks), chunk by chunk. */
export async function* skipAndLimit<T>(chunks: AsyncIterable<T[]>, skip: number, limit: number): AsyncIterable<T[]> {
  if (limit <= 0) return;
  for await (const chunk of chunks) {
    let from = 0;
    if (skip > 0) {
      from = Math.min(skip, chunk.length);
      skip -= from;
    }
    const take = Math.min(chunk.length - from, limit);
    if (take <= 0) continue;
    yield from === 0 && take === chunk.length ? chunk : chunk.slice(from, from + take);
    limit -= take;
    if (limit <= 0) return;
  }
}
