/**
 * @module storage/secret
 * The 32-byte secret that seals session turns. From PLAUDER_SECRET, or a file beside the
 * SQLite database created on first start (mode 0600). Several processes may race to
 * create it; the first write wins and everyone reads that one.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SecretSource } from '../config/config.js';

const SECRET_BYTES = 32;

export function loadSecret(source: SecretSource): Buffer {
  if (source.kind === 'value') {
    return source.value.length === SECRET_BYTES ? source.value : randomBytes(SECRET_BYTES);
  }
  fs.mkdirSync(path.dirname(source.file), { recursive: true });
  try {
    fs.writeFileSync(source.file, `${randomBytes(SECRET_BYTES).toString('base64')}\n`, {
      flag: 'wx',
      mode: 0o600,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return readSecretFile(source.file);
}

function readSecretFile(file: string): Buffer {
  // A racing writer may not have finished; its content is one short line.
  for (let attempt = 0; attempt < 50; attempt++) {
    const value = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
    if (value.length === SECRET_BYTES) return value;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  }
  throw new Error(`${file} does not hold a 32-byte base64 secret`);
}
