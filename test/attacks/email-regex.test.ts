// Attack: a super-linear email check. "a@" + 100,000 dots + "@" held the event loop 19 s in createUser.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { signIn } from '../helpers/server.js';
import { expectContained, startAttackTarget, underAttack, type AttackTarget } from './harness.js';

let target: AttackTarget;
let token: string;

beforeAll(async () => {
  target = await startAttackTarget();
  token = (await signIn(target.base)).access_token;
});

afterAll(async () => {
  await target?.close();
});

describe('email validation', () => {
  it('answers createUser with a pathological email quickly, 400, without stalling the server', async () => {
    const email = `a@${'.'.repeat(100_000)}@`;
    const o = await underAttack(target, (signal) =>
      fetch(`${target.base}graphql`, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          query: 'mutation($e: String!) { createUser(email: $e, password: "password-123") { id } }',
          variables: { e: email },
        }),
      }),
    );
    expectContained(o, { status: 400 });
  });
});
