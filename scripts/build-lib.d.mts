// Types for build-lib.mjs (plain JavaScript so it runs without tsx), for the TypeScript test helpers.
export declare const ROOT: string;
export declare const DIST: string;
export declare const HL7_SCRIPT: string;
export declare const PRISMA_WASM_FILE: string;
export declare function inputHash(): string;
export declare function isBuildFresh(): boolean;
export declare function build(opts?: { log?: (message: string) => void }): Promise<void>;
export declare function ensureBuild(opts?: { log?: (message: string) => void }): Promise<void>;
