/**
 * @module util/utf8-text
 * UTF-8 bytes as a string, faster than `Buffer#toString` on Node 20 for text that is not
 * ASCII: ICU's transcoding to UTF-16 and a copy into a string beat its UTF-8 decoder several
 * times over on a sealed window of German text. ASCII decodes fast either way and is left
 * to `toString`.
 */
import { isAscii, transcode } from 'node:buffer';

/** Below this many bytes the fixed cost of transcoding is not worth it. */
const TRANSCODE_FROM = 512;

export function utf8Text(bytes: Buffer): string {
  if (bytes.length < TRANSCODE_FROM || isAscii(bytes)) return bytes.toString('utf8');
  try {
    return transcode(bytes, 'utf8', 'ucs2').toString('ucs2');
  } catch {
    // A Node built without ICU has no transcoding.
    return bytes.toString('utf8');
  }
}
