// `npm run users -- add <username> [--admin]`: adds a user to the auth database.
// The password is read from standard input (a pipe, or typed at the prompt), never from
// argv, where other users of the machine could read it in the process list.
import 'reflect-metadata';
import readline from 'node:readline';
import { ConfigError, loadConfig } from '../lib/config';
import { openDatabase } from '../lib/database';
import { AppError } from '../lib/errors';
import { createLogger } from '../lib/logger';
import { authSubgraph } from '../subgraphs/auth';
import { createUser } from '../subgraphs/auth/users';

const USAGE = 'usage: npm run users -- add <username> [--admin]   (password on standard input)';

async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('Password: ');
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    rl.close();
    return line;
  }
  return '';
}

async function main(argv: string[]): Promise<number> {
  const [command, username, ...flags] = argv;
  const unknown = flags.filter((f) => f !== '--admin');
  if (command !== 'add' || !username || unknown.length) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig();
  const password = await readPassword();
  const dataSource = await openDatabase(config, { name: authSubgraph.name, entities: authSubgraph.entities, migrations: authSubgraph.migrations }, createLogger({ LOG_LEVEL: 'warn' }));
  try {
    const user = await createUser(dataSource, username, password, flags.includes('--admin') ? ['admin'] : []);
    console.log(JSON.stringify({ id: user.id, username: user.username, roles: user.roles }));
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  },
);
