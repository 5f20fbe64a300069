// `npm run build`: compiles src/ to dist/ (see build-lib.mjs).
import { build } from './build-lib.mjs';

await build();
