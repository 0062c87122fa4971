// The daemon's dashboard (issue 29, ADR 034): a single page served from clawtool's own bundle at /ui. Asks for the
// token once (kept in sessionStorage for this tab), then follows the daemon's state stream.
import { h, render } from "preact"
import { useEffect, useState } from "preact/hooks"
import { get, stream, token, Unauthorized } from "./api.mjs"
import { Calls, Health, SourceDetail, Tools, Trust } from "./views.mjs"

const Login = ({ onDone, problem }) => {
  const [value, setValue] = useState("")
  const [error, setError] = useState(problem ?? "")
  const submit = async (event) => {
    event.preventDefault()
    token.set(value)
    try {
      await get("/api/state")
      onDone()
    } catch (e) {
      token.clear()
      setError(e instanceof Unauthorized ? "Wrong token: the daemon refused it." : e.message)
    }
  }
  return h(
    "main",
    { class: "login" },
    h("h1", null, "clawtool"),
    h(
      "form",
      { onSubmit: submit },
      h("label", { for: "token" }, "Daemon token ([http] token)"),
      h("input", {
        id: "token",
        type: "password",
        autocomplete: "off",
        value,
        onInput: (e) => setValue(e.currentTarget.value)
      }),
      h("button", { type: "submit" }, "Sign in"),
      error ? h("p", { role: "alert", class: "bad-text" }, error) : null
    )
  )
}

const route = () => (location.hash || "#/").slice(1)

const pages = [
  ["/", "Sources"],
  ["/tools", "Tools"],
  ["/calls", "Calls"],
  ["/trust", "Trust"]
]

const Dashboard = ({ onRefused }) => {
  const [state, setState] = useState(undefined)
  const [status, setStatus] = useState("connecting")
  const [path, setPath] = useState(route())
  useEffect(() => {
    const onHash = () => setPath(route())
    addEventListener("hashchange", onHash)
    const stop = stream(setState, (next) => (next === "refused" ? onRefused() : setStatus(next)))
    return () => {
      stop()
      removeEventListener("hashchange", onHash)
    }
  }, [])
  const source = /^\/source\/(.+)$/.exec(path)
  const page =
    state === undefined
      ? h("p", null, "Loading…")
      : source !== null
        ? h(SourceDetail, { name: decodeURIComponent(source[1]), state })
        : path === "/tools"
          ? h(Tools, null)
          : path === "/calls"
            ? h(Calls, { state })
            : path === "/trust"
              ? h(Trust, { state })
              : h(Health, { state })
  return h(
    "div",
    { class: "shell" },
    h(
      "header",
      null,
      h("h1", null, "clawtool"),
      h(
        "nav",
        { "aria-label": "Pages" },
        pages.map(([target, title]) =>
          h("a", { href: `#${target}`, key: target, "aria-current": path === target ? "page" : undefined }, title)
        )
      ),
      h("p", { class: `live ${status}`, role: "status" }, status === "live" ? "Live" : status),
      h(
        "button",
        {
          type: "button",
          class: "link",
          onClick: () => {
            token.clear()
            onRefused("")
          }
        },
        "Sign out"
      )
    ),
    h("main", null, page)
  )
}

const App = () => {
  const [signedIn, setSignedIn] = useState(token.get() !== null)
  const [problem, setProblem] = useState(undefined)
  if (!signedIn) return h(Login, { onDone: () => setSignedIn(true), problem })
  return h(Dashboard, {
    onRefused: (text = "The daemon refused the token.") => {
      token.clear()
      setProblem(text)
      setSignedIn(false)
    }
  })
}

render(h(App, null), document.getElementById("app"))
