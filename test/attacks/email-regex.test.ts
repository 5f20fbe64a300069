// Attack: a super-linear email check. "a@" + 100,000 dots + "@" held the event loop 19 s in createUser.
import { describe, it } from 'vitest';
import { expectContained, underAttack, useAttackTarget } from './harness.js';

const target = useAttackTarget({}, { signIn: true });

describe('email validation', () => {
  it('answers createUser with a pathological email quickly, 400, without stalling the server', async () => {
    const email = `a@${'.'.repeat(100_000)}@`;
    const o = await underAttack(target, (signal) =>
      fetch(`${target.base}graphql`, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${target.token}` },
        body: JSON.stringify({
          query: 'mutation($e: String!) { createUser(email: $e, password: "password-123") { id } }',
          variables: { e: email },
        }),
      }),
    );
    expectContained(o, { status: 400 });
  });
});
