import { Array as Arr, Either, Option, ParseResult, Schema, SchemaAST as AST } from "effect"
import { ConfigError } from "../../domain/Errors.js"
import { locateJson, locateToml } from "./Locate.js"
import type { ConfigFormat } from "./Location.js"

/**
 * Decodes `input` with unknown keys as errors, turning the FIRST issue into one ConfigError at its file, line and key
 * path. The words come from the schema's annotations (see src/domain/Config/Values.ts), read through Effect's ArrayFormatter.
 */
export const decodeStrict = <A, I>(
  schema: Schema.Schema<A, I>,
  input: unknown,
  context: {
    readonly file: string
    readonly text: string
    readonly format: ConfigFormat
    /** What a position expects when its schema has no description; for schemas not annotated yet (secrets.toml). */
    readonly describe?: (path: ReadonlyArray<PropertyKey>) => string | undefined
  }
): Either.Either<A, ConfigError> =>
  Either.mapLeft(Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })(input), (error) => {
    const problem = firstProblem(error.issue, context)
    return new ConfigError({
      reason: "Invalid",
      file: context.file,
      line: context.format === "json" ? locateJson(context.text, problem.path) : locateToml(context.text, problem.path),
      keyPath: showPath(problem.path),
      detail: problem.message
    })
  })

/** `sources.my-fs.command[1]`; keys that are not bare TOML keys are quoted. */
export const showPath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((key, i) =>
      typeof key === "number"
        ? `[${key}]`
        : `${i === 0 ? "" : "."}${isBareKey(String(key)) ? String(key) : JSON.stringify(String(key))}`
    )
    .join("")

const isBareKey = (key: string): boolean => /^[A-Za-z0-9_-]+$/.test(key)

// --- From a ParseIssue to one sentence ----------------------------------------

interface Wording {
  readonly format: ConfigFormat
  readonly describe?: ((path: ReadonlyArray<PropertyKey>) => string | undefined) | undefined
}

/**
 * The first issue with its key path and message. Effect's ArrayFormatter walks the tree and applies the schema's
 * `message` and `missingMessage` annotations by its own rules; `withWording` first gives every issue that has no
 * annotated message one built from the schema (description, examples, the struct's keys) instead of Effect's
 * schema-dump default.
 */
const firstProblem = (
  issue: ParseResult.ParseIssue,
  wording: Wording
): { readonly path: ReadonlyArray<PropertyKey>; readonly message: string } =>
  ParseResult.ArrayFormatter.formatIssueSync(withWording(issue, wording, [], undefined, undefined))[0] ?? {
    path: [],
    message: "invalid configuration"
  }

/** What a position expects: a schema's `description` and first `examples` entry. */
interface Expectation {
  readonly description: string
  readonly example: Option.Option<unknown>
}

/** A class keeps its own annotations on a surrogate of its transformation. */
const expectationOf = (ast: AST.Annotated): Expectation | undefined =>
  Option.match(AST.getDescriptionAnnotation(ast), {
    onNone: () => Option.match(AST.getSurrogateAnnotation(ast), { onNone: () => undefined, onSome: expectationOf }),
    onSome: (description) => ({
      description,
      example: Option.flatMap(AST.getExamplesAnnotation(ast), Arr.head)
    })
  })

/**
 * Rebuilds the issue tree with a message on every Type, Missing and Unexpected issue. `described` is the expectation
 * of a transformation (a class, a duration) whose input was rejected at the same key: it speaks for the whole value,
 * so it wins over the plain "a string" of its encoded side. `container` is the struct or record holding the key.
 */
const withWording = (
  issue: ParseResult.ParseIssue,
  wording: Wording,
  path: ReadonlyArray<PropertyKey>,
  described: Expectation | undefined,
  container: AST.AST | undefined
): ParseResult.ParseIssue => {
  switch (issue._tag) {
    case "Pointer": {
      const inner = [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])]
      return new ParseResult.Pointer(
        issue.path,
        issue.actual,
        withWording(issue.issue, wording, inner, undefined, container)
      )
    }
    case "Refinement":
      // A refinement's own description states its predicate; it cannot describe a value its `from` rejected.
      return new ParseResult.Refinement(
        issue.ast,
        issue.actual,
        issue.kind,
        withWording(issue.issue, wording, path, issue.kind === "From" ? described : undefined, container)
      )
    case "Transformation":
      return new ParseResult.Transformation(
        issue.ast,
        issue.actual,
        issue.kind,
        withWording(
          issue.issue,
          wording,
          path,
          issue.kind === "Encoded" ? (expectationOf(issue.ast) ?? described) : undefined,
          container
        )
      )
    case "Composite": {
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues]
      if (AST.isUnion(issue.ast)) {
        // An optional key also accepts `undefined`, which no TOML or JSON user can write: leave that member out.
        const choices = issues.filter((member) => !(member._tag === "Type" && AST.isUndefinedKeyword(member.ast)))
        if (choices.length === 1) return withWording(choices[0]!, wording, path, described, container)
        // A value matching no member of a union of scalars gets one sentence, not one per member.
        if (choices.every((member) => member._tag === "Type")) {
          return new ParseResult.Type(
            issue.ast,
            issue.actual,
            expected(issue.ast, issue.actual, path, described, wording)
          )
        }
      }
      const rebuilt = issues.map((inner) => withWording(inner, wording, path, described, issue.ast))
      return new ParseResult.Composite(
        issue.ast,
        issue.actual,
        Arr.isNonEmptyArray(rebuilt) ? rebuilt : issue.issues,
        issue.output
      )
    }
    case "Type":
      return issue.message !== undefined
        ? issue
        : new ParseResult.Type(issue.ast, issue.actual, expected(issue.ast, issue.actual, path, described, wording))
    case "Missing": {
      const key = path.at(-1)
      const message =
        typeof key !== "number"
          ? "this required key is missing"
          : key === 0
            ? "must not be empty"
            : "an item is missing"
      return new ParseResult.Missing(issue.ast, issue.message ?? message)
    }
    case "Unexpected":
      return new ParseResult.Unexpected(issue.actual, unexpected(path.at(-1), container, wording))
    case "Forbidden":
      return issue
  }
}

/** `expected <what the schema describes>[, like <example>], got <value>`. */
const expected = (
  ast: AST.AST,
  actual: unknown,
  path: ReadonlyArray<PropertyKey>,
  described: Expectation | undefined,
  wording: Wording
): string => {
  const legacy = wording.describe?.(path)
  if (described === undefined && legacy !== undefined) return `${legacy}, got ${show(actual)}`
  const expectation = described ?? expectationOf(ast)
  const what = expectation?.description ?? structural(ast, wording.format)
  const example = Option.match(expectation?.example ?? Option.none(), {
    onSome: (value) => `, like ${render(value, wording.format)}`,
    // In TOML a table is written as its header: say which one.
    onNone: () => (wording.format === "toml" && path.length > 0 && isStruct(ast) ? `, like [${showPath(path)}]` : "")
  })
  return `expected ${what}${example}, got ${show(actual)}`
}

/** What an undescribed schema node accepts, in the file's words. */
const structural = (ast: AST.AST, format: ConfigFormat): string => {
  switch (ast._tag) {
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Union": {
      const members = ast.types
        .filter((member) => !AST.isUndefinedKeyword(member))
        .map((member) => expectationOf(member)?.description ?? structural(member, format))
      return members.length === 1 ? members[0]! : `${members.slice(0, -1).join(", ")} or ${members.at(-1)}`
    }
    case "TupleType":
      return format === "toml" ? "a list" : "an array"
    case "TypeLiteral":
      return format === "toml" ? "a table" : "an object"
    case "Refinement":
      return structural(ast.from, format)
    case "Transformation":
      return structural(ast.from, format)
    default:
      return Option.getOrElse(AST.getDescriptionAnnotation(ast), () => "a valid value")
  }
}

const isStruct = (ast: AST.AST): boolean =>
  AST.isTypeLiteral(ast) && ast.propertySignatures.length > 0 && ast.indexSignatures.length === 0

/** An unknown key of a struct lists the known ones; a record key that breaks its key schema says why. */
const unexpected = (key: PropertyKey | undefined, container: AST.AST | undefined, wording: Wording): string => {
  const name = JSON.stringify(String(key))
  if (container === undefined || !AST.isTypeLiteral(container)) return `unexpected ${name}`
  for (const signature of container.indexSignatures) {
    const rejected = ParseResult.decodeUnknownEither(Schema.make(signature.parameter))(key)
    if (Either.isLeft(rejected)) return firstProblem(rejected.left, wording).message
  }
  const known = container.propertySignatures.map((signature) => String(signature.name))
  return known.length > 0 && known.every(isBareKey)
    ? `unknown key ${name}; known keys are ${known.join(", ")}`
    : `unknown key ${name}`
}

/** An example value as the user would write it in this file. */
const render = (value: unknown, format: ConfigFormat): string => {
  if (Array.isArray(value)) return `[${value.map((item) => render(item, format)).join(", ")}]`
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).map(([key, item]) =>
      format === "toml"
        ? `${isBareKey(key) ? key : JSON.stringify(key)} = ${render(item, format)}`
        : `${JSON.stringify(key)}: ${render(item, format)}`
    )
    return `{ ${entries.join(", ")} }`
  }
  return JSON.stringify(value) ?? String(value)
}

const show = (value: unknown): string => {
  const text =
    value instanceof Date
      ? value.toISOString()
      : Array.isArray(value) && value.length === 0
        ? "an empty list"
        : (JSON.stringify(value) ?? String(value))
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}
