/**
 * What the guest sees besides the language (run by Worker.ts in each fresh QuickJS context): `tools` (namespaces of
 * functions, the names of `clawtool tools export-typescript`), `call(wireName, args)` and a `console` whose output is
 * captured. Every value crosses as JSON text, both ways. The prelude is a function the worker calls with the names
 * (JSON), the host's call function and the log function; it returns the encoder of the code's result.
 */
export const prelude = `(function (namesJson, hostCall, hostLog) {
  "use strict"
  const call = (name, args) => {
    if (typeof name !== "string") throw new TypeError("call(name, args): name must be a tool's wire name (a string)")
    const json = args === undefined ? undefined : JSON.stringify(args)
    return hostCall(name, json).then((text) => (text === undefined ? undefined : JSON.parse(text)))
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
  return (value) => (value === undefined ? undefined : JSON.stringify(value))
})`
