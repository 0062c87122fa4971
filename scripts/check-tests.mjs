#!/usr/bin/env node
// Fails when a test compares Option/Either values with chai's equality asserts: chai's deep equality sees
// Option.some(x) and Option.none() as equal, so such an assertion cannot fail on Some/None. Use
// assertSome/assertNone/assertRight/assertLeft from "@effect/vitest/utils" or Equal.equals instead.
// Syntactic (TypeScript parser, no type checking: fast, multi-line calls included); the vitest setup file
// test/lib/setup.ts catches at run time what this cannot see.
// Usage: node scripts/check-tests.mjs [files...]   (default: every .ts file under test/)
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

const root = path.resolve(import.meta.dirname, "..")

const guarded = new Set([
  "deepStrictEqual",
  "deepEqual",
  "equal",
  "strictEqual",
  "notDeepStrictEqual",
  "notDeepEqual",
  "notEqual",
  "notStrictEqual"
])

// Option/Either functions that return something else (a plain value, a boolean, an Effect...)
const unwrapping = new Set([
  "getOrThrow",
  "getOrThrowWith",
  "getOrNull",
  "getOrUndefined",
  "getOrElse",
  "isSome",
  "isNone",
  "isOption",
  "isLeft",
  "isRight",
  "isEither",
  "match",
  "contains",
  "containsWith",
  "exists",
  "toArray",
  "merge",
  "getEquivalence",
  "getOrder",
  "reduceCompact",
  "all" // only when given non-Option values; rare enough to accept
])

const walk = (dir) =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory()
        ? entry.name === "node_modules" || entry.name === "fixtures"
          ? []
          : walk(path.join(dir, entry.name))
        : entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")
          ? [path.join(dir, entry.name)]
          : []
    )

const parse = (file) => ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)

const isOptionOrEitherType = (node) =>
  node !== undefined && /^(Option|Either)\.(Option|Either|Some|None|Left|Right)\b/.test(node.getText())

// Exported functions of src/ declared to return Option/Either, by module file: "obviously Option-typed" calls.
const optionReturning = new Map()
for (const file of walk(path.join(root, "src"))) {
  const names = new Set()
  const visit = (node) => {
    if (ts.isFunctionDeclaration(node) && node.name && isOptionOrEitherType(node.type)) names.add(node.name.text)
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer)) &&
      isOptionOrEitherType(node.initializer.type)
    ) {
      names.add(node.name.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(parse(file))
  if (names.size > 0) optionReturning.set(path.resolve(file), names)
}

const moduleOf = (testFile, specifier) =>
  specifier.startsWith(".") ? path.resolve(path.dirname(testFile), specifier.replace(/\.js$/, ".ts")) : undefined

const check = (file) => {
  const source = parse(file)
  const namespaces = new Map() // local namespace name -> exported Option-returning names
  const functions = new Set() // local names of imported Option-returning functions
  let option = new Set() // local names bound to effect's Option/Either modules
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !statement.importClause) continue
    const specifier = statement.moduleSpecifier.text
    const bindings = statement.importClause.namedBindings
    if (specifier === "effect" && bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) {
        const imported = (element.propertyName ?? element.name).text
        if (imported === "Option" || imported === "Either") option.add(element.name.text)
      }
    }
    if (/^effect\/(Option|Either)$/.test(specifier) && bindings && ts.isNamespaceImport(bindings)) {
      option.add(bindings.name.text)
    }
    const exported = optionReturning.get(moduleOf(file, specifier) ?? "")
    if (!exported || !bindings) continue
    if (ts.isNamespaceImport(bindings)) namespaces.set(bindings.name.text, exported)
    else
      for (const element of bindings.elements) {
        if (exported.has((element.propertyName ?? element.name).text)) functions.add(element.name.text)
      }
  }
  if (option.size === 0) option = new Set(["Option", "Either"])

  // Variables bound to an Option/Either: name -> the scopes (blocks) that declare them.
  const optionVariables = new Map()
  const scopeOf = (node) => {
    let scope = node.parent
    while (scope && !ts.isBlock(scope) && !ts.isSourceFile(scope) && !ts.isForOfStatement(scope)) scope = scope.parent
    return scope
  }
  const bind = (name, node) =>
    optionVariables.set(name.text, [...(optionVariables.get(name.text) ?? []), scopeOf(node)])
  const isBound = (identifier) => {
    const scopes = optionVariables.get(identifier.text) ?? []
    for (let node = identifier.parent; node; node = node.parent) if (scopes.includes(node)) return true
    return false
  }
  // Table initialisers by variable name, for `for (const [a, b] of table)`.
  const tables = new Map()
  const unwrap = (node) =>
    ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isNonNullExpression(node)
      ? unwrap(node.expression)
      : ts.isYieldExpression(node) || ts.isAwaitExpression(node)
        ? undefined
        : node
  // Why `node` is Option/Either (a short reason), or undefined.
  const optionLike = (raw) => {
    const node = raw && unwrap(raw)
    if (!node) return undefined
    if (ts.isIdentifier(node)) return isBound(node) ? `${node.text} holds an Option/Either` : undefined
    if (ts.isCallExpression(node)) {
      const callee = node.expression
      if (ts.isPropertyAccessExpression(callee)) {
        const name = callee.name.text
        if (ts.isIdentifier(callee.expression)) {
          const owner = callee.expression.text
          if (option.has(owner)) return unwrapping.has(name) ? undefined : `${owner}.${name}(...)`
          if (namespaces.get(owner)?.has(name)) return `${owner}.${name}(...) returns an Option/Either`
        }
        if (name === "pipe" && node.arguments.length > 0) return optionLike(node.arguments.at(-1))
      }
      if (ts.isIdentifier(callee) && functions.has(callee.text)) return `${callee.text}(...) returns an Option/Either`
      return undefined
    }
    if (ts.isObjectLiteralExpression(node)) {
      for (const property of node.properties) {
        const found = ts.isPropertyAssignment(property)
          ? optionLike(property.initializer)
          : ts.isShorthandPropertyAssignment(property)
            ? optionLike(property.name)
            : undefined
        if (found) return `a field is ${found}`
      }
    }
    if (ts.isArrayLiteralExpression(node)) {
      for (const element of node.elements) {
        const found = optionLike(element)
        if (found) return `an element is ${found}`
      }
    }
    if (ts.isConditionalExpression(node)) return optionLike(node.whenTrue) ?? optionLike(node.whenFalse)
    return undefined
  }
  // `for (const [a, b] of table)`: bind the positions where some row of the table literal holds an Option/Either.
  const bindTableRow = (loop) => {
    const declaration = ts.isVariableDeclarationList(loop.initializer) ? loop.initializer.declarations[0] : undefined
    const table = ts.isIdentifier(loop.expression) ? tables.get(loop.expression.text) : loop.expression
    const literal = table && unwrap(table)
    if (!declaration || !literal || !ts.isArrayLiteralExpression(literal)) return
    const rows = literal.elements.map(unwrap).filter((row) => row && ts.isArrayLiteralExpression(row))
    if (ts.isArrayBindingPattern(declaration.name)) {
      declaration.name.elements.forEach((element, index) => {
        if (ts.isBindingElement(element) && ts.isIdentifier(element.name)) {
          if (rows.some((row) => optionLike(row.elements[index]))) bind(element.name, loop.statement)
        }
      })
    } else if (ts.isIdentifier(declaration.name) && literal.elements.some((row) => optionLike(row))) {
      bind(declaration.name, loop.statement)
    }
  }

  const findings = []
  const visit = (node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      if (ts.isArrayLiteralExpression(unwrap(node.initializer) ?? node)) tables.set(node.name.text, node.initializer)
      if (optionLike(node.initializer)) bind(node.name, node)
    }
    if (ts.isForOfStatement(node)) bindTableRow(node)
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      guarded.has(node.expression.name.text) &&
      ts.isIdentifier(node.expression.expression) &&
      node.expression.expression.text === "assert"
    ) {
      const reason = optionLike(node.arguments[0]) ?? optionLike(node.arguments[1])
      if (reason) {
        const { line, character } = source.getLineAndCharacterOfPosition(node.getStart(source))
        findings.push(
          `${path.relative(root, file)}:${line + 1}:${character + 1}: assert.${node.expression.name.text} on an ` +
            `Option/Either (${reason})`
        )
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return findings
}

const files =
  process.argv.length > 2 ? process.argv.slice(2).map((f) => path.resolve(f)) : walk(path.join(root, "test"))
const findings = files.flatMap(check)
if (findings.length > 0) {
  console.error(findings.join("\n"))
  console.error(
    `\n${findings.length} assertion(s) compare Option/Either with chai equality, which sees Some(x) and None as ` +
      `equal: use assertSome/assertNone/assertRight/assertLeft from "@effect/vitest/utils" or Equal.equals.`
  )
  process.exit(1)
}
console.log(`check-tests: ${files.length} files, no Option/Either compared with chai equality`)
