/**
 * @module util/clock
 * Time as an input (Unix ms): services receive a clock, tests drive their own.
 */
export type Clock = () => number;
