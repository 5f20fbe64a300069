/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  mutation AuthorizeVerifyMfa($login: String!, $token: String!) {\n    verifyMfa(login: $login, token: $token) {\n      code\n    }\n  }\n": typeof types.AuthorizeVerifyMfaDocument,
    "\n  mutation AuthorizeEnrollMfa($login: String!, $token: String!) {\n    enrollMfaAtLogin(login: $login, token: $token) {\n      recoveryCodes\n    }\n  }\n": typeof types.AuthorizeEnrollMfaDocument,
    "\n  mutation AuthorizeRenewCode($login: String!) {\n    renewLoginCode(login: $login) {\n      code\n    }\n  }\n": typeof types.AuthorizeRenewCodeDocument,
    "\n  mutation RestLogin(\n    $email: String!\n    $password: String!\n    $scope: String\n    $codeChallenge: String\n    $codeChallengeMethod: String\n    $projectId: String\n    $clientId: String\n    $redirectUri: String\n    $nonce: String\n  ) {\n    login(\n      email: $email\n      password: $password\n      scope: $scope\n      codeChallenge: $codeChallenge\n      codeChallengeMethod: $codeChallengeMethod\n      projectId: $projectId\n      clientId: $clientId\n      redirectUri: $redirectUri\n      nonce: $nonce\n    ) {\n      login\n      code\n      mfaRequired\n      mfaEnrollRequired\n      enrollUri\n      enrollQrCode\n    }\n  }\n": typeof types.RestLoginDocument,
    "\n  query RestMfaStatus {\n    mfaStatus {\n      enrolled\n      recoveryCodesLeft\n      required\n    }\n  }\n": typeof types.RestMfaStatusDocument,
    "\n  mutation RestStartMfaEnrollment {\n    startMfaEnrollment {\n      enrollUri\n      enrollQrCode\n    }\n  }\n": typeof types.RestStartMfaEnrollmentDocument,
    "\n  mutation RestEnrollMfa($token: String!) {\n    enrollMfa(token: $token)\n  }\n": typeof types.RestEnrollMfaDocument,
    "\n  mutation RestDisableMfa($password: String, $token: String) {\n    disableMfa(password: $password, token: $token)\n  }\n": typeof types.RestDisableMfaDocument,
    "\n  mutation RestVerifyMfa($login: String!, $token: String!) {\n    verifyMfa(login: $login, token: $token) {\n      login\n      code\n    }\n  }\n": typeof types.RestVerifyMfaDocument,
    "\n  mutation RestEnrollMfaAtLogin($login: String!, $token: String!) {\n    enrollMfaAtLogin(login: $login, token: $token) {\n      login\n      code\n      recoveryCodes\n    }\n  }\n": typeof types.RestEnrollMfaAtLoginDocument,
    "\n  mutation RestToken(\n    $grantType: String!\n    $code: String\n    $codeVerifier: String\n    $clientId: String\n    $clientSecret: String\n    $refreshToken: String\n    $scope: String\n    $redirectUri: String\n  ) {\n    token(\n      grantType: $grantType\n      code: $code\n      codeVerifier: $codeVerifier\n      clientId: $clientId\n      clientSecret: $clientSecret\n      refreshToken: $refreshToken\n      scope: $scope\n      redirectUri: $redirectUri\n    )\n  }\n": typeof types.RestTokenDocument,
    "\n  mutation RestLogout {\n    logout\n  }\n": typeof types.RestLogoutDocument,
    "\n  query RestIntrospect($token: String!) {\n    introspect(token: $token)\n  }\n": typeof types.RestIntrospectDocument,
    "\n  mutation RestRevokeToken($token: String!) {\n    revokeToken(token: $token)\n  }\n": typeof types.RestRevokeTokenDocument,
    "\n  query RestUserInfo {\n    userInfo {\n      sub\n      email\n      name\n      givenName\n      familyName\n    }\n  }\n": typeof types.RestUserInfoDocument,
    "\n  query RestMe {\n    me {\n      loginId\n      clientId\n      mfaEnrolled\n      user {\n        id\n        email\n        firstName\n        lastName\n      }\n      project {\n        id\n        name\n      }\n      membership {\n        id\n        admin\n      }\n      sessions {\n        id\n        userAgent\n        remoteAddress\n        browser\n        os\n        authMethod\n        createdAt\n        lastUsed\n        current\n      }\n    }\n  }\n": typeof types.RestMeDocument,
    "\n  mutation RestChangePassword($oldPassword: String!, $newPassword: String!) {\n    changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n  }\n": typeof types.RestChangePasswordDocument,
    "\n  mutation RestRequestPasswordReset($email: String!) {\n    requestPasswordReset(email: $email)\n  }\n": typeof types.RestRequestPasswordResetDocument,
    "\n  mutation RestSetPassword($id: String!, $secret: String!, $password: String!) {\n    setPassword(id: $id, secret: $secret, password: $password)\n  }\n": typeof types.RestSetPasswordDocument,
    "\n  mutation RestRevokeSession($loginId: String!) {\n    revokeSession(loginId: $loginId)\n  }\n": typeof types.RestRevokeSessionDocument,
    "\n  mutation RestExecuteBot(\n    $id: String\n    $identifier: String\n    $contentType: String\n    $body: String\n    $query: JSON\n  ) {\n    executeBot(id: $id, identifier: $identifier, contentType: $contentType, body: $body, query: $query) {\n      status\n      contentType\n      body\n      headers\n    }\n  }\n": typeof types.RestExecuteBotDocument,
    "\n  mutation RestExecuteBotAsync(\n    $id: String\n    $identifier: String\n    $contentType: String\n    $body: String\n    $query: JSON\n  ) {\n    executeBotAsync(id: $id, identifier: $identifier, contentType: $contentType, body: $body, query: $query) {\n      id\n    }\n  }\n": typeof types.RestExecuteBotAsyncDocument,
    "\n  query RestBotJob($id: String!) {\n    botJob(id: $id) {\n      id\n      status\n      responseStatus\n      responseType\n      responseBody\n      responseHeaders\n    }\n  }\n": typeof types.RestBotJobDocument,
    "\n  mutation RestDeployBot($id: String!, $code: String!) {\n    deployBot(id: $id, code: $code)\n  }\n": typeof types.RestDeployBotDocument,
    "\n  query RestRead($resourceType: String!, $id: String!, $summary: String, $elements: String) {\n    readResource(resourceType: $resourceType, id: $id, summary: $summary, elements: $elements)\n  }\n": typeof types.RestReadDocument,
    "\n  query RestSearch(\n    $resourceType: String!\n    $url: String\n    $version: String\n    $identifier: String\n    $name: String\n    $count: Int\n    $offset: Int\n    $summary: String\n    $elements: String\n  ) {\n    searchResources(\n      resourceType: $resourceType\n      url: $url\n      version: $version\n      identifier: $identifier\n      name: $name\n      count: $count\n      offset: $offset\n      summary: $summary\n      elements: $elements\n    )\n  }\n": typeof types.RestSearchDocument,
    "\n  mutation RestCreate($resourceType: String!, $resource: JSON!) {\n    createResource(resourceType: $resourceType, resource: $resource)\n  }\n": typeof types.RestCreateDocument,
    "\n  mutation RestUpdate($resourceType: String!, $id: String!, $resource: JSON!) {\n    updateResource(resourceType: $resourceType, id: $id, resource: $resource)\n  }\n": typeof types.RestUpdateDocument,
    "\n  mutation RestDelete($resourceType: String!, $id: String!) {\n    deleteResource(resourceType: $resourceType, id: $id)\n  }\n": typeof types.RestDeleteDocument,
    "\n  query RestTerminologyCapabilities {\n    terminologyCapabilities\n  }\n": typeof types.RestTerminologyCapabilitiesDocument,
};
const documents: Documents = {
    "\n  mutation AuthorizeVerifyMfa($login: String!, $token: String!) {\n    verifyMfa(login: $login, token: $token) {\n      code\n    }\n  }\n": types.AuthorizeVerifyMfaDocument,
    "\n  mutation AuthorizeEnrollMfa($login: String!, $token: String!) {\n    enrollMfaAtLogin(login: $login, token: $token) {\n      recoveryCodes\n    }\n  }\n": types.AuthorizeEnrollMfaDocument,
    "\n  mutation AuthorizeRenewCode($login: String!) {\n    renewLoginCode(login: $login) {\n      code\n    }\n  }\n": types.AuthorizeRenewCodeDocument,
    "\n  mutation RestLogin(\n    $email: String!\n    $password: String!\n    $scope: String\n    $codeChallenge: String\n    $codeChallengeMethod: String\n    $projectId: String\n    $clientId: String\n    $redirectUri: String\n    $nonce: String\n  ) {\n    login(\n      email: $email\n      password: $password\n      scope: $scope\n      codeChallenge: $codeChallenge\n      codeChallengeMethod: $codeChallengeMethod\n      projectId: $projectId\n      clientId: $clientId\n      redirectUri: $redirectUri\n      nonce: $nonce\n    ) {\n      login\n      code\n      mfaRequired\n      mfaEnrollRequired\n      enrollUri\n      enrollQrCode\n    }\n  }\n": types.RestLoginDocument,
    "\n  query RestMfaStatus {\n    mfaStatus {\n      enrolled\n      recoveryCodesLeft\n      required\n    }\n  }\n": types.RestMfaStatusDocument,
    "\n  mutation RestStartMfaEnrollment {\n    startMfaEnrollment {\n      enrollUri\n      enrollQrCode\n    }\n  }\n": types.RestStartMfaEnrollmentDocument,
    "\n  mutation RestEnrollMfa($token: String!) {\n    enrollMfa(token: $token)\n  }\n": types.RestEnrollMfaDocument,
    "\n  mutation RestDisableMfa($password: String, $token: String) {\n    disableMfa(password: $password, token: $token)\n  }\n": types.RestDisableMfaDocument,
    "\n  mutation RestVerifyMfa($login: String!, $token: String!) {\n    verifyMfa(login: $login, token: $token) {\n      login\n      code\n    }\n  }\n": types.RestVerifyMfaDocument,
    "\n  mutation RestEnrollMfaAtLogin($login: String!, $token: String!) {\n    enrollMfaAtLogin(login: $login, token: $token) {\n      login\n      code\n      recoveryCodes\n    }\n  }\n": types.RestEnrollMfaAtLoginDocument,
    "\n  mutation RestToken(\n    $grantType: String!\n    $code: String\n    $codeVerifier: String\n    $clientId: String\n    $clientSecret: String\n    $refreshToken: String\n    $scope: String\n    $redirectUri: String\n  ) {\n    token(\n      grantType: $grantType\n      code: $code\n      codeVerifier: $codeVerifier\n      clientId: $clientId\n      clientSecret: $clientSecret\n      refreshToken: $refreshToken\n      scope: $scope\n      redirectUri: $redirectUri\n    )\n  }\n": types.RestTokenDocument,
    "\n  mutation RestLogout {\n    logout\n  }\n": types.RestLogoutDocument,
    "\n  query RestIntrospect($token: String!) {\n    introspect(token: $token)\n  }\n": types.RestIntrospectDocument,
    "\n  mutation RestRevokeToken($token: String!) {\n    revokeToken(token: $token)\n  }\n": types.RestRevokeTokenDocument,
    "\n  query RestUserInfo {\n    userInfo {\n      sub\n      email\n      name\n      givenName\n      familyName\n    }\n  }\n": types.RestUserInfoDocument,
    "\n  query RestMe {\n    me {\n      loginId\n      clientId\n      mfaEnrolled\n      user {\n        id\n        email\n        firstName\n        lastName\n      }\n      project {\n        id\n        name\n      }\n      membership {\n        id\n        admin\n      }\n      sessions {\n        id\n        userAgent\n        remoteAddress\n        browser\n        os\n        authMethod\n        createdAt\n        lastUsed\n        current\n      }\n    }\n  }\n": types.RestMeDocument,
    "\n  mutation RestChangePassword($oldPassword: String!, $newPassword: String!) {\n    changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n  }\n": types.RestChangePasswordDocument,
    "\n  mutation RestRequestPasswordReset($email: String!) {\n    requestPasswordReset(email: $email)\n  }\n": types.RestRequestPasswordResetDocument,
    "\n  mutation RestSetPassword($id: String!, $secret: String!, $password: String!) {\n    setPassword(id: $id, secret: $secret, password: $password)\n  }\n": types.RestSetPasswordDocument,
    "\n  mutation RestRevokeSession($loginId: String!) {\n    revokeSession(loginId: $loginId)\n  }\n": types.RestRevokeSessionDocument,
    "\n  mutation RestExecuteBot(\n    $id: String\n    $identifier: String\n    $contentType: String\n    $body: String\n    $query: JSON\n  ) {\n    executeBot(id: $id, identifier: $identifier, contentType: $contentType, body: $body, query: $query) {\n      status\n      contentType\n      body\n      headers\n    }\n  }\n": types.RestExecuteBotDocument,
    "\n  mutation RestExecuteBotAsync(\n    $id: String\n    $identifier: String\n    $contentType: String\n    $body: String\n    $query: JSON\n  ) {\n    executeBotAsync(id: $id, identifier: $identifier, contentType: $contentType, body: $body, query: $query) {\n      id\n    }\n  }\n": types.RestExecuteBotAsyncDocument,
    "\n  query RestBotJob($id: String!) {\n    botJob(id: $id) {\n      id\n      status\n      responseStatus\n      responseType\n      responseBody\n      responseHeaders\n    }\n  }\n": types.RestBotJobDocument,
    "\n  mutation RestDeployBot($id: String!, $code: String!) {\n    deployBot(id: $id, code: $code)\n  }\n": types.RestDeployBotDocument,
    "\n  query RestRead($resourceType: String!, $id: String!, $summary: String, $elements: String) {\n    readResource(resourceType: $resourceType, id: $id, summary: $summary, elements: $elements)\n  }\n": types.RestReadDocument,
    "\n  query RestSearch(\n    $resourceType: String!\n    $url: String\n    $version: String\n    $identifier: String\n    $name: String\n    $count: Int\n    $offset: Int\n    $summary: String\n    $elements: String\n  ) {\n    searchResources(\n      resourceType: $resourceType\n      url: $url\n      version: $version\n      identifier: $identifier\n      name: $name\n      count: $count\n      offset: $offset\n      summary: $summary\n      elements: $elements\n    )\n  }\n": types.RestSearchDocument,
    "\n  mutation RestCreate($resourceType: String!, $resource: JSON!) {\n    createResource(resourceType: $resourceType, resource: $resource)\n  }\n": types.RestCreateDocument,
    "\n  mutation RestUpdate($resourceType: String!, $id: String!, $resource: JSON!) {\n    updateResource(resourceType: $resourceType, id: $id, resource: $resource)\n  }\n": types.RestUpdateDocument,
    "\n  mutation RestDelete($resourceType: String!, $id: String!) {\n    deleteResource(resourceType: $resourceType, id: $id)\n  }\n": types.RestDeleteDocument,
    "\n  query RestTerminologyCapabilities {\n    terminologyCapabilities\n  }\n": types.RestTerminologyCapabilitiesDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AuthorizeVerifyMfa($login: String!, $token: String!) {\n    verifyMfa(login: $login, token: $token) {\n      code\n    }\n  }\n"): (typeof documents)["\n  mutation AuthorizeVerifyMfa($login: String!, $token: String!) {\n    verifyMfa(login: $login, token: $token) {\n      code\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AuthorizeEnrollMfa($login: String!, $token: String!) {\n    enrollMfaAtLogin(login: $login, token: $token) {\n      recoveryCodes\n    }\n  }\n"): (typeof documents)["\n  mutation AuthorizeEnrollMfa($login: String!, $token: String!) {\n    enrollMfaAtLogin(login: $login, token: $token) {\n      recoveryCodes\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AuthorizeRenewCode($login: String!) {\n    renewLoginCode(login: $login) {\n      code\n    }\n  }\n"): (typeof documents)["\n  mutation AuthorizeRenewCode($login: String!) {\n    renewLoginCode(login: $login) {\n      code\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestLogin(\n    $email: String!\n    $password: String!\n    $scope: String\n    $codeChallenge: String\n    $codeChallengeMethod: String\n    $projectId: String\n    $clientId: String\n    $redirectUri: String\n    $nonce: String\n  ) {\n    login(\n      email: $email\n      password: $password\n      scope: $scope\n      codeChallenge: $codeChallenge\n      codeChallengeMethod: $codeChallengeMethod\n      projectId: $projectId\n      clientId: $clientId\n      redirectUri: $redirectUri\n      nonce: $nonce\n    ) {\n      login\n      code\n      mfaRequired\n      mfaEnrollRequired\n      enrollUri\n      enrollQrCode\n    }\n  }\n"): (typeof documents)["\n  mutation RestLogin(\n    $email: String!\n    $password: String!\n    $scope: String\n    $codeChallenge: String\n    $codeChallengeMethod: String\n    $projectId: String\n    $clientId: String\n    $redirectUri: String\n    $nonce: String\n  ) {\n    login(\n      email: $email\n      password: $password\n      scope: $scope\n      codeChallenge: $codeChallenge\n      codeChallengeMethod: $codeChallengeMethod\n      projectId: $projectId\n      clientId: $clientId\n      redirectUri: $redirectUri\n      nonce: $nonce\n    ) {\n      login\n      code\n      mfaRequired\n      mfaEnrollRequired\n      enrollUri\n      enrollQrCode\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestMfaStatus {\n    mfaStatus {\n      enrolled\n      recoveryCodesLeft\n      required\n    }\n  }\n"): (typeof documents)["\n  query RestMfaStatus {\n    mfaStatus {\n      enrolled\n      recoveryCodesLeft\n      required\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestStartMfaEnrollment {\n    startMfaEnrollment {\n      enrollUri\n      enrollQrCode\n    }\n  }\n"): (typeof documents)["\n  mutation RestStartMfaEnrollment {\n    startMfaEnrollment {\n      enrollUri\n      enrollQrCode\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestEnrollMfa($token: String!) {\n    enrollMfa(token: $token)\n  }\n"): (typeof documents)["\n  mutation RestEnrollMfa($token: String!) {\n    enrollMfa(token: $token)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestDisableMfa($password: String, $token: String) {\n    disableMfa(password: $password, token: $token)\n  }\n"): (typeof documents)["\n  mutation RestDisableMfa($password: String, $token: String) {\n    disableMfa(password: $password, token: $token)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestVerifyMfa($login: String!, $token: String!) {\n    verifyMfa(login: $login, token: $token) {\n      login\n      code\n    }\n  }\n"): (typeof documents)["\n  mutation RestVerifyMfa($login: String!, $token: String!) {\n    verifyMfa(login: $login, token: $token) {\n      login\n      code\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestEnrollMfaAtLogin($login: String!, $token: String!) {\n    enrollMfaAtLogin(login: $login, token: $token) {\n      login\n      code\n      recoveryCodes\n    }\n  }\n"): (typeof documents)["\n  mutation RestEnrollMfaAtLogin($login: String!, $token: String!) {\n    enrollMfaAtLogin(login: $login, token: $token) {\n      login\n      code\n      recoveryCodes\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestToken(\n    $grantType: String!\n    $code: String\n    $codeVerifier: String\n    $clientId: String\n    $clientSecret: String\n    $refreshToken: String\n    $scope: String\n    $redirectUri: String\n  ) {\n    token(\n      grantType: $grantType\n      code: $code\n      codeVerifier: $codeVerifier\n      clientId: $clientId\n      clientSecret: $clientSecret\n      refreshToken: $refreshToken\n      scope: $scope\n      redirectUri: $redirectUri\n    )\n  }\n"): (typeof documents)["\n  mutation RestToken(\n    $grantType: String!\n    $code: String\n    $codeVerifier: String\n    $clientId: String\n    $clientSecret: String\n    $refreshToken: String\n    $scope: String\n    $redirectUri: String\n  ) {\n    token(\n      grantType: $grantType\n      code: $code\n      codeVerifier: $codeVerifier\n      clientId: $clientId\n      clientSecret: $clientSecret\n      refreshToken: $refreshToken\n      scope: $scope\n      redirectUri: $redirectUri\n    )\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestLogout {\n    logout\n  }\n"): (typeof documents)["\n  mutation RestLogout {\n    logout\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestIntrospect($token: String!) {\n    introspect(token: $token)\n  }\n"): (typeof documents)["\n  query RestIntrospect($token: String!) {\n    introspect(token: $token)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestRevokeToken($token: String!) {\n    revokeToken(token: $token)\n  }\n"): (typeof documents)["\n  mutation RestRevokeToken($token: String!) {\n    revokeToken(token: $token)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestUserInfo {\n    userInfo {\n      sub\n      email\n      name\n      givenName\n      familyName\n    }\n  }\n"): (typeof documents)["\n  query RestUserInfo {\n    userInfo {\n      sub\n      email\n      name\n      givenName\n      familyName\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestMe {\n    me {\n      loginId\n      clientId\n      mfaEnrolled\n      user {\n        id\n        email\n        firstName\n        lastName\n      }\n      project {\n        id\n        name\n      }\n      membership {\n        id\n        admin\n      }\n      sessions {\n        id\n        userAgent\n        remoteAddress\n        browser\n        os\n        authMethod\n        createdAt\n        lastUsed\n        current\n      }\n    }\n  }\n"): (typeof documents)["\n  query RestMe {\n    me {\n      loginId\n      clientId\n      mfaEnrolled\n      user {\n        id\n        email\n        firstName\n        lastName\n      }\n      project {\n        id\n        name\n      }\n      membership {\n        id\n        admin\n      }\n      sessions {\n        id\n        userAgent\n        remoteAddress\n        browser\n        os\n        authMethod\n        createdAt\n        lastUsed\n        current\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestChangePassword($oldPassword: String!, $newPassword: String!) {\n    changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n  }\n"): (typeof documents)["\n  mutation RestChangePassword($oldPassword: String!, $newPassword: String!) {\n    changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestRequestPasswordReset($email: String!) {\n    requestPasswordReset(email: $email)\n  }\n"): (typeof documents)["\n  mutation RestRequestPasswordReset($email: String!) {\n    requestPasswordReset(email: $email)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestSetPassword($id: String!, $secret: String!, $password: String!) {\n    setPassword(id: $id, secret: $secret, password: $password)\n  }\n"): (typeof documents)["\n  mutation RestSetPassword($id: String!, $secret: String!, $password: String!) {\n    setPassword(id: $id, secret: $secret, password: $password)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestRevokeSession($loginId: String!) {\n    revokeSession(loginId: $loginId)\n  }\n"): (typeof documents)["\n  mutation RestRevokeSession($loginId: String!) {\n    revokeSession(loginId: $loginId)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestExecuteBot(\n    $id: String\n    $identifier: String\n    $contentType: String\n    $body: String\n    $query: JSON\n  ) {\n    executeBot(id: $id, identifier: $identifier, contentType: $contentType, body: $body, query: $query) {\n      status\n      contentType\n      body\n      headers\n    }\n  }\n"): (typeof documents)["\n  mutation RestExecuteBot(\n    $id: String\n    $identifier: String\n    $contentType: String\n    $body: String\n    $query: JSON\n  ) {\n    executeBot(id: $id, identifier: $identifier, contentType: $contentType, body: $body, query: $query) {\n      status\n      contentType\n      body\n      headers\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestExecuteBotAsync(\n    $id: String\n    $identifier: String\n    $contentType: String\n    $body: String\n    $query: JSON\n  ) {\n    executeBotAsync(id: $id, identifier: $identifier, contentType: $contentType, body: $body, query: $query) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation RestExecuteBotAsync(\n    $id: String\n    $identifier: String\n    $contentType: String\n    $body: String\n    $query: JSON\n  ) {\n    executeBotAsync(id: $id, identifier: $identifier, contentType: $contentType, body: $body, query: $query) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestBotJob($id: String!) {\n    botJob(id: $id) {\n      id\n      status\n      responseStatus\n      responseType\n      responseBody\n      responseHeaders\n    }\n  }\n"): (typeof documents)["\n  query RestBotJob($id: String!) {\n    botJob(id: $id) {\n      id\n      status\n      responseStatus\n      responseType\n      responseBody\n      responseHeaders\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestDeployBot($id: String!, $code: String!) {\n    deployBot(id: $id, code: $code)\n  }\n"): (typeof documents)["\n  mutation RestDeployBot($id: String!, $code: String!) {\n    deployBot(id: $id, code: $code)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestRead($resourceType: String!, $id: String!, $summary: String, $elements: String) {\n    readResource(resourceType: $resourceType, id: $id, summary: $summary, elements: $elements)\n  }\n"): (typeof documents)["\n  query RestRead($resourceType: String!, $id: String!, $summary: String, $elements: String) {\n    readResource(resourceType: $resourceType, id: $id, summary: $summary, elements: $elements)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestSearch(\n    $resourceType: String!\n    $url: String\n    $version: String\n    $identifier: String\n    $name: String\n    $count: Int\n    $offset: Int\n    $summary: String\n    $elements: String\n  ) {\n    searchResources(\n      resourceType: $resourceType\n      url: $url\n      version: $version\n      identifier: $identifier\n      name: $name\n      count: $count\n      offset: $offset\n      summary: $summary\n      elements: $elements\n    )\n  }\n"): (typeof documents)["\n  query RestSearch(\n    $resourceType: String!\n    $url: String\n    $version: String\n    $identifier: String\n    $name: String\n    $count: Int\n    $offset: Int\n    $summary: String\n    $elements: String\n  ) {\n    searchResources(\n      resourceType: $resourceType\n      url: $url\n      version: $version\n      identifier: $identifier\n      name: $name\n      count: $count\n      offset: $offset\n      summary: $summary\n      elements: $elements\n    )\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestCreate($resourceType: String!, $resource: JSON!) {\n    createResource(resourceType: $resourceType, resource: $resource)\n  }\n"): (typeof documents)["\n  mutation RestCreate($resourceType: String!, $resource: JSON!) {\n    createResource(resourceType: $resourceType, resource: $resource)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestUpdate($resourceType: String!, $id: String!, $resource: JSON!) {\n    updateResource(resourceType: $resourceType, id: $id, resource: $resource)\n  }\n"): (typeof documents)["\n  mutation RestUpdate($resourceType: String!, $id: String!, $resource: JSON!) {\n    updateResource(resourceType: $resourceType, id: $id, resource: $resource)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RestDelete($resourceType: String!, $id: String!) {\n    deleteResource(resourceType: $resourceType, id: $id)\n  }\n"): (typeof documents)["\n  mutation RestDelete($resourceType: String!, $id: String!) {\n    deleteResource(resourceType: $resourceType, id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RestTerminologyCapabilities {\n    terminologyCapabilities\n  }\n"): (typeof documents)["\n  query RestTerminologyCapabilities {\n    terminologyCapabilities\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;