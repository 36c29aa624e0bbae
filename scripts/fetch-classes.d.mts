// Types of fetch-classes.mjs, for vitest.config.ts (which the type check covers).
export declare const FETCH_CLASSES: string;
export declare const HONO_MODULE: RegExp;
export declare function isHonoModule(file: string): boolean;
export declare function withFetchClasses(code: string): string;
