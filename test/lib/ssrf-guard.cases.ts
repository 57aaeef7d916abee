// The SSRF guard (lib/ssrf-guard.ts) against a real local server: what it refuses is never
// reached (the server counts its requests), what it lets through is, and a name is connected to
// the address that was checked, not to what a second lookup might say. No database.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import {
  BlockedAddressError,
  guardedAgent,
  isBlockedAddress,
  isPublicAddress,
  parseAllowedHost,
} from '../../lib/ssrf-guard';

describe('the SSRF guard', () => {
  let server: http.Server;
  let port: number;
  let hits = 0;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      if (req.url?.startsWith('/redirect')) {
        res.writeHead(302, { location: new URL(req.url, 'http://x').searchParams.get('to')! }).end();
      } else res.end('reached');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  /** The status of a GET through the guard, or the error it failed with. */
  async function get(url: string, options: Parameters<typeof guardedAgent>[0] = {}): Promise<unknown> {
    const dispatcher = guardedAgent(options);
    try {
      const answer = await request(url, { dispatcher });
      await answer.body.dump();
      return answer.statusCode;
    } catch (err) {
      return err;
    } finally {
      await dispatcher.close();
    }
  }

  it.each([
    ['127.0.0.1', false],
    ['10.0.0.1', false],
    ['172.16.5.4', false],
    ['192.168.1.1', false],
    ['100.64.0.1', false], // CGNAT
    ['169.254.169.254', false], // link-local: cloud metadata
    ['224.0.0.1', false],
    ['0.0.0.0', false],
    ['255.255.255.255', false],
    ['192.0.2.1', false], // reserved for documentation
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fc00::1', false],
    ['::ffff:127.0.0.1', false], // IPv4-mapped
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::7f00:1', false], // NAT64 of 127.0.0.1
    ['2002:7f00:1::', false], // 6to4 of 127.0.0.1
    // IPv4-compatible IPv6 (::/96) as URLs write it: [::127.0.0.1] becomes [::7f00:1] (issue 41, finding 10).
    ['::7f00:1', false],
    ['::a9fe:a9fe', false], // 169.254.169.254
    ['::a00:1', false], // 10.0.0.1
    ['::808:808', false], // even 8.8.8.8: ::/8 is reserved, nothing in it is public
    ['::ffff:0:7f00:1', false], // IPv4-translated
    ['64:ff9b::a9fe:a9fe', false], // NAT64 of the metadata address
    ['64:ff9b:1::a00:1', false], // local-use NAT64 of 10.0.0.1
    ['2002:a9fe:a9fe::1', false], // 6to4 of the metadata address
    ['2002:c0a8:101::', false], // 6to4 of 192.168.1.1
    ['2001::1', false], // Teredo
    ['not an address', false],
    ['8.8.8.8', true],
    ['2001:4860:4860::8888', true],
  ])('%s is public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });

  it('refuses a loopback literal before anything is sent', async () => {
    const before = hits;
    const err = await get(`http://127.0.0.1:${port}/`);
    expect(isBlockedAddress(err)).toBe(true);
    expect(err).toBeInstanceOf(BlockedAddressError);
    expect(hits).toBe(before);
  });

  it('refuses an IPv4-mapped IPv6 literal of loopback', async () => {
    expect(isBlockedAddress(await get(`http://[::ffff:127.0.0.1]:${port}/`))).toBe(true);
  });

  it('refuses IPv4-compatible IPv6 literals of loopback, whatever the URL writes (issue 41, finding 10)', async () => {
    const before = hits;
    for (const host of ['[::127.0.0.1]', '[::7f00:1]', '[0:0:0:0:0:0:7f00:1]', '[::ffff:7f00:1]'])
      expect({ host, blocked: isBlockedAddress(await get(`http://${host}:${port}/`)) }).toEqual({
        host,
        blocked: true,
      });
    expect(hits).toBe(before);
  });

  it("takes host:port entries: a listed port passes, the host's other ports stay refused (issue 41, finding 10)", async () => {
    const before = hits;
    expect(await get(`http://127.0.0.1:${port}/`, { allowHosts: [`127.0.0.1:${port}`] })).toBe(200);
    expect(hits).toBe(before + 1);
    const other = port === 65535 ? port - 1 : port + 1;
    expect(isBlockedAddress(await get(`http://127.0.0.1:${port}/`, { allowHosts: [`127.0.0.1:${other}`] }))).toBe(true);
    // The default port counts as written or not.
    expect(isBlockedAddress(await get(`http://127.0.0.1/`, { allowHosts: [`127.0.0.1:${port}`] }))).toBe(true);
    // A bare host still opens every port of it (documented: prefer host:port).
    expect(await get(`http://127.0.0.1:${port}/`, { allowHosts: ['127.0.0.1'] })).toBe(200);
    expect(parseAllowedHost('127.0.0.1:8080')).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(parseAllowedHost('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(parseAllowedHost('[::1]')).toEqual({ host: '::1', port: null });
    expect(parseAllowedHost('::1')).toEqual({ host: '::1', port: null });
    expect(parseAllowedHost('Receiver.Internal')).toEqual({ host: 'receiver.internal', port: null });
    for (const bad of ['', 'a:b:c', 'host:0', 'host:65536', 'host:x']) expect(parseAllowedHost(bad)).toBeNull();
  });

  it('lets a listed host through, as written: its names stay refused', async () => {
    expect(await get(`http://127.0.0.1:${port}/`, { allowHosts: ['127.0.0.1'] })).toBe(200);
    expect(isBlockedAddress(await get(`http://localhost:${port}/`, { allowHosts: ['127.0.0.1'] }))).toBe(true);
  });

  it('refuses a name that resolves to loopback (the resolver stub stands for an /etc/hosts entry)', async () => {
    const resolve = jest.fn(async () => [{ address: '127.0.0.1', family: 4 }]);
    const before = hits;
    expect(isBlockedAddress(await get(`http://rebind.example:${port}/`, { resolve }))).toBe(true);
    expect(resolve).toHaveBeenCalledWith('rebind.example');
    expect(hits).toBe(before);
  });

  it('connects to the address it checked, whatever a later lookup would say', async () => {
    // The name is listed, so its loopback answer passes; the connection must go to that checked
    // answer: a second lookup by the socket (which would say 10.255.255.1, unreachable) never happens.
    let lookups = 0;
    const resolve = async () =>
      lookups++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.255.255.1', family: 4 }];
    expect(await get(`http://listed.example:${port}/`, { resolve, allowHosts: ['listed.example'] })).toBe(200);
    expect(lookups).toBe(1);
  });

  it('checks every redirect: from a listed host to loopback by another name is refused', async () => {
    const dispatcher = guardedAgent({ allowHosts: ['127.0.0.1'] });
    try {
      const first = await request(`http://127.0.0.1:${port}/redirect?to=http://localhost:${port}/`, { dispatcher });
      await first.body.dump();
      expect(first.statusCode).toBe(302);
      const before = hits;
      const err = await request(first.headers.location as string, { dispatcher }).catch((e: unknown) => e);
      expect(isBlockedAddress(err)).toBe(true);
      expect(hits).toBe(before);
    } finally {
      await dispatcher.close();
    }
  });

  it('a name that does not resolve fails with the resolver error, not as blocked', async () => {
    const err = await get(`http://nowhere.invalid:${port}/`, {
      resolve: () => Promise.reject(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' })),
    });
    expect(isBlockedAddress(err)).toBe(false);
    expect((err as { code?: string }).code).toBe('ENOTFOUND');
  });
});
