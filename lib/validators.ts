// class-validator rules the subgraphs share.
import { ValidateBy } from 'class-validator';

/** A string whose length, once surrounding white space is trimmed, is within bounds. */
export const TrimmedLength = (min: number, max: number) =>
  ValidateBy({
    name: 'trimmedLength',
    validator: {
      // In code points, as JSON Schema's minLength/maxLength count (the OpenAPI document says these bounds).
      validate: (v: unknown) => typeof v === 'string' && [...v.trim()].length >= min && [...v.trim()].length <= max,
      defaultMessage: (a) => `${a?.property} must be ${min} to ${max} characters after trimming`,
    },
  });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An id's shape: 8-4-4-4-12 hex digits, any version (ids are checked before a lookup, not their version). */
export const isUuid = (value: string): boolean => UUID.test(value);
