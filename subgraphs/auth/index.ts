// The Auth subgraph: users, login, sessions. Owns the `auth` database.
import path from 'node:path';
import { migrationsIn } from '../../lib/database/migrations-in';
import { OutboxEvent } from '../../lib/outbox';
import type { SubgraphContext, SubgraphDefinition } from '../../lib/subgraph';
import { TokenSigner, TokenVerifier } from '../../lib/tokens';
import { ApiKeys } from './api-keys';
import { AuthService } from './auth-service';
import { ApiKey } from './entities/api-key';
import { ApiKeyResolver } from './resolvers/api-key-resolver';
import { Session } from './entities/session';
import { User } from './entities/user';
import { LoginThrottle } from './login-throttle';
import { UserCap } from '../../lib/kit/user-caps';
import { Role } from './entities/role';
import { RoleAdministration } from './roles';
import { UserScopesResolver } from './resolvers/user-scopes-resolver';
import { AccountResolver } from './resolvers/account-resolver';
import { AdminResolver } from './resolvers/admin-resolver';
import { AuthResolver } from './resolvers/auth-resolver';
import { SessionResolver } from './resolvers/session-resolver';
import { StreamTicketResolver } from './resolvers/stream-ticket-resolver';
import { UserAdministration } from './user-admin';

export const authSubgraph: SubgraphDefinition = {
  name: 'auth',
  entities: [User, Session, ApiKey, Role, OutboxEvent, UserCap],
  migrations: migrationsIn(path.join(__dirname, 'migrations')),
  async create({ config, dataSource, keys, logger }) {
    const throttle = await LoginThrottle.create(config, dataSource);
    const roles = new RoleAdministration(config, dataSource, logger);
    const auth = new AuthService(
      config,
      dataSource,
      new TokenSigner(keys, config.JWT_ISSUER),
      new TokenVerifier(keys, config.JWT_ISSUER),
      throttle,
      logger,
      roles,
    );
    const admin = new UserAdministration(config, dataSource, throttle, logger);
    const apiKeys = new ApiKeys(
      config,
      dataSource,
      new TokenSigner(keys, config.JWT_ISSUER),
      throttle,
      logger,
      keys.privateKey!,
      (userRoles) => roles.scopesOfRoles(userRoles),
    );
    return {
      resolvers: [
        new AuthResolver(auth),
        new SessionResolver(auth),
        new AccountResolver(auth),
        new AdminResolver(admin, roles),
        new UserScopesResolver(roles),
        new ApiKeyResolver(apiKeys),
        new StreamTicketResolver(new TokenSigner(keys, config.JWT_ISSUER), config.STREAM_TICKET_TTL_SECONDS),
      ],
      // The caller's session must be live, not only its token well signed.
      // A token an API key was exchanged for has the key as its session.
      checkPrincipal: async (principal, ctx) => {
        await auth.activeSession(principal, ctx).catch(async (err: unknown) => {
          if (!(await apiKeys.liveKey(principal))) throw err;
        });
      },
      references: {
        // Other subgraphs may name a user (Voice.owner); only that user sees the details.
        User: {
          __resolveReference: (ref: { id: string }, ctx: SubgraphContext) =>
            ctx.principal?.userId === ref.id || ctx.scopes?.has('admin:users') ? auth.findUser(ref.id) : null,
        },
        Session: {
          __resolveReference: (ref: { id: string }, ctx: SubgraphContext) =>
            ctx.principal ? auth.sessionOf(ctx.principal, ref.id).catch(() => null) : null,
        },
      },
      async start() {
        const created = await auth.ensureBootstrapUser();
        if (created)
          logger.info(
            { user_id: created.id, username: created.username, roles: created.roles },
            'bootstrap admin created',
          );
      },
    };
  },
};

export { AuthService, UserAdministration };
