/**
 * @module core/builtin/text/stop-words
 * Words that carry no topic in a question (articles, pronouns, auxiliaries, question
 * words, fillers), in folded form (`fur`, not `für`). They are ignored in questions and
 * may not be the only word of a keyword. Kept deliberately small: words such as `mehr`,
 * `lange`, `neu`, `wieder`, `more`, `long`, `new`, `first` do carry meaning here.
 *
 * `QUESTION_WORDS` are stop words too, unless a knowledge base uses one as a keyword
 * ("wann" for a delivery-time entry): then it counts like any other keyword.
 */

const GERMAN = `
ab aber alle allem allen aller alles als also am an
auch auf aus bei beim bin bis bist bitte bzw da dabei dadurch dafur dagegen
daher dahin damit danach dann daran darauf daraus darf darfst darin daruber darum darunter
das dass davon dazu dein deine deinem deinen deiner deines dem den denn der deren des dessen
dich die dies diese diesem diesen dieser dieses dir doch dort du durch eben eigentlich ein
eine einem einen einer eines einfach einmal er es etwa etwas euch euer eure eurem euren eurer
fur gar geben gibt gibts ganz gegen genau geht gehen gerade gewesen hab habe haben hast hat
hatte hatten heisst heisse heissen bedeutet bedeuten hier hin ich ihm ihn ihnen ihr ihre
ihrem ihren ihrer ihres im in ins ist ja je dahinter jede jedem jeden jeder jedes jetzt kann kannst
konnen konnte konntest konnten kein keine keinem keinen keiner keines mal man mein meine
meinem meinen meiner meines mich mir mit muss musst mussen mochte mochten nach nicht nichts
nun nur ob oder ohne pro per sehr sein seine seinem seinen seiner sich sie sind so
soll sollen sollte solltest sollten sondern sonst uber um und uns unser unsere unserem
unseren unserer unter usw viel vielen vom von vor wann war waren warum was weil welche
welchem welchen welcher welches wenn wer werde werden wie wieso weshalb will
willst wir wird wirst wo wobei wofur woher wohin womit wollen wollte wurde wurden wurde zu
zum zur zwar zwischen denen also halt okay ok tun tut mache machen macht funktioniert
funktionieren schon immer standig dauernd endlich uberhaupt bereits trotzdem irgendwie bloss
wohl nochmal eh ne nen hab
seit wegen wahrend trotz
`;

const ENGLISH = `
a about above after against all am an and any are as at be because been before being
below between both but by can cannot could did do does doing done down during each either
few for from further had has have having he her here hers herself him himself his how i if
in into is it its itself just let me might must my myself no nor not of off on once only or
ought our ours ourselves out over own same shall she should so some such than
that the their theirs them themselves then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you your
yours yourself yourselves please also actually really exactly maybe mean means meaning tell
know need want like thing things something anything work works way us ok okay now
without though although however yet still already ever even else anyway lot lots bit
kind sort stuff go u r ur ya pls plz gimme wanna gonna lemme dunno im ive dont cant wont
isnt doesnt didnt whats hows wheres whens thats theres youre exist exists existing
everything nothing everyone someone anyone everybody somebody
around across along beside besides beyond toward towards upon onto via within since behind
among throughout
`;

function wordsOf(list: string): string[] {
  return list.split(/\s+/).filter((word) => word.length > 0);
}

/** The stop words of both languages: messages are matched whatever language they are in. */
export const STOP_WORDS: ReadonlySet<string> = new Set([...wordsOf(GERMAN), ...wordsOf(ENGLISH)]);

/** Stop words a knowledge base may use as keywords. */
export const QUESTION_WORDS: ReadonlySet<string> = new Set(
  wordsOf('wann warum wieso weshalb wo woher wohin when where why'),
);
