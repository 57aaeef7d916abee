// The auth module (users, sessions, roles and API keys): what it contributes, in one place (lib/module.ts). Listed
// in subgraphs/index.ts; its subgraph (index.ts) is loaded only where it runs or is composed.
import type { ModuleDefinition } from '../../lib/module';
import { authEvents } from './events';
import { loginAttempts } from './metrics';
import { authRoutes, authSchemas } from './routes';
import { authSettings, checkAuthSettings } from './settings';

export const authModule: ModuleDefinition = {
  name: 'auth',
  subgraph: async () => (await import('./index')).authSubgraph,
  routes: {
    routes: authRoutes,
    schemas: authSchemas,
    tags: [
      { name: 'Auth', description: 'Signing in and out, sessions, your password and your API keys.' },
      { name: 'Admin', description: 'For the `admin` role; others get 403 `forbidden`.' },
    ],
  },
  metrics: [loginAttempts],
  scopes: ['account:write', 'admin:users', 'admin:roles', 'admin:integrations'],
  publicFields: ['Mutation.login', 'Mutation.refreshSession', 'TokenSet', 'Mutation.exchangeApiKey', 'ApiKeyToken'],
  events: authEvents,
  settings: authSettings,
  checkSettings: checkAuthSettings,
};
