/*
 * The config file's schema, described once (the words users read are annotations on it: see Config/Values.ts). This
 * file is its public surface; the parts live in Config/, each importing only the ones before it:
 * - Values: value schemas shared by the tables (instance names, prefixes, env tables, URLs, headers, numbers);
 * - Source: one `[sources.<instance>]` table, its target (command or url) and its cross-key rules;
 * - CoreTools: `[core_tools]`;
 * - Clawtool: the whole file (ClawtoolConfig) and its other tables (tools, limits, http, observability, ...);
 * - Trust: `[trust]` and `[audit]`;
 * - Profiles: `[profiles]`, source `tags` and `[http.tokens]` (issue 26);
 * - HostJson: a host's mcpServers/servers JSON file decoded into the same ClawtoolConfig.
 * None of them imports this file, so re-exporting them here hides no cycle (`npm run cycles`).
 */
export {
  ChildCapability,
  ClawtoolConfig,
  HttpConfig,
  LimitsConfig,
  NameBudget,
  ObservabilityConfig,
  ToolConfig
} from "./Config/Clawtool.js"
export {
  type CoreToolName,
  CoreToolConfig,
  coreToolNames,
  CoreToolsConfig,
  isCoreToolName,
  WebFetchConfig
} from "./Config/CoreTools.js"
export { defaultView, HttpToken, ProfileConfig, ProfileName, ProfileSelector } from "./Config/Profiles.js"
export { AuditConfig, ConfirmSelector, TrustConfig } from "./Config/Trust.js"
export { DecodedConfig, McpServersJson, SkippedEntry } from "./Config/HostJson.js"
export { isRemote, OAuthConfig, oauthOf, prefixOf, SourceConfig, type SourceTarget, targetOf } from "./Config/Source.js"
export { InstanceName, instanceNameProblem, kebabCase, Prefix, RemoteTransport } from "./Config/Values.js"
