// A long list handed to graphql-js a chunk at a time: graphql-js completes a list's items in one
// step of the event loop, ~20 ms for 5,000 hub nodes with a field resolver each, more for more
// fields. Items past the first chunk are promises that resolve one chunk per turn of the loop, so
// graphql-js completes each chunk as its promises resolve, other requests served between chunks.
// The answer is the same; it costs a promise per item, so short lists are handed over as they are.

/** Items completed per turn of the event loop. */
export const LIST_TURN_ITEMS = 500;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `items` as graphql-js may complete them, LIST_TURN_ITEMS a turn. */
export function inTurns<T>(items: readonly T[], perTurn = LIST_TURN_ITEMS): readonly (T | Promise<T>)[] {
  if (items.length <= perTurn) return items;
  const out: (T | Promise<T>)[] = items.slice(0, perTurn);
  let turn = Promise.resolve();
  for (let i = perTurn; i < items.length; i += perTurn) {
    turn = turn.then(nextTurn);
    const released = turn;
    for (const item of items.slice(i, i + perTurn)) out.push(released.then(() => item));
  }
  return out;
}
