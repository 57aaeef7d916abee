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
