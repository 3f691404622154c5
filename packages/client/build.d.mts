import type { BuildOptions } from 'esbuild';

export declare const entryPoints: Record<'index' | 'events', string>;
export declare const buildOptions: (options?: BuildOptions) => BuildOptions;
export declare function minifiedWhole(): Promise<Uint8Array>;
export declare function build(outdir?: string): Promise<void>;
