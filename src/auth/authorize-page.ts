// The server's sign-in pages for /oauth2/authorize: the password form, the second-factor form, the enrolment a
// project requires and its recovery codes, and the pages that explain why a request cannot go on. Plain HTML forms that work without JavaScript; every value is escaped; the
// pending authorization request rides in hidden fields (checked again, and bound by the CSRF token, on each post).
// The one inline style is allowed by its hash in the page's Content-Security-Policy (authorize-routes.ts).
import crypto from 'node:crypto';
import type { AuthorizeRequest } from './authorize.js';

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem;color:#222}' +
  'label{display:block;margin:.8rem 0 .2rem}input[type=email],input[type=password],input[type=text]' +
  '{width:100%;padding:.5rem;box-sizing:border-box}button{margin:1rem .5rem 0 0;padding:.5rem 1rem}' +
  '[role=alert]{color:#a00}.app{color:#555}';

/** The CSP source of the page's style (its SHA-256). */
export const STYLE_HASH = `'sha256-${crypto.createHash('sha256').update(STYLE).digest('base64')}'`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>
`;
}

/** The authorization request as hidden fields (what the next post is checked against again). */
function hiddenRequest(req: AuthorizeRequest): string {
  const fields: Array<[string, string | undefined]> = [
    ['response_type', 'code'],
    ['client_id', req.clientId],
    ['redirect_uri', req.redirectUri],
    ['state', req.state],
    ['code_challenge', req.codeChallenge],
    ['code_challenge_method', req.codeChallengeMethod],
    ['scope', req.scope],
    ['nonce', req.nonce],
  ];
  return fields
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${k}" value="${escapeHtml(v ?? '')}">`)
    .join('\n');
}

const alert = (error?: string) =>
  error ? `<p role="alert"><strong>${escapeHtml(error)}</strong></p>\n` : '';

/** The first step: email and password. */
export function passwordPage(opts: {
  req: AuthorizeRequest;
  csrf: string;
  email?: string;
  error?: string;
}): string {
  const { req } = opts;
  return layout(
    'Sign in',
    `<p class="app">to continue to <strong>${escapeHtml(req.clientName)}</strong></p>
${alert(opts.error)}<form method="post" action="authorize">
${hiddenRequest(req)}
<input type="hidden" name="step" value="password">
<input type="hidden" name="csrf" value="${escapeHtml(opts.csrf)}">
<label for="email">Email</label>
<input id="email" type="email" name="email" autocomplete="username" required maxlength="320" value="${escapeHtml(opts.email ?? '')}"${opts.email ? '' : ' autofocus'}>
<label for="password">Password</label>
<input id="password" type="password" name="password" autocomplete="current-password" required${opts.email ? ' autofocus' : ''}>
<button type="submit" id="submit">Sign in</button>
<button type="submit" name="cancel" value="1" formnovalidate>Cancel</button>
</form>`,
  );
}

/** The second step: a code of the user's authenticator app, or a recovery code. */
export function mfaPage(opts: {
  req: AuthorizeRequest;
  csrf: string;
  login: string;
  error?: string;
}): string {
  return layout(
    'Enter your code',
    `<p class="app">to continue to <strong>${escapeHtml(opts.req.clientName)}</strong></p>
${alert(opts.error)}<form method="post" action="authorize">
${hiddenRequest(opts.req)}
<input type="hidden" name="step" value="mfa">
<input type="hidden" name="login" value="${escapeHtml(opts.login)}">
<input type="hidden" name="csrf" value="${escapeHtml(opts.csrf)}">
<label for="token">The 6-digit code from your authenticator app, or a recovery code</label>
<input id="token" type="text" name="token" inputmode="numeric" autocomplete="one-time-code" required maxlength="64" autofocus>
<button type="submit" id="submit">Verify</button>
<button type="submit" name="cancel" value="1" formnovalidate>Cancel</button>
</form>`,
  );
}

/** The enrolment a project requires: scan the QR code (or type the secret), then confirm with a code. */
export function enrolPage(opts: {
  req: AuthorizeRequest;
  csrf: string;
  login: string;
  enrollUri: string;
  enrollQrCode: string;
  error?: string;
}): string {
  const secret = new URL(opts.enrollUri).searchParams.get('secret') ?? '';
  return layout(
    'Set up your second factor',
    `<p class="app">to continue to <strong>${escapeHtml(opts.req.clientName)}</strong></p>
${alert(opts.error)}<p>Your project requires a second factor. Scan this code with an authenticator app, or enter the
key <code>${escapeHtml(secret)}</code> in it, then type the 6-digit code it shows.</p>
<p><img src="${escapeHtml(opts.enrollQrCode)}" alt="QR code of the authenticator key" width="200" height="200"></p>
<form method="post" action="authorize">
${hiddenRequest(opts.req)}
<input type="hidden" name="step" value="enroll">
<input type="hidden" name="login" value="${escapeHtml(opts.login)}">
<input type="hidden" name="enroll_uri" value="${escapeHtml(opts.enrollUri)}">
<input type="hidden" name="csrf" value="${escapeHtml(opts.csrf)}">
<label for="token">The 6-digit code from your authenticator app</label>
<input id="token" type="text" name="token" inputmode="numeric" autocomplete="one-time-code" required maxlength="64" autofocus>
<button type="submit" id="submit">Confirm</button>
<button type="submit" name="cancel" value="1" formnovalidate>Cancel</button>
</form>`,
  );
}

/** After an enrolment: the recovery codes, shown once, then on to the application. */
export function recoveryPage(opts: {
  req: AuthorizeRequest;
  csrf: string;
  login: string;
  recoveryCodes: string[];
}): string {
  const codes = opts.recoveryCodes.map((c) => `<li><code>${escapeHtml(c)}</code></li>`).join('');
  return layout(
    'Save your recovery codes',
    `<p>Your second factor is set up. If you lose your authenticator app, each of these codes signs you in once.
They are shown only now: write them down or store them safely.</p>
<ol id="recovery-codes">${codes}</ol>
<form method="post" action="authorize">
${hiddenRequest(opts.req)}
<input type="hidden" name="step" value="continue">
<input type="hidden" name="login" value="${escapeHtml(opts.login)}">
<input type="hidden" name="csrf" value="${escapeHtml(opts.csrf)}">
<button type="submit" id="submit">I have saved them: continue to ${escapeHtml(opts.req.clientName)}</button>
</form>`,
  );
}

/** A page that ends the flow here (a request that cannot be redirected, or a sign-in that cannot go on). */
export function messagePage(title: string, message: string, retry?: { href: string; label: string }): string {
  const link = retry ? `\n<p><a href="${escapeHtml(retry.href)}">${escapeHtml(retry.label)}</a></p>` : '';
  return layout(title, `<p role="alert">${escapeHtml(message)}</p>${link}`);
}
