/**
 * What the guest sees besides the language (run by Worker.ts in each fresh QuickJS context): `tools` (namespaces of
 * functions, the names of `clawtool tools export-typescript`), `call(wireName, args)` and a `console` whose output is
 * captured. Every value crosses as JSON text, both ways. The prelude is a function the worker calls with the names
 * (JSON), the host's send function and the log function; it returns the encoder of the code's result and the
 * delivery of answers. An inner call's promise is the guest's own: `send` only numbers the call (0: refused, past
 * max_calls), and the answers come back in batches, one JSON text each: `[id, 1, value]`, `[id, 0]` (no value) or
 * `[id, 2, message]` (the tool failed: the code sees a ToolError thrown).
 */
export const prelude = `(function (namesJson, hostSend, hostLog) {
  "use strict"
  const waiting = new Map()
  const call = (name, args) => {
    if (typeof name !== "string") throw new TypeError("call(name, args): name must be a tool's wire name (a string)")
    const id = hostSend(name, args === undefined ? undefined : JSON.stringify(args))
    if (id === 0) return Promise.reject(new Error("max_calls reached"))
    return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }))
  }
  const deliver = (batch) => {
    for (const [id, kind, payload] of JSON.parse(batch)) {
      const waiter = waiting.get(id)
      waiting.delete(id)
      if (kind !== 2) waiter.resolve(kind === 1 ? payload : undefined)
      else {
        const error = new Error(payload)
        error.name = "ToolError"
        waiter.reject(error)
      }
    }
  }
  const bind = (wire) => (args) => call(wire, args)
  const tools = {}
  const names = JSON.parse(namesJson)
  for (const key of Object.keys(names)) {
    const value = names[key]
    if (typeof value === "string") tools[key] = bind(value)
    else {
      const space = {}
      for (const fn of Object.keys(value)) space[fn] = bind(value[fn])
      tools[key] = Object.freeze(space)
    }
  }
  const show = (value) => {
    if (typeof value === "string") return value
    try {
      const json = JSON.stringify(value)
      return json === undefined ? String(value) : json
    } catch (error) {
      return String(value)
    }
  }
  const log = (...parts) => hostLog(parts.map(show).join(" "))
  globalThis.tools = Object.freeze(tools)
  globalThis.call = call
  globalThis.console = Object.freeze({ log, info: log, warn: log, error: log, debug: log })
  return { encode: (value) => (value === undefined ? undefined : JSON.stringify(value)), deliver }
})`
