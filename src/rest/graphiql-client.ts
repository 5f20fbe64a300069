// The browser script of the GraphiQL page (served as graphql/assets/client.js): points Monaco's workers at this
// server, renders GraphiQL, and offers a sign-in form that obtains an access token with PKCE (S256) through
// /auth/login and /oauth2/token and adds it as the Authorization header of GraphiQL's requests. The token stays in the page's memory
// only (never in localStorage), so closing the tab forgets it.

/** Plain browser JavaScript (no build step): kept as a string so the server can send it as a file. */
export const GRAPHIQL_CLIENT_SCRIPT = String.raw`(function () {
  'use strict';
  var form = document.getElementById('signin');
  var status = document.getElementById('signin-status');
  var config = JSON.parse(form.getAttribute('data-config'));
  var base = config.basePath;
  var v = config.assetVersion;
  self.MonacoEnvironment = {
    globalAPI: false,
    getWorkerUrl: function (_moduleId, label) {
      return base + 'graphql/assets/' + label + '.worker.js?v=' + v;
    },
  };

  // GraphiQL is rendered once; the signed-in token is added to its requests to the GraphQL endpoint here (unless
  // the user set an Authorization header in the Headers pane), so signing in keeps the editor's tabs.
  var token;
  var endpoint = new URL(config.endpoint, location.href).href;
  var originalFetch = window.fetch.bind(window);
  window.fetch = function (input, init) {
    var url = typeof input === 'string' || input instanceof URL ? String(input) : input.url;
    if (token && new URL(url, location.href).href === endpoint) {
      var headers = new Headers((init && init.headers) || (input instanceof Request ? input.headers : undefined));
      if (!headers.has('authorization')) headers.set('authorization', 'Bearer ' + token);
      init = Object.assign({}, init, { headers: headers });
    }
    return originalFetch(input, init);
  };

  function render() {
    var options = Object.assign({}, config);
    delete options.basePath;
    delete options.assetVersion;
    YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), options);
  }

  function base64url(bytes) {
    var s = '';
    for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  async function signIn(email, password) {
    if (!window.crypto || !window.crypto.subtle) {
      throw new Error('Sign-in needs a secure context (https, or http://localhost)');
    }
    var verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
    var digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
    var challenge = base64url(new Uint8Array(digest));
    var login = await fetch(base + 'auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: email,
        password: password,
        codeChallenge: challenge,
        codeChallengeMethod: 'S256',
      }),
    });
    var loginBody = await login.json().catch(function () { return {}; });
    if (!login.ok || !loginBody.code) {
      var issue = loginBody.issue && loginBody.issue[0];
      throw new Error((issue && issue.details && issue.details.text) || loginBody.error_description || 'Sign-in failed (' + login.status + ')');
    }
    var token = await fetch(base + 'oauth2/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: loginBody.code, code_verifier: verifier }),
    });
    var tokenBody = await token.json().catch(function () { return {}; });
    if (!token.ok || !tokenBody.access_token) {
      throw new Error(tokenBody.error_description || 'Token exchange failed (' + token.status + ')');
    }
    return tokenBody.access_token;
  }

  form.addEventListener('submit', function (e) {
    e.preventDefault();
    var email = document.getElementById('signin-email').value;
    var password = document.getElementById('signin-password');
    status.textContent = 'Signing in...';
    signIn(email, password.value).then(
      function (accessToken) {
        token = accessToken;
        password.value = '';
        status.textContent = 'Signed in as ' + email + ': every request sends its access token.';
      },
      function (err) {
        status.textContent = err.message;
      },
    );
  });

  render();
})();
`;
