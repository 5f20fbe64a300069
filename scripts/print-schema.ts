// Prints the GraphQL schema to schema.graphql; with --check, fails when the committed file is not current.
import fs from 'node:fs';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from '../src/graphql/schema.js';

const text = printSchema(lexicographicSortSchema(schema)) + '\n';
const file = new URL('../schema.graphql', import.meta.url);
if (process.argv.includes('--check')) {
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  if (current !== text) {
    console.error('schema.graphql is out of date: run `npm run schema:print` and commit it.');
    process.exit(1);
  }
  console.log('schema.graphql is current.');
} else {
  fs.writeFileSync(file, text);
  console.log('wrote schema.graphql');
}
