// Public entry point of the bot sandbox. See sandbox.ts (header) and README.md for the contract.
export { BotSandbox } from './sandbox.js';
export { CompileError } from './compile.js';
export {
  HL7_CONTENT_TYPE,
  JsonText,
  type BotEvent,
  type BotValue,
  type ExecuteRequest,
  type ExecutionErrorKind,
  type ExecutionResult,
  type HostFunction,
  type ResponseBody,
  type SandboxOptions,
} from './types.js';
export { isForbiddenAddress, isForbiddenHostname, type FetchPolicy } from './fetch-policy.js';
