/**
 * @module chat/turn-tokens
 * What a turn reserves and settles against its plan's token budgets (docs/quota-and-limits.md,
 * "Token budgets"). The worst case is the input as the estimator counts it plus the output cap:
 * the request's own (`max_tokens`, `max_completion_tokens`, `max_output_tokens`), else the
 * plan's default cap, which is then sent to the core as the request's. What a turn costs is
 * the core's reported usage, else the estimate; a turn that delivered part of its reply costs
 * its input and the estimate of the part delivered.
 */
import type { CoreRequest, Sampling, TokenUsage } from '../core/core-adapter.js';
import type { TokenBudget } from '../plans/plans.js';
import { estimateTokens, estimateUsage } from './token-estimate.js';

export interface TurnTokens {
  /** The sampling the core is asked with: the plan's output cap added when the request has none. */
  readonly sampling: Sampling | undefined;
  /** The input's estimate. */
  readonly input: number;
  /** Input and output cap: what the turn reserves. */
  readonly worst: number;
}

type Prompt = Pick<CoreRequest, 'message' | 'history' | 'instructions'>;

/** The turn's worst case; a plan without token budgets or cap leaves the sampling as it is. */
export function turnTokens(
  budget: TokenBudget | undefined,
  sampling: Sampling | undefined,
  prompt: Prompt,
): TurnTokens {
  if (budget === undefined) return { sampling, input: 0, worst: 0 };
  const input = estimateUsage(prompt, '').promptTokens;
  const cap = sampling?.maxTokens ?? budget.answer;
  const capped = sampling?.maxTokens === undefined ? { ...sampling, maxTokens: cap } : sampling;
  return { sampling: capped, input, worst: input + cap };
}

/** Tokens a delivered reply costs: the reported usage, else the estimate. */
export function tokensOf(usage: TokenUsage): number {
  return usage.promptTokens + usage.completionTokens;
}

/** Tokens of a reply delivered in part: the input and the estimate of what was delivered. */
export function partialTokens(tokens: TurnTokens, delivered: string): number {
  return tokens.input + estimateTokens(delivered);
}
