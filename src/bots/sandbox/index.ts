// Public entry point of the bot sandbox. See sandbox.ts (header) and README.md for the contract.
export {
  BotSandbox,
  CompileError,
  HL7_CONTENT_TYPE,
  type BotEvent,
  type BotValue,
  type ExecuteRequest,
  type ExecutionErrorKind,
  type ExecutionResult,
  type FetchPolicy,
  type HostFunction,
  type ResponseBody,
  type SandboxOptions,
} from './sandbox.js';
export { isForbiddenAddress, isForbiddenHostname } from './fetch-policy.js';
