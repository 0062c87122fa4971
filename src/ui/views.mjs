// The dashboard's pages (issue 29). Plain preact `h` (no JSX step); colours come with words, never alone.
import { h } from "preact"
import { useEffect, useState } from "preact/hooks"
import { get, post } from "./api.mjs"

const statusClass = (status) =>
  status === "running" || status === "idle" ? "ok" : status === "starting" || status === "skipped" ? "warn" : "bad"

export const Status = ({ status }) => h("span", { class: `status ${statusClass(status)}` }, status)

const uptime = (startedAt, status, now) => {
  if (startedAt === null || status !== "running") return "–"
  const seconds = Math.max(0, Math.floor((now - Date.parse(startedAt)) / 1000))
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`
}

/** The last 15 minutes' mean latency per minute, as a small line (an empty minute is a gap). */
export const Sparkline = ({ values, name }) => {
  const known = values.filter((value) => value !== null)
  const label =
    known.length === 0
      ? `${name}: no calls in the last 15 minutes`
      : `${name}: mean latency ${known.at(-1).toFixed(1)} ms in the last minute with calls, highest ${Math.max(...known).toFixed(1)} ms`
  const top = Math.max(1, ...known)
  const points = values
    .map((value, i) =>
      value === null ? null : `${(i * 100) / Math.max(1, values.length - 1)},${28 - (value / top) * 26}`
    )
    .filter((point) => point !== null)
  return h(
    "svg",
    { class: "spark", viewBox: "0 0 100 30", role: "img", "aria-label": label, preserveAspectRatio: "none" },
    h("title", null, label),
    points.length > 1
      ? h("polyline", { points: points.join(" "), fill: "none", stroke: "#0b5cad", "stroke-width": 2 })
      : points.length === 1
        ? h("circle", { cx: points[0].split(",")[0], cy: points[0].split(",")[1], r: 2.5, fill: "#0b5cad" })
        : null
  )
}

/**
 * `clawtool auth login` from the page: the daemon starts the flow and answers the authorization URL, opened in a new
 * tab (opened on the click, so no popup blocker); the redirect ends on the daemon, and this row turns running.
 */
const LoginButton = ({ name }) => {
  const [problem, setProblem] = useState("")
  const [link, setLink] = useState(undefined)
  const click = async () => {
    setProblem("")
    const tab = window.open("", "_blank")
    try {
      const { authorizationUrl } = await post("/api/oauth/login", { source: name })
      if (authorizationUrl === undefined) return tab?.close()
      if (tab === null) return setLink(authorizationUrl)
      tab.opener = null
      tab.location.href = authorizationUrl
    } catch (e) {
      tab?.close()
      setProblem(String(e.message))
    }
  }
  return h(
    "div",
    { class: "login-needed" },
    h("span", null, "needs login "),
    h("button", { type: "button", onClick: click, "aria-label": `Log in to ${name}` }, "Log in"),
    link ? h("a", { href: link, target: "_blank", rel: "noopener noreferrer" }, "Open the authorization page") : null,
    problem ? h("p", { role: "alert", class: "bad-text" }, problem) : null
  )
}

export const Health = ({ state }) => {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(timer)
  }, [])
  const sources = state.sources.filter((row) => row.kind === "source")
  const notices = state.sources.filter((row) => row.kind !== "source")
  return h(
    "section",
    { "aria-labelledby": "health-title" },
    h("h2", { id: "health-title" }, "Sources"),
    notices.map((row) =>
      h("p", { class: "notice", role: "status", key: row.name }, h("strong", null, `${row.name}: `), row.reason)
    ),
    h(
      "table",
      { class: "health" },
      h("caption", { class: "visually-hidden" }, "Every source's health"),
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ["Source", "Status", "Restarts", "Uptime", "Tools", "Latency, 15 min", "Last stderr line"].map((title) =>
            h("th", { scope: "col", key: title }, title)
          )
        )
      ),
      h(
        "tbody",
        null,
        sources.map((row) =>
          h(
            "tr",
            { key: row.name, "data-source": row.name, "data-status": row.status },
            h("th", { scope: "row" }, h("a", { href: `#/source/${encodeURIComponent(row.name)}` }, row.name)),
            h(
              "td",
              null,
              h(Status, { status: row.status }),
              row.reason ? h("div", { class: "reason" }, row.reason) : null,
              row.login ? h(LoginButton, { name: row.name }) : null
            ),
            h("td", null, String(row.restarts)),
            h("td", null, uptime(row.startedAt, row.status, now)),
            h("td", null, String(row.toolCount), row.quarantined > 0 ? ` (${row.quarantined} quarantined)` : ""),
            h("td", null, h(Sparkline, { values: row.latency, name: row.name })),
            h("td", null, h("code", { class: "stderr" }, row.lastStderr))
          )
        )
      )
    )
  )
}

export const SourceDetail = ({ name, state }) => {
  const [detail, setDetail] = useState(undefined)
  const [error, setError] = useState("")
  const row = state.sources.find((row) => row.name === name)
  useEffect(() => {
    get(`/api/sources/${encodeURIComponent(name)}`).then(setDetail, (e) => setError(String(e.message)))
  }, [name, row?.status, row?.restarts, row?.toolCount])
  if (error) return h("p", { role: "alert" }, error)
  if (detail === undefined) return h("p", null, "Loading…")
  return h(
    "section",
    { "aria-labelledby": "source-title" },
    h("h2", { id: "source-title" }, `Source ${detail.name}`),
    h(
      "dl",
      { class: "facts" },
      h("dt", null, "Status"),
      h("dd", null, h(Status, { status: row?.status ?? detail.status }), " ", row?.reason ?? detail.reason),
      h("dt", null, "Transport"),
      h("dd", null, detail.transport),
      h("dt", null, "Restarts"),
      h("dd", null, String(row?.restarts ?? detail.restarts)),
      h("dt", null, "Last exit"),
      h(
        "dd",
        null,
        detail.lastExit === null
          ? "–"
          : `${detail.lastExit.signal ?? `code ${detail.lastExit.code}`} at ${detail.lastExit.at}`
      ),
      h("dt", null, "Next retry"),
      h("dd", null, detail.nextRetryAt ?? "–")
    ),
    h("h3", null, `Tools (${detail.tools.length})`),
    h(
      "ul",
      { class: "tools" },
      detail.tools.map((tool) =>
        h("li", { key: tool.wire }, h("code", null, tool.wire), ` ${tool.status}: ${tool.rule}`)
      )
    ),
    h("h3", null, "Stderr (last lines, secrets redacted)"),
    h("pre", { class: "log", tabindex: 0 }, detail.stderrTail.join("\n") || "(nothing)")
  )
}

const CallForm = ({ tool }) => {
  const [args, setArgs] = useState("{}")
  const [outcome, setOutcome] = useState(undefined)
  const id = `args-${tool.name}`
  const call = async (event) => {
    event.preventDefault()
    let parsed
    try {
      parsed = JSON.parse(args)
    } catch (e) {
      return setOutcome({ error: `The arguments are not JSON: ${e.message}` })
    }
    setOutcome({ pending: true })
    try {
      setOutcome(await post("/api/call", { name: tool.name, arguments: parsed }))
    } catch (e) {
      setOutcome({ error: e.message })
    }
  }
  return h(
    "form",
    { class: "call", onSubmit: call },
    h("label", { for: id }, `Arguments for ${tool.name} (JSON)`),
    h("textarea", { id, rows: 3, value: args, onInput: (e) => setArgs(e.currentTarget.value) }),
    h("button", { type: "submit" }, `Call ${tool.name}`),
    outcome === undefined
      ? null
      : outcome.pending
        ? h("p", { role: "status" }, "Calling…")
        : outcome.error
          ? h("p", { role: "alert", class: "bad-text" }, outcome.error)
          : h(
              "div",
              { class: "result", role: "status" },
              h(
                "p",
                null,
                `${outcome.result.isError ? "Error" : "Result"} in ${outcome.durationMs.toFixed(1)} ms`,
                outcome.traceId ? `, trace ${outcome.traceId}` : ""
              ),
              h("pre", { tabindex: 0 }, JSON.stringify(outcome.result, null, 2))
            )
  )
}

export const Tools = () => {
  const [query, setQuery] = useState("")
  const [tools, setTools] = useState(undefined)
  const [open, setOpen] = useState(undefined)
  useEffect(() => {
    const timer = setTimeout(() => get(`/api/tools?q=${encodeURIComponent(query)}`).then(setTools, () => {}), 150)
    return () => clearTimeout(timer)
  }, [query])
  return h(
    "section",
    { "aria-labelledby": "tools-title" },
    h("h2", { id: "tools-title" }, "Tools"),
    h("label", { for: "tool-search" }, "Search the catalog (ToolSearch)"),
    h("input", {
      id: "tool-search",
      type: "search",
      value: query,
      onInput: (e) => setQuery(e.currentTarget.value)
    }),
    tools === undefined
      ? h("p", null, "Loading…")
      : h("p", { role: "status", class: "count" }, `${tools.length} tools`),
    h(
      "ul",
      { class: "catalog" },
      (tools ?? []).map((tool) =>
        h(
          "li",
          { key: tool.name },
          h(
            "button",
            {
              type: "button",
              class: "link",
              "aria-expanded": open === tool.name ? "true" : "false",
              onClick: () => setOpen(open === tool.name ? undefined : tool.name)
            },
            tool.name
          ),
          h("span", { class: "source" }, ` ${tool.source}`),
          h("p", { class: "description" }, tool.description.slice(0, 300)),
          open === tool.name ? h(CallForm, { tool }) : null
        )
      )
    )
  )
}

export const Calls = ({ state }) =>
  h(
    "section",
    { "aria-labelledby": "calls-title" },
    h("h2", { id: "calls-title" }, "Recent calls"),
    state.calls.length === 0
      ? h("p", null, "No calls since the daemon started.")
      : h(
          "table",
          null,
          h("caption", { class: "visually-hidden" }, "The last calls, newest first"),
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              ["Time", "Source", "Tool", "Outcome", "ms", "Trace"].map((t) => h("th", { scope: "col", key: t }, t))
            )
          ),
          h(
            "tbody",
            null,
            state.calls.map((call, i) =>
              h(
                "tr",
                { key: `${call.at}-${i}` },
                h("td", null, new Date(call.at).toLocaleTimeString()),
                h("td", null, call.source),
                h("td", null, h("code", null, call.tool)),
                h("td", null, h("span", { class: `status ${call.outcome === "ok" ? "ok" : "bad"}` }, call.outcome)),
                h("td", null, call.durationMs.toFixed(1)),
                h("td", null, call.traceId ?? "")
              )
            )
          )
        )
  )

export const Trust = ({ state }) => {
  const [waiting, setWaiting] = useState(undefined)
  const [message, setMessage] = useState("")
  const load = () => get("/api/trust").then(setWaiting, (e) => setMessage(e.message))
  const quarantined = state.sources.reduce((sum, row) => sum + row.quarantined, 0)
  useEffect(() => void load(), [quarantined])
  const approve = async (selector) => {
    try {
      const { approved } = await post("/api/trust/approve", { selector })
      setMessage(approved.length === 0 ? `Nothing waited for ${selector}` : `Approved ${approved.join(", ")}`)
    } catch (e) {
      setMessage(e.message)
    }
    load()
  }
  return h(
    "section",
    { "aria-labelledby": "trust-title" },
    h("h2", { id: "trust-title" }, "Trust"),
    message ? h("p", { role: "status" }, message) : null,
    waiting === undefined
      ? h("p", null, "Loading…")
      : waiting.length === 0
        ? h("p", null, "No tool waits for approval.")
        : waiting.map((entry) =>
            h(
              "article",
              { class: "waiting", key: entry.selector, "aria-labelledby": `w-${entry.selector}` },
              h(
                "h3",
                { id: `w-${entry.selector}` },
                h("code", null, entry.selector),
                " ",
                h("span", { class: `status ${entry.held ? "bad" : "warn"}` }, entry.held ? "quarantined" : "warned")
              ),
              h("p", null, entry.reason),
              h("pre", { class: "diff", tabindex: 0 }, entry.diff),
              h("button", { type: "button", onClick: () => approve(entry.selector) }, `Approve ${entry.selector}`)
            )
          )
  )
}
