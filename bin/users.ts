// `npm run users -- <command> …`: administers users in the auth database directly (SQLite or
// MySQL, from DATABASE_URL), with the same rules as the admin API (password policy, last
// administrator, audit events). Passwords are read from standard input, never from argv, where
// other users of the machine could read them in the process list; typed at a terminal they are
// not echoed, and asked twice.
import 'reflect-metadata';
import readline from 'node:readline';
import { read } from 'read';
import type { DataSource } from 'typeorm';
import { Config, ConfigError, loadConfig } from '../lib/config';
import { openDatabase } from '../lib/database/open';
import { AppError } from '../lib/errors';
import { EventLog, OutboxRelay } from '../lib/event-log';
import { createLogger, Logger } from '../lib/logger';
// The module list installs the scope catalogue roles are checked against (lib/scopes.ts).
import '../subgraphs';
import { authSubgraph, UserAdministration } from '../subgraphs/auth';
import type { User } from '../subgraphs/auth/entities/user';
import { LoginThrottle } from '../subgraphs/auth/login-throttle';

const USAGE = `usage: npm run users -- <command>
  add <username> [--admin]   add a user (password on standard input)
  list [<prefix>]            list users (JSON lines), those whose name starts with <prefix>
  disable <username>         refuse their logins and end every session of theirs
  enable <username>          let a disabled user log in again
  unlock <username>          clear their failed-login counts
  passwd <username>          set a new password (on standard input); ends their sessions
  remove <username>          delete the user; their voices and syntheses go too`;

const NAMED = new Set(['add', 'disable', 'enable', 'unlock', 'passwd', 'remove']);

/** One line of a pipe, or typed at a terminal without echo (twice, when `confirm`). */
async function readPassword(confirm: boolean): Promise<string> {
  if (process.stdin.isTTY) {
    const ask = (prompt: string) => read({ prompt, silent: true, replace: '', output: process.stderr });
    const first = await ask('Password: ');
    if (confirm && (await ask('Again: ')) !== first)
      throw new AppError('validation_error', 'The two passwords differ.');
    return first;
  }
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    rl.close();
    return line;
  }
  return '';
}

const summary = (u: User) => ({
  id: u.id,
  username: u.username,
  roles: u.roles,
  disabled: u.disabled,
  version: u.version,
  created_at: u.createdAt.toISOString(),
  last_login_at: u.lastLoginAt?.toISOString() ?? null,
});

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const flags = rest.filter((a) => a.startsWith('--'));
  const [name, ...extra] = rest.filter((a) => !a.startsWith('--'));
  const allowedFlags = command === 'add' ? ['--admin'] : [];
  const usable = (NAMED.has(command) && name && !extra.length) || (command === 'list' && !extra.length);
  if (!usable || flags.some((f) => !allowedFlags.includes(f))) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig();
  const logger = createLogger({ LOG_LEVEL: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL }, 'users-cli');
  const password = command === 'add' || command === 'passwd' ? await readPassword(true) : undefined;
  const dataSource = await openDatabase(
    config,
    { name: authSubgraph.name, entities: authSubgraph.entities, migrations: authSubgraph.migrations },
    logger,
  );
  try {
    const admin = new UserAdministration(config, dataSource, await LoginThrottle.create(config, dataSource), logger);
    switch (command) {
      case 'list': {
        for (let after: string | null | undefined; ;) {
          const page = await admin.list(100, name, after);
          for (const u of page.items) console.log(JSON.stringify(summary(u)));
          if (!(after = page.nextCursor)) break;
        }
        return 0;
      }
      case 'add': {
        const user = await admin.create(null, name, password!, flags.includes('--admin') ? ['admin'] : ['user']);
        console.log(JSON.stringify({ id: user.id, username: user.username, roles: user.roles }));
        break;
      }
      case 'remove': {
        const user = await admin.byName(name);
        await admin.delete(null, user.id, user.version);
        console.log(JSON.stringify({ id: user.id, username: user.username, removed: true }));
        break;
      }
      default: {
        const user = await admin.byName(name);
        const changed =
          command === 'disable'
            ? await admin.disable(null, user.id)
            : command === 'enable'
              ? await admin.enable(null, user.id)
              : command === 'unlock'
                ? await admin.unlock(null, user.id)
                : await admin.setPassword(null, user.id, password!);
        console.log(JSON.stringify(summary(changed)));
        if (command === 'unlock' && config.RATE_LIMIT_STORE === 'memory') {
          console.error(
            'note: RATE_LIMIT_STORE=memory keeps the counts inside each server process; only a restart (or the admin API) clears them there.',
          );
        }
      }
    }
    await relayEvents(config, dataSource, logger);
    return 0;
  } catch (err) {
    if (err instanceof AppError) {
      console.error(`${err.code}: ${err.message}${err.details ? ` ${JSON.stringify(err.details)}` : ''}`);
      return 1;
    }
    throw err;
  } finally {
    await dataSource.destroy();
  }
}

/**
 * Moves the events this command wrote into the event log now, so that revocations and the
 * `user.deleted` cascade take effect even while no auth process runs (one that runs would relay
 * them too; the log skips an event it has).
 */
async function relayEvents(config: Config, dataSource: DataSource, logger: Logger) {
  const log = await EventLog.open(config, logger);
  try {
    await new OutboxRelay(authSubgraph.name, dataSource, log, config.EVENT_POLL_MS, logger).drain();
  } finally {
    await log.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  },
);
