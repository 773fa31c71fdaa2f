import fs from 'node:fs';
const [a, b, na, nb] = process.argv.slice(2);
function load(f) {
  const p = JSON.parse(fs.readFileSync(f, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map();
  for (let i = 0; i < p.samples.length; i++) {
    const f2 = byId.get(p.samples[i]).callFrame;
    const key = `${f2.functionName || '(anon)'} ${f2.url.replace(/.*node_modules\//, 'nm/').replace(/.*\/dist\//, 'dist/')}:${f2.lineNumber}`;
    self.set(key, (self.get(key) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  return self;
}
const A = load(a), B = load(b);
const reqA = Number(na), reqB = Number(nb);
const keys = new Set([...A.keys(), ...B.keys()]);
const rows = [...keys].filter(k => !k.startsWith('(idle)')).map((k) => [k, (A.get(k) ?? 0) / reqA, (B.get(k) ?? 0) / reqB]);
const sum = (i) => rows.reduce((s, r) => s + r[i], 0);
console.log('busy µs/req', sum(1).toFixed(1), sum(2).toFixed(1));
rows.sort((x, y) => (y[2] - y[1]) - (x[2] - x[1]));
for (const r of rows.slice(0, 25)) console.log((r[2] - r[1]).toFixed(2).padStart(7), r[1].toFixed(2).padStart(7), r[2].toFixed(2).padStart(7), r[0]);
