export declare const AMD_COMPILE_FLAGS: string[];
export declare const COMPLETE_MARKER: string;
export declare function amdObjectsDir(hipcc?: string, arch?: string): string;
