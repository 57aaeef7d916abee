// A Server-Sent Events reader for the tests: real HTTP, frames parsed as EventSource would.
export interface Frame {
  id?: string;
  event?: string;
  data: any;
}

export interface OpenStream {
  status: number;
  headers: Headers;
  /** Error body when the stream did not start. */
  body?: any;
  frames: Frame[];
  /** The raw text received, comments included. */
  text(): string;
  /** Resolves when `count` frames match, rejects after `timeoutMs`. */
  waitFor(match: (f: Frame) => boolean, count?: number, timeoutMs?: number): Promise<Frame[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openStream(
  url: string,
  options: { token?: string; lastEventId?: string } = {},
): Promise<OpenStream> {
  const abort = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
  const res = await fetch(url, { headers, signal: abort.signal });
  const frames: Frame[] = [];
  let raw = '';
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const body = await res.json();
    return {
      status: res.status,
      headers: res.headers,
      body,
      frames,
      text: () => raw,
      waitFor: () => Promise.reject(new Error('no stream')),
      ended: Promise.resolve(),
      close() {},
    };
  }
  const listeners = new Set<() => void>();
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        const text = decoder.decode(chunk, { stream: true });
        raw += text;
        buffered += text;
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const field = (name: string) => new RegExp(`^${name}: ?(.*)$`, 'm').exec(block)?.[1];
          const data = field('data');
          if (data === undefined) continue; // a comment or retry line
          frames.push({ id: field('id'), event: field('event'), data: JSON.parse(data) });
          for (const l of listeners) l();
        }
      }
    } catch {
      /* aborted */
    }
    for (const l of listeners) l();
  })();
  return {
    status: res.status,
    headers: res.headers,
    frames,
    text: () => raw,
    ended,
    waitFor(match, count = 1, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = frames.filter(match);
          if (found.length >= count) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(
            new Error(`timed out waiting for ${count} frame(s); got ${JSON.stringify(frames.map((f) => f.event))}`),
          );
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    close: () => abort.abort(),
  };
}
