import { Either, Option } from "effect"
import type { JsonObject } from "../../domain/Mcp.js"
import {
  type InstanceSurface,
  isJsonObject,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  RpcCode,
  RpcError
} from "../../domain/Surface.js"
import * as Clean from "../Trust/Clean.js"
import * as NameBudget from "./NameBudget.js"

/**
 * The resources, templates and prompts the host sees, and the routing back (pure). Names get the tools' prefix
 * `<prefix>__<name>` (the instance name unless the source sets `prefix`; `prefix = ""` keeps the child's names). URIs stay as the child sent them unless two running instances list the same one (or a
 * child uses clawtool's own scheme): then each becomes `clawtool://<instance>/<child URI>`, which decodes without
 * any table, so it keeps routing after the clash is gone (README, "The URI scheme").
 */

export const scheme = "clawtool://"

export const qualify = (instance: string, uri: string) => `${scheme}${instance}/${uri}`

/** `clawtool://<instance>/<uri>` → the instance and the child's URI (verbatim, not decoded). */
export const unqualify = (uri: string): Option.Option<{ readonly instance: string; readonly uri: string }> => {
  if (!uri.startsWith(scheme)) return Option.none()
  const rest = uri.slice(scheme.length)
  const at = rest.indexOf("/")
  return at <= 0 ? Option.none() : Option.some({ instance: rest.slice(0, at), uri: rest.slice(at + 1) })
}

/** One running instance as the surface is built from it. */
export interface SurfaceInput {
  readonly instance: string
  /** The child's server capabilities. */
  readonly capabilities: JsonObject
  readonly surface: InstanceSurface
}

interface TemplateRoute {
  readonly instance: string
  readonly uriTemplate: string
  readonly pattern: RegExp
}

export interface Surface {
  /** resources/list as the host gets it: prefixed names, clashing URIs qualified, sorted by name then URI. */
  readonly resources: ReadonlyArray<Resource>
  readonly resourceTemplates: ReadonlyArray<ResourceTemplate>
  readonly prompts: ReadonlyArray<Prompt>
  /** Child URIs and URI templates listed by more than one instance: qualified on the wire. */
  readonly clashing: ReadonlySet<string>
  /** Child URI → the instances that list it. */
  readonly owners: ReadonlyMap<string, ReadonlyArray<string>>
  readonly templates: ReadonlyArray<TemplateRoute>
  /** Running instances and their server capabilities. */
  readonly capabilities: ReadonlyMap<string, JsonObject>
  /** Change detection per kind: equal keys, nothing to announce. */
  readonly resourcesKey: string
  readonly promptsKey: string
  /** Each instance's wire-name prefix, and the way back. */
  readonly prefixes: NameBudget.Prefixes
  /** Listed prompt name → instance and the child's name. */
  readonly promptRoutes: ReadonlyMap<string, { readonly instance: string; readonly name: string }>
  /** Prompt names claimed by two sources (possible with a shared or empty prefix): resolved as tool names are. */
  readonly promptCollisions: ReadonlyArray<NameBudget.Collision>
}

const byName =
  <A extends { readonly name: string }>(key: (a: A) => string) =>
  (a: A, b: A) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** RFC 6570 template → a pattern that matches its expansions (enough to route, not to extract values). */
export const templatePattern = (template: string): RegExp => {
  let source = "^"
  let last = 0
  for (const match of template.matchAll(/\{([^}]*)\}/g)) {
    source += escapeRegExp(template.slice(last, match.index))
    const operator = match[1]![0]
    source +=
      operator === "+" || operator === "#"
        ? ".*"
        : operator === "?" || operator === "&"
          ? "(?:[?&].*)?"
          : operator === "/"
            ? "(?:/[^?#]*)?"
            : "[^/?#]*"
    last = match.index + match[0].length
  }
  return new RegExp(`${source}${escapeRegExp(template.slice(last))}$`)
}

const countOwners = (entries: ReadonlyArray<readonly [string, string]>) => {
  const owners = new Map<string, Array<string>>()
  for (const [key, instance] of entries) {
    const list = owners.get(key) ?? []
    if (!list.includes(instance)) list.push(instance)
    owners.set(key, list)
  }
  return owners
}

const needsQualifying = (clashing: ReadonlySet<string>, uri: string) => clashing.has(uri) || uri.startsWith(scheme)

export const build = (
  inputs: ReadonlyArray<SurfaceInput>,
  prefixes: NameBudget.Prefixes = NameBudget.ownPrefixes
): Surface => {
  const named = (instance: string, name: string) => NameBudget.prefixed(prefixes.of(instance), name)
  const owners = countOwners(
    inputs.flatMap(({ instance, surface }) => surface.resources.map((r) => [r.uri, instance] as const))
  )
  const templateOwners = countOwners(
    inputs.flatMap(({ instance, surface }) => surface.resourceTemplates.map((t) => [t.uriTemplate, instance] as const))
  )
  const clashing = new Set(
    [...owners, ...templateOwners].flatMap(([uri, instances]) => (instances.length > 1 ? [uri] : []))
  )
  // Names, titles and descriptions the host sees have no hidden characters (Trust/Clean.ts, ADR 029); URIs and the
  // routing tables keep what the child sent.
  const resources = inputs
    .flatMap(({ instance, surface }) =>
      surface.resources.map(Clean.resource).map((resource): Resource => ({
        ...resource,
        name: named(instance, resource.name),
        uri: needsQualifying(clashing, resource.uri) ? qualify(instance, resource.uri) : resource.uri
      }))
    )
    .sort(byName((r) => r.uri))
  const resourceTemplates = inputs
    .flatMap(({ instance, surface }) =>
      surface.resourceTemplates.map(Clean.resource).map((template): ResourceTemplate => ({
        ...template,
        name: named(instance, template.name),
        uriTemplate: needsQualifying(clashing, template.uriTemplate)
          ? qualify(instance, template.uriTemplate)
          : template.uriTemplate
      }))
    )
    .sort(byName((t) => t.uriTemplate))
  // The deterministic rule of tool names: per name the lowest label `<instance>.<name>` keeps it, the others are reported.
  const promptClaims = NameBudget.resolveClaims(
    inputs.flatMap(({ instance, surface }) =>
      surface.prompts.map((prompt) => ({
        // The listed name without hidden characters; its route keeps the child's own name.
        wire: named(instance, Clean.text(prompt.name)),
        label: `${instance}.${prompt.name}`,
        rank: NameBudget.sourceRank("as-is"),
        value: { instance, prompt }
      }))
    )
  )
  const prompts = promptClaims.kept
    .map(({ wire, value }): Prompt => ({ ...Clean.prompt(value.prompt), name: wire }))
    .sort(byName(() => ""))
  const promptRoutes = new Map(
    promptClaims.kept.map(({ wire, value }) => [wire, { instance: value.instance, name: value.prompt.name }] as const)
  )
  const templates = inputs.flatMap(({ instance, surface }) =>
    surface.resourceTemplates.map((t) => ({
      instance,
      uriTemplate: t.uriTemplate,
      pattern: templatePattern(t.uriTemplate)
    }))
  )
  return {
    resources,
    resourceTemplates,
    prompts,
    clashing,
    owners,
    templates,
    capabilities: new Map(inputs.map((input) => [input.instance, input.capabilities])),
    resourcesKey: JSON.stringify([resources, resourceTemplates]),
    promptsKey: JSON.stringify(prompts),
    prefixes,
    promptRoutes,
    promptCollisions: promptClaims.collisions
  }
}

/** The URI the host sees for a URI `instance` sent (in a result or a notification). */
export const hostUri = (surface: Surface, instance: string, uri: string) =>
  needsQualifying(surface.clashing, uri) ? qualify(instance, uri) : uri

export interface UriRoute {
  readonly instance: string
  readonly uri: string
}

const ambiguous = (uri: string, instances: ReadonlyArray<string>) =>
  new RpcError({
    reason: "InvalidParams",
    code: RpcCode.InvalidParams,
    detail: `${JSON.stringify(uri)} is served by ${instances.join(" and ")}; use ${instances
      .map((instance) => qualify(instance, uri))
      .join(" or ")}`
  })

/**
 * Which instance a host URI belongs to: a qualified URI names it; otherwise the one instance that lists the URI,
 * else the one whose templates match it, else the only running instance with resources. -32002 when none does.
 */
export const routeUri = (surface: Surface, uri: string): Either.Either<UriRoute, RpcError> => {
  const qualified = unqualify(uri)
  if (Option.isSome(qualified)) {
    return surface.capabilities.has(qualified.value.instance)
      ? Either.right(qualified.value)
      : Either.left(
          new RpcError({
            reason: "NoRoute",
            code: RpcCode.ResourceNotFound,
            detail: `Resource not found: no running source "${qualified.value.instance}" for ${uri}`
          })
        )
  }
  const listed = surface.owners.get(uri) ?? []
  if (listed.length === 1) return Either.right({ instance: listed[0]!, uri })
  if (listed.length > 1) return Either.left(ambiguous(uri, listed))
  const matching = [...new Set(surface.templates.filter((t) => t.pattern.test(uri)).map((t) => t.instance))]
  if (matching.length === 1) return Either.right({ instance: matching[0]!, uri })
  if (matching.length > 1) return Either.left(ambiguous(uri, matching))
  const withResources = [...surface.capabilities].filter(([, capabilities]) => capabilities.resources !== undefined)
  if (withResources.length === 1) return Either.right({ instance: withResources[0]![0], uri })
  return Either.left(
    new RpcError({ reason: "NoRoute", code: RpcCode.ResourceNotFound, detail: `Resource not found: ${uri}` })
  )
}

/**
 * Whether a running (or restarting) instance claims `uri` itself: qualified with a listed instance, listed, a template
 * match, or (for a completion ref) a template verbatim. routeUri's last guess, the only instance with resources, is not
 * a claim: while sources still start, the owner may be one of them.
 */
export const claims = (surface: Surface, uri: string): boolean =>
  Option.match(unqualify(uri), {
    onSome: ({ instance }) => surface.capabilities.has(instance),
    onNone: () => surface.owners.has(uri) || surface.templates.some((t) => t.uriTemplate === uri || t.pattern.test(uri))
  })

/** A completion `ref/resource` names a template (or a resource): the instance that lists exactly that string. */
export const routeTemplate = (surface: Surface, uri: string): Either.Either<UriRoute, RpcError> => {
  const qualified = unqualify(uri)
  if (Option.isSome(qualified)) return routeUri(surface, uri)
  const owners = [...new Set(surface.templates.filter((t) => t.uriTemplate === uri).map((t) => t.instance))]
  if (owners.length === 1) return Either.right({ instance: owners[0]!, uri })
  if (owners.length > 1) return Either.left(ambiguous(uri, owners))
  return routeUri(surface, uri)
}

/**
 * `<prefix>__<name>` → instance and the child's name (prompts and task ids; resources and templates are never routed by
 * name). A name under no known prefix goes to the one source with `prefix = ""`, if there is one.
 */
export const routeName = (
  wire: string,
  what: string,
  prefixes: NameBudget.Prefixes = NameBudget.ownPrefixes
): Either.Either<{ instance: string; name: string }, RpcError> =>
  Option.match(prefixes.route(wire), {
    onNone: () =>
      Either.left(
        new RpcError({
          reason: "NoRoute",
          code: RpcCode.InvalidParams,
          detail: `unknown ${what} ${JSON.stringify(wire)} (names are <instance>__<name>)`
        })
      ),
    onSome: ({ instance, name }) => Either.right({ instance, name })
  })

/** A prompt name from the host: the listed one's owner, else by prefix (a source still starting may own it). */
export const routePrompt = (
  surface: Surface,
  wire: string
): Either.Either<{ instance: string; name: string }, RpcError> => {
  const listed = surface.promptRoutes.get(wire)
  return listed !== undefined ? Either.right(listed) : routeName(wire, "prompt", surface.prefixes)
}

// === task ids =========================================================================================================

/** Task ids are the child's id under the instance prefix: reversible, no table to lose on a restart. */
export const hostTaskId = (instance: string, taskId: string, prefixes: NameBudget.Prefixes = NameBudget.ownPrefixes) =>
  NameBudget.prefixed(prefixes.of(instance), taskId)

export const routeTaskId = (
  taskId: unknown,
  prefixes: NameBudget.Prefixes = NameBudget.ownPrefixes
): Either.Either<{ instance: string; taskId: string }, RpcError> =>
  typeof taskId !== "string"
    ? Either.left(
        new RpcError({ reason: "InvalidParams", code: RpcCode.InvalidParams, detail: "taskId must be a string" })
      )
    : Either.map(routeName(taskId, "task", prefixes), ({ instance, name }) => ({ instance, taskId: name }))

export const relatedTaskKey = "io.modelcontextprotocol/related-task"

/** Rewrites a `_meta` related-task id (child's id ↔ host's id); other keys untouched. */
export const mapRelatedTask = (meta: unknown, f: (taskId: string) => string): unknown => {
  if (!isJsonObject(meta)) return meta
  const related = meta[relatedTaskKey]
  if (!isJsonObject(related) || typeof related.taskId !== "string") return meta
  return { ...meta, [relatedTaskKey]: { ...related, taskId: f(related.taskId) } }
}

/** A Task object (tasks/get, tasks/cancel, notifications/tasks/status, CreateTaskResult.task) with the host's id. */
export const mapTask = (
  instance: string,
  task: JsonObject,
  prefixes: NameBudget.Prefixes = NameBudget.ownPrefixes
): JsonObject =>
  typeof task.taskId === "string" ? { ...task, taskId: hostTaskId(instance, task.taskId, prefixes) } : task

// === URIs inside results ==============================================================================================

/** resource_link and embedded resource content with the host's URI (identity when nothing changes). */
export const mapContentItem = (item: unknown, f: (uri: string) => string): unknown => {
  if (!isJsonObject(item)) return item
  if (item.type === "resource_link" && typeof item.uri === "string") {
    const uri = f(item.uri)
    return uri === item.uri ? item : { ...item, uri }
  }
  if (item.type === "resource" && isJsonObject(item.resource) && typeof item.resource.uri === "string") {
    const uri = f(item.resource.uri)
    return uri === item.resource.uri ? item : { ...item, resource: { ...item.resource, uri } }
  }
  return item
}

const mapArray = (value: unknown, f: (item: unknown) => unknown): unknown => {
  if (!Array.isArray(value)) return value
  const mapped = value.map(f)
  return mapped.every((item, i) => item === value[i]) ? value : mapped
}

/** tools/call and tasks/result: `content[]`. */
export const mapToolResult = <A extends JsonObject>(surface: Surface, instance: string, result: A): A => {
  const content = mapArray(result.content, (item) => mapContentItem(item, (uri) => hostUri(surface, instance, uri)))
  return content === result.content ? result : { ...result, content }
}

/** resources/read: `contents[].uri`. */
export const mapReadResult = (surface: Surface, instance: string, result: JsonObject): JsonObject => ({
  ...result,
  contents: mapArray(result.contents, (item) =>
    isJsonObject(item) && typeof item.uri === "string" ? { ...item, uri: hostUri(surface, instance, item.uri) } : item
  )
})

/** prompts/get: `messages[].content`. */
export const mapPromptResult = (surface: Surface, instance: string, result: JsonObject): JsonObject => ({
  ...result,
  messages: mapArray(result.messages, (message) =>
    isJsonObject(message)
      ? { ...message, content: mapContentItem(message.content, (uri) => hostUri(surface, instance, uri)) }
      : message
  )
})
