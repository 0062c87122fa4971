// The dashboard's side of /api (issue 29): the token from sessionStorage as a bearer header (no cookies), JSON in and
// out, and the state stream (server-sent events read from a fetch body, since EventSource cannot send a header).

const key = "clawtool-token"

export const token = {
  get: () => sessionStorage.getItem(key),
  set: (value) => sessionStorage.setItem(key, value),
  clear: () => sessionStorage.removeItem(key)
}

export class Unauthorized extends Error {}

const headers = (extra = {}) => {
  const value = token.get()
  return value ? { authorization: `Bearer ${value}`, ...extra } : extra
}

export const get = async (path) => {
  const response = await fetch(path, { headers: headers() })
  if (response.status === 401) throw new Unauthorized("the daemon refused the token")
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`)
  return response.json()
}

export const post = async (path, body) => {
  const response = await fetch(path, {
    method: "POST",
    headers: headers({ "content-type": "application/json" }),
    body: JSON.stringify(body)
  })
  if (response.status === 401) throw new Unauthorized("the daemon refused the token")
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`)
  return response.json()
}

/** Calls `onState` with each state the daemon sends; `onStatus` with "live", "reconnecting" or "refused". */
export const stream = (onState, onStatus) => {
  let stopped = false
  let controller
  const connect = async () => {
    controller = new AbortController()
    try {
      const response = await fetch("/api/events", { headers: headers(), signal: controller.signal })
      if (response.status === 401) return onStatus("refused")
      if (!response.ok || response.body === null) throw new Error(String(response.status))
      onStatus("live")
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
      let buffer = ""
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += value
        let end
        while ((end = buffer.indexOf("\n\n")) !== -1) {
          const event = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = event
            .split("\n")
            .filter((line) => line.startsWith("data: "))
            .map((line) => line.slice(6))
            .join("\n")
          if (/^event: state$/m.test(event) && data !== "") onState(JSON.parse(data))
        }
      }
    } catch {
      // dropped: try again below
    }
    if (stopped) return
    onStatus("reconnecting")
    setTimeout(connect, 1500)
  }
  connect()
  return () => {
    stopped = true
    controller?.abort()
  }
}
