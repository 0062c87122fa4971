/** What the CLI says after "no such name": the close names when there are some, else the names to choose from. */

/** Levenshtein distance, for "did you mean" suggestions. */
export const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

/** Up to three known names closest to `name` (and close enough to be a plausible typo), closest first. */
export const closest = (name: string, known: Iterable<string>): ReadonlyArray<string> => {
  const near = [...new Set(known)]
    .map((candidate) => ({ candidate, score: distance(name.toLowerCase(), candidate.toLowerCase()) }))
    .filter(({ candidate, score }) => score <= Math.max(2, Math.floor(Math.max(name.length, candidate.length) / 3)))
    .sort((a, b) => a.score - b.score || (a.candidate < b.candidate ? -1 : 1))
  // Only the best matches: a typo has one intended name, rarely several equally close ones.
  return near
    .filter(({ score }) => score === near[0]?.score)
    .slice(0, 3)
    .map(({ candidate }) => candidate)
}

/** `; did you mean "x"?` when a known name is close to `name`; "" otherwise. */
export const didYouMean = (name: string, known: Iterable<string>): string => {
  const names = closest(name, known)
  return names.length === 0 ? "" : `; did you mean ${names.map((n) => JSON.stringify(n)).join(" or ")}?`
}

/** The most names a listing shows; the rest are counted. */
export const listLimit = 20

/** How a listing of the names to choose from is worded: `label` before them, `none` when there are none. */
export interface Choices {
  readonly label: string
  readonly none: string
}

/** `; <label>: a, b, c` (sorted, at most 20, then "…and N more"), or `; <none>` when there are no names. */
export const choices = (names: Iterable<string>, wording: Choices): string => {
  const sorted = [...new Set(names)].sort()
  if (sorted.length === 0) return `; ${wording.none}`
  const rest = sorted.length - listLimit
  return `; ${wording.label}: ${sorted.slice(0, listLimit).join(", ")}${rest > 0 ? `, …and ${rest} more` : ""}`
}

/** `didYouMean` when a name is close, else the names to choose from: a wrong name always gets something to act on. */
export const suggest = (name: string, known: Iterable<string>, wording: Choices): string => {
  const names = [...known]
  return didYouMean(name, names) || choices(names, wording)
}
