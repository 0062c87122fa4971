/**
 * ToolSearch's vocabulary, in one place: the words that name no tool, and the words agents and users use for the same
 * thing. General words only: an entry is here because the words mean the same across tools and servers, never to move
 * one query's answer.
 */

/** Words that name no tool. */
export const stopWords: ReadonlySet<string> = new Set(
  (
    "a about after all also am an and any anything are as at be been being but by can could did do does doing each " +
    "every everything for from had has have having he her here him his how i i'm in into is it it's its just let me " +
    "my myself of on or our please she should so some something than that that's the their them then there these " +
    "they this those through to too us use using via was we were what what's when which while who whom why " +
    "will with would you your"
  ).split(" ")
)

/** Programs people run from a shell: a synonym of `program` (a Bash keyword), and a kind of command. */
const programs = (
  "git npm npx yarn pnpm pip cargo make cmake gradle mvn docker kubectl " + "eslint prettier pytest jest vitest tsc gcc"
).split(" ")

/**
 * Groups of words used for the same thing (MCP's own names for them included). A query word also looks for the other
 * words of its groups, at a lower weight than the word itself, so an exact match still ranks first. Unix command names
 * are here because people type them for the operation (`ls` a folder, `mv` a file).
 */
export const synonymGroups: ReadonlyArray<ReadonlyArray<string>> = [
  ["folder", "directory", "dir", "subfolder", "subdirectory"],
  ["file", "document"],
  ["create", "make", "new", "mkdir", "init", "initialize"],
  ["delete", "remove", "forget", "erase", "drop", "rm", "unlink", "clear", "purge", "discard"],
  ["find", "search", "lookup", "query", "locate", "discover", "seek"],
  ["show", "list", "display", "view", "print", "ls", "see"],
  ["get", "fetch", "retrieve", "return", "obtain", "grab"],
  ["read", "open", "load", "cat", "peek", "inspect", "examine"],
  ["write", "save", "store", "persist", "dump"],
  ["edit", "change", "modify", "update", "patch", "alter", "fix", "replace", "tweak", "adjust", "correct"],
  ["move", "rename", "relocate", "transfer", "put", "mv"],
  ["image", "picture", "photo", "media", "screenshot", "png", "jpeg", "jpg", "gif", "icon", "logo"],
  ["audio", "sound", "music", "mp3", "wav"],
  ["size", "big", "large", "bytes", "space"],
  ["info", "information", "metadata", "details", "stat", "attributes", "properties", "permissions", "owner"],
  ["time", "date", "timestamp", "modified"],
  ["relation", "relationship", "link", "connect", "associate"],
  ["observation", "fact", "note", "remark"],
  ["entity", "node", "person", "people", "contact", "entry", "record"],
  ["memory", "remember", "recall", "knowledge", "memories", "memorize", "know"],
  ["compress", "gzip", "zip", "archive", "gz", "pack"],
  ["echo", "repeat", "parrot", "mirror"],
  ["sum", "add", "plus", "total", "calculate", "compute", "arithmetic"],
  ["environment", "env", "variables", "vars"],
  ["long", "slow", "lengthy"],
  ["operation", "job", "task"],
  ["elicitation", "ask", "question", "input", "form"],
  ["sampling", "llm", "model", "generate", "completion", "ai", "gpt"],
  ["log", "logging"],
  ["toggle", "switch", "turn", "enable", "disable", "activate", "deactivate"],
  ["research", "investigate", "study"],
  ["tree", "hierarchy", "structure", "recursive", "nested", "layout"],
  ["multiple", "several", "many", "batch", "bulk"],
  ["allowed", "permitted", "accessible", "access"],
  ["health", "status", "diagnose", "down", "broken", "failing", "missing", "crash"],
  ["server", "source"],
  ["text", "content", "contents"],
  ["shell", "bash", "command", "terminal", "execute", "run", "cli", "launch"],
  ["web", "url", "page", "website", "http", "site", "online", "internet", "blog", "article", "endpoint"],
  ["head", "first", "top", "beginning"],
  ["tail", "last", "end"],
  ["kill", "stop", "terminate", "cancel", "abort", "halt"],
  ["build", "compile"],
  ["occurrence", "mention", "contain", "appear", "match"],
  ["background", "detached"],
  ["missing", "disappeared", "gone", "vanished"],
  ["locate", "where"],
  ["subscription", "subscribe", "subscriber", "subscribed"],
  ["add", "append", "insert", "attach"],
  ["root", "workspace"],
  ["recent", "latest", "newest"],
  ["simulate", "fake", "mock", "dummy"],
  ["code", "function", "variable", "class", "method", "symbol", "identifier", "import", "definition"],
  // Programs people run from a shell, named for the task (`npm install`, `make`, `docker build`).
  ["program", ...programs]
]

/**
 * What a tool acts on, read from its name and title: tool names are mostly verb and object (`create_entities`,
 * `read_text_file`, `list_directory`), and the object is what tells a family's tools apart. Each group lists the words
 * users say for one kind of thing; a query naming a thing its name names ranks the tool above those that only share
 * other words with the query (ToolSearch.ts, `objectWeight`), and a word of a group also looks for the group's own name
 * (`kindWeight`). A relation is also what states one between two things (manages, married, friend, between); the web
 * also what people say there (news, opinions, reviews, forums).
 */
export const objectGroups: Readonly<Record<string, ReadonlyArray<string>>> = {
  file: ["file", "files", "document"],
  folder: ["folder", "directory", "directories", "dir", "subfolder", "subdirectory"],
  entity: ["entity", "entities", "node", "person", "people", "contact", "entry", "record"],
  relation: [
    "relation",
    "relationship",
    "connection",
    "link",
    "unlink",
    "friendship",
    "friend",
    "manages",
    "married",
    "between"
  ],
  observation: ["observation", "fact", "note", "detail"],
  graph: ["graph", "memory", "knowledge"],
  web: ["web", "url", "page", "website", "site", "internet", "online", "news", "saying", "opinion", "review", "forum"],
  command: ["command", "process", "shell", "bash", "script", "program", ...programs],
  media: ["media", "image", "picture", "photo", "screenshot", "audio", "song", "video"]
}

/**
 * Phrases that mean one word, read before the words are: particle verbs (`look up`, `pull up`, `set up`); `the new X`, a
 * recent X (`a new X` is one to create); `at once`, `in one go`, several at a time; a participle of a change describes
 * when, not what to do (`the most recently modified`, `when was it created`); the verbs that state a relation
 * (`reports to`, `works with`).
 */
export const phrases: ReadonlyArray<readonly [string, string]> = [
  ["look up", "lookup"],
  ["pull up", "open"],
  ["set up", "create"],
  ["look for", "search"],
  ["look at", "view"],
  ["the new", "the latest"],
  ["at once", "multiple"],
  ["in one go", "multiple"],
  ["modified", "time"],
  ["created", "time"],
  ["reports to", "relates to"],
  ["works with", "relates with"],
  ["works for", "relates to"],
  ["belongs to", "relates to"]
]
