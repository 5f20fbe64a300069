import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules', 'src/generated', 'data', 'bench/results', 'bench-data', 'dist'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Plain-JavaScript build scripts (they run with node alone, before any TypeScript tooling).
  { files: ['scripts/**/*.mjs'], languageOptions: { globals: { process: 'readonly', URL: 'readonly' } } },
  { files: ['*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } } },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
