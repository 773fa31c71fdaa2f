/**
 * @module config/plans
 * Plans are a domain of their own now (`plans/plans.ts`); this keeps older import paths
 * working while other branches move over.
 */
export * from '../plans/plans.js';
