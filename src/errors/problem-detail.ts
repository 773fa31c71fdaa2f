/**
 * @module errors/problem-detail
 * What exactly is wrong with a request body, for front doors that name the parameter (the
 * OpenAI-compatible one): carried with a soft error through the turn and kept with an
 * idempotent outcome, so a replay names it again.
 */
export interface ProblemDetail {
  /** The parameter at fault, e.g. `messages[2].content[0].type`; null: the body as a whole. */
  readonly param: string | null;
  readonly message: string;
  /** A code of the front door's own (e.g. `model_not_found`), when it has a more precise one. */
  readonly code?: string;
}
