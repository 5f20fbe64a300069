// Prints the GraphQL schemas: schema.graphql is the public one (/graphql); schema.internal.graphql adds the OAuth2
// internals the REST layer runs (codegen checks the REST documents against it). With --check, fails when either
// committed file is not current.
import fs from 'node:fs';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { publicSchema, schema } from '../src/graphql/schema.js';

const files: Array<[string, GraphQLSchema]> = [
  ['schema.graphql', publicSchema],
  ['schema.internal.graphql', schema],
];
let stale = false;
for (const [name, s] of files) {
  const text = printSchema(lexicographicSortSchema(s)) + '\n';
  const file = new URL(`../${name}`, import.meta.url);
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (current !== text) {
      console.error(`${name} is out of date: run \`npm run schema:print\` and commit it.`);
      stale = true;
    }
  } else {
    fs.writeFileSync(file, text);
    console.log(`wrote ${name}`);
  }
}
if (stale) process.exit(1);
if (process.argv.includes('--check')) console.log('schema.graphql and schema.internal.graphql are current.');
