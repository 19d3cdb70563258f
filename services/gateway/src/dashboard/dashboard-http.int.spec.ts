/**
 * The dashboard's backend over HTTP, with the real identity service behind the gateway (in process): sign-in, the
 * session cookie and its end, the CSRF defence, and the role rules when a dashboard user makes API keys.
 */
import type { AddressInfo } from 'node:net';
import { InProcessMessageBus } from '@switchyard/bus';
import { IdentityService } from '@switchyard/identity';
import { InMemoryRateLimiter, type RateLimiter } from '@switchyard/kv';
import { openServiceStorage, type ServiceStorage } from '@switchyard/readmodel';
import { InProcessRpc } from '@switchyard/rpc';
import { expectErrorBody, signToken, createTestDataDir, removeTestDataDir } from '@switchyard/testing';
import request from 'supertest';
import { startGateway, type RunningGateway } from '../start-gateway';
import { SIGN_IN_LIMITS } from './dashboard-session.controller';
import { DEFAULT_DASHBOARD_SETTINGS } from './dashboard-settings';
import { SESSION_COOKIE } from './session-cookie';

const PASSWORD = 'correct horse battery staple';

let dataDir: string;
let storage: ServiceStorage;
let identity: IdentityService;
let bus: InProcessMessageBus;
let gateway: RunningGateway;
let baseUrl: string;
let http: () => request.Agent;

beforeAll(async () => {
  dataDir = createTestDataDir('dashboard-http');
  storage = openServiceStorage('identity', { dataDir });
  identity = new IdentityService({ store: storage.store, db: storage.db });
  await identity.start();
  const rpc = new InProcessRpc();
  rpc.register(identity.rpcHandlers());
  bus = new InProcessMessageBus();
  gateway = await startGateway({ rpc, bus, clockSkewSeconds: 30, keyUsageFlushMs: 60_000, jwtVerifyWorkers: 0 });
  await gateway.app.listen(0, '127.0.0.1');
  baseUrl = `http://127.0.0.1:${(gateway.app.getHttpServer().address() as AddressInfo).port}`;
  http = () => request.agent(baseUrl);
});

afterAll(async () => {
  await gateway?.stop();
  await bus?.close();
  await identity?.stop();
  await storage?.close();
  removeTestDataDir(dataDir);
});

afterEach(() => vi.useRealTimers());

let userCount = 0;
async function newUser(roles: string[], options: { password?: string | null } = {}) {
  userCount += 1;
  const email = `user${userCount}@example.com`;
  const password = options.password === undefined ? PASSWORD : options.password;
  const user = await identity.users.create({
    email,
    display_name: `User ${userCount}`,
    roles,
    ...(password !== null ? { password } : {}),
  });
  return { ...user, email };
}

interface SignedIn {
  readonly cookie: string;
  readonly csrf: string;
  readonly setCookie: string;
}

/** Signs in from the dashboard's own page: the browser sends `Origin` and `Sec-Fetch-Site: same-origin`. */
async function signIn(email: string, password = PASSWORD): Promise<SignedIn> {
  const response = await http()
    .post('/dashboard/api/login')
    .set('origin', baseUrl)
    .set('sec-fetch-site', 'same-origin')
    .send({ email, password })
    .expect(200);
  const setCookie = String(response.headers['set-cookie']);
  const id = new RegExp(`${SESSION_COOKIE}=([^;]+)`).exec(setCookie)?.[1];
  expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return { cookie: `${SESSION_COOKIE}=${id}`, csrf: (response.body as { csrf_token: string }).csrf_token, setCookie };
}

/** A state-changing request as the dashboard's page sends it. */
const post = (session: SignedIn, url: string, body: unknown = {}) =>
  http()
    .post(url)
    .set('cookie', session.cookie)
    .set('origin', baseUrl)
    .set('sec-fetch-site', 'same-origin')
    .set('x-csrf-token', session.csrf)
    .send(body as object);
const get = (session: SignedIn, url: string) => http().get(url).set('cookie', session.cookie);

describe('signing in', () => {
  it('gives a session cookie (HttpOnly, SameSite=Strict, Path=/dashboard, not Secure over http) and the CSRF token; never a hash', async () => {
    const user = await newUser(['analyst']);
    const response = await http()
      .post('/dashboard/api/login')
      .set('origin', baseUrl)
      .send({ email: user.email.toUpperCase(), password: PASSWORD })
      .expect(200);
    const cookie = String(response.headers['set-cookie']);
    expect(cookie).toMatch(
      new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{43}; Path=/dashboard; HttpOnly; SameSite=Strict$`),
    );
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toMatchObject({
      user: { id: user.id, email: user.email, active: true },
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(response.body.permissions).toContain('transactions.read');
    expect(JSON.stringify(response.body)).not.toMatch(/argon2|password_hash|passwordHash/);
  });

  it('marks the cookie Secure when the request came over https (DASHBOARD_COOKIE_SECURE=always stands for a TLS proxy)', async () => {
    const user = await newUser(['analyst']);
    const secure = await startGateway({
      rpc: (() => {
        const rpc = new InProcessRpc();
        rpc.register(identity.rpcHandlers());
        return rpc;
      })(),
      bus,
      clockSkewSeconds: 30,
      keyUsageFlushMs: 60_000,
      jwtVerifyWorkers: 0,
      dashboard: { ...DEFAULT_DASHBOARD_SETTINGS, cookieSecure: 'always' },
    });
    try {
      const server = secure.app.getHttpServer();
      const response = await request(server)
        .post('/dashboard/api/login')
        .set('sec-fetch-site', 'same-origin')
        .send({ email: user.email, password: PASSWORD })
        .expect(200);
      expect(String(response.headers['set-cookie'])).toMatch(/; Secure$/);
    } finally {
      await secure.stop();
    }
  });

  it('refuses a wrong password and an unknown email with the same 401, and a user without a password', async () => {
    const user = await newUser(['analyst']);
    const noPassword = await newUser(['analyst'], { password: null });
    const answers = await Promise.all(
      [
        { email: user.email, password: `${PASSWORD}!` },
        { email: 'nobody@example.com', password: PASSWORD },
        { email: noPassword.email, password: PASSWORD },
      ].map((credentials) => http().post('/dashboard/api/login').set('origin', baseUrl).send(credentials)),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({
        type: 'error',
        code: 'unauthorized',
        status: 401,
        message: 'The email or password is wrong',
        details: [],
      });
      expect(answer.headers['set-cookie']).toBeUndefined();
    }
  });

  it('refuses a deactivated user, and ends the sessions of a user deactivated while signed in', async () => {
    const user = await newUser(['analyst']);
    const session = await signIn(user.email);
    await get(session, '/dashboard/api/session').expect(200);
    await identity.users.update(user.id, { active: false });
    const refused = await http()
      .post('/dashboard/api/login')
      .set('origin', baseUrl)
      .send({ email: user.email, password: PASSWORD })
      .expect(403);
    expect(refused.body).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/deactivated/) });
    const ended = await get(session, '/dashboard/api/session').expect(401);
    expect(String(ended.headers['set-cookie'])).toMatch(new RegExp(`^${SESSION_COOKIE}=; .*Max-Age=0$`));
    await identity.users.update(user.id, { active: true });
    await get(session, '/dashboard/api/session').expect(401);
  });

  it('answers a body without an email or password with a 400 that does not echo them', async () => {
    const response = await http()
      .post('/dashboard/api/login')
      .set('origin', baseUrl)
      .send({ email: 'a@example.com', password: 12345678901234 })
      .expect(400);
    expect(response.body.details).toEqual([
      { location: 'body', pointer: '/password', message: 'must be a non-empty string', type: 'invalid_password' },
    ]);
    expect(JSON.stringify(response.body)).not.toContain('12345678901234');
  });

  it('limits sign-in attempts per email: the eleventh within 15 minutes is a 429 with Retry-After, even with the right password', async () => {
    const user = await newUser(['analyst']);
    for (let attempt = 0; attempt < 10; attempt++) {
      await http()
        .post('/dashboard/api/login')
        .set('origin', baseUrl)
        .send({ email: user.email, password: 'wrong wrong wrong' })
        .expect(401);
    }
    const limited = await http()
      .post('/dashboard/api/login')
      .set('origin', baseUrl)
      .send({ email: user.email, password: PASSWORD })
      .expect(429);
    expectErrorBody(limited.body, 429, 'too_many_requests');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('the per-address sign-in limit', () => {
  /** The real limiter, with the per-address limit cut to 3 so that a test need not make 100 sign-ins. */
  const scaledLimiter = (): RateLimiter & { close(): Promise<void> } => {
    const limiter = new InMemoryRateLimiter();
    return {
      consume: (key, limit) =>
        limiter.consume(key, limit === SIGN_IN_LIMITS.perAddress ? { ...limit, count: 3 } : limit),
      close: () => limiter.close(),
    };
  };

  async function attemptsFrom(
    trustedProxies: readonly string[] | undefined,
    addresses: readonly string[],
  ): Promise<number[]> {
    const rpc = new InProcessRpc();
    rpc.register(identity.rpcHandlers());
    const limiter = scaledLimiter();
    const behindProxy = await startGateway({
      rpc,
      bus,
      clockSkewSeconds: 30,
      keyUsageFlushMs: 60_000,
      jwtVerifyWorkers: 0,
      rateLimiter: limiter,
      ...(trustedProxies ? { trustedProxies } : {}),
    });
    try {
      const statuses: number[] = [];
      for (const [attempt, address] of addresses.entries()) {
        const answer = await request(behindProxy.app.getHttpServer())
          .post('/dashboard/api/login')
          .set('sec-fetch-site', 'same-origin')
          .set('x-forwarded-for', address)
          .send({ email: `nobody${attempt}-${address}@example.com`, password: 'wrong wrong wrong' });
        statuses.push(answer.status);
      }
      return statuses;
    } finally {
      await behindProxy.stop();
      await limiter.close();
    }
  }

  it('counts each client behind a trusted proxy (TRUSTED_PROXIES) by its X-Forwarded-For address', async () => {
    const statuses = await attemptsFrom(
      ['127.0.0.1'],
      ['203.0.113.7', '203.0.113.7', '203.0.113.7', '203.0.113.7', '198.51.100.9'],
    );
    expect(statuses).toEqual([401, 401, 401, 429, 401]);
  });

  it('ignores X-Forwarded-For without the setting: a forged one does not escape the limit', async () => {
    const statuses = await attemptsFrom(undefined, ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4']);
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const statuses = await attemptsFrom(['10.0.0.0/8'], ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4']);
    expect(statuses).toEqual([401, 401, 401, 429]);
  });
});

describe('the session', () => {
  it('is required: no cookie, or one that names no session, is a 401', async () => {
    expectErrorBody((await http().get('/dashboard/api/session').expect(401)).body, 401, 'unauthorized');
    await http()
      .get('/dashboard/api/session')
      .set('cookie', `${SESSION_COOKIE}=${'x'.repeat(43)}`)
      .expect(401);
  });

  it('ends after the idle timeout without use, and at its maximum age however used', async () => {
    const user = await newUser(['analyst']);
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = Date.now();
    const idle = await signIn(user.email);
    vi.setSystemTime(start + DEFAULT_DASHBOARD_SETTINGS.idleTimeoutMs - 1_000);
    await get(idle, '/dashboard/api/session').expect(200);
    // Used a moment ago: its idle end moved on.
    vi.setSystemTime(start + DEFAULT_DASHBOARD_SETTINGS.idleTimeoutMs + 60_000);
    await get(idle, '/dashboard/api/session').expect(200);
    vi.setSystemTime(Date.now() + DEFAULT_DASHBOARD_SETTINGS.idleTimeoutMs + 1);
    await get(idle, '/dashboard/api/session').expect(401);

    const busy = await signIn(user.email);
    const signedInAt = Date.now();
    const step = DEFAULT_DASHBOARD_SETTINGS.idleTimeoutMs / 2;
    for (let at = signedInAt + step; at < signedInAt + DEFAULT_DASHBOARD_SETTINGS.maxAgeMs; at += step) {
      vi.setSystemTime(at);
      await get(busy, '/dashboard/api/session').expect(200);
    }
    vi.setSystemTime(signedInAt + DEFAULT_DASHBOARD_SETTINGS.maxAgeMs);
    await get(busy, '/dashboard/api/session').expect(401);
  });

  it('ends at sign-out: the cookie is dropped and the id is no longer accepted', async () => {
    const user = await newUser(['analyst']);
    const session = await signIn(user.email);
    const out = await post(session, '/dashboard/api/logout').expect(204);
    expect(String(out.headers['set-cookie'])).toMatch(/Max-Age=0/);
    await get(session, '/dashboard/api/session').expect(401);
  });

  it('starts anew at each sign-in: the session the browser had is ended', async () => {
    const user = await newUser(['analyst']);
    const first = await signIn(user.email);
    await http()
      .post('/dashboard/api/login')
      .set('cookie', first.cookie)
      .set('origin', baseUrl)
      .send({ email: user.email, password: PASSWORD })
      .expect(200);
    await get(first, '/dashboard/api/session').expect(401);
  });
});

describe('CSRF', () => {
  let session: SignedIn;
  beforeAll(async () => {
    const user = await newUser(['analyst']);
    session = await signIn(user.email);
  });

  it('refuses a state-changing request without the CSRF token, or with another one (403)', async () => {
    const missing = await http()
      .post('/dashboard/api/logout')
      .set('cookie', session.cookie)
      .set('origin', baseUrl)
      .send({})
      .expect(403);
    expect(missing.body).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/x-csrf-token/) });
    await http()
      .post('/dashboard/api/logout')
      .set('cookie', session.cookie)
      .set('origin', baseUrl)
      .set('x-csrf-token', 'A'.repeat(43))
      .send({})
      .expect(403);
    await get(session, '/dashboard/api/session').expect(200);
  });

  it('refuses a request from another origin or site even with the right token (403), and one that says nothing of where it comes from', async () => {
    const from = (headers: Record<string, string>) => {
      const sent = http().post('/dashboard/api/logout').set('cookie', session.cookie).set('x-csrf-token', session.csrf);
      for (const [name, value] of Object.entries(headers)) sent.set(name, value);
      return sent.send({});
    };
    const elsewhere: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site', origin: baseUrl },
      {},
    ];
    for (const headers of elsewhere) {
      const refused = await from(headers);
      expect(refused.status, JSON.stringify(headers)).toBe(403);
      expect(refused.body.message).toMatch(/^Refused: /);
    }
    // Sign-in too: another site cannot sign a browser in to an account of its choosing.
    await http()
      .post('/dashboard/api/login')
      .set('origin', 'https://evil.example')
      .send({ email: 'x@example.com', password: PASSWORD })
      .expect(403);
    await get(session, '/dashboard/api/session').expect(200);
  });

  it('lets the page itself through: same origin and the token', async () => {
    const user = await newUser(['analyst']);
    const own = await signIn(user.email);
    await http()
      .post('/dashboard/api/logout')
      .set('cookie', own.cookie)
      .set('sec-fetch-site', 'same-origin')
      .set('x-csrf-token', own.csrf)
      .send({})
      .expect(204);
  });
});

describe('API keys made by a dashboard user', () => {
  it('needs a role that grants api-key-pairs: an analyst may not see or make keys (403)', async () => {
    const analyst = await signIn((await newUser(['analyst'])).email);
    await get(analyst, '/dashboard/api/api-key-pairs').expect(403);
    const refused = await post(analyst, '/dashboard/api/api-key-pairs', {
      display_name: 'k',
      role_ids: ['5b3ac0a4-7e2a-4c61-9d11-6f1c2e8b0a05'],
    }).expect(403);
    expect(refused.body.message).toMatch(/api-key-pairs\.write/);
  });

  it('assigns as a dashboard user: administrator and key-manager may be given; a broken set is a 400 naming the rule', async () => {
    const manager = await newUser(['administrator']);
    const session = await signIn(manager.email);
    const role = (slug: string) => identity.roles.list({ limit: 100 }).items.find((one) => one.slug === slug)!.id;

    const admin = await post(session, '/dashboard/api/api-key-pairs', {
      display_name: 'ops admin',
      role_ids: [role('administrator')],
    }).expect(201);
    expect(admin.body).toMatchObject({
      display_name: 'ops admin',
      active: true,
      private_key: expect.stringContaining('PRIVATE KEY'),
    });
    const [created] = await storage.store.readStream(`api-key-pair-${admin.body.id as string}`);
    expect(created?.data).toMatchObject({ createdBy: { kind: 'user', id: manager.id } });

    await post(session, '/dashboard/api/api-key-pairs', {
      display_name: 'integration manager',
      role_ids: [role('integration'), role('key-manager')],
    }).expect(201);
    const broken = await post(session, '/dashboard/api/api-key-pairs', {
      display_name: 'lonely',
      role_ids: [role('key-manager')],
    }).expect(400);
    expect(broken.body).toMatchObject({
      code: 'bad_request',
      message: expect.stringMatching(/needs at least one role that can stand alone/),
    });
    const mixed = await post(session, '/dashboard/api/api-key-pairs', {
      display_name: 'mixed',
      role_ids: [role('administrator'), role('analyst')],
    }).expect(400);
    expect(mixed.body.message).toMatch(/administrator must be the only role/);

    // The same administrator assignment over the API, by an API key with key-manager, is refused (403).
    const keyManagerKey = await identity.apiKeyPairs.create(
      { display_name: 'km', roles: ['key-manager', 'analyst'] },
      { kind: 'operator' },
    );
    const token = await signToken({ kid: keyManagerKey.kid, privateKeyPem: keyManagerKey.private_key! });
    const viaApi = await http()
      .post('/api-key-pairs')
      .set('authorization', `Bearer ${token}`)
      .send({ display_name: 'x', role_ids: [role('administrator')] })
      .expect(403);
    expect(viaApi.body.message).toMatch(/only a dashboard user can assign administrator/);
  });

  it('grants only what the user holds (issue 22, item 5): analyst + key-manager makes no administrator or integration key', async () => {
    const session = await signIn((await newUser(['analyst', 'key-manager'])).email);
    const role = (slug: string) => identity.roles.list({ limit: 100 }).items.find((one) => one.slug === slug)!.id;
    for (const roleIds of [
      [role('administrator')],
      [role('integration')],
      [role('system-manager'), role('key-manager')],
    ]) {
      const refused = await post(session, '/dashboard/api/api-key-pairs', {
        display_name: 'escalate',
        role_ids: roleIds,
      }).expect(403);
      expect(refused.body.message).toMatch(/you can grant only permissions you hold/);
    }
    await post(session, '/dashboard/api/api-key-pairs', {
      display_name: 'reader',
      role_ids: [role('analyst'), role('key-manager')],
    }).expect(201);
    // Nor revoke a key that holds more than the user: an administrator key stays active.
    const adminKey = await identity.apiKeyPairs.create(
      { display_name: 'admin key', roles: ['administrator'] },
      { kind: 'operator' },
    );
    await post(session, `/dashboard/api/api-key-pairs/${adminKey.id}/revoke`).expect(403);
  });

  it('lists keys and revokes one: tokens signed with it are refused at once', async () => {
    const session = await signIn((await newUser(['administrator'])).email);
    const analystRole = identity.roles.list({ limit: 100 }).items.find((one) => one.slug === 'analyst')!.id;
    const made = (
      await post(session, '/dashboard/api/api-key-pairs', { display_name: 'reader', role_ids: [analystRole] }).expect(
        201,
      )
    ).body as { id: string; kid: string; private_key: string };
    const token = await signToken({ kid: made.kid, privateKeyPem: made.private_key, expiresIn: 300 });
    await http().get('/roles').set('authorization', `Bearer ${token}`).expect(200);

    const listed = await get(session, '/dashboard/api/api-key-pairs').expect(200);
    expect((listed.body.items as { id: string }[]).map((key) => key.id)).toContain(made.id);
    expect(JSON.stringify(listed.body)).not.toContain('PRIVATE KEY');

    await http()
      .post(`/dashboard/api/api-key-pairs/${made.id}/revoke`)
      .set('cookie', session.cookie)
      .set('origin', baseUrl)
      .send({})
      .expect(403);
    const revoked = await post(session, `/dashboard/api/api-key-pairs/${made.id}/revoke`).expect(200);
    expect(revoked.body).toMatchObject({ id: made.id, active: false });
    await http().get('/roles').set('authorization', `Bearer ${token}`).expect(401);
  });

  it("follows the user's roles as they are now: a role taken away is refused at the next request", async () => {
    const user = await newUser(['system-manager', 'key-manager']);
    const session = await signIn(user.email);
    await get(session, '/dashboard/api/api-key-pairs').expect(200);
    await identity.users.update(user.id, { roles: ['system-manager'] });
    await get(session, '/dashboard/api/api-key-pairs').expect(403);
  });
});

describe('the page', () => {
  it('serves the app shell with a strict content security policy, and its bundled script and style', {
    timeout: 60_000,
  }, async () => {
    const page = await http().get('/dashboard').expect(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toMatch(
      /default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'/,
    );
    expect(page.headers['x-frame-options']).toBe('DENY');
    const script = /src="(\/dashboard\/app\.js\?v=[^"]+)"/.exec(page.text)?.[1];
    expect(script).toBeDefined();
    const js = await http().get(script!).expect(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.text.length).toBeGreaterThan(10_000);
    await http()
      .get(script!)
      .set('if-none-match', js.headers.etag as string)
      .expect(304);
    const css = await http().get('/dashboard/app.css').expect(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });
});
