import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation"

/**
 * The JSON Schema validator clawtool gives the SDK's Client (one per child) and Server: it accepts everything. clawtool
 * validates no payload against schemas it does not own (ADR 002) and never calls the SDK helpers that would use one
 * (`callTool`'s output check, `elicitInput`), so this only keeps the SDK from building an Ajv instance per child, and
 * keeps Ajv out of the bundle (scripts/bundle.mjs).
 */
export const unvalidated: jsonSchemaValidator = {
  getValidator: () => (input) => ({ valid: true, data: input as never, errorMessage: undefined })
}
