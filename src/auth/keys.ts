// The token signing key: ES256, from SIGNING_KEY_PEM or generated on first start and kept in the database,
// so every instance on one database signs and verifies with the same key.
import crypto from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, importPKCS8, type JWK, type KeyObject } from 'jose';
import type { Database } from '../db/database.js';

export interface SigningKeys {
  kid: string;
  alg: 'ES256';
  privateKey: CryptoKey | KeyObject;
  publicKey: CryptoKey | KeyObject;
  publicJwk: JWK;
  /** A secret for HMACs of this server's own forms (the sign-in page's CSRF tokens), derived from the private key,
   * so every instance on one database has the same. */
  formKey: Buffer;
}

/** The form HMAC key derived from the private key material (HKDF-SHA256, its own label). */
function formKeyOf(material: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', material, 'fhir-server', 'sign-in form tokens', 32));
}

/** Loads the signing key (configured, stored, or newly generated and stored). */
export async function loadSigningKeys(db: Database, pem?: string): Promise<SigningKeys> {
  if (pem) {
    const privateKey = await importPKCS8(pem, 'ES256', { extractable: true });
    const pub = crypto.createPublicKey(pem);
    const publicJwk = (await exportJWK(pub)) as JWK;
    const kid = crypto
      .createHash('sha256')
      .update(JSON.stringify(publicJwk))
      .digest('base64url')
      .slice(0, 16);
    return {
      kid,
      alg: 'ES256',
      privateKey,
      publicKey: pub,
      publicJwk: { ...publicJwk, kid, alg: 'ES256', use: 'sig' },
      formKey: formKeyOf(pem),
    };
  }
  let row = await db.prisma.signingKey.findFirst({ orderBy: { createdAt: 'asc' } });
  if (!row) {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = crypto.randomUUID();
    const privateJwk = await exportJWK(privateKey);
    const publicJwk = await exportJWK(publicKey);
    // Several instances may start at once: the first insert wins, the others read it back.
    await db.sql(
      `INSERT INTO "SigningKey" (id, alg, "privateJwk", "publicJwk") SELECT $1, 'ES256', $2::jsonb, $3::jsonb
       WHERE NOT EXISTS (SELECT 1 FROM "SigningKey")`,
      [kid, JSON.stringify(privateJwk), JSON.stringify(publicJwk)],
    );
    row = await db.prisma.signingKey.findFirstOrThrow({ orderBy: { createdAt: 'asc' } });
  }
  const publicJwk = row.publicJwk as JWK;
  return {
    kid: row.id,
    alg: 'ES256',
    privateKey: (await importJWK(row.privateJwk as JWK, 'ES256')) as CryptoKey | KeyObject,
    publicKey: (await importJWK(publicJwk, 'ES256')) as CryptoKey | KeyObject,
    publicJwk: { ...publicJwk, kid: row.id, alg: 'ES256', use: 'sig' },
    formKey: formKeyOf(JSON.stringify(row.privateJwk)),
  };
}
