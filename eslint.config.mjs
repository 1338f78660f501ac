import js from '@eslint/js';
import jupyter from '@jupyter/eslint-plugin';
import prettierRecommended from 'eslint-plugin-prettier/recommended';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/',
      '**/lib/',
      '**/*.d.ts',
      '.venv/',
      'coverage/',
      'dist/',
      'jupyter_pytorchjob/labextension/',
      'ui-tests/test-results/',
      'ui-tests/playwright-report/'
    ]
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { plugins: { jupyter } },
  ...jupyter.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@typescript-eslint/naming-convention': [
        'error',
        {
          selector: 'interface',
          format: ['PascalCase'],
          custom: { regex: '^I[A-Z]', match: true }
        }
      ],
      '@typescript-eslint/no-unused-vars': ['warn', { args: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-namespace': 'off',
      '@typescript-eslint/no-use-before-define': 'off'
    }
  },
  {
    rules: {
      curly: ['error', 'all'],
      eqeqeq: 'error',
      'prefer-arrow-callback': 'error'
    }
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { ...globals.node }
    },
    rules: {
      '@typescript-eslint/no-require-imports': 'off'
    }
  },
  {
    // Tests and browser tests are not UI: no translations, no command docs.
    files: ['src/__tests__/**', 'ui-tests/**', 'benchmarks/**'],
    rules: {
      'jupyter/no-untranslated-string': 'off',
      'jupyter/command-described-by': 'off'
    }
  },
  {
    // Runs in node, with functions evaluated in the page.
    files: ['benchmarks/**/*.js'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } }
  },
  {
    files: ['style/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...globals.browser } }
  },
  prettierRecommended
);
