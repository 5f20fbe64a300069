// The server's own page behind a password reset link (GET /auth/setpassword?id=...&secret=...): a form that works
// without JavaScript and posts back to /auth/setpassword. The link's secret rides in a hidden field; the page is
// never cached, never framed and sends no Referer (the security headers every answer carries), so the secret in its
// URL goes nowhere else.

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page: the form (with `error` above it), or `done` once the password is set. */
export function resetPage(opts: { id: string; secret: string; error?: string; done?: boolean }): string {
  const body = opts.done
    ? '<p>Your password is set. Sign in with it; every earlier session of your account has ended.</p>'
    : `${opts.error ? `<p role="alert"><strong>${escapeHtml(opts.error)}</strong></p>` : ''}
<form method="post" action="setpassword">
<input type="hidden" name="id" value="${escapeHtml(opts.id)}">
<input type="hidden" name="secret" value="${escapeHtml(opts.secret)}">
<p><label>New password <input type="password" name="password" autocomplete="new-password" required></label></p>
<p><button type="submit">Set password</button></p>
</form>
<p>At least 8 characters; not a common password, not your email address. A passphrase of several words is good.</p>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Set your password</title></head>
<body><h1>Set your password</h1>
${body}
</body></html>
`;
}
