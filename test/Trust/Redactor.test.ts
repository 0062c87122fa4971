// src/services/Trust/Redactor.ts: known secrets become [REDACTED:<NAME>] in what goes to the host (issue 25), in
// every form the issue names, longest first, inside JSON without breaking it, and nothing changes when none appears.
import { assert, describe, it } from "@effect/vitest"
import * as Redactor from "../../src/services/Trust/Redactor.js"

const token = "ghp_abcdefghijklmnop1234"
const github = { name: "GITHUB_TOKEN", value: token }

describe("Redactor", () => {
  it("replaces a secret's raw, JSON-escaped and percent-encoded forms by its name", () => {
    const quoted = 'p@ss "word"/\\x 1'
    const redactor = Redactor.make([github, { name: "DB_PASSWORD", value: quoted }])
    assert.strictEqual(redactor.text(`token=${token}.`), "token=[REDACTED:GITHUB_TOKEN].")
    // Inside a string that is itself JSON text, the secret appears escaped.
    assert.strictEqual(redactor.text(JSON.stringify({ password: quoted })), '{"password":"[REDACTED:DB_PASSWORD]"}')
    assert.strictEqual(
      redactor.text(`https://db.example/?p=${encodeURIComponent(quoted)}&x=1`),
      "https://db.example/?p=[REDACTED:DB_PASSWORD]&x=1"
    )
    assert.strictEqual(
      redactor.text(`${token}${token} and ${quoted}`),
      "[REDACTED:GITHUB_TOKEN][REDACTED:GITHUB_TOKEN] and [REDACTED:DB_PASSWORD]"
    )
  })

  it("prefers the longest secret where two start at the same place, and redacts the leftmost first", () => {
    const short = { name: "SHORT", value: "abcdefgh" }
    const long = { name: "LONG", value: "abcdefgh-ijklmnop" }
    for (const redactor of [Redactor.make([short, long]), Redactor.make([long, short])]) {
      assert.strictEqual(redactor.text("<abcdefgh-ijklmnop> <abcdefgh>"), "<[REDACTED:LONG]> <[REDACTED:SHORT]>")
    }
    const overlapping = Redactor.make([
      { name: "LEFT", value: "12345678abc" },
      { name: "RIGHT", value: "abcdefghijk" }
    ])
    assert.strictEqual(overlapping.text("012345678abcdefghijk"), "0[REDACTED:LEFT]defghijk")
  })

  it("ignores values shorter than 8 characters", () => {
    const redactor = Redactor.make([
      { name: "PORT", value: "8080" },
      { name: "SEVEN", value: "1234567" }
    ])
    assert.isFalse(redactor.active)
    assert.strictEqual(redactor.text("port 8080, code 1234567"), "port 8080, code 1234567")
    assert.strictEqual(Redactor.make([{ name: "EIGHT", value: "12345678" }]).text("x12345678x"), "x[REDACTED:EIGHT]x")
  })

  it("redacts a line structurally: a secret in a key, a string or a number keeps the JSON valid", () => {
    const redactor = Redactor.make([github, { name: "PIN", value: "20260101" }, { name: "Q", value: 'say "hi" now' }])
    const message = {
      jsonrpc: "2.0",
      id: 7,
      result: {
        content: [{ type: "text", text: `your token is ${token}` }],
        structuredContent: { [token]: 1, pin: 20260101, big: 1202601019, quote: 'he said: say "hi" now' }
      }
    }
    const line = redactor.line(JSON.stringify(message) + "\n")
    assert.isTrue(line.endsWith("\n"))
    assert.notInclude(line, token)
    assert.notInclude(line, "20260101")
    assert.notInclude(line, 'say \\"hi\\" now')
    assert.deepStrictEqual(JSON.parse(line), {
      jsonrpc: "2.0",
      id: 7,
      result: {
        content: [{ type: "text", text: "your token is [REDACTED:GITHUB_TOKEN]" }],
        structuredContent: {
          "[REDACTED:GITHUB_TOKEN]": 1,
          pin: "[REDACTED:PIN]",
          big: "1[REDACTED:PIN]9",
          quote: "he said: [REDACTED:Q]"
        }
      }
    })
  })

  it("leaves everything untouched, as the same string or object, when no secret appears", () => {
    const redactor = Redactor.make([github])
    const line = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "ghp_abc" }] } })
    assert.strictEqual(redactor.line(line), line)
    const value = { content: [{ type: "text", text: "nothing here" }], n: 12345678901, nested: { a: [null, true] } }
    assert.strictEqual(redactor.value(value), value)
    assert.strictEqual(redactor.text("short"), "short")
    assert.isFalse(redactor.occursIn(line))
    // With no secret at all (or redaction off), the identity.
    assert.strictEqual(Redactor.none.line(`${token}`), token)
  })

  it("copies only what changes when redacting a value", () => {
    const redactor = Redactor.make([github])
    const untouched = { a: 1 }
    const value = { list: ["x", token], untouched }
    const redacted = redactor.value(value)
    assert.notStrictEqual(redacted, value)
    assert.strictEqual(redacted.untouched, untouched)
    assert.deepStrictEqual(redacted.list, ["x", "[REDACTED:GITHUB_TOKEN]"])
    assert.deepStrictEqual(value.list, ["x", token])
  })

  it("finds a secret at the very end of a long text and in every position of a short one", () => {
    const redactor = Redactor.make([github])
    const long = "y".repeat(100_000) + token
    assert.strictEqual(redactor.text(long), "y".repeat(100_000) + "[REDACTED:GITHUB_TOKEN]")
    for (let at = 0; at < 12; at++) {
      const text = "-".repeat(at) + token + "-".repeat(11 - at)
      assert.strictEqual(redactor.text(text), "-".repeat(at) + "[REDACTED:GITHUB_TOKEN]" + "-".repeat(11 - at))
    }
  })
})
