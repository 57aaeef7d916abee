// The audio budget is one per client operation, across all of its subgraph requests (issue 29
// item 6): requests that carry the gateway's operation id share it; a request without one is an
// operation of its own, and another caller's id never shares a budget.
import { OperationBudget } from '../../lib/operation-budget';

const MiB = 1024 * 1024;
const ctx = (operationId: string | undefined, userId = 'u1') => ({ operationId, principal: { userId } });

it('two subgraph requests of one operation share its budget', () => {
  const budget = new OperationBudget(4 * MiB);
  // Mutation root fields alternating between subgraphs: a new request (context) each time.
  for (let i = 0; i < 4; i++) expect(budget.take(ctx('op-1'), MiB)).toBe(true);
  expect(budget.take(ctx('op-1'), MiB)).toBe(false);
  // Another operation has its own.
  expect(budget.take(ctx('op-2'), MiB)).toBe(true);
});

it('an id presented by another user does not share the budget', () => {
  const budget = new OperationBudget(4 * MiB);
  expect(budget.take(ctx('op-1', 'u1'), 4 * MiB)).toBe(true);
  expect(budget.take(ctx('op-1', 'u2'), 4 * MiB)).toBe(true);
});

it('a request without an operation id is an operation of its own', () => {
  const budget = new OperationBudget(4 * MiB);
  const one = ctx(undefined);
  expect(budget.take(one, 3 * MiB)).toBe(true);
  expect(budget.take(one, 2 * MiB)).toBe(false);
  expect(budget.take(ctx(undefined), 2 * MiB)).toBe(true);
});
