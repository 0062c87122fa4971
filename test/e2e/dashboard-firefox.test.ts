// The dashboard (issue 29, ADR 034) in Firefox: Debian's firefox-esr driven by puppeteer-core over WebDriver BiDi
// (playwright-core drives only its own patched Firefox). Skipped, saying why, only when /usr/bin/firefox is missing
// (.ci/run installs firefox-esr).
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import puppeteer, { type Page } from "puppeteer-core"
import { ensureBuilt } from "../lib/cli.js"
import { startDaemon } from "../lib/daemon.js"
import { root, stubCommand, tempDir } from "../lib/sources.js"

const executablePath = "/usr/bin/firefox"
const hasFirefox = fs.existsSync(executablePath)
if (!hasFirefox)
  console.warn(`dashboard Firefox tests skipped: ${executablePath} is missing (apt-get install firefox-esr)`)

beforeAll(ensureBuilt, 120_000)

const token = "dashboard-firefox-token"

/** Axe's serious and critical violations on the page as it is (axe-core evaluated over BiDi, not as a page script). */
const accessibilityProblems = async (page: Page) => {
  await page.evaluate(fs.readFileSync(path.join(root, "node_modules/axe-core/axe.min.js"), "utf8"))
  const violations = (await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: () => Promise<{ violations: Array<unknown> }> } }).axe
    return (await axe.run()).violations
  })) as ReadonlyArray<{ id: string; impact: string; nodes: ReadonlyArray<{ target: unknown }> }>
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${JSON.stringify(v.nodes.map((n) => n.target))}`)
}

describe.skipIf(!hasFirefox)("the dashboard at /ui (built CLI, Firefox)", () => {
  it.scopedLive(
    "signs in with the token, shows the rows, calls a tool; no serious accessibility problem",
    () =>
      Effect.gen(function* () {
        const dir = tempDir("clawtool-dashboard-firefox-")
        const config = path.join(dir, "config.toml")
        fs.writeFileSync(
          config,
          `[http]\ntoken = "${token}"\n\n[sources.stub]\ncommand = ${stubCommand("--stderr-lines", "1")}\n`
        )
        const daemon = yield* startDaemon(config)
        const browser = yield* Effect.acquireRelease(
          Effect.promise(() =>
            puppeteer.launch({
              browser: "firefox",
              executablePath,
              headless: true,
              userDataDir: tempDir("clawtool-firefox-")
            })
          ),
          (browser) => Effect.promise(() => browser.close())
        )
        const step = <A>(run: () => Promise<A>) => Effect.promise(run)
        const page = yield* step(() => browser.newPage())
        assert.match(yield* step(() => browser.version()), /firefox/i)

        // Puppeteer's locators and waitFor* do not run in this page (its CSP refuses the Function() they build, and their
        // checks time out); page.$$eval, type and click do, so waiting is a poll of $$eval.
        const waitText = (selector: string, text = "") =>
          step(async () => {
            for (let tries = 0; ; tries++) {
              const found = await page.$$eval(
                selector,
                (elements, text) => elements.some((element) => element.textContent?.includes(text) === true),
                text
              )
              if (found) return
              if (tries > 200) throw new Error(`no ${selector} with ${JSON.stringify(text)}`)
              await new Promise((resume) => setTimeout(resume, 100))
            }
          })
        /** Replaces a field's text as a person typing would (the page's input handlers see it). */
        const typeInto = (selector: string, text: string) =>
          step(async () => {
            await page.$eval(selector, (element) => {
              const field = element as unknown as { focus: () => void; select: () => void }
              field.focus()
              field.select()
            })
            await page.keyboard.type(text)
          })

        yield* step(() => page.goto(`${daemon.url.origin}/ui`))
        yield* typeInto("#token", "wrong-token")
        yield* step(() => page.click("button[type=submit]"))
        yield* waitText("[role=alert]", "Wrong token")
        assert.deepStrictEqual(yield* step(() => accessibilityProblems(page)), [], "the sign-in page")

        yield* typeInto("#token", token)
        yield* step(() => page.keyboard.press("Enter"))
        yield* waitText(`tr[data-source="stub"][data-status="running"]`)
        yield* waitText(`tr[data-source="stub"]`, "stub stderr line 0")
        assert.deepStrictEqual(yield* step(() => accessibilityProblems(page)), [], "the sources page")

        yield* step(() => page.click(`nav a[href="#/tools"]`))
        yield* waitText("#tool-search")
        yield* typeInto("#tool-search", "echo")
        yield* waitText("button.link", "stub__echo")
        yield* step(() =>
          page.$$eval("button.link", (buttons) => {
            const found = buttons.find((button) => button.textContent === "stub__echo")
            ;(found as unknown as { click: () => void }).click()
          })
        )
        yield* waitText("form.call textarea")
        yield* typeInto("form.call textarea", `{"text": "from Firefox"}`)
        yield* step(() => page.click("form.call button[type=submit]"))
        yield* waitText(".result", "echo:from Firefox")
        assert.deepStrictEqual(yield* step(() => accessibilityProblems(page)), [], "the tools page")
      }),
    120_000
  )
})
