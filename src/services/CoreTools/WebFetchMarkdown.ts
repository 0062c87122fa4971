/**
 * HTML → Markdown for WebFetch: linkedom parses, Readability keeps the article, turndown (+ GFM tables) writes
 * Markdown. The whole stack (about 730 KB) is import()ed on the first HTML page only, so it costs no start-up
 * (ADR 008: split into a chunk of the bin).
 */

export interface Converted {
  readonly title: string | undefined
  readonly markdown: string
}

/** Below this many characters of article text, Readability probably missed the page: the whole body is used. */
const minArticleChars = 500

const removed = ["script", "style", "noscript", "iframe", "svg", "template", "object", "embed"]

export const htmlToMarkdown = async (html: string, baseUrl: string): Promise<Converted> => {
  const [{ parseHTML }, readability, turndownModule, gfmModule] = await Promise.all([
    import("linkedom"),
    import("@mozilla/readability"),
    import("turndown"),
    import("turndown-plugin-gfm")
  ])
  // In the bundle a CommonJS package import()ed from a split chunk has only `default` (its module.exports).
  const Readability =
    readability.Readability ?? (readability as unknown as { default: typeof readability }).default.Readability
  const TurndownService = turndownModule.default
  const gfm = gfmModule.gfm ?? (gfmModule as unknown as { default: typeof gfmModule }).default.gfm
  const { document } = parseHTML(html)
  for (const node of document.querySelectorAll(removed.join(","))) node.remove()
  for (const node of document.querySelectorAll('img[src^="data:"]')) node.remove()
  // Links and images absolute, against the page's own URL (the agent may fetch them next).
  for (const [selector, attribute] of [
    ["a[href]", "href"],
    ["img[src]", "src"]
  ] as const) {
    for (const node of document.querySelectorAll(selector)) {
      const value = node.getAttribute(attribute)
      if (value === null) continue
      try {
        node.setAttribute(attribute, new URL(value, baseUrl).href)
      } catch {
        // Not a URL relative to the page: kept as written.
      }
    }
  }
  const pageTitle = document.querySelector("title")?.textContent?.trim() || undefined
  const body = document.body?.innerHTML ?? html
  let article: ReturnType<InstanceType<typeof Readability>["parse"]> = null
  try {
    // keepClasses: `language-*` on <code> gives the fence its language.
    article = new Readability(document as never, { keepClasses: true }).parse()
  } catch {
    article = null
  }
  const useArticle = article?.content != null && (article.textContent ?? "").trim().length >= minArticleChars
  const turndown = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "_"
  })
  turndown.use(gfm)
  const markdown = turndown.turndown(useArticle ? article!.content! : body).trim()
  const title = (useArticle ? article!.title?.trim() : undefined) || pageTitle
  return { title, markdown }
}
