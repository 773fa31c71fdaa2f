/**
 * @module config/plans
 * Plans and their monthly limits, from `PLAUDER_PLANS=standard=1000,plus=5000`.
 */

/** Plan name → requests per month. Insertion order is the documented order. */
export type Plans = ReadonlyMap<string, number>;

export type ParsePlansResult =
  | { readonly ok: true; readonly plans: Plans }
  | { readonly ok: false; readonly problem: string; readonly plans?: undefined };

const PLAN_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

export function parsePlans(text: string): ParsePlansResult {
  const plans = new Map<string, number>();
  for (const part of text.split(',')) {
    const [name = '', limit = '', ...rest] = part.trim().split('=');
    if (!PLAN_NAME.test(name) || rest.length > 0) {
      return { ok: false, problem: `"${part.trim()}" is not name=limit (lower-case name)` };
    }
    if (!/^\d+$/.test(limit) || Number(limit) < 1 || !Number.isSafeInteger(Number(limit))) {
      return { ok: false, problem: `plan "${name}" needs a positive integer limit` };
    }
    if (plans.has(name)) return { ok: false, problem: `plan "${name}" is listed twice` };
    plans.set(name, Number(limit));
  }
  return { ok: true, plans };
}
