// Entry point of the script that bundle.ts builds for the bot isolate: publishes the HL7 classes as globals
// (Hl7Message, Hl7Segment, Hl7Field, Hl7Context, ...) and the whole set as globalThis.__medplumHl7, which the
// sandbox can hand out for require('@medplum/core') / import { Hl7Message } from '@medplum/core'.
import * as hl7 from './message.js';

const target = globalThis as Record<string, unknown>;
const exportsObject: Record<string, unknown> = { ...hl7 };
for (const [name, value] of Object.entries(exportsObject)) {
  Object.defineProperty(target, name, { value, writable: true, configurable: true, enumerable: false });
}
Object.defineProperty(target, '__medplumHl7', {
  value: Object.freeze(exportsObject),
  writable: false,
  configurable: true,
  enumerable: false,
});
