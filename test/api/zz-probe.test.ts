import { it } from 'vitest';
import { http, startTestServer } from '../helpers/test-server.js';
it('probe', async () => {
  const s = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
  const { key } = await s.createKey();
  const sid = 'x'.repeat(128);
  console.log('chat', (await http(`${s.url}/api/chat`, { key, body: { message: 'hi', sessionId: sid } })).text);
  console.log('get128', (await http(`${s.url}/api/sessions/${sid}`, { key })).text);
  console.log('get100', (await http(`${s.url}/api/sessions/${'y'.repeat(101)}`, { key })).text);
  for (const ct of ['', ' ', ';', 'application/json;', 'application/json; charset=latin1', 'a/b/c', '\u00e4', 'application/json ; x', 'multipart/form-data', 'application/json, text/plain', '"a"', 'application/json; charset="utf-8"', 'application/json;charset', 'foo']) {
    const r = await fetch(`${s.url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': ct }, body: Buffer.from('{"message":"hi"}') });
    console.log(JSON.stringify(ct), r.status, await r.text());
  }
  const r = await fetch(`${s.url}/api/sessions/%ZZ`, { headers: { authorization: `Bearer ${key}` } });
  console.log('%ZZ', r.status, await r.text());
  const r2 = await fetch(`${s.url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, body: Buffer.from('{"message":"hi"}') });
  console.log('te', r2.status, await r2.text());
  await s.close();
});
