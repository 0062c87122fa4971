import { assert, describe, it } from "@effect/vitest"
import { bearerMatches, hostAllowed, isLoopback, originAllowed, parseListen } from "../src/transport/HttpGuard.js"

describe("HttpGuard (the daemon's checks before MCP)", () => {
  it("parses HOST:PORT and [v6]:PORT, refuses anything else", () => {
    assert.deepStrictEqual(parseListen("127.0.0.1:8765"), { host: "127.0.0.1", port: 8765 })
    assert.deepStrictEqual(parseListen("[::1]:0"), { host: "::1", port: 0 })
    assert.deepStrictEqual(parseListen("mcp.internal:80"), { host: "mcp.internal", port: 80 })
    for (const bad of ["8765", "127.0.0.1", "127.0.0.1:99999", "::1:80", "host:port"]) {
      assert.isUndefined(parseListen(bad), bad)
    }
  })

  it("knows loopback from everything else", () => {
    for (const host of ["127.0.0.1", "127.8.0.1", "localhost", "::1"]) assert.isTrue(isLoopback(host), host)
    for (const host of ["0.0.0.0", "::", "10.0.0.1", "example.com", "127.example.com"]) {
      assert.isFalse(isLoopback(host), host)
    }
  })

  it("Host: every loopback spelling of the listen port, or an allowed_hosts entry; nothing else", () => {
    const listen = { host: "127.0.0.1", port: 8765 }
    for (const host of ["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "LOCALHOST:8765"]) {
      assert.isTrue(hostAllowed(host, listen, []), host)
    }
    for (const host of [undefined, "127.0.0.1:80", "localhost", "evil.example:8765", "evil.example"]) {
      assert.isFalse(hostAllowed(host, listen, []), String(host))
    }
    assert.isTrue(hostAllowed("mcp.internal:443", listen, ["mcp.internal"]))
    assert.isTrue(hostAllowed("mcp.internal:9000", listen, ["mcp.internal:9000"]))
    assert.isFalse(hostAllowed("mcp.internal:9001", listen, ["mcp.internal:9000"]))
    // A non-loopback listen address names only itself.
    assert.isFalse(hostAllowed("localhost:80", { host: "10.1.2.3", port: 80 }, []))
    assert.isTrue(hostAllowed("10.1.2.3:80", { host: "10.1.2.3", port: 80 }, []))
  })

  it("Origin: absent passes; else the listen origin or an allowed_origins entry", () => {
    const listen = { host: "127.0.0.1", port: 8765 }
    assert.isTrue(originAllowed(undefined, listen, []))
    assert.isTrue(originAllowed("http://localhost:8765", listen, []))
    assert.isTrue(originAllowed("http://127.0.0.1:8765/", listen, []))
    assert.isFalse(originAllowed("http://localhost:8766", listen, []))
    assert.isFalse(originAllowed("https://localhost:8765", listen, []))
    assert.isFalse(originAllowed("http://evil.example", listen, []))
    assert.isFalse(originAllowed("null", listen, []))
    assert.isTrue(originAllowed("https://app.example", listen, ["https://app.example/"]))
  })

  it("Bearer: only the exact token", () => {
    assert.isTrue(bearerMatches("Bearer s3cret", "s3cret"))
    assert.isTrue(bearerMatches("bearer s3cret", "s3cret"))
    for (const header of [undefined, "", "Bearer", "Bearer s3cre", "Bearer s3cretX", "Basic s3cret", "s3cret"]) {
      assert.isFalse(bearerMatches(header, "s3cret"), String(header))
    }
  })
})
