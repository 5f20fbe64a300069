// Where tests find the repository and its fixtures, wherever the test file sits under test/.
import path from 'node:path';

/** The repository root. */
export const ROOT = path.resolve(import.meta.dirname, '../..');

/** The terminology fixtures (test/fixtures/terminology). */
export const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'terminology');
