// How a module's background work runs GraphQL operations of other modules as a user (an import
// creating vault items and notes through their own mutations, so that their caps, sizes,
// duplicates and events apply): through the gateway, like any client. In one process the gateway
// is created after the subgraphs, so the link is bound once it exists; a subgraph process of its
// own reaches the gateways at GATEWAY_URL over HTTP (bin/subgraph.ts binds the facade's client of them). Modules still meet only through GraphQL.
import type { GraphQLFormattedError } from 'graphql';

export interface GatewayResult {
  data?: Record<string, any> | null; // eslint-disable-line @typescript-eslint/no-explicit-any -- a GraphQL answer
  errors?: readonly GraphQLFormattedError[];
}

export interface GatewayRequest {
  query: string;
  variables?: Record<string, unknown>;
  /** `authorization` (the user's bearer token) and whatever else a client would send. */
  headers: Record<string, string | undefined>;
  clientIp: string;
}

export type GatewayExecute = (request: GatewayRequest) => Promise<GatewayResult>;

export class GatewayLink {
  private executeFn?: GatewayExecute;

  /** The process's gateway (one process), or the HTTP client of GATEWAY_URL. */
  bind(execute: GatewayExecute): this {
    this.executeFn = execute;
    return this;
  }

  get bound(): boolean {
    return this.executeFn !== undefined;
  }

  execute(request: GatewayRequest): Promise<GatewayResult> {
    if (!this.executeFn)
      return Promise.reject(
        new Error('no gateway to reach from this process (set GATEWAY_URL for a subgraph process)'),
      );
    return this.executeFn(request);
  }
}
