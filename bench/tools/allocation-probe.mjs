/**
 * Loaded into a server by `allocations.mjs` (`node --import`): the first SIGUSR2 starts V8's
 * sampling heap profiler, objects that die young or old included; the second stops it and
 * writes the profile, as JSON, to the file named by BENCH_ALLOCATIONS_OUT. A file named as it
 * with `.started` appended says that sampling has begun.
 */
import fs from 'node:fs';
import inspector from 'node:inspector';

const out = process.env.BENCH_ALLOCATIONS_OUT;
if (out) {
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  let sampling = false;
  process.on('SIGUSR2', async () => {
    if (!sampling) {
      sampling = true;
      await post('HeapProfiler.enable');
      await post('HeapProfiler.startSampling', {
        samplingInterval: 512,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
      fs.writeFileSync(`${out}.started`, '');
      return;
    }
    const { profile } = await post('HeapProfiler.stopSampling');
    fs.writeFileSync(out, JSON.stringify(profile));
  });
}
