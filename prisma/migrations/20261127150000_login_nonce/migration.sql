-- OpenID Connect (docs/sessions-and-security.md, Browser sign-in): the nonce a sign-in was asked to carry into its
-- ID token (OIDC Core 3.1.2.1), kept with the sign-in until its code is exchanged.
ALTER TABLE "Login" ADD COLUMN "nonce" TEXT;
