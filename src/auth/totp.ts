// TOTP (RFC 6238) as authenticator apps expect it: SHA-1, 6 digits, 30-second steps, a 160-bit Base32 secret
// (otplib); the otpauth:// URI they scan (as a QR code, qrcode); and recovery codes. Nothing here touches the
// database: mfa.ts and mfa-sign-in.ts decide what is stored and when.
import crypto from 'node:crypto';
import { sha256 } from './passwords.js';

// Loaded on first use: most starts never see a second factor, and the two cost ~60 ms of every start.
const otplib = () => import('otplib');
const qrcode = () => import('qrcode');

/** Seconds per time step. */
export const TOTP_PERIOD = 30;
/** How many recovery codes an enrolment gives. */
export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_CHARS = 'abcdefghijklmnopqrstuvwxyz234567';
/** Characters of a recovery code (Base32, 5 bits each: 80 bits), shown in groups of 4. */
const RECOVERY_LENGTH = 16;

/** A fresh TOTP secret (20 random bytes, Base32). */
export async function newTotpSecret(): Promise<string> {
  const { generateSecret } = await otplib();
  return generateSecret({ length: 20 });
}

/** The otpauth:// URI of a secret, labelled `issuer:account`. */
export async function totpUri(issuer: string, account: string, secret: string): Promise<string> {
  const { generateURI } = await otplib();
  // A colon separates issuer and account in the label: an issuer must not carry one.
  return generateURI({
    strategy: 'totp',
    issuer: issuer.replace(/:/g, ''),
    label: account,
    secret,
    algorithm: 'sha1',
    digits: 6,
    period: TOTP_PERIOD,
  });
}

/** The URI as a PNG data URL (what Medplum's enrollQrCode is), for a page to show as an image. */
export async function qrDataUrl(uri: string): Promise<string> {
  const { default: QRCode } = await qrcode();
  return QRCode.toDataURL(uri, { errorCorrectionLevel: 'M', margin: 2 });
}

/** The time step a 6-digit code belongs to (the current one, or one step either side for clock drift), or
 * undefined when it is no code of the secret now. */
export async function totpStep(secret: string, token: string, now = Date.now()): Promise<number | undefined> {
  const epoch = Math.floor(now / 1000);
  const { verify } = await otplib();
  const result = await verify({
    strategy: 'totp',
    secret,
    token,
    epoch,
    period: TOTP_PERIOD,
    algorithm: 'sha1',
    digits: 6,
    epochTolerance: TOTP_PERIOD,
  });
  // The union type covers HOTP results too; a TOTP match carries its time step.
  return result.valid && 'timeStep' in result ? result.timeStep : undefined;
}

/** True when the text has the shape of a TOTP code (6 digits; spaces allowed, as apps show "123 456"). */
export function looksLikeTotp(token: string): boolean {
  return /^\d{6}$/.test(token.replace(/\s/g, ''));
}

/** The canonical form of a recovery code as typed (case, spaces and dashes ignored), or undefined when the text
 * cannot be one. */
export function normalizeRecoveryCode(token: string): string | undefined {
  const s = token.toLowerCase().replace(/[\s-]/g, '');
  return s.length === RECOVERY_LENGTH && [...s].every((c) => RECOVERY_CHARS.includes(c)) ? s : undefined;
}

/** Fresh recovery codes as shown to the user (`abcd-efgh-ijkl-mnop`), with the SHA-256 of each canonical form
 * (what is stored: the codes carry 80 random bits, so no slow hash is needed). */
export function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes: string[] = [];
  for (let i = 0; i < RECOVERY_CODE_COUNT; i++) {
    // 32 characters: a byte modulo 32 is uniform.
    const raw = [...crypto.randomBytes(RECOVERY_LENGTH)].map((b) => RECOVERY_CHARS[b % 32]).join('');
    codes.push(raw.match(/.{4}/g)!.join('-'));
  }
  return { codes, hashes: codes.map((c) => sha256(normalizeRecoveryCode(c)!)) };
}

/** The stored form of a typed recovery code. */
export function recoveryCodeHash(canonical: string): string {
  return sha256(canonical);
}
