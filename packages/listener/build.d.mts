import type { BuildOptions } from 'esbuild';

export declare const buildOptions: (outfile: string) => BuildOptions;
