/**
 * @module core/builtin/text/english-irregular
 * The base forms of common irregular English verbs ("kept" → "keep", "ran" → "run"): the
 * Snowball stemmer removes endings only, so "how long do you keep it?" and a keyword "kept"
 * would otherwise never meet. Forms mostly used as auxiliaries ("got leaked", "had", "did")
 * are left out: they name no action of their own.
 */

const FORMS: ReadonlyArray<readonly [string, string]> = `
began:begin begun:begin bought:buy broke:break broken:break brought:bring built:build
chose:choose chosen:choose came:come drove:drive driven:drive fell:fall
fallen:fall felt:feel forgot:forget forgotten:forget found:find gave:give given:give
gone:go went:go held:hold hid:hide hidden:hide
kept:keep knew:know known:know left:leave lost:lose made:make meant:mean met:meet paid:pay
ran:run said:say sent:send saw:see seen:see shown:show sold:sell spent:spend stole:steal
stolen:steal stuck:stick taken:take took:take taught:teach thought:think told:tell
understood:understand woke:wake wrote:write written:write`
  .trim()
  .split(/\s+/)
  .map((pair) => pair.split(':') as [string, string]);

const BASE: ReadonlyMap<string, string> = new Map(FORMS);

/** The base form of an irregular English verb form, if `word` is one. */
export function englishBaseForm(word: string): string | undefined {
  return BASE.get(word);
}
