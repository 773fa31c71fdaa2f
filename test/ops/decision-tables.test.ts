/**
 * The decision order of a chat request is written twice for two readers: in docs/contract.md
 * (the rules) and docs/api.md (the API reference). Both list the same rows in the same order,
 * with the same status, so neither can drift from the other (and from test/api's table tests).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** The rows of the first table whose first column is `#`: [row, status]. */
function decisionRows(file: string): string[][] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const start = lines.findIndex((line) => line.startsWith('| # |'));
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line.split('|').map((cell) => cell.trim());
    rows.push([cells[1] ?? '', cells[3] ?? '']);
  }
  return rows;
}

describe('the decision table', () => {
  it('has the same rows, in the same order and with the same statuses, in docs/contract.md and docs/api.md', () => {
    const contract = decisionRows('docs/contract.md');
    expect(contract.map(([row]) => row)).toEqual([
      '1',
      '1a',
      '2',
      '3',
      '3a',
      '4',
      '5',
      '6',
      '7',
      '8',
      '8a',
      '8b',
      '9',
      '10',
    ]);
    expect(decisionRows('docs/api.md')).toEqual(contract);
  });
});
