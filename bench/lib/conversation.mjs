/**
 * The bench's question and the conversation it seeds: the same question asked `n` times in
 * a row, answered by the built-in core with the growing history (the session scenarios'
 * stored windows).
 */
export const MESSAGE = 'Wie viele Anfragen habe ich im Monat?';

/** Needs `dist/` (npm run build); loaded on call, so the bench can say so before. */
export async function conversation(n, core) {
  const { createBuiltinCore } = await import('../../dist/core/builtin/create-builtin-core.js');
  const replier = core ?? createBuiltinCore();
  const signal = new AbortController().signal;
  const history = [];
  for (let i = 0; i < n; i++) {
    const reply = await replier.reply({
      language: 'de',
      message: MESSAGE,
      history: [...history],
      signal,
    });
    history.push({ message: MESSAGE, reply, language: 'de' });
  }
  return history;
}
