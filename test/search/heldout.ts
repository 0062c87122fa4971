import type { SearchCase } from "./queries.js"

/**
 * Users' tasks written after ToolSearch's ranking was tuned on test/search/tasks.ts, and never used to tune it: the
 * honest figure for tasks the ranking has not seen. Same rules as tasks.ts (users' words, every tool family, a set of
 * right answers only where two tools genuinely do the task). Kept as written.
 */
const readText = ["Read", "filesystem__read_text_file", "filesystem__read_file"] as const
const write = ["Write", "filesystem__write_file"] as const
const edit = ["Edit", "filesystem__edit_file"] as const
const findByName = ["Glob", "filesystem__search_files"] as const
const listFolder = ["filesystem__list_directory", "filesystem__list_directory_with_sizes"] as const

export const heldOutTasks: ReadonlyArray<SearchCase> = [
  { query: "run eslint on the src folder", expected: ["Bash"] },
  { query: "check which node processes are running", expected: ["Bash"] },
  { query: "how is the background deploy doing", expected: ["BashPoll"] },
  { query: "terminate the watcher I launched earlier", expected: ["BashKill"] },
  { query: "display the contents of main.py", expected: [...readText] },
  { query: "read the changelog", expected: [...readText] },
  { query: "swap the word colour for color in the docs page", expected: [...edit] },
  { query: "update the copyright year in the LICENSE header", expected: [...edit] },
  { query: "make a new file todo.md containing three tasks", expected: [...write] },
  { query: "find every test file ending in .spec.ts", expected: [...findByName] },
  { query: "search all python files for the string 'import requests'", expected: ["Grep"] },
  { query: "which files still use the old logger", expected: ["Grep"] },
  { query: "fetch the README from this GitHub url", expected: ["WebFetch"] },
  { query: "look up the release date of TypeScript 6 on the web", expected: ["WebSearch"] },
  { query: "is the memory server up", expected: ["SourceHealth"] },
  { query: "what's in the assets folder", expected: [...listFolder] },
  { query: "sort the files in this directory by size", expected: ["filesystem__list_directory_with_sizes"] },
  { query: "print the directory hierarchy of the repo", expected: ["filesystem__directory_tree"] },
  { query: "create a folder named releases", expected: ["filesystem__create_directory"] },
  { query: "move notes.txt into the old folder", expected: ["filesystem__move_file"] },
  { query: "what are the size and modification date of data.csv", expected: ["filesystem__get_file_info"] },
  { query: "list the folders I'm allowed to use", expected: ["filesystem__list_allowed_directories"] },
  { query: "load the song recording.mp3", expected: ["filesystem__read_media_file"] },
  { query: "open package.json and tsconfig.json together", expected: ["filesystem__read_multiple_files"] },
  { query: "remember Erin, our new intern", expected: ["memory__create_entities", "memory__add_observations"] },
  { query: "add to Erin's profile that she speaks French", expected: ["memory__add_observations"] },
  { query: "Erin reports to Alice", expected: ["memory__create_relations"] },
  { query: "forget the entity called Apollo", expected: ["memory__delete_entities"] },
  { query: "search the knowledge graph for anyone in Berlin", expected: ["memory__search_nodes"] },
  { query: "show the full memory graph", expected: ["memory__read_graph"] },
  { query: "echo back the word banana", expected: ["everything__echo"] },
  { query: "what's 1234 plus 4321", expected: ["everything__get-sum"] },
  { query: "ask the model for a summary via sampling", expected: ["everything__trigger-sampling-request"] },
  { query: "gzip the sample data into an archive", expected: ["everything__gzip-file-as-resource"] },
  { query: "turn on the simulated log messages", expected: ["everything__toggle-simulated-logging"] },
  { query: "ask the user to confirm before continuing", expected: ["everything__trigger-elicitation-request"] }
]
