import type { SearchCase } from "./queries.js"

/**
 * A second held-out set: users' tasks written after the third tuning pass of ToolSearch (kind names, names, phrases;
 * ADR 025), committed before they were first measured, and never used to tune. The first held-out set
 * (heldout.ts) had its misses printed during that pass; this one had not been run when it was written. Same rules as
 * tasks.ts: users' words, every tool family, a set of right answers only where two tools genuinely do the task. Kept as
 * written.
 */
const readText = ["Read", "filesystem__read_text_file", "filesystem__read_file"] as const
const write = ["Write", "filesystem__write_file"] as const
const edit = ["Edit", "filesystem__edit_file"] as const
const findByName = ["Glob", "filesystem__search_files"] as const
const listFolder = ["filesystem__list_directory", "filesystem__list_directory_with_sizes"] as const

export const unseenTasks: ReadonlyArray<SearchCase> = [
  { query: "run the linter and show me the errors", expected: ["Bash"] },
  { query: "build the docker image", expected: ["Bash"] },
  { query: "how much disk space is left on this machine", expected: ["Bash"] },
  { query: "install the missing python packages with pip", expected: ["Bash"] },
  { query: "has the test run in the background finished yet", expected: ["BashPoll"] },
  { query: "show me the latest output of the server I started in the background", expected: ["BashPoll"] },
  { query: "shut down the background build", expected: ["BashKill"] },
  { query: "show me the Makefile", expected: [...readText] },
  { query: "what's written in the .env.example file", expected: [...readText] },
  { query: "read the first 20 lines of app.log", expected: [...readText] },
  { query: "change the timeout from 30 to 60 seconds in config.yaml", expected: [...edit] },
  { query: "remove the unused import at the top of main.ts", expected: [...edit] },
  { query: "create a .gitignore that ignores node_modules", expected: [...write] },
  { query: "write a hello world program to hello.py", expected: [...write] },
  { query: "list all the json files anywhere under config", expected: [...findByName] },
  { query: "where is the tsconfig file", expected: [...findByName] },
  { query: "find every place that calls the deprecated fetchUser function", expected: ["Grep"] },
  { query: "search the codebase for hard-coded passwords", expected: ["Grep"] },
  { query: "summarize the article at https://news.example.org/story", expected: ["WebFetch"] },
  { query: "grab the HTML of the pricing page on our website", expected: ["WebFetch"] },
  { query: "what's the current stable release of Rust", expected: ["WebSearch"] },
  { query: "search online for reviews of the Framework laptop", expected: ["WebSearch"] },
  { query: "the filesystem server keeps crashing, what's wrong", expected: ["SourceHealth"] },
  { query: "which MCP sources are down right now", expected: ["SourceHealth"] },
  { query: "show me the folders inside my home directory", expected: [...listFolder] },
  { query: "what are the biggest files in the logs folder", expected: ["filesystem__list_directory_with_sizes"] },
  { query: "draw the folder tree of the project", expected: ["filesystem__directory_tree"] },
  { query: "create a new directory for test fixtures", expected: ["filesystem__create_directory"] },
  { query: "move archive.zip into the backups folder", expected: ["filesystem__move_file"] },
  { query: "when was package-lock.json last changed", expected: ["filesystem__get_file_info"] },
  { query: "what directories does the file server let me use", expected: ["filesystem__list_allowed_directories"] },
  { query: "get this mp3 as base64 audio", expected: ["filesystem__read_media_file"] },
  { query: "read index.html, style.css and app.js", expected: ["filesystem__read_multiple_files"] },
  {
    query: "remember that Frank is allergic to peanuts",
    expected: ["memory__add_observations", "memory__create_entities"]
  },
  { query: "Grace and Heidi are sisters, remember that", expected: ["memory__create_relations"] },
  { query: "forget Ivan completely", expected: ["memory__delete_entities"] },
  { query: "Judy changed jobs, delete the note that she works at Initech", expected: ["memory__delete_observations"] },
  { query: "show everything in the knowledge graph", expected: ["memory__read_graph"] },
  { query: "look up what you know about Kevin", expected: ["memory__search_nodes", "memory__open_nodes"] },
  { query: "who works at Initech according to your memory", expected: ["memory__search_nodes"] },
  { query: "repeat after me: testing 1 2 3", expected: ["everything__echo"] },
  { query: "sum 8 and 15", expected: ["everything__get-sum"] },
  {
    query: "have the server ask the client's model to summarize something",
    expected: ["everything__trigger-sampling-request"]
  },
  { query: "show the tiny test image", expected: ["everything__get-tiny-image"] },
  { query: "list the roots this client shared", expected: ["everything__get-roots-list"] },
  { query: "turn off the resource update notifications", expected: ["everything__toggle-subscriber-updates"] }
]
