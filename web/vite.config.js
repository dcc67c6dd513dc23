// The page is served by the eqm binary from its own memory: relative asset paths, one output
// directory chosen by the crate's build script (EQM_WEB_OUT), no source maps in the binary.
import { defineConfig } from 'vite';

export default defineConfig({
  base: './',
  build: {
    outDir: process.env.EQM_WEB_OUT || 'dist',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 2000,
  },
});
