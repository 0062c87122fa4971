/**
 * Paraphrased tasks over the three reference servers (server-everything, server-filesystem, server-memory) and
 * clawtool's own tools, each with the tools that do it (a file task is done as well by clawtool's own Read, Edit, Write or
 * Glob as by server-filesystem's tool). Written the way agents phrase a task, mostly NOT in the
 * tool's own words: the search-first catalog (`catalog = "search"`) lives or dies by these. Measured by
 * test/RegistrySearchQuality.test.ts; the README quotes its figures.
 */
export interface SearchCase {
  readonly query: string
  /** The tools that do the task; the first is the one the query was written for. A hit on any counts. */
  readonly expected: readonly [string, ...Array<string>]
}

export const searchCases: ReadonlyArray<SearchCase> = [
  // server-filesystem
  { query: "make a new folder", expected: ["filesystem__create_directory"] },
  { query: "show the folder hierarchy as a tree", expected: ["filesystem__directory_tree"] },
  { query: "change a few lines in a text file", expected: ["filesystem__edit_file", "Edit"] },
  { query: "file size and last modified date", expected: ["filesystem__get_file_info"] },
  { query: "which folders am I permitted to access", expected: ["filesystem__list_allowed_directories"] },
  { query: "show what is inside a directory", expected: ["filesystem__list_directory"] },
  { query: "list folder contents with how big each file is", expected: ["filesystem__list_directory_with_sizes"] },
  { query: "rename a file", expected: ["filesystem__move_file"] },
  { query: "put a document into another folder", expected: ["filesystem__move_file"] },
  { query: "load a picture as base64", expected: ["filesystem__read_media_file"] },
  { query: "read several files at once", expected: ["filesystem__read_multiple_files"] },
  { query: "get the text of a file", expected: ["filesystem__read_text_file", "filesystem__read_file", "Read"] },
  { query: "show the first lines of a log file", expected: ["filesystem__read_text_file", "Read"] },
  { query: "find files whose names match *.md", expected: ["filesystem__search_files", "Glob"] },
  { query: "save content to a new file", expected: ["filesystem__write_file", "Write"] },
  { query: "overwrite a file with new contents", expected: ["filesystem__write_file", "Write"] },
  // server-memory
  { query: "add new facts to an existing entity", expected: ["memory__add_observations"] },
  { query: "store new people in the knowledge graph", expected: ["memory__create_entities"] },
  { query: "link two entities together", expected: ["memory__create_relations"] },
  { query: "remove entities from memory", expected: ["memory__delete_entities"] },
  { query: "forget an observation about someone", expected: ["memory__delete_observations"] },
  { query: "remove a relationship between two entities", expected: ["memory__delete_relations"] },
  { query: "look up specific nodes by name", expected: ["memory__open_nodes"] },
  { query: "dump the whole knowledge graph", expected: ["memory__read_graph"] },
  { query: "query the memory for a keyword", expected: ["memory__search_nodes"] },
  // server-everything
  { query: "repeat back my message", expected: ["everything__echo"] },
  { query: "add two numbers", expected: ["everything__get-sum"] },
  { query: "print the environment variables", expected: ["everything__get-env"] },
  { query: "compress data with gzip", expected: ["everything__gzip-file-as-resource"] },
  { query: "run a slow job that reports progress", expected: ["everything__trigger-long-running-operation"] },
  { query: "ask the model to generate text", expected: ["everything__trigger-sampling-request"] },
  { query: "ask the user a question", expected: ["everything__trigger-elicitation-request"] },
  { query: "return a small picture", expected: ["everything__get-tiny-image"] },
  { query: "turn logging on or off", expected: ["everything__toggle-simulated-logging"] },
  { query: "do deep research on a topic", expected: ["everything__simulate-research-query"] },
  { query: "list the client's root folders", expected: ["everything__get-roots-list"] },
  { query: "get links to resources", expected: ["everything__get-resource-links"] },
  { query: "a message with annotations", expected: ["everything__get-annotated-message"] },
  // clawtool's own
  { query: "which servers are down and why", expected: ["SourceHealth"] },
  { query: "status of the connected servers", expected: ["SourceHealth"] }
]
