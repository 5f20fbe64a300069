// Outgoing email (password reset links) over SMTP with nodemailer, loaded the first time a message is sent: a server
// that never sends one does not hold it.
import type { Transporter } from 'nodemailer';

/** Sends plain-text email. */
export interface Mailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>;
}

/** A Mailer over the SMTP server of `url` (`smtp://user:password@host:587`, `smtps://...`), sending as `from`. */
export function smtpMailer(url: string, from: string): Mailer {
  let transport: Promise<Transporter> | undefined;
  return {
    async send(message) {
      transport ??= import('nodemailer').then((m) => m.default.createTransport(url));
      await (await transport).sendMail({ from, ...message });
    },
  };
}

/** The sender for a server at `baseUrl` unless one is configured: no-reply at its host. */
export function defaultSender(baseUrl: string): string {
  return `no-reply@${new URL(baseUrl).hostname}`;
}
